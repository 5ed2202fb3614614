"""`validate --tenants`: the tenant reachability matrix and every switch's tenant VRFs, read live (issue 25).

Pings from the servers over SSH, sampled: within every VRF (each tenant, and the default VRF of the NICs no
tenant owns) one pair for every ordered pair of leaves it spans, and one pair for every ordered pair of
VRFs.  A same-VRF pair must answer a full-size (tenant MTU) don't-fragment ping; a cross-VRF pair must not
answer at all, unless the intent leaks the two tenants (`reach`).  The coverage says how much was sampled.

Each switch's VRFs are read back through its platform record's `tenant_reader` (FRR: zebra's VRFs, L3VNIs
and per-VRF routes; SONiC: the same from its FRR plus ConfigDB's VRF and VXLAN tables; NX-OS: `show vrf`,
`show nve vni`, `show ip route vrf all`, as JSON) and compared with the plan: a planned VRF missing, with
another L3VNI or with sources that disagree (SONiC), a VRF the plan does not put there, a tenant subnet
missing from its VRF, and any route in a VRF that may not hold it (another tenant's subnet, or, under EVPN,
a tenant's subnet in the default VRF) are named.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from fabricgen.plan.model import NicAttachment, Plan, Server, Switch
from fabricgen.platforms.tenant_facts import LiveVrf
from fabricgen.validate.checks import Outcome

CHECK = "tenants"
DEFAULT_VRF = "default"


@dataclass(frozen=True, slots=True)
class TenantPing:
    src: str  # source NIC address
    dst: str
    label: str  # "gpu0001:eth0 (red) -> gpu0005:eth0 (red)"
    reach: bool  # the plan wants an answer


@dataclass
class TenantSample:
    pings: dict[str, list[TenantPing]] = field(default_factory=dict)  # server -> its pings
    coverage: list[str] = field(default_factory=list)


def _ip(address: str) -> str:
    return address.split("/")[0]


def vrf_of(plan: Plan) -> dict[tuple[str, str], str]:
    """(server, ifname) -> the VRF its leaf port is in: its tenant's, else the default VRF."""
    owners = plan.tenancy.nic_tenant if plan.tenancy is not None else {}
    return {(srv.name, nic.ifname): owners.get((srv.name, nic.ifname), DEFAULT_VRF)
            for srv in plan.servers for nic in srv.nics}


def may_reach(plan: Plan, a: str, b: str) -> bool:
    """The intent lets VRF a reach VRF b: the same VRF, or two tenants leaked by `reach`."""
    if a == b:
        return True
    t = plan.tenancy
    return t is not None and a in t.tenants and b in t.tenants[a].reach


def tenant_sample(plan: Plan) -> TenantSample:
    """The pings of `validate --tenants` (module doc), sources rotating over each VRF's NICs."""
    vrfs = vrf_of(plan)
    groups: dict[str, list[tuple[Server, NicAttachment]]] = {}
    for srv in plan.servers:
        for nic in sorted(srv.nics, key=lambda n: (n.nic, n.port)):
            groups.setdefault(vrfs[srv.name, nic.ifname], []).append((srv, nic))
    turn: dict[tuple[str, str], int] = {}

    def pick(vrf: str, leaf: str | None, not_server: str = "") -> tuple[Server, NicAttachment] | None:
        nics = [x for x in groups[vrf] if (leaf is None or x[1].leaf == leaf) and x[0].name != not_server]
        if not nics:
            return None
        i = turn.get((vrf, leaf or ""), 0)
        turn[vrf, leaf or ""] = i + 1
        return nics[i % len(nics)]

    sample = TenantSample()

    def add(src: tuple[Server, NicAttachment], dst: tuple[Server, NicAttachment], a: str, b: str) -> None:
        label = f"{src[0].name}:{src[1].ifname} ({a}) -> {dst[0].name}:{dst[1].ifname} ({b})"
        sample.pings.setdefault(src[0].name, []).append(
            TenantPing(_ip(src[1].ip), _ip(dst[1].ip), label, may_reach(plan, a, b)))

    same = alone = 0
    for vrf, members in groups.items():
        leaves = list(dict.fromkeys(nic.leaf for _, nic in members))
        for la in leaves:
            for lb in leaves:
                src = pick(vrf, la)
                dst = pick(vrf, lb, not_server=src[0].name) if src is not None else None
                if src is None or dst is None:  # one server's NICs only: nothing to ping between servers
                    alone += 1
                    continue
                add(src, dst, vrf, vrf)
                same += 1
    cross = cross_total = leaked = 0
    for a in groups:
        for b in groups:
            if a == b:
                continue
            cross_total += 1
            src = pick(a, None)
            dst = pick(b, None, not_server=src[0].name) if src is not None else None
            if src is not None and dst is not None:
                add(src, dst, a, b)
                cross += 1
                leaked += may_reach(plan, a, b)
    sample.coverage.append(
        f"tenant pings: {same + cross} sampled over {len(groups)} VRFs: one for each of {same} same-VRF leaf pairs "
        f"({alone} more reach one server only) and each of {cross}/{cross_total} VRF pairs ({leaked} leaked by "
        "reach, the rest must fail)")
    return sample


def check_tenant_output(src: Server, pings: list[TenantPing], output: str, mtu: int) -> list[Outcome]:
    """Per ping: an allowed pair answers at ``mtu`` with don't-fragment; a refused one does not answer at all.
    ``output``: validate.collect.server_script's OK / SMALL / FAIL lines."""
    status: dict[tuple[str, str], str] = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] in ("OK", "SMALL", "FAIL"):
            status[parts[1], parts[2]] = parts[0]
    out = []
    for p in pings:
        got = status.get((p.src, p.dst), "FAIL")
        if p.reach:
            want = f"reachable at {mtu} bytes, don't fragment"
            actual = {"OK": want, "SMALL": f"only small packets pass ({mtu}-byte don't-fragment pings are lost)",
                      "FAIL": "unreachable"}[got]
            out.append(Outcome(src.name, CHECK, p.label, got == "OK", want, actual))
        else:
            want = "unreachable (tenant isolation)"
            out.append(Outcome(src.name, CHECK, p.label, got == "FAIL", want,
                               want if got == "FAIL" else "reachable: isolation broken"))
    return out


def tenant_subnets(plan: Plan) -> dict[str, str]:
    """Each tenant port's subnet (the leaf port's /31, as the leaf's routes name it) -> its tenant."""
    t = plan.tenancy
    if t is None:
        return {}
    out: dict[str, str] = {}
    for sw in plan.switches.values():
        for itf in sw.interfaces:
            tenant = t.port_tenant.get((sw.hostname, itf.name))
            if tenant is not None and itf.ipv4:
                out[str(ipaddress.ip_interface(itf.ipv4).network)] = tenant
    return out


def check_switch_tenants(plan: Plan, sw: Switch, live: dict[str, LiveVrf],
                         subnets: dict[str, str] | None = None) -> list[Outcome]:
    """One switch's VRFs, L3VNIs and per-VRF routes against the plan (module doc)."""
    t = plan.tenancy
    if t is None:
        return []
    subnets = tenant_subnets(plan) if subnets is None else subnets
    planned = {tp.name: tp for tp in t.on(sw.hostname)}
    out: list[Outcome] = []
    host = sw.hostname
    for name, tp in planned.items():
        vrf = live.get(name)
        want = f"VRF {name}" + (f" with L3VNI {tp.vni}" if t.evpn else "")
        if vrf is None:
            out.append(Outcome(host, CHECK, f"vrf {name}", False, want, "missing"))
            continue
        if vrf.issue:
            out.append(Outcome(host, CHECK, f"vrf {name}", False, want, vrf.issue))
        elif t.evpn and vrf.vni != tp.vni:
            out.append(Outcome(host, CHECK, f"vrf {name}", False, want,
                               f"L3VNI {vrf.vni}" if vrf.vni else "no L3VNI"))
        else:
            out.append(Outcome(host, CHECK, f"vrf {name}", True, want, want))
        if vrf.silent_vteps is not None:
            out.append(_router_macs(host, name, vrf.silent_vteps))
        allowed = {name, *tp.reach}
        needed = sorted(s for s, owner in subnets.items() if owner in allowed)
        missing = [s for s in needed if s not in vrf.prefixes]
        out.append(Outcome(host, CHECK, f"vrf {name} routes", not missing,
                           f"{len(needed)} tenant subnets of {', '.join(sorted(allowed))}",
                           f"missing {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}" if missing
                           else f"{len(needed)} tenant subnets of {', '.join(sorted(allowed))}"))
        out += _foreign(host, name, vrf, subnets, allowed)
    for name in sorted(set(live) - set(planned) - {DEFAULT_VRF}):
        out.append(Outcome(host, CHECK, f"vrf {name}", False, "no such VRF on this switch (the plan puts none here)",
                           "present" + (f" with L3VNI {live[name].vni}" if live[name].vni else "")))
    if t.evpn and DEFAULT_VRF in live:  # under vrf-lite the default VRF carries tenants' routes by design
        out += _foreign(host, DEFAULT_VRF, live[DEFAULT_VRF], subnets, set())
    return out


def _router_macs(host: str, vrf: str, silent: tuple[str, ...]) -> Outcome:
    """Every VTEP the VRF's kernel routes use has its router-MAC neighbour; where one lacks it, that is the cause
    of the VRF's silent pairs through that VTEP, named as such."""
    want = "every VTEP of its routes has zebra's router-MAC neighbour"
    if not silent:
        return Outcome(host, CHECK, f"vrf {vrf} router MACs", True, want, want)
    return Outcome(host, CHECK, f"vrf {vrf} router MACs", False, want,
                   f"no router-MAC neighbour for VTEP {', '.join(silent)}: traffic to it is dropped (zebra lost the "
                   "router MAC; fix: bind the L3VNI again, `no vni` then `vni`, as deploy does)")


def _foreign(host: str, vrf: str, live: LiveVrf, subnets: dict[str, str], allowed: set[str]) -> Iterable[Outcome]:
    """A route in ``vrf`` of a tenant that may not be there: one failure per route, naming both."""
    for prefix in sorted(live.prefixes):
        owner = subnets.get(prefix)
        if owner is not None and owner not in allowed:
            yield Outcome(host, CHECK, f"route {prefix} in vrf {vrf}", False,
                          f"only in VRF {owner} (and the VRFs the intent leaks it to)",
                          f"tenant {owner}'s route in VRF {vrf}")
