"""The fabric intent: one YAML file, validated by pydantic v2.

Only what an operator decides lives here; everything derivable (ports, links,
addresses, ASNs, thresholds) is computed by the later pipeline steps.  The file
is read by `intent_file` (bounded, typed YAML); loading maps every validation
error back to its YAML path and line number, with its fix.

Every string field has a type that fits where the value goes and every number field rejects
booleans: the types live in `fields`.  The larger sections have modules of their own: `tenants`
(tenancy, tenants), `ptp` and `load_balancing` (ecmp); this module holds the rest, the `Intent`
that gathers them and its cross-section rules, and loading.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError, field_validator, model_validator

from fabricgen.catalog.registry import SWITCH_PLATFORMS
from fabricgen.errors import FabricError, Problem
from fabricgen.intent import reader as intent_file
from fabricgen.intent.fields import (
    Flag,
    Float,
    HostLabel,
    HostPrefix,
    Int,
    IntentModel,
    Ratio,
    Speed,
    Text,
    Token,
    invalid,
    number,
    parse_ratio,
)
from fabricgen.intent.load_balancing import Ecmp
from fabricgen.intent.ptp import Ptp, check_grandmaster_group
from fabricgen.intent.tenants import MAX_TENANT_ID, Tenancy, Tenant, check_tenants

NIC_SPEEDS = (100, 200, 400, 800)
PORT_SPEEDS = (25, 50, 100, 200, 400, 800, 1600)
PLATFORMS = SWITCH_PLATFORMS  # one record each in fabricgen.catalog.registry


class FabricMeta(IntentModel):
    name: HostLabel = Field(description="fabric name, used as hostname prefix")
    description: Text = ""


class Servers(IntentModel):
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


class Endpoint(IntentModel):
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
Breakout = Annotated[Literal[1, 2, 4, 8], BeforeValidator(number)]


def _port_speed(v: int) -> int:
    if v not in PORT_SPEEDS:
        raise invalid(f"{v}G is not a port speed", f"use one of {', '.join(f'{s}G' for s in PORT_SPEEDS)}")
    return v


class PortGroup(IntentModel):
    """The logical ports one direction (down to servers, or up to the next tier) runs on its cages."""

    speed: Speed
    breakout: Breakout | None = Field(default=None, description="logical ports per cage; default: cage speed / speed")

    @field_validator("speed")
    @classmethod
    def _speed(cls, v: int) -> int:
        return _port_speed(v)


# With a SKU these come from the SKU's own port data (fabricgen.catalog.skus), never from the intent.
SKU_DERIVED = ("ports", "port_speed", "breakout", "lanes_per_port")


class SwitchModel(IntentModel):
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


class SwitchModels(IntentModel):
    leaf: SwitchModel
    spine: SwitchModel | None = None
    super_spine: SwitchModel | None = None


def _platform(value: str) -> str:
    if value not in PLATFORMS:
        raise invalid(f"unknown platform {value!r}", f"use one of: {', '.join(PLATFORMS)}")
    return value


Platform = Annotated[str, AfterValidator(_platform)]


class Platforms(IntentModel):
    leaf: Platform = "sonic"
    spine: Platform = "nxos"
    super_spine: Platform = "nxos"
    sonic_release: str | None = Field(
        default=None, pattern=r"^(20\d{4}|master)$",
        description="the SONiC release branch the SONiC switches run (202411): `check` validates against that "
        "release's YANG models where they are present, and deploy labels GCU changes by it")


class TierRatios(IntentModel):
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
    return {"leaf": _at_least_one(float(parse_ratio(value)))}


class Topology(IntentModel):
    tiers: Annotated[Literal[1, 2, 3], BeforeValidator(number)] = 2
    rail_optimized: Flag = True
    planes: Int = Field(default=1, ge=1, le=8)
    oversubscription: Annotated[TierRatios, BeforeValidator(_tier_ratios)] = Field(
        default=TierRatios(), description="down:up bandwidth target of the leaves, '1:1' = non-blocking; "
                                          "or per tier {leaf:, spine:}")
    scalable_unit: Int | None = Field(
        default=None, ge=1, description="servers per scalable unit (SU); default: what one rail leaf holds")
    rails_per_leaf: Annotated[Literal[1, 2, 4, 8], BeforeValidator(number)] = Field(
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


class Addressing(IntentModel):
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


class Bfd(IntentModel):
    enabled: Flag = True
    min_tx_ms: Int = Field(default=300, ge=10, le=10000)
    min_rx_ms: Int = Field(default=300, ge=10, le=10000)
    multiplier: Int = Field(default=3, ge=2, le=50)


class Bgp(IntentModel):
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


class EcnThreshold(IntentModel):
    min_bytes: Int = Field(ge=1024)
    max_bytes: Int = Field(ge=1024)
    probability: Int = Field(ge=1, le=100)

    @model_validator(mode="after")
    def _order(self) -> EcnThreshold:
        if self.min_bytes >= self.max_bytes:
            raise invalid(f"ECN min {self.min_bytes} must be below max {self.max_bytes}",
                          "lower min_bytes or raise max_bytes", at="min_bytes")
        return self


class PfcWatchdog(IntentModel):
    enabled: Flag = True
    detection_ms: Int = Field(default=200, ge=100, le=5000)
    restoration_ms: Int = Field(default=200, ge=100, le=60000)
    poll_ms: Int = Field(default=200, ge=100, le=1000)
    action: Literal["drop", "forward", "alert"] = "drop"


class Headroom(IntentModel):
    """ASIC constants of SONiC's dynamic headroom formula (defaults: NVIDIA Spectrum-4)."""

    cell_size: Int = Field(default=192, ge=64, le=4096)
    pipeline_latency_kb: Float = Field(default=19, ge=0, le=1024)
    mac_phy_delay_kb: Float = Field(default=0.8, ge=0, le=1024)
    small_packet_percentage: Int = Field(default=50, ge=0, le=100)
    lossless_mtu: Int = Field(default=1024, ge=64, le=9216)


class Bandwidth(IntentModel):
    roce: Int = Field(default=50, ge=0, le=100)
    default: Int = Field(default=50, ge=0, le=100)


class NicSettings(IntentModel):
    trust: Literal["dscp", "pcp"] = "dscp"
    cnp_dscp: Int | None = Field(default=None, ge=0, le=63, description="default: the fabric's CNP DSCP")
    ecn_capable: Flag = True
    qps_per_connection: Int = Field(
        default=4, ge=1, le=64, description="NCCL_IB_QPS_PER_CONNECTION the NIC scripts write to /etc/nccl.conf: "
        "more QPs give ECMP more flows to spread (`fabricgen analyze ecmp` shows the what-if)")


class Qos(IntentModel):
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


class Health(IntentModel):
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


class Cabling(IntentModel):
    """Cable length per tier in metres; drives optic choice and PFC headroom."""

    gpu_leaf_m: Float = Field(default=3, gt=0, le=10_000)
    leaf_spine_m: Float = Field(default=30, gt=0, le=10_000)
    spine_super_spine_m: Float = Field(default=150, gt=0, le=10_000)


class Intent(IntentModel):
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
        check_grandmaster_group(self.ptp, [ep.name for ep in self.endpoints])
        return self

    tenancy: Tenancy | None = Field(default=None, description="isolation scope and mechanism of `tenants`")
    tenants: list[Tenant] = Field(default_factory=list, max_length=MAX_TENANT_ID)

    @model_validator(mode="after")
    def _tenants_apart(self) -> Intent:
        check_tenants(self.tenants, self.tenancy)
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
