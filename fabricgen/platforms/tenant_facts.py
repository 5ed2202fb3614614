"""Per-device tenant facts: what one device's rendered files configure for tenants, platform-neutral.

Each platform's record names its `tenant_extractor` (config text -> `TenantFacts`); the tenant rules
(fabricgen.check.tenants) read only these.  The FRR scanner is shared: Linux + FRR and SONiC's
frr.conf carry the VRFs' BGP the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class VrfFacts:
    name: str
    loc: str = ""  # where the VRF is declared ("L12", "/VRF/Vrfred")
    vni: int = 0
    rd: str = ""
    rt_import: set[str] = field(default_factory=set)
    rt_export: set[str] = field(default_factory=set)
    communities: set[str] = field(default_factory=set)  # vrf-lite: tags its import route-map lets in


@dataclass(frozen=True, slots=True)
class LiveVrf:
    """One VRF as a switch runs it (validate --tenants): its L3VNI (0: none) and the prefixes of its routes."""

    vni: int = 0
    prefixes: frozenset[str] = frozenset()
    issue: str = ""  # what the switch's own sources disagree on (SONiC: ConfigDB vs FRR), "" = nothing
    # the VTEPs the VRF's kernel routes go through that have no router-MAC neighbour (Linux + FRR: zebra lost it,
    # so traffic to them is dropped); None: not read (the platform forwards in an ASIC whose tables are not read)
    silent_vteps: tuple[str, ...] | None = None


@dataclass(slots=True)
class TenantFacts:
    device: str
    file: str  # the file locations point into
    vrfs: dict[str, VrfFacts] = field(default_factory=dict)
    port_vrf: dict[str, tuple[str, str]] = field(default_factory=dict)  # port -> (VRF, location)
    port_mtu: dict[str, int] = field(default_factory=dict)  # empty where the config carries no MTU
    dscp_copy: bool = True  # a VTEP copies the inner DSCP/ECN to the outer header
    dscp_why: str = ""  # where that comes from
    dscp_loc: str = ""
    errors: list[str] = field(default_factory=list)

    def vrf(self, name: str, loc: str = "") -> VrfFacts:
        found = self.vrfs.get(name)
        if found is None:
            found = self.vrfs[name] = VrfFacts(name, loc)
        return found


def scan_frr_tenants(lines: list[str], f: TenantFacts, with_interfaces: bool) -> None:
    """VRFs (vni), tenant ports (`interface P vrf V`), each VRF's RD/RTs and the communities its import
    route-map permits, from an frr.conf."""
    lists: dict[str, set[str]] = {}
    maps: dict[str, set[str]] = {}
    import_map: dict[str, str] = {}
    section: tuple[str, str] = ("", "")  # (kind, name)
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        words = line.split()
        if not words:
            continue
        if not raw.startswith(" "):
            section = ("", "")
            if words[0] == "vrf" and len(words) == 2:
                section = ("vrf", words[1])
                f.vrf(words[1], f"L{n}")
            elif words[:1] == ["interface"] and len(words) == 4 and words[2] == "vrf" and with_interfaces:
                f.port_vrf[words[1]] = (words[3], f"L{n}")
            elif words[:2] == ["router", "bgp"] and len(words) == 5 and words[3] == "vrf":
                section = ("bgp", words[4])
                f.vrf(words[4], f"L{n}")
            elif words[:3] == ["bgp", "community-list", "standard"] and len(words) >= 7:
                lists.setdefault(words[3], set()).add(words[-1])
            elif words[0] == "route-map" and len(words) == 4:
                section = ("route-map", words[1])
            continue
        kind, name = section
        if kind == "vrf" and words[0] == "vni" and len(words) >= 2 and words[1].isdigit():
            v = f.vrf(name)
            if v.vni and v.vni != int(words[1]):  # SONiC: ConfigDB's VRF table said otherwise
                f.errors.append(f"VRF {name} has VNI {v.vni} in {v.loc or 'the config'} but {words[1]} in "
                                f"frr.conf L{n}")
            v.vni = v.vni or int(words[1])
        elif kind == "bgp":
            v = f.vrf(name)
            if words[0] == "rd" and len(words) == 2:
                v.rd = words[1]
            elif words[:2] == ["route-target", "import"]:
                v.rt_import.update(words[2:])
            elif words[:2] == ["route-target", "export"]:
                v.rt_export.update(words[2:])
            elif words[:3] == ["import", "vrf", "route-map"] and len(words) == 4:
                import_map[name] = words[3]
        elif kind == "route-map" and words[:2] == ["match", "community"] and len(words) == 3:
            maps.setdefault(name, set()).add(words[2])
    resolve_communities(f, import_map, maps, lists)


def resolve_communities(f: TenantFacts, import_map: dict[str, str], maps: dict[str, set[str]],
                        lists: dict[str, set[str]]) -> None:
    """vrf-lite: each VRF's import route-map -> the community lists it matches -> the tags it lets in."""
    for vrf, rmap in import_map.items():
        for cl in maps.get(rmap, ()):
            f.vrf(vrf).communities |= lists.get(cl, set())
