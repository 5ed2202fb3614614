"""Tenants: each tenant's VRF, ports, numbers and MTU, resolved from `tenants:` and `tenancy:`.

Every number of a tenant derives from its intent `id` (VNI = vni_base + id, VRF table =
table_base + id, RD = <router id>:<id>, RT = <rt_admin>:<vni>), never from its position in the
list, so adding, removing or renaming a tenant renumbers nothing else.  The overlay's MTU cost
is settled here, once: the fabric links are raised by the VXLAN overhead where every platform
takes it, otherwise the tenant ports and NICs are lowered, and a tenant MTU too small for RoCE's
4096-byte path MTU is refused.
"""

from __future__ import annotations

from fabricgen.catalog.registry import platform
from fabricgen.errors import FabricError, Problem
from fabricgen.intent.model import Intent
from fabricgen.intent.tenants import Tenant, parse_member
from fabricgen.plan.model import NicAttachment, Plan, Server, Tenancy, TenantPlan

# VXLAN encapsulation overhead on the wire, by outer IP family: outer Ethernet 14 + IP 20/40 +
# UDP 8 + VXLAN 8 (RFC 7348 §5), the inner Ethernet header counted against the underlay MTU.
VXLAN_OVERHEAD = {"ipv4": 50, "ipv6": 70}
# The smallest IP MTU that carries a RoCEv2 packet of a 4096-byte path MTU: IPv4 20 + UDP 8 +
# BTH 12 + payload 4096 + ICRC 4 (InfiniBand Architecture Specification Annex A17).
ROCE_4096_IP_MTU = 4140


def plan_tenants(intent: Intent, plan: Plan) -> None:
    """Resolve the intent's tenants into `plan.tenancy`; FabricError names each bad member."""
    spec = intent.tenancy
    if spec is None:
        return
    tenancy = _mtu_chain(intent, plan)
    problems: list[Problem] = []
    servers = {srv.name: srv for srv in plan.servers}
    order = [srv.name for srv in plan.servers]
    owner: dict[tuple[str, str], tuple[int, str]] = {}  # (server, ifname) -> (tenant index, tenant)
    leaf_order = {name: i for i, name in enumerate(plan.switches)}
    reach: dict[str, set[str]] = {t.name: set(t.reach) for t in intent.tenants}
    for t in intent.tenants:  # leaking is both ways: a reply needs the route back
        for other in t.reach:
            reach[other].add(t.name)
    for i, t in sorted(enumerate(intent.tenants), key=lambda it: it[1].id):
        vni = t.vni if t.vni is not None else spec.vni_base + t.id
        tp = TenantPlan(t.name, t.id, vni, spec.table_base + t.id, f"{spec.rt_admin}:{vni}",
                        reach=tuple(sorted(reach[t.name])), description=t.description)
        nics = _members(t, i, servers, order, problems)
        for j, nic in nics:
            key = (nic.server, nic.ifname)
            if key in owner and owner[key][0] != i:
                k, other = owner[key]
                problems.append(Problem(f"tenants.{i}.servers.{j}", f"{nic.server} {nic.ifname} (NIC {nic.nic}) is "
                                        f"in tenant {other!r} (tenants.{k}) and in tenant {t.name!r}",
                                        "give each server (or NIC) to one tenant"))
                continue
            owner[key] = (i, t.name)
            tp.nics.append(key)
            tp.ports.append((nic.leaf, nic.leaf_port))
        stripes = {servers[s].su for s, _ in tp.nics}
        leaves = {leaf for leaf, _ in tp.ports}
        if spec.scope == "server" and intent.topology.rail_optimized:
            leaves |= {sw.hostname for sw in plan.by_role("leaf") if sw.su in stripes}
        tp.leaves = sorted(leaves, key=leaf_order.__getitem__)
        tp.ports.sort(key=lambda lp: (leaf_order[lp[0]], lp[1]))
        tenancy.tenants[t.name] = tp
    if problems:
        raise FabricError(plan.source, problems)
    for tp in tenancy.tenants.values():
        for leaf in tp.leaves:
            tenancy.leaf_tenants.setdefault(leaf, []).append(tp.name)
        tenancy.port_tenant.update(dict.fromkeys(tp.ports, tp.name))
        tenancy.nic_tenant.update(dict.fromkeys(tp.nics, tp.name))
    tenancy.leaf_tenants = {leaf: tenancy.leaf_tenants[leaf] for leaf in plan.switches if leaf in tenancy.leaf_tenants}
    _apply_mtu(plan, tenancy)
    plan.tenancy = tenancy


def _members(t: Tenant, i: int, servers: dict[str, Server], order: list[str],
             problems: list[Problem]) -> list[tuple[int, NicAttachment]]:
    """The NIC ports a tenant's `servers` entries name, each with the index of the entry naming it."""
    out: list[tuple[int, NicAttachment]] = []
    for j, member in enumerate(t.servers):
        first, last, nics = parse_member(member)
        whole = member.partition(":")[0]
        if whole in servers:  # a server whose own name has a '-'
            first = last = whole
        missing = [name for name in (first, last) if name not in servers]
        if missing:
            problems.append(Problem(f"tenants.{i}.servers.{j}", f"no server {missing[0]} in this fabric (it has "
                                    f"{order[0]}..{order[-1]})", "name servers the plan has"))
            continue
        lo, hi = servers[first].index, servers[last].index
        if lo > hi:
            problems.append(Problem(f"tenants.{i}.servers.{j}", f"the range {member} runs backwards",
                                    f"write it {last}-{first}"))
            continue
        for name in order[lo:hi + 1]:
            srv = servers[name]
            picked = [n for n in srv.nics if nics is None or nics[0] <= n.nic <= nics[1]]
            if nics is not None and not picked:
                problems.append(Problem(f"tenants.{i}.servers.{j}", f"{name} has no NIC {nics[0]}..{nics[1]} "
                                        f"(its NICs are 0..{len({n.nic for n in srv.nics}) - 1})",
                                        "name NICs the server has"))
            out += [(j, n) for n in picked]
    return out


def _mtu_chain(intent: Intent, plan: Plan) -> Tenancy:
    """Raise the underlay by the overlay overhead where every platform takes it, else lower the tenants."""
    spec = intent.tenancy
    assert spec is not None
    overhead = VXLAN_OVERHEAD[spec.outer] if spec.mechanism == "evpn-vxlan" else 0
    fabric = intent.qos.mtu
    ceilings = {name: platform(name).capabilities.max_mtu for name in set(plan.settings.platforms.values())
                if name in {sw.platform for sw in plan.switches.values()}}
    ceiling = min(ceilings.values(), default=fabric)
    low = min(ceilings, key=lambda n: (ceilings[n], n)) if ceilings else ""
    if not overhead:
        return Tenancy(spec.scope, spec.mechanism, spec.outer, 0, fabric, fabric,
                       "vrf-lite adds no header: tenant and fabric MTU are qos.mtu")
    if fabric + overhead <= ceiling:
        why = (f"fabric links raised to {fabric + overhead} (qos.mtu {fabric} + {overhead} bytes of VXLAN over "
               f"{spec.outer}); tenant ports keep {fabric}")
        return Tenancy(spec.scope, spec.mechanism, spec.outer, overhead, fabric + overhead, fabric, why)
    tenant = ceiling - overhead
    if tenant < ROCE_4096_IP_MTU:
        raise FabricError(plan.source, [Problem(
            "qos.mtu", f"VXLAN over {spec.outer} adds {overhead} bytes: the tenant MTU would be {tenant}, below the "
            f"{ROCE_4096_IP_MTU} bytes a RoCE packet of a 4096-byte path MTU needs", "raise qos.mtu (and the "
            "platforms' MTU) or use tenancy.mechanism: vrf-lite")])
    why = (f"{low} takes at most {ceiling}: fabric links stay at {ceiling}, tenant ports and NICs lowered to {tenant} "
           f"({overhead} bytes of VXLAN over {spec.outer})")
    return Tenancy(spec.scope, spec.mechanism, spec.outer, overhead, ceiling, tenant, why)


def _apply_mtu(plan: Plan, tenancy: Tenancy) -> None:
    """Fabric links carry the underlay MTU; every tenant port the tenant MTU."""
    if not tenancy.overhead:
        return
    for sw in plan.switches.values():
        for itf in sw.interfaces:
            if itf.tier != "gpu_leaf":
                itf.mtu = tenancy.underlay_mtu
            elif (sw.hostname, itf.name) in tenancy.port_tenant:
                itf.mtu = tenancy.tenant_mtu
