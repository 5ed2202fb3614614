"""The fabric intent: one YAML file, validated by pydantic v2.

Only what an operator decides lives here; everything derivable (ports, links,
addresses, ASNs, thresholds) is computed by the later pipeline steps.  The file
is read by `intent_file` (bounded, typed YAML); loading maps every validation
error back to its YAML path and line number, with its fix.

Every string field has a type that fits where the value goes (`HostLabel`,
`HostPrefix`, `Token`, `Text`, `MacAddress`); every number field rejects booleans
(`Int`, `Float`) and non-finite values.  New fields use these types.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from fabricgen.catalog.registry import SWITCH_PLATFORMS
from fabricgen.errors import FabricError, Problem
from fabricgen.intent import reader as intent_file

NIC_SPEEDS = (100, 200, 400, 800)
PORT_SPEEDS = (25, 50, 100, 200, 400, 800, 1600)
PLATFORMS = SWITCH_PLATFORMS  # one record each in fabricgen.catalog.registry
Role = Literal["leaf", "spine", "super_spine"]


def invalid(problem: str, fix: str, at: str = "") -> PydanticCustomError:
    """A validation error that carries its fix; `load_intent` prints it as `problem (fix: fix)`.

    `at` names the field (relative to the model that raises) a cross-field rule blames.
    """
    return PydanticCustomError("fabricgen", "{problem}", {"problem": problem, "fix": fix, "at": at})


# --------------------------------------------------------------------------- strings
#
# Every string of the intent ends up in a file name, a hostname or a config line, so
# each has a type that fits where it goes.  New string fields use one of these; the
# templates escape nothing by hand because the model guarantees the values.

_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_TEXT_CHARS = frozenset(map(chr, range(0x20, 0x7F)))
_MAC = re.compile(r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}")


def _shown(ch: str) -> str:
    """A character as an operator can read it in an error message: '/' or U+000A LINE FEED."""
    if ch.isprintable() and ch != " " and ch.isascii():
        return repr(ch)
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"


def _string_check(what: str, allowed: frozenset[str], max_len: int, rule: str,
                  shape: Callable[[str], bool] = lambda v: True) -> Callable[[str], str]:
    """A validator: only `allowed` characters, at most `max_len` of them, and `shape` holds."""

    def check(value: str) -> str:
        for i, ch in enumerate(value):
            if ch not in allowed:
                raise invalid(f"character {i + 1} of {what} is {_shown(ch)}, which is not allowed there", rule)
        if len(value) > max_len:
            raise invalid(f"{what} has {len(value)} characters, more than {max_len}", rule)
        if not shape(value):
            raise invalid(f"{value!r} is not {what}", rule)
        return value

    return check


def _label(max_len: int, prefix: bool) -> Callable[[str], str]:
    if prefix:
        return _string_check("a hostname prefix", _LABEL_CHARS, max_len,
                             f"use 1-{max_len} characters from a-z, 0-9 and '-', starting with a letter or digit",
                             lambda v: v[:1].isalnum())
    return _string_check("a hostname label (RFC 1123)", _LABEL_CHARS, max_len,
                         f"use 1-{max_len} characters from a-z, 0-9 and '-', "
                         "starting and ending with a letter or digit",
                         lambda v: v[:1].isalnum() and v[-1:].isalnum())


def _mac_check(value: str) -> str:
    if not _MAC.fullmatch(value):
        raise invalid(f"{value!r} is not a MAC address", "write six hex octets separated by ':' (00:cc:cc:cc:cc:cc)")
    if int(value[:2], 16) & 1:
        raise invalid(f"{value!r} is a multicast MAC address", "use a unicast MAC (even first octet)")
    return value.lower()


HostLabel = Annotated[str, AfterValidator(_label(32, prefix=False))]
"""A lower-case RFC 1123 label: a fabric name, anything that becomes a hostname or a file name."""
HostPrefix = Annotated[str, AfterValidator(_label(32, prefix=True))]
"""The start of a hostname that digits complete (`gpu` -> gpu0001): may end with '-'."""
Token = Annotated[str, AfterValidator(_string_check(
    "a name", _TOKEN_CHARS, 64,
    "use 1-64 characters from A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit",
    lambda v: v[:1].isalnum() and ".." not in v))]
"""One word naming a vendor thing (a SKU, a platform name): letters, digits, '.', '_', '-'."""
Text = Annotated[str, AfterValidator(_string_check(
    "a one-line text", _TEXT_CHARS, 128,
    "keep it to one line of at most 128 printable ASCII characters (no newline, tab or control character)"))]
"""Free text that lands in a config comment or description: one printable ASCII line."""
MacAddress = Annotated[str, AfterValidator(_mac_check)]
"""A unicast MAC address, normalised to lower case."""


# --------------------------------------------------------------------------- numbers


def _number(value: Any) -> Any:
    """YAML's true/false/yes/no are booleans: never let one count as 1 or 0."""
    if isinstance(value, bool):
        raise invalid(f"{str(value).lower()} is a boolean where a number is expected", "write a number")
    return value


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise invalid(f"{value!r} is not a boolean", "write true or false")
    return value


def _parse_speed(value: Any) -> Any:
    """Accept 400, "400", "400G", "400g", "400Gb" as 400 (Gb/s)."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*(g|gb|gbps|gbe)?\s*", value, re.IGNORECASE | re.ASCII)
        if not m:
            raise invalid(f"speed {value!r} is not a speed", "write it like 400G")
        return int(m.group(1))
    return _number(value)


def _parse_ratio(value: Any) -> Any:
    """Accept "1:1", "3:1", 1, 1.5 as a down:up bandwidth ratio."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*", value, re.ASCII)
        if not m:
            raise invalid(f"oversubscription {value!r} is not a down:up ratio", "write it like '1:1' or '3:1'")
        down, up = Fraction(m.group(1)), Fraction(m.group(2))
        if not down or not up:
            raise invalid(f"oversubscription {value!r} has a zero side", "write two positive numbers, like '1:1'")
        return float(down / up)
    return _number(value)


Int = Annotated[int, BeforeValidator(_number)]
Float = Annotated[float, BeforeValidator(_number)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Speed = Annotated[int, BeforeValidator(_parse_speed)]
Ratio = Annotated[float, BeforeValidator(_parse_ratio)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class FabricMeta(_Model):
    name: HostLabel = Field(description="fabric name, used as hostname prefix")
    description: Text = ""


class Servers(_Model):
    count: Int = Field(ge=1)
    gpus_per_server: Int = Field(default=8, ge=1, le=16)
    nics_per_server: Int = Field(default=8, ge=1, le=16)
    ports_per_nic: Int = Field(default=1, ge=1, le=8, description="back-end ports of one NIC (one per plane)")
    nic_speed: Speed = 400
    name_prefix: HostPrefix = "gpu"

    @field_validator("nic_speed")
    @classmethod
    def _nic_speed(cls, v: int) -> int:
        if v not in NIC_SPEEDS:
            raise invalid(f"{v}G is not a NIC speed", f"use one of {', '.join(f'{s}G' for s in NIC_SPEEDS)}")
        return v


EndpointRole = Literal["storage", "ufm", "management", "other"]


class Endpoint(_Model):
    """A group of non-GPU hosts on the leaves' server ports: storage nodes, UFM / management appliances.

    Each host has one port on one leaf (per plane).  `per: leaf` puts `count` of them on every
    leaf; `per: su` puts `count` in every scalable unit, spread over its rail leaves.
    """

    name: HostPrefix = Field(description="hostname prefix; digits complete it (storage -> storage001)")
    role: EndpointRole = "storage"
    count: Int = Field(ge=1, le=64)
    per: Literal["leaf", "su"] = "leaf"
    speed: Speed | None = Field(default=None, description="default: the leaf's server-port speed (the only one)")


# The largest fixed radix fabricgen accepts, in physical front-panel ports: a 16-slot modular
# chassis of 36-port line cards (Arista 7816R3, Juniper PTX10016: 576 x 400G).
LARGEST_CHASSIS = "16-slot modular chassis (Arista 7816R3 / Juniper PTX10016)"
MAX_CHASSIS_PORTS = 576
Cage = Literal["osfp", "qsfp-dd", "qsfp112", "qsfp56", "qsfp28"]
Breakout = Annotated[Literal[1, 2, 4, 8], BeforeValidator(_number)]


def _port_speed(v: int) -> int:
    if v not in PORT_SPEEDS:
        raise invalid(f"{v}G is not a port speed", f"use one of {', '.join(f'{s}G' for s in PORT_SPEEDS)}")
    return v


class PortGroup(_Model):
    """The logical ports one direction (down to servers, or up to the next tier) runs on its cages."""

    speed: Speed
    breakout: Breakout | None = Field(default=None, description="logical ports per cage; default: cage speed / speed")

    @field_validator("speed")
    @classmethod
    def _speed(cls, v: int) -> int:
        return _port_speed(v)


# With a SKU these come from the SKU's own port data (fabricgen.catalog.skus), never from the intent.
SKU_DERIVED = ("ports", "port_speed", "breakout", "lanes_per_port")


class SwitchModel(_Model):
    """A role's switch: a hardware SKU whose own data gives its ports, or generic numbers."""

    model: Text = "generic"
    sku: Token | None = Field(default=None, description="SONiC HWSKU or NX-OS model, e.g. Mellanox-SN5600-O128")
    ports: Int = Field(default=0, ge=4, le=MAX_CHASSIS_PORTS,
                       description=f"physical front-panel cages (at most {MAX_CHASSIS_PORTS}: {LARGEST_CHASSIS}); "
                                   "without a sku (0 until a SKU's cages are filled in)")
    port_speed: Speed = 400
    breakout: Breakout = 1
    lanes_per_port: Int = Field(default=8, ge=1, le=8, description="SerDes lanes per physical port")
    cage: Cage | None = Field(default=None, description="default: from the cage speed and lanes (see physical.py)")
    downlink: PortGroup | None = Field(default=None, description="server-facing ports; default: speed/breakout")
    uplink: PortGroup | None = Field(default=None, description="ports to the next tier; default: speed/breakout")

    @field_validator("port_speed")
    @classmethod
    def _port_speed(cls, v: int) -> int:
        return _port_speed(v)

    @model_validator(mode="after")
    def _sku_or_numbers(self) -> SwitchModel:
        if self.sku is None and "ports" not in self.model_fields_set:
            raise invalid("neither `ports` nor `sku` is given", "give the cage count (ports) or a hardware sku")
        if self.sku is not None:
            given = [f for f in SKU_DERIVED if f in self.model_fields_set]
            if given:
                raise invalid(f"{', '.join(given)} come from the SKU {self.sku}",
                              "remove them (downlink/uplink speed picks which of the SKU's ports are used)",
                              at=given[0])
        return self

    @model_validator(mode="after")
    def _groups_fit_the_cage(self) -> SwitchModel:
        if self.sku is not None:
            return self  # the SKU's cages decide (fabricgen.catalog.skus.role_hardware)
        if self.lanes_per_port % self.breakout:
            raise invalid(f"breakout {self.breakout} does not divide the {self.lanes_per_port} lanes of a port",
                          "use a breakout that divides lanes_per_port", at="breakout")
        for side in ("downlink", "uplink"):
            group: PortGroup | None = getattr(self, side)
            if group is None:
                continue
            n = group.breakout or self.port_speed // group.speed
            if group.breakout is None and (self.port_speed % group.speed or n not in (1, 2, 4, 8)):
                raise invalid(f"{side} speed {group.speed}G does not split a {self.port_speed}G cage into "
                              "1, 2, 4 or 8 ports", f"give {side}.breakout", at=side)
            if n * group.speed > self.port_speed:
                raise invalid(f"{side}: {n} x {group.speed}G exceeds the {self.port_speed}G cage",
                              f"lower {side}.speed or {side}.breakout", at=side)
            if self.lanes_per_port % n:
                raise invalid(f"{side}: breakout {n} does not divide the {self.lanes_per_port} lanes of a port",
                              f"use a {side}.breakout that divides lanes_per_port", at=side)
        return self

    def side(self, direction: Literal["down", "up"]) -> tuple[int, int]:
        """(logical speed, breakout) of the ports facing `direction`."""
        group = self.downlink if direction == "down" else self.uplink
        if group is None:
            return self.logical_speed, self.breakout
        return group.speed, group.breakout or self.port_speed // group.speed

    @property
    def logical_ports(self) -> int:
        return self.ports * self.breakout

    @property
    def logical_speed(self) -> int:
        return self.port_speed // self.breakout


class SwitchModels(_Model):
    leaf: SwitchModel
    spine: SwitchModel | None = None
    super_spine: SwitchModel | None = None


def _platform(value: str) -> str:
    if value not in PLATFORMS:
        raise invalid(f"unknown platform {value!r}", f"use one of: {', '.join(PLATFORMS)}")
    return value


Platform = Annotated[str, AfterValidator(_platform)]


class Platforms(_Model):
    leaf: Platform = "sonic"
    spine: Platform = "nxos"
    super_spine: Platform = "nxos"
    sonic_release: str | None = Field(
        default=None, pattern=r"^(20\d{4}|master)$",
        description="the SONiC release branch the SONiC switches run (202411): `check` validates against that "
        "release's YANG models where they are present, and deploy labels GCU changes by it")


class TierRatios(_Model):
    """Down:up bandwidth target per tier (e.g. Meta's 7:1 above the spines)."""

    leaf: Ratio = 1.0
    spine: Ratio = 1.0

    @field_validator("leaf", "spine")
    @classmethod
    def _ratio(cls, v: float) -> float:
        return _at_least_one(v)


def _at_least_one(v: float) -> float:
    if v < 1.0:
        raise invalid("oversubscription below 1:1 means more uplink than downlink bandwidth",
                      "use '1:1' (non-blocking) or a larger first number, e.g. '2:1'")
    return v


def _tier_ratios(value: Any) -> Any:
    """A single ratio is the leaf target (spines stay non-blocking); a mapping gives each tier's."""
    if not isinstance(value, str | int | float):
        return value
    return {"leaf": _at_least_one(float(_parse_ratio(value)))}


class Topology(_Model):
    tiers: Annotated[Literal[1, 2, 3], BeforeValidator(_number)] = 2
    rail_optimized: Flag = True
    planes: Int = Field(default=1, ge=1, le=8)
    oversubscription: Annotated[TierRatios, BeforeValidator(_tier_ratios)] = Field(
        default=TierRatios(), description="down:up bandwidth target of the leaves, '1:1' = non-blocking; "
                                          "or per tier {leaf:, spine:}")
    scalable_unit: Int | None = Field(
        default=None, ge=1, description="servers per scalable unit (SU); default: what one rail leaf holds")
    rails_per_leaf: Annotated[Literal[1, 2, 4, 8], BeforeValidator(_number)] = Field(
        default=1, description="rails one leaf carries (rail-optimized designs smaller than a scalable unit)")
    leaf_uplinks: Int | None = Field(
        default=None, ge=1, description="uplinks per leaf; default: what the oversubscription target allows"
    )
    spines: Int | None = Field(
        default=None, ge=1,
        description="spines per plane (2-tier) or per pod (3-tier); default: the fewest that hold the leaves")
    super_spines_per_group: Int | None = Field(
        default=None, ge=1,
        description="3-tier: super-spines each pod-spine index connects to; default: the fewest for the pods")
    max_pods: Int | None = Field(
        default=None, ge=1, description="3-tier growth envelope in pods; default: the pods planned"
    )
    max_servers: Int | None = Field(
        default=None, ge=1, description="growth envelope in servers; default: the servers planned"
    )

    @model_validator(mode="after")
    def _knobs_fit_the_tiers(self) -> Topology:
        """A knob the chosen tiers never read is refused, not silently ignored (the operator meant something)."""
        if self.tiers < 3:
            for knob in ("super_spines_per_group", "max_pods"):
                if getattr(self, knob) is not None:
                    raise invalid(f"{knob} sizes the super-spine layer, which a {self.tiers}-tier fabric does not "
                                  "have", f"remove {knob} or use tiers: 3", at=knob)
            if self.oversubscription.spine != 1.0:
                raise invalid(f"a spine target of {self.oversubscription.spine:g}:1 splits spine ports towards "
                              f"super-spines, which a {self.tiers}-tier fabric does not have",
                              "remove oversubscription.spine or use tiers: 3", at="oversubscription.spine")
        if self.tiers == 1 and self.spines is not None:
            raise invalid("a single-tier plane has no spines", "remove spines or use tiers: 2", at="spines")
        if not self.rail_optimized and self.scalable_unit is not None:
            raise invalid("scalable_unit groups servers on rail leaves, but rail_optimized is false (servers per "
                          "leaf follow the leaf's port budget)", "remove scalable_unit or set rail_optimized: true",
                          at="scalable_unit")
        if not self.rail_optimized and self.rails_per_leaf != 1:
            raise invalid(f"rails_per_leaf {self.rails_per_leaf} groups rails on rail leaves, but rail_optimized is "
                          "false (every NIC of a server goes to one leaf)",
                          "remove rails_per_leaf or set rail_optimized: true", at="rails_per_leaf")
        return self

    def ratio(self, tier: Literal["leaf", "spine"]) -> float:
        """The down:up bandwidth target of one tier."""
        return self.oversubscription.leaf if tier == "leaf" else self.oversubscription.spine


def _network_text(value: Any) -> Any:
    if not isinstance(value, str):
        raise invalid(f"{value!r} is not an address pool", "write it as text like 198.18.0.0/24")
    return value


IPv4Pool = Annotated[ipaddress.IPv4Network, BeforeValidator(_network_text)]
IPv6Pool = Annotated[ipaddress.IPv6Network, BeforeValidator(_network_text)]


_V4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")


def _as_v4(pool: ipaddress.IPv4Network | ipaddress.IPv6Network) -> ipaddress.IPv4Network | None:
    """The IPv4 addresses a pool covers: itself, or those an IPv6 pool reaches as IPv4-mapped (::ffff:a.b.c.d)."""
    if isinstance(pool, ipaddress.IPv4Network):
        return pool
    if pool.subnet_of(_V4_MAPPED):
        return ipaddress.IPv4Network((int(pool.network_address) & 0xFFFFFFFF, pool.prefixlen - 96))
    return ipaddress.IPv4Network("0.0.0.0/0") if pool.supernet_of(_V4_MAPPED) else None


def pools_overlap(a: ipaddress.IPv4Network | ipaddress.IPv6Network,
                  b: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    """Whether two pools share an address, within a family or across it (IPv4-mapped IPv6)."""
    if a.version == b.version:
        return a.overlaps(b)
    a4, b4 = _as_v4(a), _as_v4(b)
    return a4 is not None and b4 is not None and a4.overlaps(b4)


class Addressing(_Model):
    loopbacks: IPv4Pool
    p2p: IPv4Pool = Field(description="pool for /31 fabric links")
    gpu: IPv4Pool = Field(description="pool for GPU-NIC /31s")
    management: IPv4Pool
    loopbacks_v6: IPv6Pool | None = None
    p2p_v6: IPv6Pool | None = None

    @model_validator(mode="after")
    def _pools_apart(self) -> Addressing:
        """Overlapping pools hand one address to two things: a loopback that is a management address."""
        pools = [(name, net) for name, net in self if net is not None]
        for i, (name_a, a) in enumerate(pools):
            for name_b, b in pools[i + 1:]:
                if pools_overlap(a, b):
                    raise invalid(f"pool {name_b} ({b}) overlaps pool {name_a} ({a}): addresses would repeat",
                                  f"give addressing.{name_b} a range of its own, outside {a}", at=name_b)
        return self


class Bfd(_Model):
    enabled: Flag = True
    min_tx_ms: Int = Field(default=300, ge=10, le=10000)
    min_rx_ms: Int = Field(default=300, ge=10, le=10000)
    multiplier: Int = Field(default=3, ge=2, le=50)


class Bgp(_Model):
    asn_scheme: Literal["multi-as", "same-tier"] = "multi-as"
    leaf_asn_base: Int = Field(default=4_200_000_000, ge=1, le=4_294_967_294)
    spine_asn_base: Int = Field(default=4_200_100_000, ge=1, le=4_294_967_294)
    super_spine_asn: Int = Field(default=4_200_200_000, ge=1, le=4_294_967_294)
    keepalive: Int = Field(default=3, ge=1, le=3600)
    holdtime: Int = Field(default=9, ge=3, le=65535)
    bfd: Bfd = Bfd()
    maximum_paths: Int | None = Field(default=None, ge=1, le=1024, description="default: equal-cost uplinks")
    allowas_in: Int = Field(default=1, ge=1, le=10)

    @model_validator(mode="after")
    def _timers(self) -> Bgp:
        if self.holdtime < 3 * self.keepalive:
            raise invalid(f"holdtime {self.holdtime} must be at least 3 x keepalive ({3 * self.keepalive})",
                          f"raise bgp.holdtime to {3 * self.keepalive} or lower bgp.keepalive", at="holdtime")
        return self


class AdaptiveRouting(_Model):
    enabled: Flag = False
    mode: Literal["flowlet", "per-packet"] = "flowlet"
    flowlet_aging_us: Int = Field(default=500, ge=1, le=2_000_000)
    mac_address: MacAddress = "00:cc:cc:cc:cc:cc"


class TierHash(_Model):
    """One tier's hash seed and rotation: different per tier, so consecutive hops do not repeat a choice."""

    seed: Int = Field(ge=0, le=65535, description="NX-OS `universal-id`; SONiC takes it from DEVICE_METADATA.type")
    rotate: Int = Field(default=0, ge=0, le=63, description="NX-OS `rotate` (0-63 of the 64-bit hash key)")


class TierHashes(_Model):
    """Per tier, defaults distinct: SONiC's own per-type values (orchagent switch.json.j2) and 50/5 on top."""

    leaf: TierHash = TierHash(seed=10, rotate=10)
    spine: TierHash = TierHash(seed=25, rotate=0)
    super_spine: TierHash = TierHash(seed=50, rotate=5)


class Ecmp(_Model):
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


class EcnThreshold(_Model):
    min_bytes: Int = Field(ge=1024)
    max_bytes: Int = Field(ge=1024)
    probability: Int = Field(ge=1, le=100)

    @model_validator(mode="after")
    def _order(self) -> EcnThreshold:
        if self.min_bytes >= self.max_bytes:
            raise invalid(f"ECN min {self.min_bytes} must be below max {self.max_bytes}",
                          "lower min_bytes or raise max_bytes", at="min_bytes")
        return self


class PfcWatchdog(_Model):
    enabled: Flag = True
    detection_ms: Int = Field(default=200, ge=100, le=5000)
    restoration_ms: Int = Field(default=200, ge=100, le=60000)
    poll_ms: Int = Field(default=200, ge=100, le=1000)
    action: Literal["drop", "forward", "alert"] = "drop"


class Headroom(_Model):
    """ASIC constants of SONiC's dynamic headroom formula (defaults: NVIDIA Spectrum-4)."""

    cell_size: Int = Field(default=192, ge=64, le=4096)
    pipeline_latency_kb: Float = Field(default=19, ge=0, le=1024)
    mac_phy_delay_kb: Float = Field(default=0.8, ge=0, le=1024)
    small_packet_percentage: Int = Field(default=50, ge=0, le=100)
    lossless_mtu: Int = Field(default=1024, ge=64, le=9216)


class Bandwidth(_Model):
    roce: Int = Field(default=50, ge=0, le=100)
    default: Int = Field(default=50, ge=0, le=100)


class NicSettings(_Model):
    trust: Literal["dscp", "pcp"] = "dscp"
    cnp_dscp: Int | None = Field(default=None, ge=0, le=63, description="default: the fabric's CNP DSCP")
    ecn_capable: Flag = True
    qps_per_connection: Int = Field(
        default=4, ge=1, le=64, description="NCCL_IB_QPS_PER_CONNECTION the NIC scripts write to /etc/nccl.conf: "
        "more QPs give ECMP more flows to spread (`fabricgen analyze ecmp` shows the what-if)")


class Qos(_Model):
    roce_dscp: tuple[Int, ...] = (26,)
    cnp_dscp: Int = Field(default=48, ge=0, le=63)
    roce_tc: Int = Field(default=3, ge=0, le=7, description="traffic class, PFC priority and queue of RoCE")
    cnp_tc: Int = Field(default=6, ge=0, le=7, description="strict-priority class of CNPs")
    lossless_tcs: tuple[Int, ...] | None = Field(default=None, description="default: (roce_tc,)")
    mtu: Int = Field(default=9216, ge=1500, le=9216)
    ecn: dict[Speed, EcnThreshold] = Field(
        default_factory=dict, description="per link speed; a speed left out runs each platform's vendor default "
        "(SONiC: the SKU's QoS template; NX-OS: Cisco's AI/ML QoS)")
    bandwidth: Bandwidth = Bandwidth()
    pfc_watchdog: PfcWatchdog = PfcWatchdog()
    headroom: Headroom = Headroom()
    nic: NicSettings = NicSettings()

    @field_validator("roce_dscp", mode="before")
    @classmethod
    def _dscp_list(cls, v: Any) -> Any:
        return (v,) if isinstance(v, int) else v

    @field_validator("roce_dscp")
    @classmethod
    def _dscp_range(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if not v:
            raise invalid("no RoCE DSCP is given", "list at least one, e.g. [26]")
        bad = [d for d in v if not 0 <= d <= 63]
        if bad:
            raise invalid(f"DSCP values must be 0..63, got {bad}", "use DSCP values from 0 to 63")
        return v

    @property
    def lossless(self) -> tuple[int, ...]:
        return self.lossless_tcs if self.lossless_tcs is not None else (self.roce_tc,)


class Health(_Model):
    """Limits of `fabricgen validate --health`: counter deltas between two reads `window_seconds` apart.

    Rates are per minute, so a limit means the same whatever the window.  A lossless fabric drops
    nothing on its lossless queues and never pauses its CNP queue; some PFC is normal under incast,
    a pause storm is not; a PFC watchdog storm means a queue stopped draining.
    """

    window_seconds: Int = Field(default=10, ge=1, le=3600, description="default --window")
    max_lossless_drops: Int = Field(default=0, ge=0, description="packets dropped on a lossless queue per window")
    max_cnp_drops: Int = Field(default=0, ge=0, description="packets dropped on the CNP queue per window")
    max_pause_per_minute: Int = Field(default=600, ge=0,
                                      description="PFC pause frames per minute, per port, priority and direction")
    max_watchdog_storms_per_minute: Int = Field(default=0, ge=0,
                                                description="PFC watchdog storms detected per minute, per queue")
    max_ecn_marked_share: Float = Field(default=0.1, ge=0, le=1,
                                        description="ECN-marked share of the RoCE queue's packets")
    ecn_min_packets: Int = Field(default=1000, ge=1,
                                 description="RoCE-queue packets a window needs before its ECN share is judged")


PtpProfile = Literal["default-1588", "g8275.1", "g8275.2"]
# Each profile's domain range and default (IEEE 1588-2019 default profile: 0-127, default 0; ITU-T G.8275.1:
# 24-43, default 24; G.8275.2: 44-63, default 44).
PTP_DOMAINS: dict[str, tuple[int, int, int]] = {"default-1588": (0, 127, 0), "g8275.1": (24, 43, 24),
                                                "g8275.2": (44, 63, 44)}
ClockTier = Literal["leaf", "spine", "super_spine"]


class PtpGrandmaster(_Model):
    """Where the grandmasters attach: the hosts of one `endpoints:` group, on the leaves' server ports."""

    endpoints: HostPrefix = Field(description="name of the endpoints: group whose hosts are the grandmasters; "
                                              "the first host is the preferred one, the others stand by")
    priority1: Int = Field(default=10, ge=0, le=254, description="priority1 of the preferred grandmaster "
                                                                  "(standbys: one more each); lower wins the BMCA")


class PtpThresholds(_Model):
    """What `validate --ptp` accepts.  Defaults are hardware-timestamping values: ANTA's PTP tests (offset
    within +-1000 ns, last sync under 60 s) and NVIDIA Cumulus's PTP monitor (mean path delay 200 ns)."""

    offset_ns: Int = Field(default=1000, ge=1, le=1_000_000_000, description="largest |offset from master|")
    path_delay_ns: Int = Field(default=200, ge=1, le=1_000_000_000, description="largest mean path delay")
    last_sync_s: Int = Field(default=60, ge=1, le=86_400, description="longest time since the last sync")


class Ptp(_Model):
    """PTP (IEEE 1588) as a fabric service: boundary clocks on the switches, the servers' NICs as clients."""

    profile: PtpProfile = "default-1588"
    domain: Int | None = Field(default=None, ge=0, le=127, description="default: the profile's default domain")
    grandmaster: PtpGrandmaster
    boundary_clocks: tuple[ClockTier, ...] = Field(
        default=("leaf", "spine", "super_spine"), description="tiers whose switches run a boundary clock "
        "(tiers the fabric lacks are ignored)")
    servers: Flag = Field(default=True, description="the GPU servers' NICs sync as PTP clients")
    timestamping: Literal["hardware", "software"] = Field(
        default="hardware", description="linuxptp's time_stamping; software only for labs (no PHC)")
    dscp: Int = Field(default=46, ge=0, le=63, description="DSCP of PTP event and general messages (EF)")
    thresholds: PtpThresholds = PtpThresholds()

    @model_validator(mode="after")
    def _domain_in_profile(self) -> Ptp:
        lo, hi, _ = PTP_DOMAINS[self.profile]
        if self.domain is not None and not lo <= self.domain <= hi:
            raise invalid(f"domain {self.domain} is outside the {self.profile} profile's domains {lo}-{hi}",
                          f"use a domain from {lo} to {hi}, or leave it out ({PTP_DOMAINS[self.profile][2]})",
                          at="domain")
        if len(set(self.boundary_clocks)) != len(self.boundary_clocks):
            raise invalid("a tier is listed twice", "list each tier once", at="boundary_clocks")
        return self

    @property
    def domain_number(self) -> int:
        return self.domain if self.domain is not None else PTP_DOMAINS[self.profile][2]


class Cabling(_Model):
    """Cable length per tier in metres; drives optic choice and PFC headroom."""

    gpu_leaf_m: Float = Field(default=3, gt=0, le=10_000)
    leaf_spine_m: Float = Field(default=30, gt=0, le=10_000)
    spine_super_spine_m: Float = Field(default=150, gt=0, le=10_000)


# --------------------------------------------------------------------------- tenants

# Linux caps an interface name at 15 characters (IFNAMSIZ - 1); a tenant name becomes part of one
# (the lab's `<leaf>-<tenant>` namespace, the VXLAN/bridge devices `vx<id>`/`br<id>`), and SONiC's
# VRF name is `Vrf<name>` (sonic-vrf.yang: pattern "Vrf[a-zA-Z0-9_-]+").
TENANT_NAME_LEN = 12
TenantName = Annotated[str, AfterValidator(_label(TENANT_NAME_LEN, prefix=False))]
_MEMBER = re.compile(r"(?P<first>[a-z0-9][a-z0-9-]*?)(?:-(?P<last>[a-z][a-z0-9-]*[0-9]))?(?::(?P<nics>\d+(?:-\d+)?))?",
                     re.ASCII)
MAX_TENANT_ID = 1000  # its L3VNI VLAN (3000 + id) stays a VLAN id; fits a type-1 RD's 2-byte number


def parse_member(text: str) -> tuple[str, str, tuple[int, int] | None]:
    """`gpu0001`, `gpu0001-gpu0008` (servers), `gpu0003:0-3` (NICs 0..3 of a server or range): (first, last, nics).

    A name that itself has a '-' (prefix `gpu-`) parses as one server when the plan has it
    (fabricgen.plan.tenants); the split here is only the range reading.
    """
    m = _MEMBER.fullmatch(text)
    if m is None:
        raise ValueError(text)
    nics = m.group("nics")
    span: tuple[int, int] | None = None
    if nics is not None:
        lo, _, hi = nics.partition("-")
        span = (int(lo), int(hi or lo))
        if span[0] > span[1]:
            raise ValueError(text)
    return m.group("first"), m.group("last") or m.group("first"), span


def _member(value: str) -> str:
    try:
        parse_member(value)
    except ValueError:
        raise invalid(f"{value!r} is not a server, a server range or a server's NICs",
                      "write gpu0001 (a server), gpu0001-gpu0008 (servers) or gpu0003:0-3 (NICs 0..3, "
                      "tenancy.scope: gpu)") from None
    return value


Member = Annotated[str, AfterValidator(_member)]


class Tenancy(_Model):
    """How tenants are isolated (Juniper's AI multitenancy JVD: server vs GPU isolation; Nokia EDA: leaking vs EVPN).

    `server` scope puts a tenant's VRF on every leaf of the stripes (scalable units) its servers sit
    in; `gpu` scope only on the leaves wired to its NICs.  `vrf-lite` leaks each tenant's routes
    through the default VRF with no encapsulation; `evpn-vxlan` carries them as EVPN type-5 routes
    in an L3VNI per tenant.
    """

    scope: Literal["server", "gpu"] = "server"
    mechanism: Literal["vrf-lite", "evpn-vxlan"] = "evpn-vxlan"
    vni_base: Int = Field(default=10_000, ge=1, le=16_777_215 - MAX_TENANT_ID,
                          description="a tenant's L3VNI is vni_base + its id")
    table_base: Int = Field(default=1_000, ge=1, le=4_000_000,
                            description="a tenant's VRF table (Linux/FRR) is table_base + its id")
    rt_admin: Int = Field(default=65_000, ge=1, le=65_535,
                          description="administrator field of every route target (<rt_admin>:<vni>): the same on "
                          "every leaf, whatever its ASN")
    outer: Literal["ipv4", "ipv6"] = Field(default="ipv4", description="VXLAN outer header: 50 or 70 bytes")


class Tenant(_Model):
    """A tenant: the servers (or, with scope gpu, the NICs) it owns, and the tenants it may reach."""

    name: TenantName
    id: Int = Field(ge=1, le=MAX_TENANT_ID, description="the tenant's number: its VNI, VRF table, RD and RT "
                    "derive from it, so adding or renaming a tenant renumbers nothing")
    servers: list[Member] = Field(min_length=1, max_length=4096)
    vni: Int | None = Field(default=None, ge=1, le=16_777_215, description="default: tenancy.vni_base + id")
    reach: list[TenantName] = Field(default_factory=list, max_length=64,
                                    description="other tenants whose routes this one imports (leaked by intent)")
    description: Text = ""


class Intent(_Model):
    fabric: FabricMeta
    servers: Servers
    switch_models: SwitchModels
    platforms: Platforms = Platforms()
    topology: Topology = Topology()
    addressing: Addressing
    bgp: Bgp = Bgp()
    ecmp: Ecmp = Ecmp()
    qos: Qos = Qos()
    cabling: Cabling = Cabling()
    health: Health = Health()
    endpoints: list[Endpoint] = Field(default_factory=list, max_length=16,
                                      description="non-GPU hosts on the leaves (storage, UFM, management)")
    ptp: Ptp | None = Field(default=None, description="PTP boundary clocks and clients (docs/ptp.md)")

    @model_validator(mode="after")
    def _ptp_grandmaster_group(self) -> Intent:
        if self.ptp is None:
            return self
        names = [ep.name for ep in self.endpoints]
        if self.ptp.grandmaster.endpoints not in names:
            raise invalid(f"no endpoints: group is named {self.ptp.grandmaster.endpoints!r}",
                          "add an endpoints: group for the grandmasters (e.g. {name: gm, role: other, count: 1, "
                          "per: su}) and name it here" if not names else f"use one of: {', '.join(names)}",
                          at="ptp.grandmaster.endpoints")
        return self

    tenancy: Tenancy | None = Field(default=None, description="isolation scope and mechanism of `tenants`")
    tenants: list[Tenant] = Field(default_factory=list, max_length=MAX_TENANT_ID)

    @model_validator(mode="after")
    def _tenants_apart(self) -> Intent:
        """Names, ids and VNIs are identities: two tenants sharing one would share a VRF, a VNI or an RT."""
        if self.tenants and self.tenancy is None:
            raise invalid("tenants are listed but tenancy is missing", "add tenancy: {scope: server, mechanism: "
                          "evpn-vxlan} (or vrf-lite, or scope gpu)", at="tenants")
        seen: dict[tuple[str, object], int] = {}
        for i, t in enumerate(self.tenants):
            vni = t.vni if t.vni is not None else (self.tenancy.vni_base + t.id if self.tenancy else 0)
            for what, value in (("name", t.name), ("id", t.id), ("vni", vni)):
                first = seen.setdefault((what, value), i)
                if first != i:
                    field = "vni" if what == "vni" and t.vni is not None else ("id" if what == "vni" else what)
                    raise invalid(f"tenant {t.name!r} has the {what} {value} of tenants.{first} "
                                  f"({self.tenants[first].name!r})", f"give tenants.{i} a {what} of its own"
                                  + (" (its vni is tenancy.vni_base + id unless given)" if what == "vni" else ""),
                                  at=f"tenants.{i}.{field}")
        names = {t.name for t in self.tenants}
        for i, t in enumerate(self.tenants):
            for j, other in enumerate(t.reach):
                if other == t.name or other not in names:
                    raise invalid(f"tenant {t.name!r} may reach {other!r}, " + (
                        "itself" if other == t.name else "which is not a tenant"),
                        f"list other tenants' names ({', '.join(sorted(names - {t.name})) or 'none'})",
                        at=f"tenants.{i}.reach.{j}")
            if self.tenancy is not None and self.tenancy.scope == "server":
                for j, member in enumerate(t.servers):
                    if parse_member(member)[2] is not None:
                        raise invalid(f"{member!r} gives NICs of a server, but tenancy.scope is server (whole "
                                      "servers)", "list whole servers, or use tenancy.scope: gpu",
                                      at=f"tenants.{i}.servers.{j}")
        return self

    @model_validator(mode="after")
    def _endpoint_names(self) -> Intent:
        seen = {self.servers.name_prefix: "servers.name_prefix"}
        for i, ep in enumerate(self.endpoints):
            for name, where in seen.items():
                if name.startswith(ep.name) or ep.name.startswith(name):
                    raise invalid(f"endpoint name {ep.name!r} overlaps {where} {name!r}: their hostnames could "
                                  "collide", "give the servers and every endpoint group prefixes that do not start "
                                  "with one another", at=f"endpoints.{i}.name")
            seen[ep.name] = f"endpoints.{i}.name"
            if ep.per == "su" and not self.topology.rail_optimized:
                raise invalid("per: su needs scalable units (topology.rail_optimized: true)",
                              "use per: leaf", at=f"endpoints.{i}.per")
        return self

    @model_validator(mode="after")
    def _three_tier_needs_super_spine(self) -> Intent:
        if self.topology.tiers == 3 and self.switch_models.super_spine is None:
            raise invalid("topology.tiers is 3 but switch_models.super_spine is missing",
                          "add switch_models.super_spine or use topology.tiers: 2", at="switch_models.super_spine")
        return self

    @model_validator(mode="after")
    def _planes_fit_nics(self) -> Intent:
        if self.topology.planes > self.servers.ports_per_nic:
            raise invalid(f"topology.planes is {self.topology.planes} but a NIC has "
                          f"{self.servers.ports_per_nic} port(s) (servers.ports_per_nic): each plane takes one port",
                          f"set servers.ports_per_nic to {self.topology.planes} if the NICs have that many ports, "
                          "or use fewer planes", at="topology.planes")
        return self


# --------------------------------------------------------------------------- loading


def dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def load_intent(path: str | Path) -> tuple[Intent, dict[tuple[Any, ...], int]]:
    """Read, parse and validate an intent file.

    Returns the intent and an index of YAML paths to line numbers, so that the
    later cross-field checks can point at the line they complain about.
    Raises FabricError (never a bare exception) for every kind of bad input.
    """
    source = str(path)
    data, lines = intent_file.load(path)
    if not isinstance(data, dict):
        raise FabricError.single(source, "", "the intent must be a YAML mapping (fabric:, servers:, ...)",
                                 "start from inventory/fabric.yaml")
    try:
        intent = Intent.model_validate(data)
    except ValidationError as exc:
        raise FabricError(source, [validation_problem(err, lines) for err in exc.errors()]) from None
    return intent, lines


def validation_problem(err: Any, lines: dict[tuple[Any, ...], int]) -> Problem:
    """One pydantic error as a Problem: dotted path, message, fix and the line it points at."""
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    ctx = err.get("ctx") or {}
    if ctx.get("at"):  # a cross-field rule names the field to change
        loc = (*loc, *(int(p) if p.isdigit() else p for p in ctx["at"].split(".")))
    return Problem(dotted(loc), _message(err), _hint(err), line_for(lines, loc))


def line_for(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    """Line of the deepest YAML node that exists along loc."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines and (cut > 0 or not loc):
            return lines[loc[:cut]]
    return None


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "missing":
        return "required field is missing"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    return msg


# The fix for each pydantic error type; `{name}` fields come from the error's context.
_HINTS = {
    "extra_forbidden": "remove it or check its spelling against inventory/fabric.yaml",
    "missing": "add it (see inventory/fabric.yaml)",
    "literal_error": "use one of {expected}",
    "greater_than_equal": "use {ge} or more",
    "greater_than": "use a value above {gt}",
    "less_than_equal": "use {le} or less",
    "less_than": "use a value below {lt}",
    "int_type": "write a whole number",
    "int_parsing": "write a whole number",
    "int_from_float": "write a whole number",
    "float_type": "write a number",
    "float_parsing": "write a number",
    "finite_number": "write a finite number",
    "bool_type": "write true or false",
    "bool_parsing": "write true or false",
    "string_type": "write text (quote it)",
    "dict_type": "write a mapping of its fields",
    "model_type": "write a mapping of its fields",
    "model_attributes_type": "write a mapping of its fields",
    "tuple_type": "write a list, e.g. [a, b]",
    "list_type": "write a list, e.g. [a, b]",
    "ip_v4_network": "write the network address and prefix length with the host bits zero, e.g. 198.18.0.0/24",
    "ip_v6_network": "write the network address and prefix length with the host bits zero, e.g. 2001:db8::/48",
}


def _hint(err: Any) -> str:
    ctx = err.get("ctx") or {}
    if ctx.get("fix"):
        return str(ctx["fix"])
    template = _HINTS.get(err["type"])
    if template is None:
        return "see the field in inventory/fabric.yaml and the README's intent section"
    try:
        return template.format(**ctx)
    except (KeyError, IndexError):
        return template
