"""Tenant rules over a build (issue 25): numbers, isolation, the overlay MTU chain and DSCP/ECN copy.

Each device's tenant facts come from its platform record's `tenant_extractor` (rendered files in,
`platforms.tenant_facts.TenantFacts` out); the rules compare them with the plan and across the fabric:

* ``tenant-numbers``: every VRF a device carries is a planned tenant's, with the plan's VNI, RD and
  export RT; no two tenants share a VNI or an export RT, no two VRFs an RD;
* ``tenant-isolation``: a VRF imports exactly its own tenant's RT (vrf-lite: community; NX-OS vrf-lite both)
  and those of the tenants the intent lets it reach, each tenant port is in its tenant's VRF and no other
  port is in one;
* ``tenant-mtu-chain``: (evpn-vxlan) every fabric link of a VTEP or spine carries the tenant MTU plus the
  VXLAN overhead;
* ``tenant-dscp-copy``: (evpn-vxlan) every VTEP copies the inner DSCP and ECN to the outer header
  (RFC 6040), so spines classify RoCE into its lossless class by the outer DSCP.
"""

from __future__ import annotations

from pathlib import Path

from fabricgen.base.findings import Finding
from fabricgen.catalog.registry import load, platform
from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan, Switch, Tenancy
from fabricgen.platforms.tenant_facts import TenantFacts

RULES = ids("config", "tenant-")
NUMBERS, ISOLATION, MTU, DSCP = RULES


def check_tenants(plan: Plan, configs: Path) -> list[Finding]:
    """Every tenant rule over every switch of a plan with tenants ([] without tenants)."""
    t = plan.tenancy
    if t is None:
        return []
    out: list[Finding] = []
    facts: dict[str, TenantFacts] = {}
    for sw in plan.switches.values():
        extractor = platform(sw.platform).tenant_extractor
        if not extractor or not (configs / sw.hostname).is_dir():
            continue  # no rendered files: roce-missing-config says so
        f = facts[sw.hostname] = load(extractor)(plan, configs, sw.hostname)
        out += [Finding(sw.hostname, f.file, "", NUMBERS, e) for e in f.errors]
        out += _device(sw, t, f, plan)
    out += _fabric_unique(facts)
    return out


def _device(sw: Switch, t: Tenancy, f: TenantFacts, plan: Plan) -> list[Finding]:
    out: list[Finding] = []

    def add(rule: str, loc: str, message: str) -> None:
        out.append(Finding(sw.hostname, f.file, loc, rule, message))

    names = {_vrf_key(name): name for name in f.vrfs}
    planned = {tp.name: tp for tp in t.on(sw.hostname)}
    for tp in planned.values():
        vrf = f.vrfs.get(names.get(tp.name, ""))
        if vrf is None:
            add(NUMBERS, "", f"tenant {tp.name}'s VRF is missing (the plan puts it on this leaf)")
            continue
        wanted = {tp.route_target, *(t.tenants[o].route_target for o in tp.reach)}
        reach = ", ".join(tp.reach) or "none"
        if t.evpn and vrf.vni != tp.vni:
            add(NUMBERS, vrf.loc, f"VRF {vrf.name} has VNI {vrf.vni or 'none'}, the plan {tp.vni}")
        if vrf.rd and vrf.rd != tp.rd(sw.loopback):
            add(NUMBERS, vrf.loc, f"VRF {vrf.name} has RD {vrf.rd}, the plan {tp.rd(sw.loopback)}")
        if t.evpn or vrf.rt_import or vrf.rt_export:  # vrf-lite on NX-OS leaks leaf-local pairs by RT
            if vrf.rt_export != {tp.route_target}:
                add(NUMBERS, vrf.loc, f"VRF {vrf.name} exports {_list(vrf.rt_export)}, the plan {tp.route_target}")
            extra, missing = vrf.rt_import - wanted, wanted - vrf.rt_import
            if extra:
                add(ISOLATION, vrf.loc, f"VRF {vrf.name} imports {_list(extra)}: routes of tenants "
                    f"{tp.name} may not reach (its reach: {reach})")
            if missing:
                add(ISOLATION, vrf.loc, f"VRF {vrf.name} does not import {_list(missing)}: the routes of "
                    f"{_owners(t, missing)} the intent lets {tp.name} reach (its reach: {reach})")
        if not t.evpn:
            allowed = {tp.community, *(t.tenants[o].community for o in tp.reach)}
            extra = vrf.communities - allowed
            if extra:
                add(ISOLATION, vrf.loc, f"VRF {vrf.name} imports routes tagged {_list(extra)}: tenants "
                    f"{tp.name} may not reach (its reach: {reach})")
            if not vrf.communities:
                add(ISOLATION, vrf.loc, f"VRF {vrf.name} lets no tenant tag in: its tenant's other leaves are "
                    "unreachable")
            elif allowed - vrf.communities:
                add(ISOLATION, vrf.loc, f"VRF {vrf.name} does not let {_list(allowed - vrf.communities)} in: "
                    f"the other leaves' routes of {_owners(t, allowed - vrf.communities, 'community')} the intent "
                    f"lets {tp.name} reach (its reach: {reach})")
    for key, name in names.items():
        if key not in planned:
            add(NUMBERS, f.vrfs[name].loc, f"VRF {name} is no planned tenant's on this switch")
    owner = {port: tenant for (leaf, port), tenant in t.port_tenant.items() if leaf == sw.hostname}
    for port, (vrf_name, loc) in f.port_vrf.items():
        if _vrf_key(vrf_name) != owner.get(port):
            add(ISOLATION, loc, f"{port} is in VRF {vrf_name}; the plan has it " + (
                f"in tenant {owner[port]}'s" if port in owner else "in no tenant"))
    for port, tenant in owner.items():
        if port not in f.port_vrf:
            add(ISOLATION, "", f"{port} is tenant {tenant}'s but in the default VRF: it reaches every untenanted "
                "port and no tenant route")
    if t.evpn and (planned or sw.role != "leaf"):
        out += _mtu_chain(sw, t, f, plan)
        if planned and not f.dscp_copy:
            add(DSCP, f.dscp_loc, f"the VTEP does not copy the inner DSCP/ECN to the outer header ({f.dscp_why}): "
                "spines would classify RoCE by an outer DSCP the NIC never set, outside its lossless class")
    return out


def _mtu_chain(sw: Switch, t: Tenancy, f: TenantFacts, plan: Plan) -> list[Finding]:
    """Fabric links carry a tenant's largest packet plus the VXLAN header."""
    out: list[Finding] = []
    tenant_ports = {port for (leaf, port) in t.port_tenant if leaf == sw.hostname}
    tenant_mtu = max((f.port_mtu.get(p, sw.interface(p).mtu) for p in tenant_ports), default=t.tenant_mtu)
    for itf in sw.interfaces:
        if itf.tier == "gpu_leaf":
            continue
        mtu = f.port_mtu.get(itf.name, itf.mtu)
        if mtu < tenant_mtu + t.overhead:
            out.append(Finding(sw.hostname, f.file, "", MTU, f"{itf.name} (to {itf.peer_device}) has MTU {mtu}, "
                               f"below the tenant MTU {tenant_mtu} + {t.overhead} bytes of VXLAN over {t.outer}: "
                               "full-size RoCE packets are dropped in the tunnel"))
    return out


def _fabric_unique(facts: dict[str, TenantFacts]) -> list[Finding]:
    """One VNI and one export RT per tenant VRF fabric-wide, and no RD on two VRFs."""
    out: list[Finding] = []
    by: dict[str, dict[object, tuple[str, str]]] = {"VNI": {}, "export RT": {}, "RD": {}}
    for host, f in facts.items():
        for v in f.vrfs.values():
            key = _vrf_key(v.name)
            for what, values in (("VNI", {v.vni} - {0}), ("export RT", v.rt_export), ("RD", {v.rd} - {""})):
                for value in values:
                    owner = (key, host) if what == "RD" else (key, "")
                    first = by[what].setdefault(value, owner)
                    if first[0] != key or (what == "RD" and first != owner):
                        out.append(Finding(host, f.file, v.loc, NUMBERS, f"{what} {value} of VRF {v.name} is also "
                                           f"VRF {first[0]}'s" + (f" on {first[1]}" if first[1] else "")))
    return out


def _owners(t: Tenancy, values: set[str], what: str = "route_target") -> str:
    """The tenants whose RTs (or communities) these are, for a message."""
    names = sorted(tp.name for tp in t.tenants.values() if getattr(tp, what) in values)
    return "tenant " + ", ".join(names) if names else "no tenant"


def _vrf_key(name: str) -> str:
    """The tenant a VRF name is for: SONiC's `Vrf<tenant>`, elsewhere the tenant's own name."""
    return name[3:] if name.startswith("Vrf") else name


def _list(values: set[str]) -> str:
    return ", ".join(sorted(values)) or "nothing"
