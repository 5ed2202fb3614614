"""Tenants rendered (issue 25): the example intents through every platform's renderer, then the vendors'
own checkers (SONiC YANG with libyang, FRR's parser) over the result, and the lines that make a VRF
a tenant's: its VNI, RD, RTs and ports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.check.run import run_checks
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import render_all
from tests.conftest import ROOT
from tests.tenants.test_tenant_plan import GPU_EVPN, SERVER_VRFLITE, lab_with


def build(plan: Plan, tmp_path: Path) -> Path:
    out = tmp_path / "build"
    render_all(plan, out)
    return out / "configs"


@pytest.mark.parametrize("intent", [GPU_EVPN, SERVER_VRFLITE], ids=["gpu-evpn", "server-vrflite"])
def test_examples_pass_sonic_yang_and_frr_parser(intent: Path, tmp_path: Path, sonic_yang_models: Path) -> None:
    plan = load_plan(intent)
    configs = build(plan, tmp_path)
    findings = run_checks(plan, configs, yang_dir=sonic_yang_models, cache=False)
    assert [f for f in findings if f.severity == "error"] == []
    db = json.loads((configs / f"{plan.settings.name}-leaf01" / "config_db.json").read_text())
    assert db["VRF"]["Vrfred"] == ({"vni": "10001"} if intent == GPU_EVPN else {})
    assert db["INTERFACE"]["Ethernet0"] == {"vrf_name": "Vrfred"}
    if intent == GPU_EVPN:
        assert db["VXLAN_TUNNEL"] == {"vtep": {"src_ip": plan.switches[f"{plan.settings.name}-leaf01"].loopback}}
        assert db["VXLAN_TUNNEL_MAP"]["vtep|map_10001_Vlan3001"] == {"vlan": "Vlan3001", "vni": "10001"}
        assert db["VLAN_INTERFACE"]["Vlan3001"] == {"vrf_name": "Vrfred"}
        assert db["PORT"]["Ethernet0"]["mtu"] == "9166"  # tenant port lowered by the VXLAN header


def test_sonic_yang_refuses_a_bad_vrf_name(tmp_path: Path, sonic_yang_models: Path) -> None:
    """The YANG check does read the tenant tables: a VRF not named Vrf... fails it."""
    plan = load_plan(GPU_EVPN)
    configs = build(plan, tmp_path)
    path = configs / "gpucloud-leaf01" / "config_db.json"
    db = json.loads(path.read_text())
    db["VRF"]["red"] = db["VRF"].pop("Vrfred")
    path.write_text(json.dumps(db))
    findings = run_checks(plan, configs, yang_dir=sonic_yang_models, cache=False)
    assert any(f.rule == "sonic-yang" and f.device == "gpucloud-leaf01" for f in findings)


@pytest.mark.parametrize("mechanism", ["evpn-vxlan", "vrf-lite"])
def test_frr_lab_fabric_passes_frr_parser(mechanism: str, tmp_path: Path) -> None:
    plan = load_plan(lab_with(tmp_path, {"scope": "server", "mechanism": mechanism}))
    configs = build(plan, tmp_path)
    assert [f for f in run_checks(plan, configs, cache=False) if f.severity == "error"] == []
    leaf = (configs / "lab-leaf03" / "frr.conf").read_text()
    assert "interface Ethernet0 vrf blue\n" in leaf and "interface Ethernet16 vrf green\n" in leaf
    assert "router bgp 4200000002 vrf green\n" in leaf
    spine = (configs / "lab-spine01" / "frr.conf").read_text()
    if mechanism == "evpn-vxlan":
        assert "vrf green\n vni 10003\nexit-vrf\n" in leaf
        assert "  rd 198.18.0.5:3\n  route-target import 65000:10003\n  route-target import 65000:10002\n" \
               "  route-target export 65000:10003\n" in leaf
        assert "  advertise-all-vni\n" in leaf
        assert "198.18.32.20/31" not in leaf.split("router bgp")[0].split("ip prefix-list")[1]  # not in default VRF
        assert "  neighbor 198.18.16.1 attribute-unchanged next-hop\n" in spine
    else:
        assert "vni" not in leaf and "l2vpn" not in spine
        assert " match source-vrf green\n set community 65000:3 additive\n" in leaf
        assert "bgp community-list standard CL-green seq 10 permit 65000:2\n" in leaf  # green reaches blue


def test_no_tenants_renders_what_it_rendered_before(tmp_path: Path) -> None:
    """A fabric without tenants gets no tenant line: the golden files stay as they are."""
    plan = load_plan(ROOT / "inventory" / "lab" / "fabric.yaml")
    configs = build(plan, tmp_path)
    text = (configs / "lab-leaf01" / "frr.conf").read_text()
    assert " vrf " not in text and "l2vpn" not in text
