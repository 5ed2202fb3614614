"""validate --tenants reads SONiC and NX-OS back (issue 25): each platform's answers (tests/tenants/samples/,
README there says where each shape comes from) parsed into the VRFs, L3VNIs and per-VRF routes, judged
against the plan, and a route in the wrong VRF named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from fabricgen.catalog.registry import platform
from fabricgen.plan.build import load_plan
from fabricgen.platforms.nxos.tenants import parse_live as parse_nxos
from fabricgen.platforms.sonic.tenants import parse_live_sonic
from fabricgen.platforms.tenant_facts import LiveVrf
from fabricgen.render.build import render_all
from fabricgen.validate.tenants import check_switch_tenants, tenant_subnets
from tests.tenants.test_tenant_check import nxos_intent
from tests.tenants.test_tenant_plan import GPU_EVPN

SAMPLES = Path(__file__).parent / "samples"


def _text(path: Path) -> str:
    return path.read_text()


def test_nxos_answers_parsed() -> None:
    nx = SAMPLES / "nxos"
    live = parse_nxos(_text(nx / "show_vrf.json"), _text(nx / "show_nve_vni.json"),
                      _text(nx / "show_ip_route_vrf_all.json"))
    assert set(live) == {"default", "red", "blue"}  # NX-OS's management VRF is never a tenant's
    assert (live["red"].vni, live["blue"].vni, live["default"].vni) == (10001, 10003, 0)
    assert live["default"].prefixes == {"198.18.0.13/32"}  # the loopback of gpucloud-leaf05
    assert all(p.endswith("/31") for p in live["red"].prefixes | live["blue"].prefixes)
    assert parse_nxos(_text(nx / "show_vrf.json"), "", "{}")["red"] == LiveVrf()  # no VNI, no route printed


def test_nxos_read_back_passes_then_names_a_route_in_the_wrong_vrf(tmp_path: Path) -> None:
    plan = load_plan(nxos_intent(tmp_path))
    leaf = plan.switches["gpucloud-leaf05"]
    assert platform(leaf.platform).tenant_reader  # validate reads NX-OS back now
    nx = SAMPLES / "nxos"
    vrf, nve, routes = (_text(nx / f) for f in ("show_vrf.json", "show_nve_vni.json", "show_ip_route_vrf_all.json"))
    found = check_switch_tenants(plan, leaf, parse_nxos(vrf, nve, routes))
    assert found and all(o.ok for o in found), [o for o in found if not o.ok]
    green = next(s for s, t in sorted(tenant_subnets(plan).items()) if t == "green")
    doc: Any = json.loads(routes)
    red = next(v for v in doc["TABLE_vrf"]["ROW_vrf"] if v["vrf-name-out"] == "red")
    rows = red["TABLE_addrf"]["ROW_addrf"]["TABLE_prefix"]["ROW_prefix"]
    rows.append({**copy.deepcopy(rows[-1]), "ipprefix": green})
    nve_doc: Any = json.loads(nve)
    nve_doc["TABLE_nve_vni"]["ROW_nve_vni"][1]["type"] = "L3 [red]"  # blue's L3VNI now serves red
    bad = {(o.item, o.actual) for o in check_switch_tenants(plan, leaf, parse_nxos(vrf, json.dumps(nve_doc),
                                                                                    json.dumps(doc))) if not o.ok}
    assert bad == {(f"route {green} in vrf red", "tenant green's route in VRF red"),
                   ("vrf red", "L3VNI 10003"), ("vrf blue", "no L3VNI")}


def _sonic(tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    plan = load_plan(GPU_EVPN)
    out = tmp_path / "build"
    render_all(plan, out)
    return plan, json.loads((out / "configs" / "gpucloud-leaf01" / "config_db.json").read_text())


def test_sonic_read_back_passes_then_names_what_disagrees(tmp_path: Path) -> None:
    plan, db = _sonic(tmp_path)
    leaf = plan.switches["gpucloud-leaf01"]
    assert platform(leaf.platform).tenant_reader
    so = SAMPLES / "sonic"
    vnis, routes = _text(so / "show_evpn_vni.json"), _text(so / "show_ip_route_vrf_all.json")
    live = parse_live_sonic(vnis, routes, json.dumps(db))
    assert set(live) == {"default", "red", "green", "blue"}  # Vrf<tenant> read back as the tenant
    assert (live["red"].vni, live["green"].vni, live["blue"].vni) == (10001, 10002, 10003)
    found = check_switch_tenants(plan, leaf, live)
    assert found and all(o.ok for o in found), [o for o in found if not o.ok]
    # ConfigDB and FRR disagree on green's VNI; blue's L3VNI is in no tunnel map; a route of green's in Vrfred
    bad_db = copy.deepcopy(db)
    bad_db["VRF"]["Vrfgreen"]["vni"] = "10009"
    blue_map = next(k for k, v in bad_db["VXLAN_TUNNEL_MAP"].items() if v["vni"] == "10003")
    del bad_db["VXLAN_TUNNEL_MAP"][blue_map]
    green = next(s for s, t in sorted(tenant_subnets(plan).items()) if t == "green")
    tables = [json.loads(chunk) for chunk in _split(routes)]
    red = next(t for t in tables if any(r[0]["vrfName"] == "Vrfred" for r in t.values()))
    red[green] = [{**next(iter(red.values()))[0], "prefix": green}]
    live = parse_live_sonic(vnis, "".join(json.dumps(t) for t in tables), json.dumps(bad_db))
    bad = {(o.item, o.actual) for o in check_switch_tenants(plan, leaf, live) if not o.ok}
    assert bad == {("vrf green", "ConfigDB VRF|Vrfgreen has vni 10009, FRR L3VNI 10002"),
                   ("vrf blue", "L3VNI 10003 is in no VXLAN_TUNNEL_MAP entry (no VLAN carries it)"),
                   (f"route {green} in vrf red", "tenant green's route in VRF red")}


def test_sonic_vrf_missing_from_one_source(tmp_path: Path) -> None:
    _plan, db = _sonic(tmp_path)
    so = SAMPLES / "sonic"
    del db["VRF"]["Vrfblue"]
    db["VRF"]["Vrfamber"] = {"vni": "10009"}
    db["MGMT_VRF_CONFIG"] = {"vrf_global": {"mgmtVrfEnabled": "true"}}
    live = parse_live_sonic(_text(so / "show_evpn_vni.json"), _text(so / "show_ip_route_vrf_all.json"), json.dumps(db))
    assert live["blue"].issue == "in FRR but not in ConfigDB's VRF table (VRF|Vrfblue)"
    assert live["amber"].issue == "in ConfigDB (VRF|Vrfamber) but FRR has no such VRF"


def _split(text: str) -> list[str]:
    """FRR's back-to-back JSON objects, one per VRF."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        obj, end = decoder.raw_decode(text, pos)
        out.append(json.dumps(obj))
        pos = end
    return out
