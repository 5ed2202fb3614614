"""Adaptive routing only where both ends do it; the plan lists active ports and warns about the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.catalog.registry import PLATFORMS, capabilities
from fabricgen.cli import main
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.render.summary import summary
from tests.conftest import EXAMPLE, ROOT, small_intent

NXOS_1024 = ROOT / "inventory" / "examples" / "nxos-1024.yaml"


def plan_of(**overrides: object):  # type: ignore[no-untyped-def]
    return build_plan(Intent.model_validate(small_intent(**overrides)))


def test_every_platform_has_one_record() -> None:
    from fabricgen.intent.model import PLATFORMS as INTENT_PLATFORMS

    assert {n for n, r in PLATFORMS.items() if r.kind == "switch"} == set(INTENT_PLATFORMS)
    assert capabilities("nxos").adaptive_routing("flowlet")
    assert capabilities("nxos").adaptive_routing("per-packet")
    assert not capabilities("sonic").adaptive_routing("flowlet")
    assert not capabilities("frr").adaptive_routing("flowlet")
    with pytest.raises(KeyError, match="known: " + ", ".join(sorted(PLATFORMS))):
        capabilities("junos")


def test_sonic_leaves_keep_nxos_spines_off_dlb() -> None:
    p = plan_of(ecmp__adaptive_routing={"enabled": True})
    assert not any(i.adaptive_routing for sw in p.switches.values() for i in sw.interfaces)
    ar = summary(p)["adaptive_routing"]
    assert ar == {"enabled": True, "mode": "flowlet", "active_ports": 0, "switches": {}}
    (w,) = p.warnings
    assert w.path == "ecmp.adaptive_routing.enabled"
    fabric_ports = sum(1 for sw in p.switches.values() for i in sw.interfaces if i.tier != "gpu_leaf")
    assert f"not rendered on {fabric_ports} fabric port(s) because platform sonic" in w.message
    assert "plain ECMP" in w.message


def test_all_nxos_fabric_runs_dlb_on_every_fabric_port_only() -> None:
    p = plan_of(platforms={"leaf": "nxos", "spine": "nxos"}, ecmp__adaptive_routing={"enabled": True})
    assert p.warnings == []
    for sw in p.switches.values():
        for itf in sw.interfaces:
            assert itf.adaptive_routing == (itf.tier != "gpu_leaf"), (sw.hostname, itf.name)
    ar = summary(p)["adaptive_routing"]
    assert ar["active_ports"] == sum(1 for sw in p.switches.values() for i in sw.interfaces if i.tier != "gpu_leaf")
    assert ar["switches"]["t-spine01"] == [i.name for i in p.switches["t-spine01"].interfaces]


def test_mixed_tiers_dlb_only_between_nxos_pairs() -> None:
    """3-tier, SONiC leaves, NX-OS spines and super-spines: only spine <-> super-spine links do DLB."""
    data = small_intent(ecmp__adaptive_routing={"enabled": True})
    data["switch_models"]["super_spine"] = {"ports": 16, "port_speed": "400G"}
    data["platforms"] = {"leaf": "sonic", "spine": "nxos", "super_spine": "nxos"}
    data["topology"].update(tiers=3, spines=4, super_spines_per_group=2)
    p = build_plan(Intent.model_validate(data))
    for sw in p.switches.values():
        for itf in sw.interfaces:
            assert itf.adaptive_routing == (itf.tier == "spine_super_spine"), (sw.hostname, itf.name)
    (w,) = p.warnings
    assert "platform sonic" in w.message


def test_disabled_means_no_ports_and_no_warning() -> None:
    p = plan_of(platforms={"leaf": "nxos", "spine": "nxos"})
    assert p.warnings == [] and summary(p)["adaptive_routing"]["active_ports"] == 0
    assert not any(i.adaptive_routing for sw in p.switches.values() for i in sw.interfaces)


def test_plan_and_render_print_the_warning_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The example asking for adaptive routing its SONiC leaves cannot do (it ships without it for that reason)."""
    intent = tmp_path / "fabric.yaml"
    intent.write_text(EXAMPLE.read_text(encoding="utf-8").replace(
        "ecmp:\n", "ecmp:\n  adaptive_routing: {enabled: true, mode: flowlet, flowlet_aging_us: 500}\n", 1),
        encoding="utf-8")
    assert main(["plan", "-i", str(intent)]) == 0
    err = capsys.readouterr().err
    text = intent.read_text(encoding="utf-8").splitlines()
    line = next(n for n, t in enumerate(text, 1) if "adaptive_routing:" in t)
    assert f"warning: {intent}:{line}: ecmp.adaptive_routing.enabled: adaptive routing (flowlet)" in err
    assert main(["render", "-i", str(intent), "-o", str(tmp_path / "out"), "--no-check"]) == 0
    assert "ecmp.adaptive_routing.enabled" in capsys.readouterr().err


def test_nxos_example_lists_active_ports(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(NXOS_1024)]) == 0
    out, err = capsys.readouterr()
    assert "adaptive routing (flowlet): active on 2048 fabric ports of 48 switches" in out  # 32 leaves, 16 spines
    assert "warning" not in err
    assert main(["plan", "-i", str(NXOS_1024), "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)["summary"]
    assert s["adaptive_routing"]["active_ports"] == 2048 and s["warnings"] == []
    spine = s["adaptive_routing"]["switches"]["ai1k-spine01"]
    assert spine[0] == "Ethernet1/1" and len(spine) == 64  # 2 links to each of 32 leaves

