"""Underlay: loopbacks, /31 links, GPU-NIC /31s, ASNs and eBGP sessions (RFC 7938).

Every address and ASN is a pure function of a switch's stable `slot` (and a
port's index), laid into pools in fixed-size blocks taken from the design
envelope.  Adding servers, leaves or pods therefore only ever *adds* numbers:
nothing that existed is renumbered.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from dataclasses import dataclass

from fabricgen.errors import Problem
from fabricgen.intent.model import Intent
from fabricgen.plan.model import BgpNeighbor, Design, Plan, SwitchBgp
from fabricgen.plan.topology import Layout, TopologyError

PRIVATE_ASN_2B = (64512, 65534)
PRIVATE_ASN_4B = (4_200_000_000, 4_294_967_294)


@dataclass(frozen=True)
class Block:
    """A run of `count` consecutive units of `step` addresses starting at `base` within a pool."""

    base: int
    step: int
    count: int


def _blocks(pool: ipaddress.IPv4Network | ipaddress.IPv6Network, path: str, step: int,
            sizes: list[tuple[str, int]], used: dict[str, int]) -> dict[str, Block]:
    """Carve `pool` into consecutive role blocks sized by the envelope; check actual use fits."""
    base = int(pool.network_address)
    blocks: dict[str, Block] = {}
    offset = 0
    for name, count in sizes:
        blocks[name] = Block(base + offset, step, count)
        offset += count * step
    if offset > pool.num_addresses:
        need_prefix = pool.max_prefixlen - max(0, (offset - 1).bit_length())
        detail = ", ".join(f"{n}: {c} x {step}" for n, c in sizes if c)
        in_use = ", ".join(f"{n}: {used.get(n, 0)}" for n, c in sizes if c)
        raise TopologyError([Problem(
            path,
            f"pool {pool} holds {pool.num_addresses} addresses but the fabric's growth envelope needs {offset} "
            f"({detail}; in use today: {in_use})",
            f"use a /{need_prefix} or larger, or shrink the envelope (topology.max_pods, topology.spines)",
        )])
    return blocks


_DOTTED_24: dict[int, str] = {}  # the first three octets of a /24, "198.18.4.", by its 24-bit number


def _addr(block: Block, unit: int, offset: int = 0, v6: bool = False) -> str:
    value = block.base + unit * block.step + offset
    if v6:
        return str(ipaddress.IPv6Address(value))
    # dotted quad of the /24 once, then one f-string an address: twice as fast as inet_ntoa on each of the
    # ~800K addresses of a 128K-GPU plan, itself 4x faster than str(IPv4Address)
    head = _DOTTED_24.get(value >> 8)
    if head is None:
        head = _DOTTED_24[value >> 8] = socket.inet_ntoa((value & ~0xFF).to_bytes(4, "big"))[:-1]
    return f"{head}{value & 0xFF}"


def _check_asn_range(path: str, first: int, last: int) -> Problem | None:
    for lo, hi in (PRIVATE_ASN_2B, PRIVATE_ASN_4B):
        if lo <= first <= hi:
            if last > hi:
                return Problem(path, f"ASNs {first}..{last} run past the private range end {hi}",
                               f"start lower (the range holds {hi - lo + 1}) "
                               f"or use 4-byte ASNs from {PRIVATE_ASN_4B[0]}")
            return None
    return Problem(path, f"ASN {first} is not a private ASN (RFC 6996)",
                   f"use {PRIVATE_ASN_2B[0]}-{PRIVATE_ASN_2B[1]} or {PRIVATE_ASN_4B[0]}-{PRIVATE_ASN_4B[1]}")


def assign_asns(intent: Intent, d: Design, plan: Plan) -> None:
    """Multi-AS (default): leaves unique, a pod's spines share, super-spines share; or same-tier leaves."""
    bgp = intent.bgp
    problems: list[Problem] = []
    pod_slots = d.planes * d.max_pods
    ranges = {
        "bgp.leaf_asn_base": (bgp.leaf_asn_base,
                              bgp.leaf_asn_base + (d.max_leaves - 1 if bgp.asn_scheme == "multi-as" else 0)),
        "bgp.spine_asn_base": (bgp.spine_asn_base, bgp.spine_asn_base + pod_slots - 1),
    }
    if d.tiers == 3:
        ranges["bgp.super_spine_asn"] = (bgp.super_spine_asn, bgp.super_spine_asn + d.planes - 1)
    for path, (lo, hi) in ranges.items():
        if (p := _check_asn_range(path, lo, hi)) is not None:
            problems.append(p)
    items = sorted(ranges.items(), key=lambda kv: kv[1])
    for (pa, (_, ahi)), (pb, (blo, bhi)) in zip(items, items[1:], strict=False):
        if blo <= ahi:
            problems.append(Problem(pb, f"ASN range {blo}..{bhi} overlaps {pa} (up to {ahi}): ASNs would repeat "
                                        "across tiers and BGP would drop paths as loops",
                                    f"start {pb} above {ahi}"))
    if problems:
        raise TopologyError(problems)
    for sw in plan.switches.values():
        if sw.role == "leaf":
            sw.asn = bgp.leaf_asn_base + (sw.slot if bgp.asn_scheme == "multi-as" else 0)
        elif sw.role == "spine":
            sw.asn = bgp.spine_asn_base + sw.plane * d.max_pods + sw.pod
        else:
            sw.asn = bgp.super_spine_asn + sw.plane


@dataclass(frozen=True)
class Pools:
    """Each pool carved into role or tier blocks sized by the design envelope."""

    lo: dict[str, Block]
    lo6: dict[str, Block] | None
    mgmt: dict[str, Block]
    p2p: dict[str, Block]
    p2p6: dict[str, Block] | None
    gpu: Block


def carve_pools(intent: Intent, d: Design, switches: dict[str, int], servers: int, links: dict[str, int],
                endpoints: int = 0) -> Pools:
    """The blocks of every pool, or TopologyError naming the pool the envelope does not fit.

    Sizes come from the design alone, so `plan` runs this before building anything; the counts
    in use (`switches` per role, `servers`, `links` per tier) only go into the message.
    """
    a = intent.addressing
    # Unit 0 of every pool stays unused: no switch gets the network address of its pool.
    roles = [("reserved", 1), ("super_spine", d.max_super_spines), ("spine", d.max_spines), ("leaf", d.max_leaves)]
    tiers = [("leaf_spine", d.max_leaves * d.leaf_up), ("spine_super_spine", d.max_spines * d.spine_up)]
    return Pools(
        lo=_blocks(a.loopbacks, "addressing.loopbacks", 1, roles, switches),
        lo6=_blocks(a.loopbacks_v6, "addressing.loopbacks_v6", 1, roles, switches) if a.loopbacks_v6 else None,
        # endpoints' block sits before the servers' and is sized by the envelope (empty without endpoints)
        mgmt=_blocks(a.management, "addressing.management", 1,
                     [*roles, ("endpoint", endpoint_envelope(intent, d)), ("server", max(servers, 1))],
                     {**switches, "endpoint": endpoints, "server": servers}),
        p2p=_blocks(a.p2p, "addressing.p2p", 2, tiers, links),
        p2p6=_blocks(a.p2p_v6, "addressing.p2p_v6", 2, tiers, links) if a.p2p_v6 else None,
        gpu=_blocks(a.gpu, "addressing.gpu", 2, [("leaf", d.max_leaves * d.leaf_down)],
                    {"leaf": links.get("gpu_leaf", 0)})["leaf"],
    )


def check_pools(intent: Intent, d: Design, lay: Layout) -> None:
    """Pools against the design, before the topology is built (so an oversized design stops early)."""
    carve_pools(intent, d, {"super_spine": lay.super_spines, "spine": lay.spines, "leaf": lay.leaves},
                intent.servers.count, lay.links)


def assign_addresses(intent: Intent, d: Design, plan: Plan) -> None:
    """Loopbacks (/32), fabric links (/31), GPU NICs (/31) and management addresses."""
    a = intent.addressing
    counts = {r: 0 for r in ("super_spine", "spine", "leaf")}
    for sw in plan.switches.values():
        counts[sw.role] += 1
    used_links = {"gpu_leaf": 0, "leaf_spine": 0, "spine_super_spine": 0}
    for link in plan.links:
        used_links[link.tier] += 1
    n_servers = len(plan.servers)
    pools = carve_pools(intent, d, counts, n_servers, used_links, len(plan.endpoints))
    lo, lo6, mgmt, p2p, p2p6, gpu = pools.lo, pools.lo6, pools.mgmt, pools.p2p, pools.p2p6, pools.gpu

    for sw in plan.switches.values():
        sw.loopback = _addr(lo[sw.role], sw.slot)
        if lo6 is not None:
            sw.loopback_v6 = _addr(lo6[sw.role], sw.slot, v6=True)
        sw.mgmt_ip = _addr(mgmt[sw.role], sw.slot)
    for srv in plan.servers:
        srv.mgmt_ip = _addr(mgmt["server"], srv.index)
    for ep in plan.endpoints:
        ep.mgmt_ip = _addr(mgmt["endpoint"], ep.index)

    switches = plan.switches
    ports = {(sw.hostname, itf.name): itf for sw in switches.values() for itf in sw.interfaces}
    # Fabric links: the upper end of each /31 is the lower switch (leaf or spine), by uplink index.
    for sw in switches.values():
        if sw.role == "super_spine":
            continue
        up_first = d.leaf_down if sw.role == "leaf" else d.spine_down
        up_count = d.leaf_up if sw.role == "leaf" else d.spine_up
        tier = "leaf_spine" if sw.role == "leaf" else "spine_super_spine"
        for itf in sw.interfaces:
            if itf.direction != "up":
                continue
            unit = sw.slot * up_count + (itf.index - up_first)
            low, high = _addr(p2p[tier], unit, 0), _addr(p2p[tier], unit, 1)
            peer = ports[itf.peer_device, itf.peer_interface]
            itf.ipv4, itf.peer_ipv4 = f"{high}/31", low
            peer.ipv4, peer.peer_ipv4 = f"{low}/31", high
            if p2p6 is not None:
                low6, high6 = _addr(p2p6[tier], unit, 0, True), _addr(p2p6[tier], unit, 1, True)
                itf.ipv6, itf.peer_ipv6 = f"{high6}/127", low6
                peer.ipv6, peer.peer_ipv6 = f"{low6}/127", high6
    # GPU NICs: the leaf takes the even address, the NIC the odd one.
    for srv in plan.hosts():  # GPU servers and endpoints: the /31 of their leaf port
        for nic in srv.nics:
            leaf = switches[nic.leaf]
            itf = ports[nic.leaf, nic.leaf_port]
            unit = leaf.slot * d.leaf_down + itf.index
            gw, host = _addr(gpu, unit, 0), _addr(gpu, unit, 1)
            itf.ipv4, itf.peer_ipv4 = f"{gw}/31", host
            nic.ip, nic.gateway = f"{host}/31", gw
    for link in plan.links:
        if link.tier == "gpu_leaf":
            itf = ports[link.z_device, link.z_port]
            link.a_ip, link.z_ip = itf.peer_ipv4, itf.ipv4.split("/")[0]
        else:
            itf = ports[link.a_device, link.a_port]
            link.a_ip, link.z_ip = itf.ipv4.split("/")[0], itf.peer_ipv4
    plan.pool_use = {
        "loopbacks": (sum(counts.values()), a.loopbacks.num_addresses),
        "p2p": (2 * (used_links["leaf_spine"] + used_links["spine_super_spine"]), a.p2p.num_addresses),
        "gpu": (2 * sum(len(s.nics) for s in plan.hosts()), a.gpu.num_addresses),
        "management": (sum(counts.values()) + n_servers + len(plan.endpoints), a.management.num_addresses),
    }


def endpoint_envelope(intent: Intent, d: Design) -> int:
    """Endpoints the envelope can hold (the management block they number into; topology names them)."""
    return sum(ep.count * d.endpoint_units(ep.per) for ep in intent.endpoints)


def equal_cost_paths(d: Design, role: str) -> int:
    """`maximum-paths` a switch of `role` needs: at least its own equal-cost next hops towards the
    farthest destination, and never fewer than the envelope's widest uplink set (leaf or spine
    uplinks).  A spine with one link per leaf would otherwise get `maximum-paths 1`, and a second
    cable to a leaf, added by growth or by mistake, would quietly carry nothing.
    """
    own = {"leaf": d.leaf_up, "spine": max(d.leaf_spine_links, d.spine_up)}.get(role, d.spine_super_links)
    return max(1, own, d.leaf_up, d.spine_up)  # a tier-1 plane has no uplinks: `maximum-paths 0` is rejected


def build_bgp(intent: Intent, d: Design, plan: Plan) -> None:
    """One eBGP session per fabric link, on the /31 (and /127) addresses."""
    bgp = intent.bgp
    same_tier = bgp.asn_scheme == "same-tier"
    problems: list[Problem] = []
    for sw in plan.switches.values():
        need = equal_cost_paths(d, sw.role)
        if bgp.maximum_paths is not None and bgp.maximum_paths < need:
            problems.append(Problem("bgp.maximum_paths",
                                    f"{bgp.maximum_paths} is below the {need} equal-cost paths a {sw.role} of this "
                                    "design needs (its widest uplink set)",
                                    f"set it to at least {need} or leave it out to derive it"))
            break
        sb = SwitchBgp(asn=sw.asn, router_id=sw.loopback, maximum_paths=bgp.maximum_paths or need,
                       equal_cost_paths=need,
                       keepalive=bgp.keepalive, holdtime=bgp.holdtime,
                       networks=[f"{sw.loopback}/32"] + ([f"{sw.loopback_v6}/128"] if sw.loopback_v6 else []),
                       connected_gpu_subnets=sw.role == "leaf", bfd=bgp.bfd.enabled,
                       bfd_min_tx=bgp.bfd.min_tx_ms, bfd_min_rx=bgp.bfd.min_rx_ms,
                       bfd_multiplier=bgp.bfd.multiplier)
        sw.bgp = sb
    if problems:
        raise TopologyError(problems)
    bfd = bgp.bfd.enabled
    switches = plan.switches
    for sw in switches.values():
        assert sw.bgp is not None
        neighbors = sw.bgp.neighbors
        allowas = bgp.allowas_in if same_tier and sw.role == "leaf" else 0
        for itf in sw.interfaces:
            if itf.tier == "gpu_leaf":
                continue
            peer = switches[itf.peer_device]
            no_peer_check = same_tier and sw.role == "spine" and peer.role == "leaf"
            desc = f"{peer.hostname}:{itf.peer_interface}"
            if itf.peer_ipv4:
                neighbors.append(BgpNeighbor(itf.peer_ipv4, peer.asn, peer.hostname, itf.name, desc,
                                             allowas_in=allowas, disable_peer_as_check=no_peer_check, bfd=bfd,
                                             afi="ipv4"))
            if itf.peer_ipv6:
                neighbors.append(BgpNeighbor(itf.peer_ipv6, peer.asn, peer.hostname, itf.name, desc,
                                             allowas_in=allowas, disable_peer_as_check=no_peer_check, bfd=bfd,
                                             afi="ipv6"))


def planned_addresses(plan: Plan) -> Iterator[tuple[str, str, str]]:
    """(address, device, what) of every address the plan gives out, each once, from its owner's side."""
    for sw in plan.switches.values():
        yield sw.loopback, sw.hostname, "loopback"
        if sw.loopback_v6:
            yield sw.loopback_v6, sw.hostname, "loopback"
        yield sw.mgmt_ip, sw.hostname, "management"
        for itf in sw.interfaces:
            if itf.ipv4:
                yield itf.ipv4.partition("/")[0], sw.hostname, itf.name
            if itf.ipv6:
                yield itf.ipv6.partition("/")[0], sw.hostname, itf.name
    for srv in plan.hosts():
        yield srv.mgmt_ip, srv.name, "management"
        for nic in srv.nics:
            yield nic.ip.partition("/")[0], srv.name, nic.ifname


def given_addresses(plan: Plan) -> list[str]:
    """The addresses of planned_addresses alone, in one list: the check that none is given twice builds it
    for every plan, and at 128K GPUs (813K addresses) a tuple and a generator step each cost seconds."""
    switches, hosts = plan.switches.values(), plan.hosts()
    out = [sw.loopback for sw in switches]
    out += [sw.loopback_v6 for sw in switches if sw.loopback_v6]
    out += [sw.mgmt_ip for sw in switches]
    out += [i.ipv4.partition("/")[0] for sw in switches for i in sw.interfaces if i.ipv4]
    out += [i.ipv6.partition("/")[0] for sw in switches for i in sw.interfaces if i.ipv6]
    out += [srv.mgmt_ip for srv in hosts]
    out += [nic.ip.partition("/")[0] for srv in hosts for nic in srv.nics]
    return out


def _duplicate_address(plan: Plan) -> None:
    owners: dict[str, tuple[str, str]] = {}
    for addr, device, what in planned_addresses(plan):
        first = owners.setdefault(addr, (device, what))
        if first != (device, what):
            raise TopologyError([Problem("addressing", f"address {addr} is given to both {first[0]} {first[1]} and "
                                         f"{device} {what}",
                                         "report this as a fabricgen bug; meanwhile give each addressing pool a "
                                         "range of its own")])


def check_unique(plan: Plan) -> None:
    """Duplicate hostnames cannot happen by construction; duplicate addresses and ASNs could if the
    pools or the allocation were wrong, so every address is checked once after allocation."""
    given = given_addresses(plan)
    if len(set(given)) != len(given):
        _duplicate_address(plan)
    if plan.settings.asn_scheme != "multi-as":
        return
    seen: dict[int, str] = {}
    for sw in plan.switches.values():
        if sw.role != "leaf":
            continue
        if sw.asn in seen:
            raise TopologyError([Problem("bgp.leaf_asn_base",
                                         f"leaves {seen[sw.asn]} and {sw.hostname} share ASN {sw.asn}",
                                         "multi-as gives every leaf its own ASN; check the ASN ranges")])
        seen[sw.asn] = sw.hostname


def build_underlay(intent: Intent, d: Design, plan: Plan) -> None:
    assign_asns(intent, d, plan)
    assign_addresses(intent, d, plan)
    build_bgp(intent, d, plan)
    check_unique(plan)
