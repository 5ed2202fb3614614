"""NX-OS tenants: EVPN-VXLAN type-5 with one L3VNI per tenant VRF (the Cisco Nexus 9000 VXLAN guide's
"Configuring VXLAN BGP EVPN" layout), and the transit part spines need for either mechanism.

A leaf with tenants gets ``nv overlay evpn``, the features ``nv overlay``,
``vn-segment-vlan-based`` and ``interface-vlan``; per tenant a VLAN with ``vn-segment <vni>``,
``vrf context <name>`` with ``vni``, an explicit RD and ``route-target import|export ... evpn``,
an L3VNI SVI (``vrf member``, ``ip forward``), ``member vni <vni> associate-vrf`` under
``interface nve1`` (sourced from loopback0), and ``router bgp`` ``vrf <name>`` with
``advertise l2vpn evpn``.  Every underlay session activates ``address-family l2vpn evpn`` with
``send-community extended`` (the RTs are extended communities).  A spine keeps every EVPN route
(``retain route-target all``: it imports none) and the VTEP's next hop
(``route-map RM-NH-UNCHANGED out``, ``set ip next-hop unchanged``), as eBGP would rewrite it.

NVE QoS: NX-OS VXLAN QoS is uniform by default (Cisco Nexus 9000 VXLAN guide, "Configuring VXLAN
QoS"): the encapsulating VTEP copies the inner DSCP to the outer header, so spines classify
RoCE by the outer DSCP; fabricgen renders no ``qos-mode pipe`` and `check` refuses one.

vrf-lite: NX-OS spines pass the tenants' tags on (``send-community`` on every IPv4 session); NX-OS
leaves do not render vrf-lite (leaking through the default VRF is not rendered: the platform
record's capability says so and `plan` refuses it by name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.tenant_facts import TenantFacts

NVE = "nve1"
NH_UNCHANGED = "RM-NH-UNCHANGED"
TENANT_DIRECT = "RM-TENANT-DIRECT"
EVPN_FEATURES = ("nv overlay", "vn-segment-vlan-based", "interface-vlan")


@dataclass(frozen=True, slots=True)
class NxTenantVrf:
    name: str
    vni: int
    vlan: int
    rd: str
    rt_import: tuple[str, ...]
    rt_export: str
    mtu: int  # of the L3VNI SVI: the tenant MTU


@dataclass(slots=True)
class NxTenancy:
    """What `nxos/tenants.j2` and the BGP template print for tenants."""

    evpn: bool
    vtep: bool  # leaf with tenant VRFs: nve1, VLANs, VRFs
    transit: bool  # spine: retain route-target all, next hop unchanged
    send_community: bool  # vrf-lite transit: tenant tags ride standard communities
    vrfs: list[NxTenantVrf] = field(default_factory=list)
    port_vrf: dict[str, str] = field(default_factory=dict)  # port -> VRF of its tenant
    maximum_paths: int = 1


def tenancy_config(sw: Switch, plan: Plan) -> NxTenancy | None:
    """The tenant part of one NX-OS switch; None when the fabric has no tenants."""
    t = plan.tenancy
    if t is None or sw.bgp is None:
        return None
    mine = t.on(sw.hostname)
    out = NxTenancy(t.evpn, t.evpn and bool(mine), t.evpn and sw.role != "leaf", not t.evpn,
                    maximum_paths=sw.bgp.maximum_paths)
    if not t.evpn:
        return out
    for tp in mine:
        rts = (tp.route_target, *(t.tenants[o].route_target for o in tp.reach))
        out.vrfs.append(NxTenantVrf(tp.name, tp.vni, tp.vlan, tp.rd(sw.loopback), rts, tp.route_target,
                                    t.tenant_mtu))
    out.port_vrf = {port: tenant for (leaf, port), tenant in t.port_tenant.items() if leaf == sw.hostname}
    return out


def tenant_facts(plan: Plan, configs: Path, host: str) -> TenantFacts:
    """VRF contexts (vni, rd, RTs), tenant ports (`vrf member`) and port MTUs, and whether nve1 is in
    `qos-mode pipe` (then the outer DSCP is not the inner one's copy)."""
    path = configs / host / "nxos.cfg"
    f = TenantFacts(host, str(path), dscp_why="NX-OS VXLAN QoS default: uniform (inner DSCP copied to the outer)")
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        f.errors.append(f"cannot read: {exc}")
        return f
    kind, name = "", ""
    for n, raw in enumerate(lines, 1):
        words = raw.split()
        if not words or words[0].startswith("!"):
            continue
        if not raw.startswith(" "):
            kind, name = "", ""
            if words[:2] == ["vrf", "context"] and len(words) == 3:
                kind, name = "vrf", words[2]
                f.vrf(name, f"L{n}")
            elif words[0] == "interface" and len(words) == 2:
                kind, name = "interface", words[1]
            continue
        if kind == "vrf":
            v = f.vrf(name)
            if words[0] == "vni" and len(words) == 2 and words[1].isdigit():
                v.vni = int(words[1])
            elif words[0] == "rd" and len(words) == 2:
                v.rd = words[1]
            elif words[0] == "route-target" and len(words) >= 3:
                (v.rt_import if words[1] == "import" else v.rt_export).add(words[2])
        elif kind == "interface":
            if words[:2] == ["vrf", "member"] and len(words) == 3 and name.startswith("Ethernet"):
                f.port_vrf[name] = (words[2], f"L{n}")
            elif words[0] == "mtu" and len(words) == 2 and words[1].isdigit() and name.startswith("Ethernet"):
                f.port_mtu[name] = int(words[1])
            elif name == NVE and words[:2] == ["qos-mode", "pipe"]:
                f.dscp_copy, f.dscp_why, f.dscp_loc = False, "interface nve1 is in qos-mode pipe", f"L{n}"
    return f
