"""Arista EOS renderer: plan -> structured config -> templates/eos.cfg.j2 (one `eos.cfg` per switch).

The same plan as every other platform: routed /31s, eBGP with `maximum-paths`, and the lossless
RoCEv2 chain in EOS's own terms.  Every number and name is decided here; the template only prints.

* Classification: `qos map dscp <dscps> to traffic-class <tc>` for all 64 DSCPs (the plan's
  `dscp_to_tc`), so nothing depends on EOS's default map; ports trust DSCP.
* Per cable class (plan QoS profile) one `qos profile`, attached with `service-profile`: `tx-queue`
  scheduling (the CNP queue `priority strict`, the lossless and default queues `no priority` with
  `bandwidth percent`), `random-detect ecn minimum-threshold .. kbytes maximum-threshold .. kbytes
  max-mark-probability ..` on each lossless queue from that profile's thresholds, and
  `priority-flow-control on` / `priority-flow-control priority <tc> no-drop` / `priority-flow-control
  pause watchdog`.  EOS schedules strict-priority queues above its round-robin ones (`no priority`
  makes a queue and every lower one round-robin): the registry records it
  (`strict_queues_highest`) and `plan` refuses a CNP class below a lossless one.
* PFC watchdog: `priority-flow-control pause watchdog default timeout / polling-interval /
  recovery-time` in seconds (timeout and recovery-time in 10 ms steps, rounded up so the watchdog
  never fires earlier than the intent says) and `... watchdog action drop|no-drop`.
* ECMP hashing: `port-channel load-balance trident fields ip ...` (Trident and Tomahawk hash LAG and
  ECMP on the same fields); `ip-protocol` adds no entropy to RoCEv2 (always UDP) and is left out.
* BGP: `router bgp`, `bgp bestpath as-path multipath-relax`, `maximum-paths N ecmp N`, one
  `neighbor` block per session with `bfd` and `allowas-in`; `redistribute connected` through a
  route-map that permits the loopback and, on leaves, the GPU pool; BFD timers in `router bfd`.
* Same-tier ASNs (leaves share one AS): leaves take `allowas-in N` from the plan.  The spines' side
  (NX-OS `disable-peer-as-check`) needs no EOS line: EOS has no sender-side AS-path check, it sends a
  leaf's routes to the other leaves of the same AS and leaves the loop check to the receiver (AVD's
  `underlay_filter_peer_as` exists to add that filter by route-map, "not having to return all updates
  received from Spine-1 to Spine-2 just for Spine-2 to throw them away because of AS Path loop
  detection").
* Every front-panel port the plan leaves free (`fabricgen.plan.frontpanel`) is shut and described
  `unused: ...`, as on NX-OS; the deploy driver leaves such a port alone where the switch has put it
  in service itself.

Syntax sources: Arista's AVD `eos_cli_config_gen` reference configs (aristanetworks/avd, molecule
`intended/configs/{qos,ethernet-interfaces,router-bgp-base,router-bfd-1,prefix-lists}.cfg`) and
its schema for the watchdog units (seconds; 2 / 3 decimals); the load-balance line as a
DCS-7060CX2-32S on EOS-4.23.0F prints it in its running-config (HPE Cray docs-csm, BI-CAN
Aruba/Arista configuration).  EOS's largest interface MTU is 9214 (registry `max_mtu`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import jinja2

from fabricgen.catalog.registry import capabilities
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Plan, QosPolicy, QosProfile, Switch

FILENAME = "eos.cfg"
TEMPLATE = "eos/eos.cfg.j2"
PROFILE_PREFIX = "ROCE"  # + _<speed>G_<metres>M[_MTU<n>]: one qos profile per plan QoS profile
ROUTE_MAP = "RM-REDIST-CONNECTED"
PREFIX_LIST = "PL-REDIST-CONNECTED"
ROUTE_MAP_V6 = "RM-REDIST-CONNECTED-V6"
PREFIX_LIST_V6 = "PL-REDIST-CONNECTED-V6"
KBYTE = 1024
TX_QUEUES = 8
# Intent hash field -> EOS `fields ip` keyword; ip-protocol is constant (UDP) for RoCEv2.
HASH_FIELDS = {"src-ip": "source-ip", "dst-ip": "destination-ip", "l4-src-port": "source-port",
               "l4-dst-port": "destination-port"}
WATCHDOG_ACTION = {"drop": "drop", "forward": "no-drop"}  # intent action -> EOS action
# The description of a port the plan leaves free; the deploy driver knows fabricgen's ports by it.
UNUSED_DESCRIPTION = "unused: not in the fabric plan"


@dataclass(frozen=True, slots=True)
class EosEcn:
    min_kb: int
    max_kb: int
    probability: int


@dataclass(frozen=True, slots=True)
class EosTxQueue:
    queue: int
    strict: bool  # `priority strict`; else `no priority` (round-robin)
    bandwidth: int = 0  # `bandwidth percent`, round-robin queues only (0: not printed)
    ecn: EosEcn | None = None


@dataclass(frozen=True, slots=True)
class EosQosProfile:
    name: str
    plan_profile: str  # the plan QoS profile it carries
    tx_queues: tuple[EosTxQueue, ...]
    no_drop: tuple[int, ...]  # PFC priorities
    watchdog: bool


@dataclass(frozen=True, slots=True)
class EosWatchdog:
    timeout: str  # seconds, as EOS takes them
    polling_interval: str
    recovery_time: str
    action: str


@dataclass(frozen=True, slots=True)
class EosInterface:
    name: str
    description: str
    mtu: int
    ipv4: str
    ipv6: str
    profile: str


@dataclass(frozen=True, slots=True)
class EosPrefixList:
    name: str
    afi: str  # "ip" / "ipv6"
    entries: tuple[tuple[int, str, int], ...]  # (seq, prefix, le; 0 = exact)


@dataclass(frozen=True, slots=True)
class EosRouteMap:
    name: str
    afi: str
    prefix_list: str


@dataclass(frozen=True, slots=True)
class EosNeighbor:
    ip: str
    remote_as: int
    description: str
    bfd: bool
    allowas_in: int
    afi: str


@dataclass(slots=True)
class EosBgp:
    asn: int
    router_id: str
    keepalive: int
    holdtime: int
    maximum_paths: int
    neighbors: list[EosNeighbor]
    route_map: str
    route_map_v6: str  # "" without IPv6


@dataclass(slots=True)
class EosConfig:
    """Everything the EOS template prints for one switch."""

    hostname: str
    role: str
    model: str
    mgmt_ip: str
    loopback: str
    loopback_v6: str
    load_balance: str
    dscp_maps: list[tuple[str, int]]  # ("0 1 2 ...", tc)
    queue_maps: list[tuple[int, int]]  # (tc, tx-queue) where the plan differs from EOS's identity map
    watchdog: EosWatchdog | None
    qos_profiles: list[EosQosProfile]
    interfaces: list[EosInterface]
    unused_ports: list[str]  # shut, described UNUSED_DESCRIPTION
    bfd: tuple[int, int, int] | None  # (interval, min-rx, multiplier)
    ipv6: bool
    prefix_lists: list[EosPrefixList] = field(default_factory=list)
    route_maps: list[EosRouteMap] = field(default_factory=list)
    bgp: EosBgp | None = None


def profile_name(profile: QosProfile, fabric_mtu: int) -> str:
    """ROCE_400G_3M (with _MTU<n> for ports off the fabric MTU), after the plan profile."""
    mtu = "" if profile.mtu == fabric_mtu else f"_MTU{profile.mtu}"
    return f"{PROFILE_PREFIX}_{profile.speed}G_{profile.cable_m:g}M{mtu}"


def ecn_kbytes(profile: QosProfile) -> EosEcn:
    """Bytes -> whole kbytes rounded down (marks no later than planned), min kept below max."""
    low = max(1, profile.ecn_min // KBYTE)
    return EosEcn(low, max(low + 1, profile.ecn_max // KBYTE), profile.ecn_probability)


def _shares(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def tx_queues(policy: QosPolicy, ecn: EosEcn) -> tuple[EosTxQueue, ...]:
    """The CNP queue strict; the lossless queues round-robin with the RoCE share split over them and ECN;
    the default queue round-robin with the default share."""
    lossless = sorted(policy.lossless_tcs)
    shares = dict(zip(lossless, _shares(policy.bandwidth["roce"], len(lossless)), strict=True))
    out = [EosTxQueue(policy.tc_to_queue.get(0, 0), False, policy.bandwidth["default"])]
    out += [EosTxQueue(policy.tc_to_queue.get(tc, tc), False, shares[tc], ecn) for tc in lossless]
    out.append(EosTxQueue(policy.tc_to_queue.get(policy.cnp_tc, policy.cnp_tc), True))
    return tuple(sorted(out, key=lambda q: q.queue))


def _seconds(ms: int, decimals: int) -> str:
    """Milliseconds as EOS seconds with at most `decimals` decimals, rounded up: 200 -> "0.2"."""
    step = 10 ** (3 - decimals)
    value = math.ceil(ms / step) * step / 1000
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def watchdog(plan: Plan) -> EosWatchdog | None:
    q = plan.qos
    if q is None or not q.watchdog_enabled:
        return None
    return EosWatchdog(_seconds(q.watchdog_detection_ms, 2), _seconds(q.watchdog_poll_ms, 3),
                       _seconds(q.watchdog_restoration_ms, 2), WATCHDOG_ACTION[q.watchdog_action])


def dscp_maps(policy: QosPolicy) -> list[tuple[str, int]]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(policy.dscp_to_tc.items()):
        by_tc.setdefault(tc, []).append(dscp)
    return [(" ".join(map(str, dscps)), tc) for tc, dscps in sorted(by_tc.items())]


def load_balance(hash_fields: tuple[str, ...]) -> str:
    keywords = [HASH_FIELDS[f] for f in HASH_FIELDS if f in hash_fields]
    return "port-channel load-balance trident fields ip " + " ".join(keywords)


def redistribution(sw: Switch, plan: Plan) -> tuple[list[EosPrefixList], list[EosRouteMap]]:
    """What BGP announces: the loopback(s) and, on leaves, the GPU pool's /31s (`le 31`)."""
    assert sw.bgp is not None
    v4 = [(10 * (i + 1), p, 0) for i, p in enumerate(n for n in sw.bgp.networks if ":" not in n)]
    if sw.bgp.connected_gpu_subnets:
        gpu = plan.settings.pools.gpu
        v4.append((10 * (len(v4) + 1), str(gpu), 0 if gpu.prefixlen >= 31 else 31))
    lists = [EosPrefixList(PREFIX_LIST, "ip", tuple(v4))]
    maps = [EosRouteMap(ROUTE_MAP, "ip", PREFIX_LIST)]
    v6 = [(10 * (i + 1), p, 0) for i, p in enumerate(n for n in sw.bgp.networks if ":" in n)]
    if v6:
        lists.append(EosPrefixList(PREFIX_LIST_V6, "ipv6", tuple(v6)))
        maps.append(EosRouteMap(ROUTE_MAP_V6, "ipv6", PREFIX_LIST_V6))
    return lists, maps


def structured_config(sw: Switch, plan: Plan) -> EosConfig:
    """Resolve one switch into the EOS structured config the template prints."""
    if plan.qos is None:
        raise ValueError("plan has no QoS policy; build it with fabricgen.plan.build.build_plan")
    policy, settings = plan.qos, plan.settings
    profiles: dict[str, EosQosProfile] = {}
    for name in sorted({itf.qos_profile for itf in sw.interfaces}):
        prof = plan.qos_profiles[name]
        profiles[name] = EosQosProfile(profile_name(prof, policy.mtu), name, tx_queues(policy, ecn_kbytes(prof)),
                                       tuple(sorted(policy.lossless_tcs)), policy.watchdog_enabled)
    interfaces = [EosInterface(itf.name, itf.description, itf.mtu, itf.ipv4, itf.ipv6,
                               profiles[itf.qos_profile].name) for itf in sw.interfaces]
    b = sw.bgp
    bfd_on = b is not None and b.bfd and any(n.bfd for n in b.neighbors)
    ipv6 = bool(sw.loopback_v6) or any(itf.ipv6 for itf in sw.interfaces)
    cfg = EosConfig(
        hostname=sw.hostname,
        role=sw.role,
        model=sw.model,
        mgmt_ip=f"{sw.mgmt_ip}/{settings.pools.management.prefixlen}" if sw.mgmt_ip else "",
        loopback=f"{sw.loopback}/32" if sw.loopback else "",
        loopback_v6=f"{sw.loopback_v6}/128" if sw.loopback_v6 else "",
        load_balance=load_balance(settings.hash_fields),
        dscp_maps=dscp_maps(policy),
        queue_maps=[(tc, q) for tc, q in sorted(policy.tc_to_queue.items()) if tc != q],
        watchdog=watchdog(plan),
        qos_profiles=sorted(profiles.values(), key=lambda p: p.name),
        interfaces=interfaces,
        unused_ports=list(front_panel(plan, sw).unused),
        bfd=(b.bfd_min_tx, b.bfd_min_rx, b.bfd_multiplier) if bfd_on and b is not None else None,
        ipv6=ipv6,
    )
    if b is not None:
        cfg.prefix_lists, cfg.route_maps = redistribution(sw, plan)
        paths = min(b.maximum_paths, capabilities(sw.platform).maximum_paths)
        cfg.bgp = EosBgp(b.asn, b.router_id, b.keepalive, b.holdtime, paths,
                         [EosNeighbor(n.ip, n.remote_asn, n.description, b.bfd and n.bfd, n.allowas_in, n.afi)
                          for n in b.neighbors], ROUTE_MAP, ROUTE_MAP_V6 if len(cfg.route_maps) > 1 else "")
    return cfg


def render(sw: Switch, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    """{"eos.cfg": running-config text} for one EOS switch."""
    return {FILENAME: env.get_template(TEMPLATE).render(c=structured_config(sw, plan),
                                                         unused_description=UNUSED_DESCRIPTION)}
