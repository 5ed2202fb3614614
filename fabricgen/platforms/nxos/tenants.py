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

vrf-lite (route leaking, no encapsulation), the model of the FRR and SONiC render (platforms/frr/tenants.py):
the tenant's ports themselves are in its VRF (``vrf member``, so the RoCE QoS lines of the port stay
exactly as on any other port), and per tenant VRF

* ``vrf context <name>`` with ``rd <router id>:<tenant id>`` and, under ``address-family ipv4 unicast``,
  ``route-target import|export`` (no ``evpn``: BGP's local VRF-to-VRF leak) of its own RT and the RTs of
  the tenants its ``reach`` names: the leaf-local leaks;
* ``export vrf default map RM-TAG-<name>``: its routes into the default VRF with its tenant community
  added (``set community ... additive``), so spines carry them as plain IPv4 with a tag.  Without
  ``allow-vpn``: routes it imported from other VRFs are not re-exported under its tag;
* ``import vrf default map RM-IMPORT-<name>``: from the default VRF only routes tagged with its own
  community or those of the tenants it reaches (``ip community-list standard CL-<name>``, ``match
  community``): the other leaves' routes of the tenant and of its leaks;
* ``router bgp`` ``vrf <name>`` ``address-family ipv4 unicast`` redistributes its direct /31s;
  every IPv4 session ``send-community`` (spines and leaves), so the tags survive.

Syntax: Cisco Nexus 9000 NX-OS Unicast Routing Configuration Guide, "Configuring Layer 3 Virtualization"
(route leaking; ``import vrf default``/``export vrf default [prefix-limit] map <route-map> [allow-vpn]``), and
the line forms of the Ansible collection cisco.nxos (rm_templates/vrf_address_family.py) and genielibs' NX-OS
BGP config tests (a running-config carrying ``import vrf default map`` / ``export vrf default map`` under
``vrf context ... address-family ipv4 unicast``); ``ip community-list standard <name> seq <n> permit <aa:nn>``,
``set community <aa:nn> additive`` and ``match community`` from the Nexus unicast routing command reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.tenant_facts import TenantFacts, resolve_communities

NVE = "nve1"
NH_UNCHANGED = "RM-NH-UNCHANGED"
TENANT_DIRECT = "RM-TENANT-DIRECT"
TAG_MAP = "RM-TAG"  # vrf-lite: RM-TAG-<tenant>, RM-IMPORT-<tenant>, CL-<tenant>
IMPORT_MAP = "RM-IMPORT"
COMMUNITY_LIST = "CL"
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
    import_map: str = ""  # vrf-lite: `import vrf default map` (its own and its reach's tags only)
    export_map: str = ""  # vrf-lite: `export vrf default map` (adds its tag)


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
    community_lists: list[str] = field(default_factory=list)  # vrf-lite: `ip community-list standard` lines
    route_maps: list[tuple[str, str]] = field(default_factory=list)  # vrf-lite: (name, its one match/set line)


def tenancy_config(sw: Switch, plan: Plan) -> NxTenancy | None:
    """The tenant part of one NX-OS switch; None when the fabric has no tenants."""
    t = plan.tenancy
    if t is None or sw.bgp is None:
        return None
    mine = t.on(sw.hostname)
    out = NxTenancy(t.evpn, t.evpn and bool(mine), t.evpn and sw.role != "leaf", not t.evpn,
                    maximum_paths=sw.bgp.maximum_paths)
    for tp in mine:
        rts = (tp.route_target, *(t.tenants[o].route_target for o in tp.reach))
        if t.evpn:
            out.vrfs.append(NxTenantVrf(tp.name, tp.vni, tp.vlan, tp.rd(sw.loopback), rts, tp.route_target,
                                        t.tenant_mtu))
            continue
        tag, allow = f"{TAG_MAP}-{tp.name}", f"{IMPORT_MAP}-{tp.name}"
        out.vrfs.append(NxTenantVrf(tp.name, 0, 0, tp.rd(sw.loopback), rts, tp.route_target, t.tenant_mtu,
                                    allow, tag))
        members = (tp, *(t.tenants[o] for o in tp.reach))
        out.community_lists += [f"ip community-list standard {COMMUNITY_LIST}-{tp.name} seq {5 * (k + 1)} permit "
                                f"{m.community}" for k, m in enumerate(members)]
        out.route_maps += [(tag, f"set community {tp.community} additive"),
                           (allow, f"match community {COMMUNITY_LIST}-{tp.name}")]
    out.port_vrf = {port: tenant for (leaf, port), tenant in t.port_tenant.items() if leaf == sw.hostname}
    return out


def tenant_facts(plan: Plan, configs: Path, host: str) -> TenantFacts:
    """VRF contexts (vni, rd, RTs; vrf-lite: the tags `import vrf default map` lets in), tenant ports
    (`vrf member`) and port MTUs, and whether nve1 is in `qos-mode pipe` (then the outer DSCP is not the
    inner one's copy)."""
    path = configs / host / "nxos.cfg"
    f = TenantFacts(host, str(path), dscp_why="NX-OS VXLAN QoS default: uniform (inner DSCP copied to the outer)")
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        f.errors.append(f"cannot read: {exc}")
        return f
    lists: dict[str, set[str]] = {}
    maps: dict[str, set[str]] = {}
    import_map: dict[str, str] = {}
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
            elif words[:3] == ["ip", "community-list", "standard"] and len(words) >= 6 and words[-2] == "permit":
                lists.setdefault(words[3], set()).add(words[-1])
            elif words[0] == "route-map" and len(words) == 4:
                kind, name = "route-map", words[1]
            continue
        if kind == "vrf":
            v = f.vrf(name)
            if words[0] == "vni" and len(words) == 2 and words[1].isdigit():
                v.vni = int(words[1])
            elif words[0] == "rd" and len(words) == 2:
                v.rd = words[1]
            elif words[0] == "route-target" and len(words) >= 3:
                (v.rt_import if words[1] == "import" else v.rt_export).add(words[2])
            elif words[:4] == ["import", "vrf", "default", "map"] and len(words) >= 5:
                import_map[name] = words[4]
        elif kind == "route-map" and words[:2] == ["match", "community"]:
            maps.setdefault(name, set()).update(words[2:])
        elif kind == "interface":
            if words[:2] == ["vrf", "member"] and len(words) == 3 and name.startswith("Ethernet"):
                f.port_vrf[name] = (words[2], f"L{n}")
            elif words[0] == "mtu" and len(words) == 2 and words[1].isdigit() and name.startswith("Ethernet"):
                f.port_mtu[name] = int(words[1])
            elif name == NVE and words[:2] == ["qos-mode", "pipe"]:
                f.dscp_copy, f.dscp_why, f.dscp_loc = False, "interface nve1 is in qos-mode pipe", f"L{n}"
    resolve_communities(f, import_map, maps, lists)
    return f
