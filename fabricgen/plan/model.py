"""The plan: a fully resolved, vendor-neutral model of the fabric (AVD's "structured config").

Every later stage (render, check, lab, deploy, validate) reads only this model;
none of them recomputes an address, an ASN or a threshold.  Plain slotted
dataclasses keep a 32K-GPU plan (~2,500 switches, ~100K links) small and fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network
from typing import Literal

from fabricgen.catalog.skus import RoleHardware
from fabricgen.errors import Problem

Role = Literal["leaf", "spine", "super_spine"]
Tier = Literal["gpu_leaf", "leaf_spine", "spine_super_spine"]
TIERS: tuple[Tier, ...] = ("gpu_leaf", "leaf_spine", "spine_super_spine")
ROLES: tuple[Role, ...] = ("leaf", "spine", "super_spine")


# --------------------------------------------------------------------------- the design (growth envelope)


@dataclass(frozen=True)
class Side:
    """One direction of a switch: how many cages it uses, their breakout and the logical port speed."""

    cages: int
    breakout: int
    speed: int  # Gb/s of one logical port

    @property
    def ports(self) -> int:
        return self.cages * self.breakout

    @property
    def bandwidth(self) -> int:
        return self.ports * self.speed


@dataclass(frozen=True)
class Choice:
    """A derived design number and why it is what it is (printed by `fabricgen plan`)."""

    name: str
    value: str
    why: str


@dataclass(frozen=True)
class Design:
    """The growth envelope: what the chosen switch models and settings can hold."""

    tiers: int
    planes: int
    rails: int  # NIC ports per server per plane
    leaf_ports: int
    leaf_down: int
    leaf_up: int
    spines: int  # per plane (2-tier) or per pod (3-tier)
    leaf_spine_links: int  # parallel links between one leaf and one spine
    spine_ports: int
    spine_down: int
    spine_up: int
    max_leaves_per_pod: int
    max_pods: int
    super_group: int  # super-spines per spine index (3-tier)
    spine_super_links: int  # parallel links between one spine and one super-spine
    super_ports: int
    servers_per_leaf: int  # non-rail-optimized designs
    su_size: int = 0  # servers per scalable unit (rail-optimized)
    endpoint_ports: int = 0  # server ports of every leaf kept for endpoints (intent.endpoints), after the servers'
    rails_per_leaf: int = 1
    leaf_sides: tuple[Side, Side] = (Side(0, 1, 0), Side(0, 1, 0))  # (down, up)
    spine_sides: tuple[Side, Side] = (Side(0, 1, 0), Side(0, 1, 0))
    super_sides: tuple[Side, Side] = (Side(0, 1, 0), Side(0, 1, 0))
    ratios: tuple[tuple[str, float], ...] = ()  # design down:up bandwidth per tier (full switches)
    choices: tuple[Choice, ...] = ()

    @property
    def leaves_per_su(self) -> int:
        return self.rails // self.rails_per_leaf

    def endpoint_units(self, per: str) -> int:
        """Leaves (`per: leaf`) or scalable units (`per: su`) the envelope holds: endpoint numbering."""
        if per == "leaf":
            return self.max_leaves
        return self.planes * self.max_pods * max(self.max_leaves_per_pod // self.leaves_per_su, 1)

    @property
    def endpoint_base(self) -> int:
        """Index of a leaf's first endpoint port: right after the ports its servers can take."""
        return self.su_size * self.rails_per_leaf if self.su_size else self.servers_per_leaf * self.rails

    @property
    def max_leaves(self) -> int:
        return self.planes * self.max_pods * self.max_leaves_per_pod

    @property
    def max_spines(self) -> int:
        return self.planes * self.max_pods * self.spines

    @property
    def max_super_spines(self) -> int:
        return self.planes * self.spines * self.super_group if self.tiers == 3 else 0

    def sides(self, role: str) -> tuple[Side, Side]:
        return {"leaf": self.leaf_sides, "spine": self.spine_sides}.get(role, self.super_sides)

    def port_position(self, role: str, index: int) -> tuple[int, int, int]:
        """(cage, sub-port, breakout) of logical port `index`: down ports first, then uplinks."""
        down, up = self.sides(role)
        if index < down.ports:
            cage, sub = divmod(index, down.breakout)
            return cage, sub, down.breakout
        cage, sub = divmod(index - down.ports, up.breakout)
        return down.cages + cage, sub, up.breakout


# --------------------------------------------------------------------------- the fabric


@dataclass(slots=True)
class Interface:
    """One routed port of a switch, with everything a template needs to lay it out."""

    name: str  # platform name: Ethernet1/1 (NX-OS), Ethernet8 (SONiC / FRR)
    index: int  # logical port index, 0-based
    speed: int  # Gb/s
    tier: Tier
    direction: Literal["down", "up"]
    peer_device: str
    peer_interface: str
    ipv4: str = ""  # "198.18.4.0/31"
    peer_ipv4: str = ""  # "198.18.4.1"
    ipv6: str = ""
    peer_ipv6: str = ""
    mtu: int = 9216
    cable_m: float = 0.0
    qos_profile: str = ""  # key into Plan.qos_profiles
    adaptive_routing: bool = False  # both ends do adaptive routing (the platform's own name: NX-OS DLB)
    cage: int = 0  # front-panel cage (physical port), 0-based
    subport: int = 0  # logical port within the cage, 0-based
    breakout: int = 1  # logical ports the cage is split into

    @property
    def description(self) -> str:
        return f"{self.tier}:{self.peer_device}:{self.peer_interface}"


@dataclass(slots=True)
class BgpNeighbor:
    ip: str
    remote_asn: int
    peer_device: str
    interface: str
    description: str
    allowas_in: int = 0  # 0 = off
    disable_peer_as_check: bool = False
    bfd: bool = True
    afi: Literal["ipv4", "ipv6"] = "ipv4"


@dataclass(slots=True)
class SwitchBgp:
    asn: int
    router_id: str
    maximum_paths: int  # what the config sets: the intent's bgp.maximum_paths, else `equal_cost_paths`
    keepalive: int
    holdtime: int
    neighbors: list[BgpNeighbor] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)  # loopback /32 (+ /128) announced
    connected_gpu_subnets: bool = False  # leaves redistribute their GPU-facing /31s
    bfd_min_tx: int = 300
    bfd_min_rx: int = 300
    bfd_multiplier: int = 3
    bfd: bool = True
    equal_cost_paths: int = 1  # next hops the switch's role has towards its farthest destination (underlay)


@dataclass(slots=True)
class Switch:
    hostname: str
    role: Role
    platform: str  # a fabricgen.catalog.registry record's name
    model: str
    plane: int
    pod: int  # 0 for 2-tier fabrics and for super-spines
    index: int  # position within (plane, pod, role)
    slot: int  # stable global position of this role, drives every address and ASN
    asn: int = 0
    loopback: str = ""  # "198.18.0.1"
    loopback_v6: str = ""
    mgmt_ip: str = ""
    interfaces: list[Interface] = field(default_factory=list)
    bgp: SwitchBgp | None = None
    su: int = -1  # leaves: scalable unit
    rail: int = -1  # leaves in rail-optimized designs
    sku: str = ""  # hardware SKU / model name ("" = generic port naming)

    def interface(self, name: str) -> Interface:
        for itf in self.interfaces:
            if itf.name == name:
                return itf
        raise KeyError(f"{self.hostname} has no interface {name}")


@dataclass(slots=True)
class Link:
    """One cable, A end closer to the servers."""

    tier: Tier
    a_device: str
    a_port: str
    z_device: str
    z_port: str
    speed: int
    length_m: float
    media: str = ""  # DAC, AEC, AOC, SR, DR, FR, LR
    a_ip: str = ""
    z_ip: str = ""


@dataclass(slots=True)
class NicAttachment:
    """One GPU NIC port cabled to one leaf port."""

    server: str
    nic: int  # NIC index in the server, 0-based
    port: int  # NIC port, 0-based (dual-port NICs in multi-plane designs)
    rail: int
    plane: int
    ifname: str  # host interface name, e.g. "eth0"
    leaf: str
    leaf_port: str
    speed: int
    ip: str = ""  # "198.19.0.1/31"
    gateway: str = ""  # leaf side address


@dataclass(slots=True)
class Server:
    """A host on the leaves' server ports: a GPU server, or an endpoint (storage, UFM, management)."""

    name: str
    index: int
    su: int
    pod: int
    gpus: int
    mgmt_ip: str = ""
    nics: list[NicAttachment] = field(default_factory=list)
    role: str = "gpu"  # "gpu", or the endpoint group's role (intent.Endpoint.role)


@dataclass(slots=True)
class QosProfile:
    """Per-port lossless settings that depend on speed and cable length (SONiC BUFFER_PROFILE naming)."""

    name: str
    speed: int
    cable_m: float
    mtu: int
    xon: int  # bytes
    xoff: int  # bytes
    size: int  # bytes
    ecn_min: int  # bytes
    ecn_max: int  # bytes
    ecn_probability: int  # percent


@dataclass(slots=True)
class QosPolicy:
    """Fabric-wide classification, scheduling and watchdog settings shared by every switch and NIC."""

    roce_dscp: tuple[int, ...]
    cnp_dscp: int
    roce_tc: int
    cnp_tc: int
    lossless_tcs: tuple[int, ...]
    dscp_to_tc: dict[int, int]  # all 64 DSCPs
    tc_to_queue: dict[int, int]
    tc_to_pg: dict[int, int]
    pfc_priority_to_queue: dict[int, int]
    bandwidth: dict[str, int]  # {"roce": 50, "default": 50}
    mtu: int
    watchdog_enabled: bool
    watchdog_detection_ms: int
    watchdog_restoration_ms: int
    watchdog_poll_ms: int
    watchdog_action: str
    nic_trust: str
    nic_cnp_dscp: int
    nic_roce_tos: int  # DSCP << 2 | ECT(0)
    nic_ecn: bool = True  # enable DCQCN (ECN NP/RP) on the RoCE priority; off = PFC-only hosts
    nic_qps_per_connection: int = 4  # NCCL_IB_QPS_PER_CONNECTION in /etc/nccl.conf


@dataclass(frozen=True, slots=True)
class RoleModel:
    """One role's switch model as the plan resolved it (a SKU's numbers filled in)."""

    model: str
    ports: int  # front-panel cages
    port_speed: int  # Gb/s of a cage
    breakout: int
    lanes_per_port: int
    cage: str = ""  # cage type; "" = from speed and lanes (physical.default_cage)
    down: tuple[int, int] = (0, 0)  # (logical speed, breakout) of the server-facing ports
    up: tuple[int, int] = (0, 0)  # (logical speed, breakout) of the ports to the next tier
    split: bool = False  # the intent gives the two sides their own speed / breakout

    @property
    def logical_speed(self) -> int:
        return self.port_speed // self.breakout


@dataclass(frozen=True, slots=True)
class Pools:
    """The intent's address pools."""

    loopbacks: IPv4Network
    p2p: IPv4Network
    gpu: IPv4Network
    management: IPv4Network
    loopbacks_v6: IPv6Network | None = None
    p2p_v6: IPv6Network | None = None


@dataclass(frozen=True, slots=True)
class HealthLimits:
    """The intent's `health:` limits, resolved (what `validate --health` judges counter deltas against)."""

    window_seconds: int = 10
    max_lossless_drops: int = 0
    max_cnp_drops: int = 0
    max_pause_per_minute: int = 600
    max_watchdog_storms_per_minute: int = 0
    max_ecn_marked_share: float = 0.1
    ecn_min_packets: int = 1000


@dataclass(slots=True)
class AdaptiveRouting:
    """Adaptive routing as asked (enabled, mode, timers) and as planned (the ports both of whose ends do it)."""

    enabled: bool = False
    mode: str = ""
    flowlet_aging_us: int = 0
    mac_address: str = ""
    switches: dict[str, list[str]] = field(default_factory=dict)  # hostname -> its active ports

    @property
    def active_ports(self) -> int:
        return sum(len(ports) for ports in self.switches.values())


PtpPortRole = Literal["upstream", "downstream"]
ClockKind = Literal["grandmaster", "standby", "boundary", "client"]


@dataclass(frozen=True, slots=True)
class PtpPort:
    """One PTP port of a clock, as the plan expects the BMCA to settle it.

    `upstream` faces the grandmaster: one upstream port of a clock becomes SLAVE, any other PASSIVE.
    `downstream` faces the clients (servers, and boundary clocks farther from the grandmaster): MASTER.
    """

    name: str
    role: PtpPortRole
    peer: str
    peer_port: str


@dataclass(slots=True)
class PtpClock:
    """One PTP clock: a grandmaster, a switch's boundary clock or a server NIC's client (ordinary) clock."""

    hostname: str
    kind: ClockKind
    steps_removed: int  # as the clock's CURRENT_DATA_SET counts it from the preferred grandmaster (GM: 0)
    parents: tuple[str, ...]  # the clocks its upstream ports face: it syncs to one of them ("" = grandmaster)
    ports: list[PtpPort] = field(default_factory=list)
    priority1: int = 128
    priority2: int = 128
    source_ip: str = ""  # the switch's loopback (PTP source address on NX-OS and EOS)

    def port_roles(self, role: PtpPortRole) -> list[str]:
        return [p.name for p in self.ports if p.role == role]


@dataclass(slots=True)
class PtpPlan:
    """The fabric's PTP service: the profile, the grandmasters and every clock's planned place."""

    profile: str  # default-1588 | g8275.1 | g8275.2
    domain: int
    transport: Literal["UDPv4", "L2"]
    dscp: int
    timestamping: Literal["hardware", "software"]
    offset_ns: int
    path_delay_ns: int
    last_sync_s: int
    grandmaster: str  # the preferred grandmaster's hostname
    clocks: dict[str, PtpClock] = field(default_factory=dict)  # hostname -> clock (deterministic order)
    boundary_tiers: tuple[str, ...] = ()

    def of_kind(self, *kinds: ClockKind) -> list[PtpClock]:
        return [c for c in self.clocks.values() if c.kind in kinds]


@dataclass(frozen=True, slots=True)
class SwitchHash:
    """What the ECMP hash of a role's switches does as rendered: the analysis models exactly this."""

    algorithm: str  # the modelled hash (analyze.hashing: crc32, crc16, xor)
    seed: int
    rotate: int  # right rotation of the hash before the member is picked (NX-OS rotate, SAI hash offset)
    per_switch: bool  # each switch has its own random key (Linux's per-boot key): seed/rotate do not apply
    rendered_algorithm: str  # the modelled hash the config selects ("" = the platform's default hash)
    how: str  # where the seed comes from, as `plan` says it
    qp_hashing: bool = False  # also hash on the RoCE BTH destination QP (ecmp.qp_hashing, where the platform can)


@dataclass(frozen=True, slots=True)
class FabricSettings:
    """What later stages need from the intent, resolved: the plan never hands out the intent itself."""

    name: str
    description: str
    intent_sha256: str  # of the resolved intent model: manifests tie a build to it
    asn_scheme: str
    hash_fields: tuple[str, ...]
    mtu: int  # the fabric MTU (qos.mtu)
    pools: Pools
    models: dict[Role, RoleModel]
    platforms: dict[Role, str]
    explicit: tuple[str, ...] = ()  # dotted paths of every intent field set explicitly (not left to its default)
    sonic_release: str = ""  # the SONiC branch the switches run (platforms.sonic_release); "" = not said


@dataclass(slots=True)
class Plan:
    settings: FabricSettings
    switches: dict[str, Switch] = field(default_factory=dict)  # hostname -> switch, deterministic order
    links: list[Link] = field(default_factory=list)
    servers: list[Server] = field(default_factory=list)
    endpoints: list[Server] = field(default_factory=list)  # non-GPU hosts on leaf server ports (intent.endpoints)
    qos: QosPolicy | None = None
    qos_profiles: dict[str, QosProfile] = field(default_factory=dict)
    design: Design | None = None  # the growth envelope the topology was built in
    pods: int = 0  # 3-tier: pods in use
    oversubscription: dict[str, float] = field(default_factory=dict)  # tier -> measured down:up bandwidth
    pool_use: dict[str, tuple[int, int]] = field(default_factory=dict)  # pool -> (addresses used, size)
    adaptive_routing: AdaptiveRouting = field(default_factory=AdaptiveRouting)
    hashing: dict[Role, SwitchHash] = field(default_factory=dict)  # each role's ECMP hash as rendered
    health: HealthLimits = field(default_factory=HealthLimits)  # limits of validate --health
    source: str = "<intent>"  # the intent file the plan came from
    hardware: dict[Role, RoleHardware] = field(default_factory=dict)  # each role's SKU and the cages it uses
    warnings: list[Problem] = field(default_factory=list)  # asked for but not rendered: `plan` and `render` say so
    ptp: PtpPlan | None = None  # the PTP service (intent.ptp), None without one
    tenancy: Tenancy | None = None  # intent.tenants resolved (None: one tenant, the default VRF)

    @property
    def envelope(self) -> Design:
        """The design (every built plan has one)."""
        assert self.design is not None, "plan built without a topology"
        return self.design

    def hosts(self) -> list[Server]:
        """Every host cabled to a leaf: the GPU servers, then the endpoints."""
        return self.servers + self.endpoints if self.endpoints else self.servers

    def by_role(self, role: Role) -> list[Switch]:
        return [s for s in self.switches.values() if s.role == role]


# --------------------------------------------------------------------------- tenants


L3VNI_VLAN_BASE = 3000  # + tenant id (at most intent.tenants.MAX_TENANT_ID = 1000): VLANs 3001..4000


@dataclass(slots=True)
class TenantPlan:
    """One tenant resolved: its numbers (all derived from its intent id) and where its VRF lives."""

    name: str
    id: int
    vni: int  # L3VNI (evpn-vxlan); also the number the route target carries
    table: int  # Linux/FRR VRF table id
    route_target: str  # "<rt_admin>:<vni>", the same on every leaf (import and export)
    leaves: list[str] = field(default_factory=list)  # where its VRF is, in plan order
    ports: list[tuple[str, str]] = field(default_factory=list)  # (leaf, port) of its NICs, in plan order
    nics: list[tuple[str, str]] = field(default_factory=list)  # (server, ifname) it owns
    reach: tuple[str, ...] = ()  # tenants whose routes it imports (leaked by intent)
    description: str = ""

    @property
    def vlan(self) -> int:
        """The VLAN an L3VNI rides on where the platform needs one (SONiC VXLAN_TUNNEL_MAP, NX-OS vn-segment)."""
        return L3VNI_VLAN_BASE + self.id

    @property
    def community(self) -> str:
        """vrf-lite: the standard community marking this tenant's routes in the default VRF."""
        admin = self.route_target.partition(":")[0]
        return f"{admin}:{self.id}"

    def rd(self, router_id: str) -> str:
        """Type-1 route distinguisher <router id>:<tenant id>: unique per leaf and tenant (RFC 4364 §4.2)."""
        return f"{router_id}:{self.id}"


@dataclass(slots=True)
class Tenancy:
    """The tenants of a fabric and the MTU chain the overlay needs (`fabricgen plan` states it)."""

    scope: str  # "server" | "gpu"
    mechanism: str  # "vrf-lite" | "evpn-vxlan"
    outer: str  # "ipv4" | "ipv6": the VXLAN outer header
    overhead: int  # bytes the overlay adds to a tenant packet (0 for vrf-lite)
    underlay_mtu: int  # MTU of the fabric links
    tenant_mtu: int  # MTU of the tenant ports and NICs
    mtu_why: str
    tenants: dict[str, TenantPlan] = field(default_factory=dict)  # name -> tenant, in id order
    leaf_tenants: dict[str, list[str]] = field(default_factory=dict)  # leaf -> its tenants, in id order
    port_tenant: dict[tuple[str, str], str] = field(default_factory=dict)  # (leaf, port) -> tenant
    nic_tenant: dict[tuple[str, str], str] = field(default_factory=dict)  # (server, ifname) -> tenant

    @property
    def evpn(self) -> bool:
        return self.mechanism == "evpn-vxlan"

    def on(self, leaf: str) -> list[TenantPlan]:
        """The tenants whose VRF a leaf carries, in id order."""
        return [self.tenants[name] for name in self.leaf_tenants.get(leaf, ())]
