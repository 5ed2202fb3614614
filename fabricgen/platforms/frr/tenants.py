"""The tenant part of every FRR config (SONiC's and Linux + FRR's): VRFs, EVPN type-5 or vrf-lite leaking.

evpn-vxlan (FRR's EVPN type-5, as in FRR's bgp_evpn_rt5 topotest and Cumulus' symmetric routing docs):

* ``vrf <name>`` / ``vni <l3vni>`` binds each tenant VRF to its L3VNI;
* ``router bgp <asn> vrf <name>`` redistributes the tenant ports' /31s and, under
  ``address-family l2vpn evpn``, ``advertise ipv4 unicast`` with an explicit RD
  (``<router id>:<tenant id>``) and RTs (``<rt_admin>:<vni>``): FRR's automatic RT is
  ``<AS>:<VNI>``, which differs on every leaf of a multi-AS (RFC 7938) fabric;
* the default instance activates ``l2vpn evpn`` on every underlay session and leaves add
  ``advertise-all-vni``.  A spine passes the VTEP's next hop on unchanged without being told: FRR sets
  ``attribute-unchanged next-hop`` on every l2vpn evpn peer by default and never writes it out
  (bgpd.c ``peer_new``, bgp_vty.c ``bgp_config_write_peer_af``, 8.4 to master), so rendering it would
  leave a line the running config never shows and a deploy that never converges.

vrf-lite (route leaking, no encapsulation):

* the default VRF imports every tenant VRF (``import vrf <name>``) and its import route-map
  marks each tenant's routes with the tenant's community (``match source-vrf``), so spines
  carry them as plain IPv4 with a tag;
* each tenant VRF imports the default VRF through a route-map that permits only its own
  community and those of the tenants it may reach (``reach``), and imports those tenants'
  VRFs directly for the leaf-local pairs (FRR leaks a route once, never a leaked one again).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fabricgen.plan.model import Plan, Switch, Tenancy, TenantPlan
from fabricgen.platforms.tenant_facts import LiveVrf, TenantFacts, scan_frr_tenants

TAG_MAP = "RM-TENANT-TAG"
# Where Linux + FRR's tenant VRFs live: `ip netns add <name>` makes /run/netns/<name> (ip-netns(8)); zebra -n
# watches that directory and binds each namespace to the VRF of its name, then lists it as `netns <path>` under
# the VRF.  The config carries the same line so frr-reload.py leaves it alone (FRR 8.4 cannot bind a
# namespace from the config itself: "Can not associate NS", or "already configured" once zebra bound it).
NETNS_DIR = "/run/netns"
# What tenants.sh created for each tenant, one removal command a line (its ownership record, read by the next
# run to remove a tenant the build dropped): in /run, which a reboot clears with the namespaces and devices.
TENANT_STATE_DIR = "/run/fabricgen/tenants"


@dataclass(frozen=True, slots=True)
class FrrVrf:
    name: str
    vni: int  # 0: no L3VNI (vrf-lite)
    rd: str
    rt_import: tuple[str, ...]
    rt_export: str
    imports: tuple[str, ...] = ()  # vrf-lite: VRFs this one imports ("default" first)
    import_map: str = ""  # vrf-lite: route-map on those imports


@dataclass(slots=True)
class FrrTenancy:
    """What `frr/bgp.j2` prints for tenants: VRF blocks, per-VRF BGP instances and the default's EVPN part."""

    evpn: bool
    vtep: bool  # this switch originates tenant routes (a leaf with tenants): `advertise-all-vni`
    evpn_neighbors: list[str] = field(default_factory=list)
    default_imports: list[str] = field(default_factory=list)  # vrf-lite: tenant VRFs leaked into the default VRF
    vrfs: list[FrrVrf] = field(default_factory=list)
    community_lists: list[str] = field(default_factory=list)
    route_maps: list[tuple[str, int, str, str]] = field(default_factory=list)  # (name, seq, match, set)


def vrf_name(platform_prefix: str, tenant: str) -> str:
    """The VRF's name on a platform: SONiC's must start with "Vrf" (sonic-vrf.yang), FRR's is the tenant's."""
    return f"{platform_prefix}{tenant}"


def tenancy_config(sw: Switch, plan: Plan, prefix: str = "") -> FrrTenancy | None:
    """The tenant config of one switch, or None when the fabric has no tenants (its config is unchanged)."""
    t = plan.tenancy
    if t is None or sw.bgp is None:
        return None
    mine = t.on(sw.hostname)
    out = FrrTenancy(t.evpn, bool(mine) and t.evpn)
    if t.evpn:
        out.evpn_neighbors = [n.ip for n in sw.bgp.neighbors if n.afi == "ipv4"]
    for tp in mine:
        out.vrfs.append(_vrf(sw, t, tp, prefix))
    if not t.evpn and mine:
        _leak(out, t, mine, prefix)
    return out


def _vrf(sw: Switch, t: Tenancy, tp: TenantPlan, prefix: str) -> FrrVrf:
    rts = (tp.route_target, *(t.tenants[o].route_target for o in tp.reach))
    name = vrf_name(prefix, tp.name)
    if t.evpn:
        return FrrVrf(name, tp.vni, tp.rd(sw.loopback), rts, tp.route_target)
    direct = tuple(vrf_name(prefix, o) for o in tp.reach if sw.hostname in t.tenants[o].leaves)
    return FrrVrf(name, 0, tp.rd(sw.loopback), rts, tp.route_target, ("default", *direct), f"RM-IMPORT-{name}")


def _leak(out: FrrTenancy, t: Tenancy, mine: list[TenantPlan], prefix: str) -> None:
    """vrf-lite: tag each tenant's routes into the default VRF; let each VRF import only its own (and leaks)."""
    for i, tp in enumerate(mine):
        name = vrf_name(prefix, tp.name)
        out.default_imports.append(name)
        out.route_maps.append((TAG_MAP, 10 * (i + 1), f"source-vrf {name}", f"community {tp.community} additive"))
    for tp in mine:
        name = vrf_name(prefix, tp.name)
        members = (tp, *(t.tenants[o] for o in tp.reach))
        out.community_lists += [f"bgp community-list standard CL-{name} seq {5 * (k + 1)} permit {m.community}"
                                for k, m in enumerate(members)]
        out.route_maps.append((f"RM-IMPORT-{name}", 10, f"community CL-{name}", ""))
        for k, o in enumerate(tp.reach):
            out.route_maps.append((f"RM-IMPORT-{name}", 20 + 10 * k, f"source-vrf {vrf_name(prefix, o)}", ""))


@dataclass(frozen=True, slots=True)
class KernelVrf:
    name: str  # the network namespace FRR's netns VRF backend maps `vrf <name>` to
    vni: int
    ports: tuple[str, ...]
    vxlan: str  # `vx<tenant id>` / `br<tenant id>` (intent TENANT_NAME_LEN keeps them within IFNAMSIZ)
    bridge: str


@dataclass(frozen=True, slots=True)
class KernelTenancy:
    """What `frr/tenants.sh.j2` prints: the kernel devices of one switch's tenant VRFs."""

    hostname: str
    netns_dir: str
    state_dir: str  # TENANT_STATE_DIR: the tenants' ownership records
    evpn: bool
    vtep: str  # the VXLAN source address: the loopback the underlay advertises
    mtu: int  # the tenant MTU (the VXLAN device's, so the bridge's)
    vrfs: tuple[KernelVrf, ...]


def kernel_tenancy(sw: Switch, plan: Plan) -> KernelTenancy | None:
    """The Linux side of a leaf's tenants (None: the fabric has none, or the switch is no leaf).  This kernel
    has no `vrf` device type, so a VRF is a network namespace, FRR's netns VRF backend (`zebra -n`, FRR docs
    "VRF" / "Network Namespaces").  A leaf left without tenants still gets its script: it removes what an
    earlier build's tenants had there."""
    t = plan.tenancy
    if t is None or sw.role != "leaf":
        return None
    mine = t.on(sw.hostname)
    vrfs = tuple(KernelVrf(tp.name, tp.vni, tuple(port for leaf, port in tp.ports if leaf == sw.hostname),
                           f"vx{tp.id}", f"br{tp.id}") for tp in mine)
    return KernelTenancy(sw.hostname, NETNS_DIR, TENANT_STATE_DIR, t.evpn, sw.loopback, t.tenant_mtu, vrfs)


def boot_config(frr_conf: str) -> str:
    """frr.conf as `vtysh -b` loads it when FRR starts: without the VRFs' `netns` lines, which zebra -n has
    already bound from /run/netns and FRR 8.4 refuses to repeat ("VRF ... already configured with NETNS")."""
    return "".join(line for line in frr_conf.splitlines(keepends=True) if not line.startswith(" netns "))


def tenant_facts(plan: Plan, configs: Path, host: str) -> TenantFacts:
    """Linux + FRR: everything from frr.conf; no port MTU (the Linux interface's, set outside FRR).  A VTEP's
    DSCP/ECN copy is the kernel VXLAN device's `tos inherit` (RFC 6040 ECN handling is the kernel's)."""
    path = configs / host / "frr.conf"
    f = TenantFacts(host, str(path), dscp_why="Linux VXLAN device with `tos inherit` (the lab creates it so)")
    try:
        scan_frr_tenants(path.read_text().splitlines(), f, with_interfaces=True)
    except (OSError, UnicodeDecodeError) as exc:
        f.errors.append(f"cannot read: {exc}")
    return f


VNI_VTYSH = "show evpn vni json"
ROUTES_VTYSH = "show ip route vrf all json"
VNI_COMMAND = f"vtysh -c '{VNI_VTYSH}'"
ROUTES_COMMAND = f"vtysh -c '{ROUTES_VTYSH}'"


def read_live(device: Any) -> dict[str, LiveVrf]:
    """What the switch runs (validate --tenants): zebra's L3VNIs by VRF (`show evpn vni json`: "type" L3,
    "tenantVrf"), every VRF's route prefixes (`show ip route vrf all json`: VRF -> prefix -> routes), and for
    each VRF with an L3VNI the VTEPs its kernel routes use that lack zebra's router-MAC neighbour
    (``vteps_without_mac``)."""
    out = device.cli([VNI_COMMAND, ROUTES_COMMAND])
    live = parse_live(str(out[VNI_COMMAND]), str(out[ROUTES_COMMAND]))
    evpn = sorted(name for name, vrf in live.items() if vrf.vni)
    kernel = device.cli([c for name in evpn for c in (kernel_routes_command(name), neighbours_command(name))])
    return {name: replace(vrf, silent_vteps=tuple(vteps_without_mac(
        ip_json(str(kernel[kernel_routes_command(name)])), ip_json(str(kernel[neighbours_command(name)])))))
        if name in evpn else vrf for name, vrf in live.items()}


def kernel_routes_command(vrf: str) -> str:
    """The BGP routes of a netns VRF as the kernel has them (`via <vtep> dev <l3vni bridge> onlink`)."""
    return f"ip -n {shlex.quote(vrf)} -j route show proto bgp"


def neighbours_command(vrf: str) -> str:
    """A netns VRF's neighbour table: zebra installs each remote VTEP's router MAC there (`<vtep> lladdr <rmac>
    NOARP`, zebra_vxlan.c `zl3vni_nh_install`)."""
    return f"ip -n {shlex.quote(vrf)} -j neigh show"


def ip_json(text: str) -> list[dict[str, Any]]:
    """iproute2's ``-j`` output (a JSON list of objects); [] for anything else (a VRF without a namespace)."""
    try:
        doc = json.loads(text or "[]")
    except ValueError:
        return []
    return [x for x in doc if isinstance(x, dict)] if isinstance(doc, list) else []


def vteps_without_mac(routes: list[dict[str, Any]], neighbours: list[dict[str, Any]]) -> list[str]:
    """The VTEPs (gateways) of a tenant VRF's kernel routes without a resolved neighbour entry: the kernel then
    ARPs for the VTEP into the tunnel, which nothing answers, and drops the traffic.  FRR 8.4's zebra can lose
    the entry when bgpd re-imports the VRF's routes (docs/tenants.md, "Deploying a tenant change")."""
    vteps = {str(r["gateway"]) for r in routes if r.get("gateway")}
    known = {str(n["dst"]) for n in neighbours
             if n.get("lladdr") and not set(n.get("state", [])) & {"FAILED", "INCOMPLETE"}}
    return sorted(vteps - known)


def parse_live(vnis_json: str, routes_json: str) -> dict[str, LiveVrf]:
    """The two commands' JSON -> {VRF: LiveVrf}.  FRR 8.4 prints `show ip route vrf all json` as one object
    per VRF, back to back ({prefix: [route, ...]}, each route naming its "vrfName"); a VRF with an L3VNI
    but no routes is listed too."""
    vnis = json.loads(vnis_json or "{}")
    vni_of = {str(v["tenantVrf"]): int(v["vni"]) for v in vnis.values()
              if isinstance(v, dict) and v.get("type") == "L3" and "tenantVrf" in v}
    prefixes: dict[str, set[str]] = {name: set() for name in vni_of}
    decoder, text, pos = json.JSONDecoder(), routes_json, 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        table, pos = decoder.raw_decode(text, pos)
        for prefix, routes in table.items():
            for route in routes if isinstance(routes, list) else []:
                prefixes.setdefault(str(route.get("vrfName", "default")), set()).add(str(prefix))
    return {name: LiveVrf(vni_of.get(name, 0), frozenset(p)) for name, p in sorted(prefixes.items())}
