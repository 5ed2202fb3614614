"""The tenant rules of `fabricgen check` (issue 25) over rendered configs: clean builds pass, and each
rule fires on the hand edit that breaks what it guards (numbers, isolation, MTU chain, DSCP copy)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.base.findings import Finding
from fabricgen.check.run import fast_findings, run_checks
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import render_all
from tests.tenants.test_tenant_plan import GPU_EVPN, SERVER_VRFLITE, lab_with


def nxos_intent(tmp_path: Path) -> Path:
    """The GPU-scope EVPN example on NX-OS leaves and spines."""
    data = yaml.safe_load(GPU_EVPN.read_text())
    data["platforms"] = {"leaf": "nxos", "spine": "nxos"}
    data["switch_models"]["leaf"] = {"model": "N9364D-GX2A", "ports": 64, "port_speed": "400G"}
    path = tmp_path / "nxos.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def vrflite_intent(tmp_path: Path, leaf: str) -> Path:
    """The server-scope vrf-lite example (3 tenants, blue reaches green) with `leaf` leaves; NX-OS spines."""
    data = yaml.safe_load(SERVER_VRFLITE.read_text())
    data["platforms"] = {"leaf": leaf, "spine": "nxos"}
    if leaf == "nxos":
        data["switch_models"]["leaf"] = {"model": "N9364D-GX2A", "ports": 64, "port_speed": "400G"}
    path = tmp_path / f"vrflite-{leaf}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def built(intent: Path, tmp_path: Path) -> tuple[Plan, Path]:
    plan = load_plan(intent)
    out = tmp_path / f"build-{intent.stem}"
    render_all(plan, out)
    return plan, out


def tenant_findings(plan: Plan, build: Path) -> list[Finding]:
    return [f for f in fast_findings(plan, build / "configs", build / "hosts") if f.rule.startswith("tenant-")]


def edit_text(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    db = json.loads(path.read_text())
    change(db)
    path.write_text(json.dumps(db))


@pytest.fixture()
def nxos(tmp_path: Path) -> tuple[Plan, Path]:
    return built(nxos_intent(tmp_path), tmp_path)


@pytest.fixture()
def sonic(tmp_path: Path) -> tuple[Plan, Path]:
    return built(GPU_EVPN, tmp_path)


def test_clean_builds_pass(nxos: tuple[Plan, Path], sonic: tuple[Plan, Path]) -> None:
    for plan, build in (nxos, sonic):
        assert tenant_findings(plan, build) == []


def test_nve_in_pipe_mode_loses_the_dscp(nxos: tuple[Plan, Path]) -> None:
    plan, build = nxos
    cfg = build / "configs" / "gpucloud-leaf01" / "nxos.cfg"
    edit_text(cfg, "  source-interface loopback0\n", "  source-interface loopback0\n  qos-mode pipe\n")
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-dscp-copy" and found.device == "gpucloud-leaf01"
    assert "interface nve1 is in qos-mode pipe" in found.message and found.location.startswith("L")


def test_importing_another_tenants_rt_breaks_isolation(nxos: tuple[Plan, Path]) -> None:
    plan, build = nxos
    cfg = build / "configs" / "gpucloud-leaf01" / "nxos.cfg"
    edit_text(cfg, "    route-target import 65000:10001 evpn\n",
              "    route-target import 65000:10001 evpn\n    route-target import 65000:10002 evpn\n")
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-isolation"
    assert "VRF red imports 65000:10002: routes of tenants red may not reach (its reach: none)" in found.message


def test_a_vni_clash_and_a_wrong_vni(sonic: tuple[Plan, Path]) -> None:
    plan, build = sonic
    edit_json(build / "configs" / "gpucloud-leaf02" / "config_db.json",
              lambda db: db["VRF"]["Vrfred"].update(vni="10002"))
    found = {(f.rule, f.message) for f in tenant_findings(plan, build)}
    assert ("tenant-numbers", "VRF Vrfred has VNI 10002, the plan 10001") in found
    assert ("tenant-numbers", "VRF Vrfred has VNI 10002 in /VRF/Vrfred but 10001 in frr.conf L8") in found
    assert any(rule == "tenant-numbers" and "VNI 10002 of VRF" in msg and "is also VRF" in msg for rule, msg in found)


def test_a_tenant_port_in_the_wrong_vrf(sonic: tuple[Plan, Path]) -> None:
    plan, build = sonic
    edit_json(build / "configs" / "gpucloud-leaf01" / "config_db.json",
              lambda db: db["INTERFACE"]["Ethernet0"].update(vrf_name="Vrfblue"))
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-isolation" and found.location == "/INTERFACE/Ethernet0/vrf_name"
    assert found.message == "Ethernet0 is in VRF Vrfblue; the plan has it in tenant red's"


def test_a_fabric_link_too_small_for_the_overlay(sonic: tuple[Plan, Path]) -> None:
    plan, build = sonic
    leaf = plan.switches["gpucloud-leaf01"]
    uplink = next(i for i in leaf.interfaces if i.tier == "leaf_spine")
    edit_json(build / "configs" / "gpucloud-leaf01" / "config_db.json",
              lambda db: db["PORT"][uplink.name].update(mtu="9166"))
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-mtu-chain"
    assert f"{uplink.name} (to {uplink.peer_device}) has MTU 9166, below the tenant MTU 9166 + 50 bytes" \
        in found.message


def test_vrf_lite_leak_beyond_the_intent(tmp_path: Path) -> None:
    plan, build = built(lab_with(tmp_path, {"scope": "server", "mechanism": "vrf-lite"}), tmp_path)
    assert tenant_findings(plan, build) == []
    cfg = build / "configs" / "lab-leaf01" / "frr.conf"
    edit_text(cfg, "bgp community-list standard CL-red seq 5 permit 65000:1\n",
              "bgp community-list standard CL-red seq 5 permit 65000:1\n"
              "bgp community-list standard CL-red seq 6 permit 65000:3\n")
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-isolation" and "VRF red imports routes tagged 65000:3" in found.message


def test_a_vrf_no_tenant_has(tmp_path: Path) -> None:
    plan, build = built(lab_with(tmp_path), tmp_path)
    cfg = build / "configs" / "lab-spine01" / "frr.conf"
    cfg.write_text(cfg.read_text() + "vrf stray\n vni 20000\nexit-vrf\n!\n")
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-numbers" and found.message == "VRF stray is no planned tenant's on this switch"


@pytest.fixture()
def nxos_vrflite(tmp_path: Path) -> tuple[Plan, Path]:
    return built(vrflite_intent(tmp_path, "nxos"), tmp_path)


def test_nxos_vrf_lite_passes_then_a_missing_leak_rt_is_named(nxos_vrflite: tuple[Plan, Path]) -> None:
    plan, build = nxos_vrflite
    assert tenant_findings(plan, build) == []
    cfg = build / "configs" / "gpuhall-leaf02" / "nxos.cfg"
    edit_text(cfg, "    route-target import 65000:10003\n    route-target import 65000:10002\n",
              "    route-target import 65000:10003\n")
    (found,) = tenant_findings(plan, build)
    assert (found.rule, found.device) == ("tenant-isolation", "gpuhall-leaf02") and found.location.startswith("L")
    assert found.message == ("VRF blue does not import 65000:10002: the routes of tenant green the intent lets "
                             "blue reach (its reach: green)")


def test_nxos_vrf_lite_port_in_the_wrong_vrf(nxos_vrflite: tuple[Plan, Path]) -> None:
    plan, build = nxos_vrflite
    cfg = build / "configs" / "gpuhall-leaf01" / "nxos.cfg"
    edit_text(cfg, "  vrf member red\n", "  vrf member green\n")  # Ethernet1/1, gpu0001's NIC
    (found,) = tenant_findings(plan, build)
    assert found.rule == "tenant-isolation" and found.device == "gpuhall-leaf01"
    assert found.message == "Ethernet1/1 is in VRF green; the plan has it in tenant red's"


def test_nxos_vrf_lite_tag_leaks_and_dangling_lists(nxos_vrflite: tuple[Plan, Path]) -> None:
    """Letting another tenant's tag in breaks isolation; a missing reach tag breaks the leak across leaves; a
    `match community` of a list never defined is NX-OS's structural error."""
    plan, build = nxos_vrflite
    cfg = build / "configs" / "gpuhall-leaf03" / "nxos.cfg"
    edit_text(cfg, "ip community-list standard CL-red seq 5 permit 65000:1\n",
              "ip community-list standard CL-red seq 5 permit 65000:1\n"
              "ip community-list standard CL-red seq 10 permit 65000:2\n")
    edit_text(cfg, "ip community-list standard CL-blue seq 10 permit 65000:2\n", "")
    found = {(f.rule, f.message) for f in tenant_findings(plan, build)}
    assert found == {
        ("tenant-isolation", "VRF red imports routes tagged 65000:2: tenants red may not reach (its reach: none)"),
        ("tenant-isolation", "VRF blue does not let 65000:2 in: the other leaves' routes of tenant green the "
                             "intent lets blue reach (its reach: green)")}
    edit_text(cfg, "  match community CL-blue\n", "  match community CL-bleu\n")
    structural = [f for f in run_checks(plan, build / "configs", cache=False) if f.rule == "nxos-undefined-ref"]
    assert [(f.device, f.message) for f in structural] == [
        ("gpuhall-leaf03", "ip community-list CL-bleu is used but not defined")]
