"""The fabric intent: one YAML file, validated by pydantic v2.

Only what an operator decides lives here; everything derivable (ports, links,
addresses, ASNs, thresholds) is computed by the later pipeline steps.  Loading
maps every validation error back to its YAML path and line number.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from fabricgen.errors import FabricError, Problem

NIC_SPEEDS = (100, 200, 400, 800)
PORT_SPEEDS = (25, 50, 100, 200, 400, 800, 1600)
PLATFORMS = ("nxos", "sonic", "frr")
Platform = Literal["nxos", "sonic", "frr"]
Role = Literal["leaf", "spine", "super_spine"]
_HOSTNAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$")


def _parse_speed(value: Any) -> Any:
    """Accept 400, "400", "400G", "400g", "400Gb" as 400 (Gb/s)."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*(g|gb|gbps|gbe)?\s*", value, re.IGNORECASE)
        if not m:
            raise ValueError(f"speed {value!r} is not like '400G'")
        return int(m.group(1))
    return value


def _parse_ratio(value: Any) -> Any:
    """Accept "1:1", "3:1", 1, 1.5 as a down:up bandwidth ratio."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*", value)
        if not m:
            raise ValueError(f"oversubscription {value!r} is not like '1:1' or '3:1'")
        return float(Fraction(m.group(1)) / Fraction(m.group(2)))
    return value


class HintedError(ValueError):
    """A validation error that also says how to fix it (the loader shows the hint as "fix:")."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


Speed = Annotated[int, BeforeValidator(_parse_speed)]
Ratio = Annotated[float, BeforeValidator(_parse_ratio)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FabricMeta(_Model):
    name: str = Field(description="fabric name, used as hostname prefix")
    description: str = ""

    @field_validator("name")
    @classmethod
    def _hostname_safe(cls, v: str) -> str:
        if not _HOSTNAME.match(v):
            raise ValueError("must be lowercase letters, digits and '-', at most 32 characters")
        return v


class Servers(_Model):
    count: int = Field(ge=1)
    gpus_per_server: int = Field(default=8, ge=1, le=16)
    nics_per_server: int = Field(default=8, ge=1, le=16)
    nic_speed: Speed = 400
    name_prefix: str = "gpu"

    @field_validator("nic_speed")
    @classmethod
    def _nic_speed(cls, v: int) -> int:
        if v not in NIC_SPEEDS:
            raise ValueError(f"NIC speed must be one of {', '.join(f'{s}G' for s in NIC_SPEEDS)}")
        return v


# The largest fixed radix fabricgen accepts, in physical front-panel ports: a 16-slot modular
# chassis of 36-port line cards (Arista 7816R3, Juniper PTX10016: 576 x 400G).
LARGEST_CHASSIS = "16-slot modular chassis (Arista 7816R3 / Juniper PTX10016)"
MAX_CHASSIS_PORTS = 576
Cage = Literal["osfp", "qsfp-dd", "qsfp112", "qsfp56", "qsfp28"]
Breakout = Literal[1, 2, 4, 8]


def _port_speed(v: int) -> int:
    if v not in PORT_SPEEDS:
        raise HintedError(f"port speed must be one of {', '.join(f'{s}G' for s in PORT_SPEEDS)}",
                          "use a standard Ethernet speed such as 400G")
    return v


class PortGroup(_Model):
    """The logical ports one direction (down to servers, or up to the next tier) runs on its cages."""

    speed: Speed
    breakout: Breakout | None = Field(default=None, description="logical ports per cage; default: cage speed / speed")

    @field_validator("speed")
    @classmethod
    def _speed(cls, v: int) -> int:
        return _port_speed(v)


class SwitchModel(_Model):
    model: str = "generic"
    ports: int = Field(ge=4, le=MAX_CHASSIS_PORTS,
                       description=f"physical front-panel cages (at most {MAX_CHASSIS_PORTS}: {LARGEST_CHASSIS})")
    port_speed: Speed = 400
    breakout: Breakout = 1
    lanes_per_port: int = Field(default=8, ge=1, le=8, description="SerDes lanes per physical port")
    cage: Cage | None = Field(default=None, description="default: from the cage speed and lanes (see physical.py)")
    downlink: PortGroup | None = Field(default=None, description="server-facing ports; default: speed/breakout")
    uplink: PortGroup | None = Field(default=None, description="ports to the next tier; default: speed/breakout")

    @field_validator("port_speed")
    @classmethod
    def _port_speed(cls, v: int) -> int:
        return _port_speed(v)

    @model_validator(mode="after")
    def _groups_fit_the_cage(self) -> SwitchModel:
        if self.lanes_per_port % self.breakout:
            raise ValueError(f"breakout {self.breakout} does not divide the {self.lanes_per_port} lanes of a port")
        for side in ("downlink", "uplink"):
            group: PortGroup | None = getattr(self, side)
            if group is None:
                continue
            n = group.breakout or self.port_speed // group.speed
            if group.breakout is None and (self.port_speed % group.speed or n not in (1, 2, 4, 8)):
                raise ValueError(f"{side} speed {group.speed}G does not split a {self.port_speed}G cage into "
                                 "1, 2, 4 or 8 ports; give its breakout")
            if n * group.speed > self.port_speed:
                raise ValueError(f"{side}: {n} x {group.speed}G exceeds the {self.port_speed}G cage")
            if self.lanes_per_port % n:
                raise ValueError(f"{side}: breakout {n} does not divide the {self.lanes_per_port} lanes of a port")
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


class Platforms(_Model):
    leaf: Platform = "sonic"
    spine: Platform = "nxos"
    super_spine: Platform = "nxos"


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
        raise HintedError("oversubscription below 1:1 means more uplink than downlink bandwidth",
                          "use '1:1' (non-blocking) or a larger first number, e.g. '2:1'")
    return v


def _tier_ratios(value: Any) -> Any:
    """A single ratio is the leaf target (spines stay non-blocking); a mapping gives each tier's."""
    if not isinstance(value, str | int | float):
        return value
    return {"leaf": _at_least_one(float(_parse_ratio(value)))}


class Topology(_Model):
    tiers: Literal[1, 2, 3] = 2
    rail_optimized: bool = True
    planes: int = Field(default=1, ge=1, le=8)
    oversubscription: Annotated[TierRatios, BeforeValidator(_tier_ratios)] = Field(
        default=TierRatios(), description="down:up bandwidth target of the leaves, '1:1' = non-blocking; "
                                          "or per tier {leaf:, spine:}")
    scalable_unit: int | None = Field(
        default=None, ge=1, description="servers per scalable unit (SU); default: what one rail leaf holds")
    rails_per_leaf: Literal[1, 2, 4, 8] = Field(
        default=1, description="rails one leaf carries (rail-optimized designs smaller than a scalable unit)")
    leaf_uplinks: int | None = Field(
        default=None, ge=1, description="uplinks per leaf; default: what the oversubscription target allows"
    )
    spines: int | None = Field(
        default=None, ge=1,
        description="spines per plane (2-tier) or per pod (3-tier); default: the fewest that hold the leaves")
    super_spines_per_group: int | None = Field(
        default=None, ge=1,
        description="3-tier: super-spines each pod-spine index connects to; default: the fewest for the pods")
    max_pods: int | None = Field(
        default=None, ge=1, description="3-tier growth envelope in pods; default: the pods planned"
    )
    max_servers: int | None = Field(
        default=None, ge=1, description="growth envelope in servers; default: the servers planned"
    )

    def ratio(self, tier: Literal["leaf", "spine"]) -> float:
        """The down:up bandwidth target of one tier."""
        return self.oversubscription.leaf if tier == "leaf" else self.oversubscription.spine


class Addressing(_Model):
    loopbacks: ipaddress.IPv4Network
    p2p: ipaddress.IPv4Network = Field(description="pool for /31 fabric links")
    gpu: ipaddress.IPv4Network = Field(description="pool for GPU-NIC /31s")
    management: ipaddress.IPv4Network
    loopbacks_v6: ipaddress.IPv6Network | None = None
    p2p_v6: ipaddress.IPv6Network | None = None


class Bfd(_Model):
    enabled: bool = True
    min_tx_ms: int = Field(default=300, ge=10, le=10000)
    min_rx_ms: int = Field(default=300, ge=10, le=10000)
    multiplier: int = Field(default=3, ge=2, le=50)


class Bgp(_Model):
    asn_scheme: Literal["multi-as", "same-tier"] = "multi-as"
    leaf_asn_base: int = Field(default=4_200_000_000, ge=1, le=4_294_967_294)
    spine_asn_base: int = Field(default=4_200_100_000, ge=1, le=4_294_967_294)
    super_spine_asn: int = Field(default=4_200_200_000, ge=1, le=4_294_967_294)
    keepalive: int = Field(default=3, ge=1, le=3600)
    holdtime: int = Field(default=9, ge=3, le=65535)
    bfd: Bfd = Bfd()
    maximum_paths: int | None = Field(default=None, ge=1, le=1024, description="default: equal-cost uplinks")
    allowas_in: int = Field(default=1, ge=1, le=10)

    @model_validator(mode="after")
    def _timers(self) -> Bgp:
        if self.holdtime < 3 * self.keepalive:
            raise ValueError(f"holdtime {self.holdtime} must be at least 3 x keepalive ({3 * self.keepalive})")
        return self


class AdaptiveRouting(_Model):
    enabled: bool = False
    mode: Literal["flowlet", "per-packet"] = "flowlet"
    flowlet_aging_us: int = Field(default=500, ge=1, le=2_000_000)
    mac_address: str = "00:cc:cc:cc:cc:cc"


class Ecmp(_Model):
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
            raise ValueError("must include 'l4-src-port': RoCEv2 carries its flow entropy in the UDP source port")
        return v


class EcnThreshold(_Model):
    min_bytes: int = Field(ge=1024)
    max_bytes: int = Field(ge=1024)
    probability: int = Field(ge=1, le=100)

    @model_validator(mode="after")
    def _order(self) -> EcnThreshold:
        if self.min_bytes >= self.max_bytes:
            raise ValueError(f"ECN min {self.min_bytes} must be below max {self.max_bytes}")
        return self


def _default_ecn() -> dict[int, EcnThreshold]:
    # Below the shortest-cable PFC xoff of each speed (see qos.headroom), so ECN marks before PFC pauses.
    return {
        100: EcnThreshold(min_bytes=20_480, max_bytes=61_440, probability=5),
        200: EcnThreshold(min_bytes=24_576, max_bytes=73_728, probability=5),
        400: EcnThreshold(min_bytes=65_536, max_bytes=131_072, probability=5),
        800: EcnThreshold(min_bytes=65_536, max_bytes=131_072, probability=5),
    }


class PfcWatchdog(_Model):
    enabled: bool = True
    detection_ms: int = Field(default=200, ge=100, le=5000)
    restoration_ms: int = Field(default=200, ge=100, le=60000)
    poll_ms: int = Field(default=200, ge=100, le=1000)
    action: Literal["drop", "forward", "alert"] = "drop"


class Headroom(_Model):
    """ASIC constants of SONiC's dynamic headroom formula (defaults: NVIDIA Spectrum-4)."""

    cell_size: int = Field(default=192, ge=64)
    pipeline_latency_kb: float = Field(default=19, ge=0)
    mac_phy_delay_kb: float = Field(default=0.8, ge=0)
    small_packet_percentage: int = Field(default=50, ge=0, le=100)
    lossless_mtu: int = Field(default=1024, ge=64, le=9216)


class Bandwidth(_Model):
    roce: int = Field(default=50, ge=0, le=100)
    default: int = Field(default=50, ge=0, le=100)


class NicSettings(_Model):
    trust: Literal["dscp", "pcp"] = "dscp"
    cnp_dscp: int | None = Field(default=None, ge=0, le=63, description="default: the fabric's CNP DSCP")
    ecn_capable: bool = True


class Qos(_Model):
    roce_dscp: tuple[int, ...] = (26,)
    cnp_dscp: int = Field(default=48, ge=0, le=63)
    roce_tc: int = Field(default=3, ge=0, le=7, description="traffic class, PFC priority and queue of RoCE")
    cnp_tc: int = Field(default=6, ge=0, le=7, description="strict-priority class of CNPs")
    lossless_tcs: tuple[int, ...] | None = Field(default=None, description="default: (roce_tc,)")
    mtu: int = Field(default=9216, ge=1500, le=9216)
    ecn: dict[Speed, EcnThreshold] = Field(default_factory=_default_ecn)
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
            raise ValueError("at least one RoCE DSCP is needed")
        bad = [d for d in v if not 0 <= d <= 63]
        if bad:
            raise ValueError(f"DSCP values must be 0..63, got {bad}")
        return v

    @property
    def lossless(self) -> tuple[int, ...]:
        return self.lossless_tcs if self.lossless_tcs is not None else (self.roce_tc,)


class Cabling(_Model):
    """Cable length per tier in metres; drives optic choice and PFC headroom."""

    gpu_leaf_m: float = Field(default=3, gt=0, le=10_000)
    leaf_spine_m: float = Field(default=30, gt=0, le=10_000)
    spine_super_spine_m: float = Field(default=150, gt=0, le=10_000)


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

    @model_validator(mode="after")
    def _three_tier_needs_super_spine(self) -> Intent:
        if self.topology.tiers == 3 and self.switch_models.super_spine is None:
            raise ValueError("topology.tiers is 3 but switch_models.super_spine is missing")
        return self


# --------------------------------------------------------------------------- loading


def _line_index(node: yaml.Node, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], int]]:
    """Yield (yaml path, 1-based line) for every node of a composed YAML document."""
    yield path, node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            k = key.value
            if isinstance(k, str) and k.isdigit():
                # numeric keys (qos.ecn.400) are parsed to int by pydantic; index both spellings
                yield from _line_index(value, (*path, int(k)))
            yield path + (k,), key.start_mark.line + 1
            yield from _line_index(value, (*path, k))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _line_index(item, (*path, i))


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last."""


def _no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {seen[key]})", key_node.start_mark
            )
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def dotted(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc)


def load_intent(path: str | Path) -> tuple[Intent, dict[tuple[Any, ...], int]]:
    """Read, parse and validate an intent file.

    Returns the intent and an index of YAML paths to line numbers, so that the
    later cross-field checks can point at the line they complain about.
    Raises FabricError (never a bare exception) for every kind of bad input.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise FabricError.single(source, "", f"cannot read intent file: {exc.strerror}",
                                 "pass an existing file with -i") from None
    try:
        node = yaml.compose(text, Loader=_UniqueKeyLoader)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise FabricError.single(source, "", f"malformed YAML: {problem}", "fix the YAML syntax", line) from None
    if not isinstance(data, dict):
        raise FabricError.single(source, "", "the intent must be a YAML mapping (fabric:, servers:, ...)",
                                 "start from inventory/fabric.yaml")
    lines = dict(_line_index(node)) if node is not None else {}
    try:
        intent = Intent.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            problems.append(Problem(dotted(loc), _message(err), _hint(err), line_for(lines, loc)))
        raise FabricError(source, problems) from None
    return intent, lines


def line_for(lines: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    """Line of the deepest YAML node that exists along loc."""
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in lines and (cut > 0 or not loc):
            return lines[loc[:cut]]
    return None


def _message(err: Any) -> str:
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "missing":
        return "required field is missing"
    return msg


def _hint(err: Any) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if isinstance(ctx.get("error"), HintedError):
        return str(ctx["error"].hint)
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = next(iter(v for k, v in ctx.items() if k in ("ge", "le", "gt", "lt")), "")
        word = {"greater_than_equal": "at least", "less_than_equal": "at most",
                "greater_than": "more than", "less_than": "less than"}[kind]
        return f"use a value {word} {bound}"
    if kind == "extra_forbidden":
        return "remove it or check its spelling against inventory/fabric.yaml"
    if kind == "missing":
        return "add it"
    if kind.startswith("literal_error"):
        return "use one of the allowed values"
    return ""
