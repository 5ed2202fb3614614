"""The BGP part of every FRR config fabricgen writes: SONiC's frr.conf and the `frr` platform's.

`bgp_config(sw, plan)` turns a switch's `SwitchBgp` into structured config; the shared include
`templates/bgp.j2` only prints it.  Both `platforms/sonic/render.py` and `platforms/frr/render.py` call it,
so a SONiC leaf and a Linux+FRR lab switch speak exactly the same BGP.

Routing policy (explicit, so nothing depends on `bgp ebgp-requires-policy` defaults):

* ``PL-LOCAL-V4`` lists what this switch originates: its loopback /32 and, on leaves, each of
  its GPU-facing /31s.  ``RM-CONNECTED-V4`` (``redistribute connected``) permits only those, so
  fabric /31s never enter BGP.
* ``RM-IMPORT`` permits everything learned from a fabric neighbor (allow-all import), and honours
  RFC 8326 graceful shutdown: a route carrying the GRACEFUL_SHUTDOWN community (``GSHUT``) gets
  LOCAL_PREF 0, so a draining switch's neighbors move their traffic to the other paths
  (``fabricgen deploy --drain``).
* ``RM-EXPORT-V4`` is the announce policy: leaves announce only their own prefixes (a leaf is
  never transit), spines and super-spines additionally pass on every prefix of the loopback and
  GPU pools (``PL-FABRIC-V4``), which is what they learned from the tier below or above.

The same three objects exist with ``-V6`` names when the plan has IPv6 loopbacks or links.
BFD timers live in one bfdd profile (``FABRIC``) that every BFD-enabled neighbor references.

Same-tier ASNs: leaves get ``allowas-in N`` per neighbor (from the plan).  A spine's
``disable_peer_as_check`` needs no FRR command: FRR does not suppress updates towards a peer
whose AS is already in the path (sender-side loop detection is off by default).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.frr.tenants import FrrTenancy, tenancy_config

# FRR's compile-time ECMP limit (MULTIPATH_NUM) of Debian's FRR 8.4 build: `maximum-paths 257`
# is rejected by vtysh.  Plans may ask for more (NX-OS allows 1024); FRR gets the cap.
FRR_MAX_PATHS = 256
BFD_PROFILE = "FABRIC"
ROUTE_MAP_IMPORT = "RM-IMPORT"


# Not frozen: a switch has one per neighbour or local prefix (64 to 257 at 128K GPUs), and a frozen dataclass's
# __init__ (object.__setattr__ per field) costs 3.5 times a plain one's.
@dataclass(slots=True)
class PrefixListEntry:
    seq: int
    prefix: str
    ge: int | None = None
    le: int | None = None

    @property
    def text(self) -> str:
        """`permit <prefix> [ge N] [le M]` as FRR prints it."""
        out = f"permit {self.prefix}"
        if self.ge is not None:
            out += f" ge {self.ge}"
        if self.le is not None:
            out += f" le {self.le}"
        return out


@dataclass(slots=True)
class PrefixList:
    name: str
    family: str  # "ip" or "ipv6", the FRR command prefix
    entries: list[PrefixListEntry] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RouteMapEntry:
    seq: int
    match: str = ""  # "ip address prefix-list PL-LOCAL-V4"; "" = match all
    set: str = ""  # "local-preference 0"; "" = nothing set


# RFC 8326: the well-known GRACEFUL_SHUTDOWN community (65535:0), as FRR names it in a community-list.
GSHUT_LIST = "GSHUT"
GSHUT_COMMUNITY_LIST = f"bgp community-list standard {GSHUT_LIST} seq 5 permit graceful-shutdown"


@dataclass(slots=True)
class RouteMap:
    name: str
    entries: list[RouteMapEntry] = field(default_factory=list)


# FRR omits settings equal to its defaults from `show running-config`; writing them makes
# frr-reload.py report them as "to add" forever, so a re-deploy would never be a no-op.
FRR_BFD_DEFAULTS = {"receive_interval": 300, "transmit_interval": 300, "detect_multiplier": 3}
# `timers bgp` under `frr defaults datacenter` (the profile every fabricgen frr.conf declares)
FRR_DATACENTER_TIMERS = (3, 9)  # keepalive, hold time (s)


@dataclass(frozen=True, slots=True)
class BfdProfile:
    """Timers that differ from FRR's defaults; None means "FRR default, not written"."""

    name: str
    receive_interval: int | None  # ms
    transmit_interval: int | None  # ms
    detect_multiplier: int | None

    @classmethod
    def of(cls, name: str, rx: int, tx: int, mult: int) -> BfdProfile:
        d = FRR_BFD_DEFAULTS
        return cls(name, None if rx == d["receive_interval"] else rx, None if tx == d["transmit_interval"] else tx,
                   None if mult == d["detect_multiplier"] else mult)


# Not frozen, as PrefixListEntry.
@dataclass(slots=True)
class Neighbor:
    ip: str
    remote_as: int
    description: str
    bfd_profile: str  # "" = no BFD


# Not frozen, as PrefixListEntry.
@dataclass(slots=True)
class AfNeighbor:
    ip: str
    route_map_in: str
    route_map_out: str
    allowas_in: int  # 0 = off


@dataclass(slots=True)
class AddressFamily:
    name: str  # "ipv4 unicast"
    redistribute_connected: str  # route-map name
    maximum_paths: int
    neighbors: list[AfNeighbor] = field(default_factory=list)


@dataclass(slots=True)
class BgpConfig:
    """Everything `frr/bgp.j2` prints: policy objects, bfdd profile and `router bgp`."""

    asn: int
    router_id: str
    keepalive: int
    holdtime: int
    planned_maximum_paths: int  # what the plan asked for, before the FRR cap
    timers_are_default: bool = False  # keepalive/hold equal FRR's datacenter defaults: `timers bgp` not written
    neighbors: list[Neighbor] = field(default_factory=list)
    address_families: list[AddressFamily] = field(default_factory=list)
    prefix_lists: list[PrefixList] = field(default_factory=list)
    community_lists: list[str] = field(default_factory=list)  # whole lines, as FRR prints them
    route_maps: list[RouteMap] = field(default_factory=list)
    bfd_profile: BfdProfile | None = None
    tenancy: FrrTenancy | None = None  # tenant VRFs and EVPN (fabricgen.platforms.frr.tenants)


@dataclass(slots=True)
class _Family:
    """Per address family names and collected prefixes while building."""

    suffix: str  # "V4" / "V6"
    cli: str  # "ip" / "ipv6"
    af: str  # "ipv4 unicast"
    local: list[str] = field(default_factory=list)
    neighbors: list[AfNeighbor] = field(default_factory=list)

    @property
    def pl_local(self) -> str:
        return f"PL-LOCAL-{self.suffix}"

    @property
    def pl_fabric(self) -> str:
        return f"PL-FABRIC-{self.suffix}"

    @property
    def rm_connected(self) -> str:
        return f"RM-CONNECTED-{self.suffix}"

    @property
    def rm_export(self) -> str:
        return f"RM-EXPORT-{self.suffix}"


def _network(prefix: str) -> str:
    """The network of an interface address: "198.18.32.1/31" -> "198.18.32.0/31".

    IPv4 by integer arithmetic: `ipaddress` costs ~10 us a call, and a 32K-GPU fabric has 32K of these.
    """
    addr, _, plen = prefix.partition("/")
    if plen == "31" and addr[-1] in "02468" and ":" not in addr:  # a leaf's end of a GPU /31 is its network
        return prefix
    if ":" in addr or not plen:
        return str(ipaddress.ip_interface(prefix).network)
    a, b, c, d = (int(x) for x in addr.split("."))
    bits = int(plen)
    value = (a << 24 | b << 16 | c << 8 | d) & (0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}/{bits}"


def _pool_entry(seq: int, pool: ipaddress.IPv4Network | ipaddress.IPv6Network, length: int) -> PrefixListEntry:
    """Every prefix of exactly `length` bits inside `pool` (the pool itself if it is that long)."""
    if pool.prefixlen >= length:
        return PrefixListEntry(seq, str(pool))
    if length == pool.max_prefixlen:
        return PrefixListEntry(seq, str(pool), ge=length)
    return PrefixListEntry(seq, str(pool), ge=length, le=length)


def bgp_config(sw: Switch, plan: Plan, vrf_prefix: str = "") -> BgpConfig:
    """Structured BGP config of one switch, in plan order (deterministic).

    `vrf_prefix` starts every tenant VRF's name on platforms that need one (SONiC: "Vrf").
    """
    b = sw.bgp
    if b is None:
        raise ValueError(f"{sw.hostname} has no BGP settings in the plan")
    tenancy = tenancy_config(sw, plan, vrf_prefix)
    # EVPN tenant ports are announced in their VRF as type-5 routes, never in the default VRF
    hidden = plan.tenancy.port_tenant if plan.tenancy is not None and plan.tenancy.evpn else {}
    v4 = _Family("V4", "ip", "ipv4 unicast")
    v6 = _Family("V6", "ipv6", "ipv6 unicast")
    for net in b.networks:
        (v6 if ":" in net else v4).local.append(net)
    if b.connected_gpu_subnets:
        for itf in sw.interfaces:
            if itf.tier != "gpu_leaf" or (sw.hostname, itf.name) in hidden:
                continue
            if itf.ipv4:
                v4.local.append(_network(itf.ipv4))
            if itf.ipv6:
                v6.local.append(_network(itf.ipv6))

    cfg = BgpConfig(asn=b.asn, router_id=b.router_id, keepalive=b.keepalive, holdtime=b.holdtime,
                    planned_maximum_paths=b.maximum_paths,
                    timers_are_default=(b.keepalive, b.holdtime) == FRR_DATACENTER_TIMERS)
    any_bfd = False
    for n in b.neighbors:
        fam = v6 if n.afi == "ipv6" else v4
        bfd = b.bfd and n.bfd
        any_bfd = any_bfd or bfd
        cfg.neighbors.append(Neighbor(n.ip, n.remote_asn, n.description, BFD_PROFILE if bfd else ""))
        fam.neighbors.append(AfNeighbor(n.ip, ROUTE_MAP_IMPORT, fam.rm_export, n.allowas_in))
    if any_bfd:
        cfg.bfd_profile = BfdProfile.of(BFD_PROFILE, b.bfd_min_rx, b.bfd_min_tx, b.bfd_multiplier)

    a = plan.settings.pools
    transit = sw.role != "leaf"
    pools: dict[str, list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int]]] = {
        "V4": [(a.loopbacks, 32), (a.gpu, 31)],
        "V6": [(a.loopbacks_v6, 128)] if a.loopbacks_v6 is not None else [],
    }
    paths = min(b.maximum_paths, FRR_MAX_PATHS)
    cfg.community_lists.append(GSHUT_COMMUNITY_LIST)
    cfg.route_maps.append(RouteMap(ROUTE_MAP_IMPORT, [
        RouteMapEntry(10, f"community {GSHUT_LIST}", "local-preference 0"), RouteMapEntry(20)]))
    for fam in (v4, v6):
        if not fam.local and not fam.neighbors:
            continue
        cfg.prefix_lists.append(PrefixList(fam.pl_local, fam.cli,
                                           [PrefixListEntry(10 * (i + 1), p) for i, p in enumerate(fam.local)]))
        match_local = f"{fam.cli} address prefix-list {fam.pl_local}"
        export = [RouteMapEntry(10, match_local)]
        fabric_pools = pools[fam.suffix]
        if transit and fabric_pools:
            cfg.prefix_lists.append(PrefixList(fam.pl_fabric, fam.cli, [
                _pool_entry(10 * (i + 1), pool, length) for i, (pool, length) in enumerate(fabric_pools)]))
            export.append(RouteMapEntry(20, f"{fam.cli} address prefix-list {fam.pl_fabric}"))
        cfg.route_maps.append(RouteMap(fam.rm_connected, [RouteMapEntry(10, match_local)]))
        cfg.route_maps.append(RouteMap(fam.rm_export, export))
        cfg.address_families.append(AddressFamily(fam.af, fam.rm_connected, paths, fam.neighbors))
    if tenancy is not None:
        cfg.tenancy = tenancy
        cfg.community_lists += tenancy.community_lists
        maps: dict[str, RouteMap] = {}
        for name, seq, match, set_ in tenancy.route_maps:
            maps.setdefault(name, RouteMap(name)).entries.append(RouteMapEntry(seq, match, set_))
        cfg.route_maps += maps.values()
    return cfg
