"""Cisco NX-OS (Nexus 9000) renderer: plan -> structured config -> templates/nxos.cfg.j2.

Every number and name is decided here, in `structured_config`; the templates only loop and
print.  The RoCEv2 QoS follows the Cisco AI/ML pattern (classification `type qos` policy per
interface, `network-qos` no-drop class with `pause pfc-cos`, `type queuing` egress policy with
WRED/ECN on the lossless queue and strict priority for CNPs, both attached under `system qos`).
See the vendor reference, section 1, for the source of every command.

Output is deterministic: the same plan renders byte-identically (plan order only, no clocks).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import jinja2

from fabricgen.catalog.nxos_models import breakout_map
from fabricgen.catalog.registry import capabilities, watchdog_timers
from fabricgen.plan.frontpanel import FrontPanel, front_panel
from fabricgen.plan.model import Interface, Plan, QosPolicy, QosProfile, Switch
from fabricgen.plan.qos import cnp_class
from fabricgen.platforms import runs
from fabricgen.platforms.nxos.tenants import EVPN_FEATURES, NH_UNCHANGED, TENANT_DIRECT, NxTenancy, tenancy_config

FILENAME = "nxos.cfg"
TEMPLATE = "nxos/nxos.cfg.j2"

# Names of the QoS objects.  c-8q-nq<N> / c-out-8q-q<N> are NX-OS system classes of the 8-queue
# template (not user-defined); the policy and class-map names follow Cisco's RoCE script.
CLASS_ROCE = "ROCEv2"
CLASS_CNP = "CNP"
POLICY_CLASSIFICATION = "QOS_CLASSIFICATION"
POLICY_NETWORK_QOS = "qos_network"
POLICY_QUEUING = "QOS_EGRESS_PORT"
POLICY_PAUSE_PREFIX = "QOS_INGRESS_PAUSE"  # + _<speed>G_<metres>M: ingress queuing policy with pause buffers
ROUTE_MAP = "RM-REDIST-DIRECT"
PREFIX_LIST = "PL-REDIST-DIRECT"
ROUTE_MAP_V6 = "RM-REDIST-DIRECT-V6"
PREFIX_LIST_V6 = "PL-REDIST-DIRECT-V6"
QUEUES = 8
KBYTE = 1024  # WRED thresholds are given in kbytes


# --------------------------------------------------------------------------- structured config


@dataclass(frozen=True, slots=True)
class ClassMap:
    """`class-map type qos match-any <name>` / `match dscp <dscp>`, set to `qos-group <qos_group>`."""

    name: str
    dscp: str  # NX-OS DSCP list, e.g. "26" or "24-31"
    qos_group: int


@dataclass(frozen=True, slots=True)
class NetworkQosClass:
    name: str  # c-8q-nq3, c-8q-nq-default
    mtu: int
    pause_cos: int | None  # `pause pfc-cos <n>`: no-drop class


@dataclass(frozen=True, slots=True)
class Wred:
    """`random-detect minimum-threshold <min_kb> kbytes maximum-threshold <max_kb> kbytes ...`."""

    min_kb: int
    max_kb: int
    probability: int  # percent at max
    profile: str  # QosProfile the thresholds come from (shown in a comment)


@dataclass(frozen=True, slots=True)
class QueueClass:
    name: str  # c-out-8q-q7 ... c-out-8q-q-default
    priority_level: int = 0  # 1 = strict priority (`priority level 1`)
    bandwidth: int = 0  # `bandwidth remaining percent`, when not priority
    wred: Wred | None = None


@dataclass(frozen=True, slots=True)
class NxWatchdog:
    """Global PFC watchdog: `priority-flow-control watch-dog interval <ms>`, `watch-dog shutdown-multiplier
    <n>` (stuck after n intervals) and `auto-restore multiplier <n>` (restored after n quiet intervals)."""

    interval_ms: int
    shutdown_multiplier: int
    restore_multiplier: int


@dataclass(frozen=True, slots=True)
class NxQos:
    class_maps: tuple[ClassMap, ...]
    classification: str
    network_qos: str
    nq_classes: tuple[NetworkQosClass, ...]
    queuing: str
    queues: tuple[QueueClass, ...]
    watchdog: NxWatchdog | None  # None: watchdog off


@dataclass(slots=True)
class NxInterface:
    name: str
    description: str
    mtu: int
    ipv4: str
    ipv6: str
    qos_policy: str  # classification policy attached as `service-policy type qos input`
    watchdog: bool
    no_redirects: bool  # BFD needs ICMP redirects off
    pause_policy: str = ""  # ingress queuing policy with pause buffers (`service-policy type queuing input`)
    no_bfd_echo: bool = False  # BFD toward a peer that is not NX-OS: asynchronous mode only
    ptp: bool = False  # a PTP port of the switch's boundary clock (`ptp`)
    vrf: str = ""  # tenant VRF ("" = default)


@dataclass(frozen=True, slots=True)
class PauseBuffer:
    """`class type queuing c-in-q<N>` / `pause buffer-size <b> pause-threshold <p> resume-threshold <r>` (bytes)."""

    name: str  # c-in-q3
    buffer_size: int
    pause_threshold: int
    resume_threshold: int


@dataclass(frozen=True, slots=True)
class PausePolicy:
    """One ingress queuing policy per cable class (plan QoS profile) that needs static pause buffers."""

    name: str
    profile: str  # the plan QoS profile whose headroom it carries
    cable_m: float
    classes: tuple[PauseBuffer, ...]


@dataclass(frozen=True, slots=True)
class UnusedPort:
    """A front-panel port the plan does not use: shut, and described as unused."""

    name: str


@dataclass(frozen=True, slots=True)
class Breakout:
    """`interface breakout module 1 port <ports> map <map>`: cages split the same way, as a port range."""

    ports: str  # "1-32" / "1,3,5-8"
    map: str  # "100g-4x"


@dataclass(frozen=True, slots=True)
class PrefixListEntry:
    seq: int
    prefix: str
    le: int  # 0 = exact match


@dataclass(frozen=True, slots=True)
class PrefixList:
    name: str
    afi: str  # "ip" or "ipv6"
    entries: tuple[PrefixListEntry, ...]


@dataclass(frozen=True, slots=True)
class RouteMap:
    name: str
    afi: str  # "ip" or "ipv6", for `match <afi> address prefix-list`
    prefix_list: str


@dataclass(slots=True)
class NxNeighbor:
    ip: str
    remote_as: int
    description: str
    bfd: bool
    afi: str  # "ipv4" / "ipv6"
    allowas_in: int
    disable_peer_as_check: bool


@dataclass(slots=True)
class NxAddressFamily:
    afi: str  # "ipv4" / "ipv6"
    route_map: str
    maximum_paths: int


@dataclass(slots=True)
class NxBgp:
    asn: int
    router_id: str
    keepalive: int
    holdtime: int
    address_families: list[NxAddressFamily]
    neighbors: list[NxNeighbor]


@dataclass(frozen=True, slots=True)
class Bfd:
    min_tx: int
    min_rx: int
    multiplier: int


@dataclass(frozen=True, slots=True)
class Dlb:
    mode: str  # flowlet | per-packet
    interfaces: str  # "Ethernet1/1 , Ethernet1/2" (genie form)
    mac_address: str
    flowlet_aging: int  # 0 = not emitted (per-packet mode)


@dataclass(frozen=True, slots=True)
class NxPtp:
    """The global lines of an NX-OS PTP boundary clock (the default 1588 profile, E2E over UDPv4)."""

    source: str  # `ptp source`: the loopback
    domain: int
    priority1: int
    priority2: int


@dataclass(slots=True)
class NxosConfig:
    """Everything the NX-OS template prints for one switch."""

    hostname: str
    role: str
    model: str
    features: list[str]
    mgmt_ip: str  # "198.19.254.1/24"
    loopback: str  # "198.18.0.1/32"
    loopback_v6: str
    interfaces: list[NxInterface]
    unused_ports: list[UnusedPort]
    breakouts: list[Breakout]
    qos: NxQos
    pause_policies: list[PausePolicy]
    load_sharing: str
    bfd: Bfd | None
    dlb: Dlb | None
    prefix_lists: list[PrefixList] = field(default_factory=list)
    route_maps: list[RouteMap] = field(default_factory=list)
    bgp: NxBgp | None = None
    tenancy: NxTenancy | None = None  # tenant VRFs, NVE and EVPN (fabricgen.platforms.nxos.tenants)
    ptp: NxPtp | None = None


# --------------------------------------------------------------------------- helpers


def dscp_list(values: Iterable[int]) -> str:
    """NX-OS `match dscp` argument: sorted, runs collapsed to ranges ("10,12-14")."""
    return ",".join(runs(values))


def nq_class(tc: int) -> str:
    """Network-qos system class of qos-group `tc` in the 8-queue template."""
    return "c-8q-nq-default" if tc == 0 else f"c-8q-nq{tc}"


def queue_class(tc: int) -> str:
    """Egress queuing system class of qos-group `tc` in the 8-queue template."""
    return "c-out-8q-q-default" if tc == 0 else f"c-out-8q-q{tc}"


def roce_interfaces(sw: Switch) -> list[Interface]:
    """Ports that carry RoCE: every routed fabric and GPU-facing port."""
    return list(sw.interfaces)


def ecn_profile(sw: Switch, plan: Plan) -> QosProfile:
    """The one QoS profile whose ECN thresholds the switch-wide NX-OS queuing policy uses.

    NX-OS attaches the `type queuing` policy under `system qos`, so all ports of a switch share
    one WRED/ECN threshold set, while the plan has a profile per port (speed, cable length, MTU).
    Rule: the tightest profile wins -- smallest ECN max, then smallest ECN min, then name:
    marking a little early only costs some throughput.  A switch's ports share one speed and
    its ECN comes from the intent or the vendor default for that speed, so in practice the
    profiles differ only in cable length (xon/xoff) and the ECN values are the same.
    """
    names = sorted({itf.qos_profile for itf in roce_interfaces(sw)})
    missing = [n for n in names if n not in plan.qos_profiles]
    if not names or missing:
        raise ValueError(f"{sw.hostname}: ports without a QoS profile in the plan "
                         f"({', '.join(missing) or 'no ports'}); run qos.assign_profiles first")
    profiles = [plan.qos_profiles[n] for n in names]
    return min(profiles, key=lambda p: (p.ecn_max, p.ecn_min, p.name))


def wred_for(profile: QosProfile) -> Wred:
    """Bytes -> whole kbytes, rounded down (marks no later than planned); min stays below max."""
    min_kb = max(1, profile.ecn_min // KBYTE)
    max_kb = max(min_kb + 1, profile.ecn_max // KBYTE)
    return Wred(min_kb, max_kb, profile.ecn_probability, profile.name)


def load_share_mode(hash_fields: Iterable[str]) -> str:
    """The fields part of `ip load-sharing`, as `show ip load-sharing` prints it back ("Load-share mode")."""
    mode = "address source-destination"
    if set(hash_fields) & {"l4-src-port", "l4-dst-port"}:
        mode += " port source-destination"
    return mode


def live_hash(plan: Plan, sw: Switch) -> dict[str, str]:
    """What `validate` expects `show ip load-sharing` to say (the record's ``live_hash``): the fields, and the
    rotation and universal id where rendered (without them NX-OS picks its own: nothing to compare)."""
    out = {"load-share mode": load_share_mode(plan.settings.hash_fields)}
    rotate, universal_id = _seed(plan, sw)
    if universal_id:
        out["rotate"] = str(rotate)
        out["universal-id"] = str(universal_id)
    return out


def load_sharing(hash_fields: Iterable[str], rotate: int = 0, universal_id: int = 0) -> str:
    """`ip load-sharing` line: L3 source-destination, plus L4 ports (RoCEv2 entropy = UDP source port), and the
    tier's hash rotation and seed so consecutive tiers choose independently (no polarization).

    Syntax: Cisco NX-API REST SDK guide, "Configuring ECMP Load Balancing" (`ip load-sharing address
    source-destination ... rotate 43 universal-id 1`; ipv4IPLoadSharing rotate / universalID).  The rotation is
    rendered with the seed even when it is 0: NX-OS's own default is 32 (the guide's "Configuring Load Sharing in
    the Unicast FIB" payload shows `"rotate": "32"` unset), and the analysis models the planned value.  Without
    a seed (universal-id 0) NX-OS picks a random one, so neither is rendered.
    """
    line = f"ip load-sharing {load_share_mode(hash_fields)}"
    if universal_id:
        line += f" rotate {rotate} universal-id {universal_id}"
    return line


def _seed(plan: Plan, sw: Switch) -> tuple[int, int]:
    """(rotate, universal-id) the plan gives this switch's role."""
    h = plan.hashing.get(sw.role)
    return (h.rotate, h.seed) if h is not None and not h.per_switch else (0, 0)


def _split(total: int, parts: int) -> list[int]:
    """Integer shares of `total` over `parts` queues, remainder to the first ones."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def build_watchdog(policy: QosPolicy) -> NxWatchdog | None:
    """The plan's watchdog timers in NX-OS multiples of the poll interval (None when it is off).

    The plan step `plan.unsupported_settings` has already refused timers NX-OS cannot express.
    """
    if not policy.watchdog_enabled:
        return None
    facts = capabilities("nxos").watchdog_timers
    assert facts is not None
    t = watchdog_timers(policy.watchdog_poll_ms, policy.watchdog_detection_ms, policy.watchdog_restoration_ms, facts)
    return NxWatchdog(t.interval_ms, t.detection_multiplier, t.restore_multiplier)


def cnp_group(policy: QosPolicy) -> int:
    """The qos-group (= queue) CNPs take on NX-OS: 7, where Cisco's RoCE reference puts them (`c-out-8q-q7`
    `priority level 1`, the strict queue NX-OS's own default policy gives q7, which CPU-generated control
    traffic uses too); the plan's CNP class where 7 carries another class of the intent (`plan.qos.cnp_class`)."""
    return cnp_class(policy, "nxos")


def build_qos(policy: QosPolicy, wred: Wred, watchdog: NxWatchdog | None) -> NxQos:
    """Classification, network-qos and queuing policies from the fabric QoS policy.

    Every DSCP the policy maps to a non-zero traffic class gets a class-map (RoCE and CNP, plus
    any extra class an operator adds); qos-group N == traffic class N == queue N.  Lossless
    classes pause on CoS N and carry ECN; the RoCE bandwidth share is split over them.  The CNP
    class is strict priority, in queue 7 (`cnp_group`), so the strict queue is never one left at 0 %.  The
    default queue gets the default share, all others 0.
    """
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(policy.dscp_to_tc.items()):
        if tc:
            by_tc.setdefault(tc, []).append(dscp)

    cnp = cnp_group(policy)
    if cnp != policy.cnp_tc and policy.cnp_tc in by_tc:  # CNPs take Cisco's CNP queue (7)
        by_tc[cnp] = by_tc.pop(policy.cnp_tc)

    def cm_name(tc: int) -> str:
        if tc == policy.roce_tc:
            return CLASS_ROCE
        return CLASS_CNP if tc == cnp else f"TC{tc}"

    class_maps = tuple(ClassMap(cm_name(tc), dscp_list(by_tc[tc]), tc) for tc in sorted(by_tc))
    lossless = tuple(sorted(policy.lossless_tcs))
    # Every class that carries traffic gets the fabric MTU: a system class left out of the policy keeps
    # NX-OS's default MTU 1500, which would cut the CNP class (and any extra class) short of the fabric.
    nq = [NetworkQosClass(nq_class(tc), policy.mtu, tc if tc in lossless else None)
          for tc in sorted(set(lossless) | set(by_tc))]
    nq.append(NetworkQosClass(nq_class(0), policy.mtu, None))
    shares = dict(zip(lossless, _split(policy.bandwidth["roce"], len(lossless)), strict=True))
    queues: list[QueueClass] = []
    for tc in range(QUEUES - 1, 0, -1):
        if tc == cnp:
            queues.append(QueueClass(queue_class(tc), priority_level=1))
        elif tc in shares:
            queues.append(QueueClass(queue_class(tc), bandwidth=shares[tc], wred=wred))
        else:
            queues.append(QueueClass(queue_class(tc)))
    queues.append(QueueClass(queue_class(0), bandwidth=policy.bandwidth["default"]))
    return NxQos(class_maps, POLICY_CLASSIFICATION, POLICY_NETWORK_QOS, tuple(nq), POLICY_QUEUING,
                 tuple(queues), watchdog)


def in_queue_class(tc: int) -> str:
    """Ingress queuing system class of qos-group `tc` (the class the pause buffers are set on)."""
    return "c-in-q-default" if tc == 0 else f"c-in-q{tc}"


def _cells(value: float, cell: int, up: bool = True) -> int:
    """A byte count in whole buffer cells, rounded up (or down)."""
    n = math.ceil(value / cell) if up else math.floor(value / cell)
    return n * cell


# Cisco's PFC guide (Nexus 9000 NX-OS QoS Configuration Guide, "Configuring Priority Flow Control",
# example input queuing policy): `pause buffer-size 101920 pause-threshold 46800 resume-threshold 34320`,
# i.e. 490 / 225 / 165 cells of 208 bytes.  The pause and resume thresholds are small ingress fill levels
# of the no-drop class; the buffer size above the pause threshold is the headroom for what is still in
# flight once PAUSE is sent, which grows with the cable.
PAUSE_THRESHOLD_CELLS = 225
RESUME_THRESHOLD_CELLS = 165


def pause_buffer(profile: QosProfile, tc: int, cell: int) -> PauseBuffer:
    """Static PFC thresholds of one no-drop class, in whole buffer cells (Cisco's PFC guide).

    * pause-threshold and resume-threshold: Cisco's example, 225 and 165 cells -- small ingress fill
      levels, not tied to ECN: ECN marks on the egress queue, the pause trigger is the ingress class's
      own occupancy (reference §5.4), so the two are never compared;
    * buffer-size: pause-threshold + the cable headroom of the port's profile (the plan's xoff plus one
      port MTU on 8-lane ports, `size - xon`: what the cable and the peer still send after PAUSE, from
      the same physics as SONiC's headroom), rounded up to whole cells so the headroom never shrinks.
    """
    pause = PAUSE_THRESHOLD_CELLS * cell
    resume = RESUME_THRESHOLD_CELLS * cell
    size = pause + _cells(profile.size - profile.xon, cell)
    return PauseBuffer(in_queue_class(tc), size, pause, resume)


def no_drop_reservation(sw: Switch, plan: Plan) -> int:
    """Bytes of ingress buffer the switch reserves for no-drop traffic as configured: every pause buffer-size
    of every port that carries one (NX-OS allocates it per port and class whatever the port's state)."""
    policies = pause_policies(sw, plan)
    total = 0
    for itf in roce_interfaces(sw):
        policy = policies.get(itf.qos_profile)
        if policy is not None:
            total += sum(c.buffer_size for c in policy.classes)
    return total


def pause_policy_name(profile: QosProfile, fabric_mtu: int) -> str:
    """QOS_INGRESS_PAUSE_400G_300M (with _MTU<n> for ports off the fabric MTU), like the profile names."""
    mtu = "" if profile.mtu == fabric_mtu else f"_MTU{profile.mtu}"
    return f"{POLICY_PAUSE_PREFIX}_{profile.speed}G_{profile.cable_m:g}M{mtu}"


def pause_policies(sw: Switch, plan: Plan) -> dict[str, PausePolicy]:
    """Plan QoS profile -> ingress queuing policy, for the profiles of this switch's ports whose cable
    is longer than NX-OS allows without pause buffers (100 m, `platforms.registry`)."""
    assert plan.qos is not None
    facts = capabilities("nxos")
    out: dict[str, PausePolicy] = {}
    for name in sorted({itf.qos_profile for itf in roce_interfaces(sw)}):
        profile = plan.qos_profiles[name]
        if facts.needs_pause_buffer(profile.cable_m):
            classes = tuple(pause_buffer(profile, tc, facts.buffer_cell_bytes) for tc in sorted(plan.qos.lossless_tcs))
            out[name] = PausePolicy(pause_policy_name(profile, plan.qos.mtu), name, profile.cable_m, classes)
    return out


def breakout_lines(panel: FrontPanel) -> list[Breakout]:
    """One `interface breakout` line per way of splitting a cage, its cages as an NX-OS port range
    (the form `show running-config` prints: `port 1-32`, `port 10,18,25-26`)."""
    by_map: dict[str, list[int]] = {}
    for b in panel.breakouts:
        by_map.setdefault(breakout_map(b.ports, b.speed), []).append(b.cage)
    return [Breakout(",".join(runs(cages)), m) for m, cages in sorted(by_map.items(), key=lambda kv: kv[1][0])]


def _le(prefixlen: int, maxlen: int) -> int:
    return 0 if prefixlen >= maxlen else maxlen


def redistribution(sw: Switch, plan: Plan) -> tuple[list[PrefixList], list[RouteMap]]:
    """What BGP announces: loopbacks, and on leaves the GPU-facing /31s (the GPU pool, `le 31`)."""
    assert sw.bgp is not None
    v4 = [p for p in sw.bgp.networks if ":" not in p]
    v6 = [p for p in sw.bgp.networks if ":" in p]
    entries = [PrefixListEntry(10 * (i + 1), p, 0) for i, p in enumerate(v4)]
    if sw.bgp.connected_gpu_subnets:
        gpu = plan.settings.pools.gpu
        entries.append(PrefixListEntry(10 * (len(entries) + 1), str(gpu), _le(gpu.prefixlen, 31)))
    pls = [PrefixList(PREFIX_LIST, "ip", tuple(entries))]
    rms = [RouteMap(ROUTE_MAP, "ip", PREFIX_LIST)]
    if v6:
        pls.append(PrefixList(PREFIX_LIST_V6, "ipv6",
                              tuple(PrefixListEntry(10 * (i + 1), p, 0) for i, p in enumerate(v6))))
        rms.append(RouteMap(ROUTE_MAP_V6, "ipv6", PREFIX_LIST_V6))
    return pls, rms


def build_bgp(sw: Switch) -> NxBgp:
    b = sw.bgp
    assert b is not None
    neighbors = [NxNeighbor(n.ip, n.remote_asn, n.description, b.bfd and n.bfd, n.afi, n.allowas_in,
                            n.disable_peer_as_check) for n in b.neighbors]
    afs = [NxAddressFamily("ipv4", ROUTE_MAP, b.maximum_paths)]
    if sw.loopback_v6 or any(n.afi == "ipv6" for n in neighbors):
        afs.append(NxAddressFamily("ipv6", ROUTE_MAP_V6, b.maximum_paths))
    return NxBgp(b.asn, b.router_id, b.keepalive, b.holdtime, afs, neighbors)


def _nxos_peer(plan: Plan, itf: Interface) -> bool:
    """True when the port's peer is an NX-OS switch.  NX-OS runs BFD echo by default; toward FRR, SONiC and
    EOS peers it is turned off (`no bfd echo`): FRR's echo interop has an open report (FRRouting/frr#18459),
    and asynchronous BFD at the planned timers is what the other platforms run."""
    peer = plan.switches.get(itf.peer_device)
    return peer is not None and peer.platform == "nxos"


def structured_config(sw: Switch, plan: Plan) -> NxosConfig:
    """Resolve one switch into the NX-OS structured config the template prints."""
    if plan.qos is None:
        raise ValueError("plan has no QoS policy; build it with fabricgen.plan.build.build_plan")
    policy = plan.qos
    bfd_on = sw.bgp is not None and sw.bgp.bfd and any(n.bfd for n in sw.bgp.neighbors)
    pauses = pause_policies(sw, plan)
    clock = plan.ptp.clocks.get(sw.hostname) if plan.ptp is not None else None
    ptp_ports = {p.name for p in clock.ports} if clock is not None else set()
    interfaces = [
        NxInterface(itf.name, itf.description, itf.mtu, itf.ipv4, itf.ipv6, POLICY_CLASSIFICATION,
                    policy.watchdog_enabled, bfd_on,
                    pauses[itf.qos_profile].name if itf.qos_profile in pauses else "",
                    bfd_on and not _nxos_peer(plan, itf), itf.name in ptp_ports)
        for itf in roce_interfaces(sw)
    ]
    tenancy = tenancy_config(sw, plan)
    if tenancy is not None and tenancy.port_vrf:
        interfaces = [replace(i, vrf=tenancy.port_vrf.get(i.name, "")) for i in interfaces]
    ar = plan.adaptive_routing
    dlb_ports = [itf.name for itf in sw.interfaces if itf.adaptive_routing]  # both ends do DLB (ecmp step)
    dlb = None
    if ar.enabled and dlb_ports:
        dlb = Dlb(ar.mode, " , ".join(dlb_ports), ar.mac_address,
                  ar.flowlet_aging_us if ar.mode == "flowlet" else 0)
    features = ["bgp"] if sw.bgp is not None else []
    if bfd_on:
        features.append("bfd")
    features.append("lldp")
    if tenancy is not None and tenancy.vtep:
        features += EVPN_FEATURES
    if clock is not None:
        features.append("ptp")
    bfd = None
    if bfd_on:
        assert sw.bgp is not None
        bfd = Bfd(sw.bgp.bfd_min_tx, sw.bgp.bfd_min_rx, sw.bgp.bfd_multiplier)
    panel = front_panel(plan, sw)
    cfg = NxosConfig(
        hostname=sw.hostname,
        role=sw.role,
        model=sw.model,
        features=features,
        mgmt_ip=f"{sw.mgmt_ip}/{plan.settings.pools.management.prefixlen}" if sw.mgmt_ip else "",
        loopback=f"{sw.loopback}/32" if sw.loopback else "",
        loopback_v6=f"{sw.loopback_v6}/128" if sw.loopback_v6 else "",
        interfaces=interfaces,
        unused_ports=[UnusedPort(name) for name in panel.unused],
        breakouts=breakout_lines(panel),
        pause_policies=list(pauses.values()),
        qos=build_qos(policy, wred_for(ecn_profile(sw, plan)), build_watchdog(policy)),
        load_sharing=load_sharing(plan.settings.hash_fields, *_seed(plan, sw)),
        bfd=bfd,
        dlb=dlb,
        tenancy=tenancy,
    )
    if sw.bgp is not None:
        cfg.prefix_lists, cfg.route_maps = redistribution(sw, plan)
        cfg.bgp = build_bgp(sw)
    if clock is not None and plan.ptp is not None:
        cfg.ptp = NxPtp(clock.source_ip, plan.ptp.domain, clock.priority1, clock.priority2)
    return cfg


def render(sw: Switch, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    """{"nxos.cfg": running-config text} for one NX-OS switch."""
    cfg = structured_config(sw, plan)
    return {FILENAME: env.get_template(TEMPLATE).render(c=cfg, nh_unchanged=NH_UNCHANGED,
                                                        tenant_direct=TENANT_DIRECT)}

