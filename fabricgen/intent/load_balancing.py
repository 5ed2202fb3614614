"""The intent's `ecmp:` section: hash algorithm and fields, per-tier seeds, RoCE QP hashing, adaptive routing.

The plan resolves it per platform (fabricgen.plan.ecmp); here only what an operator may write.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from fabricgen.intent.fields import Flag, Int, IntentModel, MacAddress, invalid


class AdaptiveRouting(IntentModel):
    enabled: Flag = False
    mode: Literal["flowlet", "per-packet"] = "flowlet"
    flowlet_aging_us: Int = Field(default=500, ge=1, le=2_000_000)
    mac_address: MacAddress = "00:cc:cc:cc:cc:cc"


class TierHash(IntentModel):
    """One tier's hash seed and rotation: different per tier, so consecutive hops do not repeat a choice."""

    seed: Int = Field(ge=0, le=65535, description="NX-OS `universal-id`; SONiC takes it from DEVICE_METADATA.type")
    rotate: Int = Field(default=0, ge=0, le=63, description="NX-OS `rotate` (0-63 of the 64-bit hash key)")


class TierHashes(IntentModel):
    """Per tier, defaults distinct: SONiC's own per-type values (orchagent switch.json.j2) and 50/5 on top."""

    leaf: TierHash = TierHash(seed=10, rotate=10)
    spine: TierHash = TierHash(seed=25, rotate=0)
    super_spine: TierHash = TierHash(seed=50, rotate=5)


class Ecmp(IntentModel):
    algorithm: Literal["crc32", "crc16", "xor"] = Field(
        default="crc32", description="the hash the analysis models; rendered where the platform selects one (SONiC "
        "SWITCH_HASH ecmp_hash_algorithm) when set explicitly")
    seeds: TierHashes = TierHashes()
    qp_hashing: Flag = Field(default=False, description="hash on the RoCE BTH destination QP (UDF)")
    hash_fields: tuple[Literal["src-ip", "dst-ip", "l4-src-port", "l4-dst-port", "ip-protocol"], ...] = (
        "src-ip",
        "dst-ip",
        "l4-src-port",
        "l4-dst-port",
        "ip-protocol",
    )
    adaptive_routing: AdaptiveRouting = AdaptiveRouting()

    @field_validator("hash_fields")
    @classmethod
    def _entropy(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if "l4-src-port" not in v:
            raise invalid("the hash leaves out 'l4-src-port': RoCEv2 carries its flow entropy in the UDP source port",
                          "add l4-src-port to ecmp.hash_fields")
        return v
