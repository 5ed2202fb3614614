"""Tenants in the plan (issue 25): stable numbers, the VRF on the leaves its scope needs, the MTU chain,
and every bad tenant refused with exit 2, file, line and fix."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan, TenantPlan
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"
GPU_EVPN = ROOT / "inventory" / "examples" / "tenants-gpu-evpn.yaml"
SERVER_VRFLITE = ROOT / "inventory" / "examples" / "tenants-server-vrflite.yaml"
TENANTS: list[dict[str, Any]] = [
    {"name": "red", "id": 1, "servers": ["gpu0001-gpu0004"]},
    {"name": "blue", "id": 2, "servers": ["gpu0005-gpu0006"]},
    {"name": "green", "id": 3, "servers": ["gpu0007"], "reach": ["blue"]},
]


def lab_with(tmp_path: Path, tenancy: dict[str, Any] | None = None, tenants: list[dict[str, Any]] | None = None,
             **top: Any) -> Path:
    """The lab intent with tenants added, written beside the test."""
    data = yaml.safe_load(LAB.read_text())
    data["tenancy"] = tenancy if tenancy is not None else {"scope": "server", "mechanism": "evpn-vxlan"}
    data["tenants"] = copy.deepcopy(TENANTS if tenants is None else tenants)
    data.update(top)
    path = tmp_path / "tenants.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def numbers(tp: TenantPlan) -> tuple[Any, ...]:
    return tp.id, tp.vni, tp.table, tp.route_target, tp.leaves, tp.ports, tp.nics


def tenancy(plan: Plan):  # type: ignore[no-untyped-def]
    assert plan.tenancy is not None
    return plan.tenancy


def test_numbers_derive_from_the_id(tmp_path: Path) -> None:
    t = tenancy(load_plan(lab_with(tmp_path)))
    assert [(tp.name, tp.vni, tp.table, tp.route_target) for tp in t.tenants.values()] == [
        ("red", 10001, 1001, "65000:10001"), ("blue", 10002, 1002, "65000:10002"),
        ("green", 10003, 1003, "65000:10003")]
    assert t.tenants["blue"].rd("198.18.0.1") == "198.18.0.1:2"
    assert t.tenants["green"].reach == ("blue",) and t.tenants["blue"].reach == ("green",)  # leaks both ways


def test_adding_a_tenant_renumbers_nothing(tmp_path: Path) -> None:
    """A new tenant first in the list, with the lowest free id: every existing tenant keeps every number."""
    before = tenancy(load_plan(lab_with(tmp_path)))
    grown = [{"name": "amber", "id": 4, "servers": ["gpu0008"]}, *TENANTS]
    after = tenancy(load_plan(lab_with(tmp_path, tenants=grown)))
    assert list(after.tenants) == ["red", "blue", "green", "amber"]  # id order, not list order
    for name, tp in before.tenants.items():
        assert numbers(after.tenants[name]) == numbers(tp)
    removed = tenancy(load_plan(lab_with(tmp_path, tenants=TENANTS[1:])))
    for name, tp in removed.tenants.items():
        assert numbers(tp) == numbers(before.tenants[name])


def test_server_scope_puts_the_vrf_on_the_whole_stripe(tmp_path: Path) -> None:
    plan = load_plan(lab_with(tmp_path))
    t = tenancy(plan)
    red = t.tenants["red"]  # gpu0001-gpu0004 = the first scalable unit, rails on leaf01 and leaf02
    assert red.leaves == ["lab-leaf01", "lab-leaf02"]
    assert len(red.ports) == 8 and {leaf for leaf, _ in red.ports} == {"lab-leaf01", "lab-leaf02"}
    green = t.tenants["green"]  # one server of the second SU: both its rail leaves
    assert green.leaves == ["lab-leaf03", "lab-leaf04"] and len(green.ports) == 2
    assert t.on("lab-leaf03") == [t.tenants["blue"], green]


def test_gpu_scope_puts_the_vrf_only_where_its_nics_are(tmp_path: Path) -> None:
    tenants = [{"name": "red", "id": 1, "servers": ["gpu0001-gpu0004:0"]}, {"name": "blue", "id": 2,
                                                                       "servers": ["gpu0001-gpu0004:1"]}]
    t = tenancy(load_plan(lab_with(tmp_path, {"scope": "gpu", "mechanism": "evpn-vxlan"}, tenants)))
    assert t.tenants["red"].leaves == ["lab-leaf01"] and t.tenants["blue"].leaves == ["lab-leaf02"]
    assert t.on("lab-leaf03") == []


def test_example_intents_plan(capsys: pytest.CaptureFixture[str]) -> None:
    evpn = tenancy(load_plan(GPU_EVPN))
    assert evpn.underlay_mtu == 9216 and evpn.tenant_mtu == 9166  # SONiC/NX-OS stop at 9216: tenants lowered
    assert len(evpn.tenants["green"].leaves) == 4  # NICs 0-3 only: the first four rail leaves
    lite = tenancy(load_plan(SERVER_VRFLITE))
    assert lite.overhead == 0 and lite.tenant_mtu == 9216
    assert main(["plan", "-i", str(GPU_EVPN)]) == 0
    out = capsys.readouterr().out
    assert "tenants: gpu isolation, evpn-vxlan" in out and "lowered to 9166" in out


def test_mtu_raised_where_every_platform_takes_it(tmp_path: Path) -> None:
    plan = load_plan(lab_with(tmp_path))  # Linux + FRR: up to 65535
    t = tenancy(plan)
    assert (t.underlay_mtu, t.tenant_mtu, t.overhead) == (9266, 9216, 50)
    leaf = plan.switches["lab-leaf01"]
    assert {i.mtu for i in leaf.interfaces if i.tier == "leaf_spine"} == {9266}
    assert {i.mtu for i in leaf.interfaces if i.tier == "gpu_leaf"} == {9216}
    v6 = tenancy(load_plan(lab_with(tmp_path, {"scope": "server", "mechanism": "evpn-vxlan", "outer": "ipv6"})))
    assert v6.underlay_mtu == 9286


def test_a_tenant_mtu_too_small_for_roce_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from fabricgen.catalog import registry
    from fabricgen.plan import tenants

    small = replace(registry.platform("frr"), capabilities=replace(registry.capabilities("frr"), max_mtu=4150))
    monkeypatch.setattr(tenants, "platform", lambda name: small)
    path = lab_with(tmp_path, qos={"mtu": 4150})
    assert main(["plan", "-i", str(path)]) == 2
    err = capsys.readouterr().err
    assert "qos.mtu: VXLAN over ipv4 adds 50 bytes: the tenant MTU would be 4100, below the 4140" in err
    assert "Traceback" not in err


def _member(name: str) -> dict[str, Any]:
    return next(t for t in TENANTS if t["name"] == name)


@pytest.mark.parametrize(("tenancy_", "tenants", "where", "says", "fix"), [
    (None, [*TENANTS[:2], {**_member("green"), "id": 1}], "tenants.2.id",
     "tenant 'green' has the id 1 of tenants.0 ('red')", "give tenants.2 a id of its own"),
    (None, [*TENANTS[:2], {**_member("green"), "vni": 10002}], "tenants.2.vni",
     "tenant 'green' has the vni 10002 of tenants.1 ('blue')", "give tenants.2 a vni of its own"),
    (None, [*TENANTS[:2], {**_member("green"), "name": "red"}], "tenants.2.name",
     "tenant 'red' has the name red of tenants.0", "give tenants.2 a name of its own"),
    (None, [*TENANTS[:2], {**_member("green"), "servers": ["gpu0004"]}], "tenants.2.servers.0",
     "gpu0004 eth0 (NIC 0) is in tenant 'red' (tenants.0) and in tenant 'green'", "give each server (or NIC)"),
    (None, [*TENANTS[:2], {**_member("green"), "servers": ["gpu0009"]}], "tenants.2.servers.0",
     "no server gpu0009 in this fabric (it has gpu0001..gpu0008)", "name servers the plan has"),
    (None, [*TENANTS[:2], {**_member("green"), "servers": ["gpu0007-gpu0005"]}], "tenants.2.servers.0",
     "the range gpu0007-gpu0005 runs backwards", "write it gpu0005-gpu0007"),
    (None, [*TENANTS[:2], {**_member("green"), "reach": ["purple"]}], "tenants.2.reach.0",
     "tenant 'green' may reach 'purple', which is not a tenant", "list other tenants' names"),
    (None, [*TENANTS[:2], {**_member("green"), "servers": ["gpu0007:0"]}], "tenants.2.servers.0",
     "'gpu0007:0' gives NICs of a server, but tenancy.scope is server", "use tenancy.scope: gpu"),
    (None, [*TENANTS[:2], {**_member("green"), "servers": ["gpu0007;reboot"]}], "tenants.2.servers.0",
     "'gpu0007;reboot' is not a server, a server range or a server's NICs", "write gpu0001 (a server)"),
    (None, [*TENANTS[:2], {**_member("green"), "name": "Green!"}], "tenants.2.name",
     "character 1 of a hostname label (RFC 1123) is 'G'", "use 1-12 characters from a-z, 0-9 and '-'"),
    (None, [*TENANTS[:2], {**_member("green"), "name": "a-very-long-tenant"}], "tenants.2.name",
     "has 18 characters, more than 12", "use 1-12 characters"),
    ({"scope": "gpu", "mechanism": "evpn-vxlan"}, [{"name": "red", "id": 1, "servers": ["gpu0001:5"]}],
     "tenants.0.servers.0", "gpu0001 has no NIC 5..5 (its NICs are 0..1)", "name NICs the server has"),
    ({"scope": "server", "mechanism": "mpls"}, TENANTS, "tenancy.mechanism", "Input should be 'vrf-lite' or",
     "use one of 'vrf-lite' or 'evpn-vxlan'"),
])
def test_bad_tenants_exit_2_with_line_and_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              tenancy_: dict[str, Any] | None, tenants: list[dict[str, Any]],
                                              where: str, says: str, fix: str) -> None:
    path = lab_with(tmp_path, tenancy_, tenants)
    assert main(["plan", "-i", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "Traceback" not in err
    assert f"{path}:" in err and f": {where}: " in err and says in err and fix in err, err


def test_tenants_without_tenancy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(LAB.read_text())
    data["tenants"] = TENANTS
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["plan", "-i", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "tenants: tenants are listed but tenancy is missing (fix: add tenancy:" in err


def test_a_platform_without_the_mechanism_is_a_named_refusal(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = lab_with(tmp_path, platforms={"leaf": "eos", "spine": "frr"},
                    switch_models={"leaf": {"model": "7060X6", "ports": 8, "port_speed": "400G"},
                                   "spine": {"model": "linux-frr", "ports": 8, "port_speed": "400G"}})
    assert main(["plan", "-i", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "tenancy.mechanism: platform eos (leaves) lacks the capability `tenancy evpn-vxlan`" in err


def test_expected_prefixes_leave_evpn_tenant_ports_out_of_the_default_vrf(tmp_path: Path) -> None:
    """Deploy's post-commit check and validate's `routes` count a leaf's IPv4 prefixes per session: under
    evpn-vxlan a tenant port's /31 is an EVPN route of its VRF, never an IPv4 one of the default VRF (adding a
    tenant takes its ports' /31s out of every IPv4 session: the live deploy of tenant amber); vrf-lite leaks them."""
    from fabricgen.plan.expect import expected_prefixes

    def from_spine(plan: Plan) -> set[int]:
        return {n for (host, _ip), n in expected_prefixes(plan).items() if host == "tlab-leaf01"}

    lab = load_plan(ROOT / "inventory" / "lab" / "tenants.yaml")
    # 3 other leaves' loopbacks + their one untenanted /31 each (gpu0004, gpu0008 on two rails) + the spine's
    assert from_spine(lab) == {3 + 3 + 1}
    intent = yaml.safe_load((ROOT / "inventory" / "lab" / "tenants.yaml").read_text())
    intent["tenants"].append({"name": "amber", "id": 14, "servers": ["gpu0004", "gpu0008"]})
    (tmp_path / "amber.yaml").write_text(yaml.safe_dump(intent, sort_keys=False))
    assert from_spine(load_plan(tmp_path / "amber.yaml")) == {3 + 1}
    intent["tenancy"]["mechanism"] = "vrf-lite"
    (tmp_path / "lite.yaml").write_text(yaml.safe_dump(intent, sort_keys=False))
    assert from_spine(load_plan(tmp_path / "lite.yaml")) == {3 * 5 + 1}  # every /31 leaked into the default VRF
