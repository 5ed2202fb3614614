"""NX-OS models as hardware SKUs: front panel, breakouts, unused ports and DLB from the model's record."""

from __future__ import annotations

import copy
import csv
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.catalog import skus
from fabricgen.catalog.nxos_models import NXOS_MODEL_RECORDS
from fabricgen.cli import main
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.nxos import render as nxos
from fabricgen.platforms.nxos.check import check_nxos_text
from fabricgen.render.build import environment
from fabricgen.render.summary import cabling_csv, summary
from tests.conftest import override

BASE: dict[str, Any] = {
    "fabric": {"name": "nxm"},
    "servers": {"count": 64, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": "200G"},
    "switch_models": {
        "leaf": {"model": "Nexus 9364D-GX2A", "sku": "N9364D-GX2A", "downlink": {"speed": "200G"},
                 "uplink": {"speed": "400G"}},
        "spine": {"model": "Nexus 9364D-GX2A", "sku": "N9K-C9364D-GX2A"},
    },
    "platforms": {"leaf": "nxos", "spine": "nxos"},
    "topology": {"tiers": 2, "rail_optimized": True},
    "addressing": {"loopbacks": "198.18.0.0/24", "p2p": "198.18.16.0/20", "gpu": "198.18.32.0/20",
                   "management": "198.19.254.0/24"},
    "bgp": {"asn_scheme": "multi-as", "leaf_asn_base": 4200000000, "spine_asn_base": 4200100000},
    "ecmp": {"adaptive_routing": {"enabled": True, "mode": "flowlet"}},
    "cabling": {"gpu_leaf_m": 3, "leaf_spine_m": 50},
}


def intent(**changes: Any) -> dict[str, Any]:
    return override(copy.deepcopy(BASE), **changes)


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


def config(p: Plan, host: str) -> str:
    return nxos.render(p.switches[host], p, environment())["nxos.cfg"]


def top(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in text.splitlines():
        if line and not line.startswith((" ", "!")):
            current = out[line] = []
        elif line.startswith(" "):
            current.append(line.strip())
    return out


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_of(intent())


def test_records_are_consistent() -> None:
    """Every breakout fits its cage (lanes and bandwidth); names and PIDs are unique."""
    names = [m.name for m in NXOS_MODEL_RECORDS] + [m.pid for m in NXOS_MODEL_RECORDS if m.pid != m.name]
    assert len(names) == len(set(names))
    for m in NXOS_MODEL_RECORDS:
        assert m.breakouts and m.cage in ("qsfp-dd", "osfp") and m.source
        for ports, speed in m.breakouts:
            assert ports * speed <= m.cage_speed and m.lanes % ports == 0, (m.name, ports, speed)


def test_front_panel_of_the_model() -> None:
    gx2a = skus.find_sku("nxos", "N9364D-GX2A")
    assert skus.find_sku("nxos", "N9K-C9364D-GX2A") is gx2a  # the Cisco PID names the same record
    assert [p.name for p in gx2a.ports[:2]] == ["Ethernet1/1", "Ethernet1/2"]
    assert [(p.name, p.speed) for p in gx2a.ports[63:]] == [("Ethernet1/64", 400), ("Ethernet1/65", 10),
                                                            ("Ethernet1/66", 10)]
    assert len(skus.find_sku("nxos", "N9332D-GX2B").ports) == 32 + 2
    sg2 = skus.find_sku("nxos", "N9364E-SG2-O")
    assert (len(sg2.ports), sg2.speeds, sg2.cage, sg2.breakouts) == (64, (800,), "osfp", ((2, 400), (8, 100)))


def test_plan_cabling_and_configs_use_the_model(plan: Plan, tmp_path: Path) -> None:
    leaf = plan.switches["nxm-leaf01"]
    down = [i.name for i in leaf.interfaces if i.tier == "gpu_leaf"]
    up = [i.name for i in leaf.interfaces if i.tier == "leaf_spine"]
    assert down[:3] == ["Ethernet1/1/1", "Ethernet1/1/2", "Ethernet1/2/1"] and len(down) == 64
    assert up[0] == "Ethernet1/33" and up[-1] == "Ethernet1/64" and len(up) == 32
    rows = list(csv.DictReader(io.StringIO(cabling_csv(plan))))
    ends = {(r["a_device"], r["a_ports"]) for r in rows}
    assert ("nxm-leaf01", "Ethernet1/1/1;Ethernet1/1/2") in ends and ("nxm-leaf01", "Ethernet1/33") in ends
    hw = summary(plan)["hardware"]
    assert hw["leaf"]["sku"] == "N9364D-GX2A" and "down 2 x 200G, up 1 x 400G" in hw["leaf"]["ports"]
    b = top(config(plan, "nxm-leaf01"))
    assert "interface breakout module 1 port 1-32 map 200g-2x" in b
    for name in ("Ethernet1/65", "Ethernet1/66"):  # the model's SFP+ ports, not in the plan
        assert b[f"interface {name}"] == ["description unused: not in the fabric plan", "shutdown"]
    spine = top(config(plan, "nxm-spine01"))
    assert not any(k.startswith("interface breakout") for k in spine)
    assert "interface Ethernet1/65" in spine


def test_rendered_configs_pass_the_check(plan: Plan) -> None:
    for host in ("nxm-leaf01", "nxm-spine01"):
        text = config(plan, host)
        assert check_nxos_text(text, host, plan) == []
        assert check_nxos_text(text, host, None) == []


def test_breakout_missing_or_off_plan_is_caught(plan: Plan) -> None:
    text = config(plan, "nxm-leaf01")
    cut = text.replace("interface breakout module 1 port 1-32 map 200g-2x\n", "")
    with_plan = check_nxos_text(cut, "nxm-leaf01", plan)
    assert {f.rule for f in with_plan} == {"nxos-breakout"}
    assert len([f for f in with_plan if "not broken out; the plan splits it into 2 x 200G" in f.message]) == 32
    without = check_nxos_text(cut, "nxm-leaf01", None)  # structural: Ethernet1/N/M needs a breakout of port N
    assert {f.rule for f in without} == {"nxos-breakout"} and len(without) == 64
    wrong = text.replace("map 200g-2x", "map 100g-4x")
    assert {f.rule for f in check_nxos_text(wrong, "nxm-leaf01", plan)} == {"nxos-breakout"}


def test_growth_keeps_the_breakouts_and_names_free_subports() -> None:
    """Half the servers: every downlink cage is still broken out, the free sub-ports are shut."""
    small = plan_of(intent(servers__count=32, topology__scalable_unit=64))
    big = plan_of(intent(topology__scalable_unit=64))
    b = top(config(small, "nxm-leaf01"))
    assert "interface breakout module 1 port 1-32 map 200g-2x" in b
    assert b["interface Ethernet1/17/1"] == ["description unused: not in the fabric plan", "shutdown"]
    grown = top(config(big, "nxm-leaf01"))
    assert "description gpu_leaf:gpu0033:eth0" in grown["interface Ethernet1/17/1"]
    breakouts = [k for k in grown if k.startswith("interface breakout")]
    assert breakouts == [k for k in b if k.startswith("interface breakout")]


def test_800g_model_breaks_out_to_400g() -> None:
    p = plan_of(intent(switch_models__spine={"model": "Nexus 9364E", "sku": "N9364E-SG2-O",
                                             "downlink": {"speed": "400G"}}))
    spine = p.switches["nxm-spine01"]
    assert spine.interfaces[0].name == "Ethernet1/1/1" and spine.interfaces[0].speed == 400
    text = config(p, "nxm-spine01")
    assert "interface breakout module 1 port 1-64 map 400g-2x" in text.splitlines()
    assert check_nxos_text(text, "nxm-spine01", p) == []
    assert any(k.startswith("OSFP") for k in summary(p)["modules"])


def test_adaptive_routing_follows_the_model() -> None:
    """An N9364E-SG2 does only policy-driven DLB (not rendered): no DLB towards it, and the plan says which model."""
    p = plan_of(intent(switch_models__spine={"model": "Nexus 9364E", "sku": "N9364E-SG2-Q",
                                             "downlink": {"speed": "400G"}}))
    assert summary(p)["adaptive_routing"]["active_ports"] == 0
    (w,) = p.warnings
    assert "because nxos model N9364E-SG2-Q at one end cannot do it" in w.message
    assert "hardware profile dlb" not in config(p, "nxm-leaf01")
    gx2 = plan_of(intent())
    assert summary(gx2)["adaptive_routing"]["active_ports"] == 2 * 256 and gx2.warnings == []


@pytest.mark.parametrize(("changes", "words"), [
    ({"switch_models__spine__sku": "N9364D-GX2Z"},
     ["switch_models.spine.sku", "unknown NX-OS model 'N9364D-GX2Z'", "known: N9332D-GX2B, N9348D-GX2A, "
      "N9364D-GX2A, N9364E-SG2-O, N9364E-SG2-Q"]),
    ({"switch_models__leaf__downlink": {"speed": "50G"}},
     ["switch_models.leaf.downlink", "N9364D-GX2A cannot run its 400G cages as 8 x 50G",
      "it does 1 x 400G, 2 x 200G, 4 x 100G, 2 x 100G, 4 x 25G, 4 x 10G"]),
    ({"switch_models__leaf__downlink": {"speed": "400G", "breakout": 2}},
     ["switch_models.leaf.downlink", "as 2 x 400G", "a model that does 2 x 400G (N9364E-SG2-O, N9364E-SG2-Q)"]),
    ({"switch_models__spine__cage": "osfp"}, ["switch_models.spine.cage", "has qsfp-dd cages, not osfp"]),
])
def test_bad_model_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any],
                                  words: list[str]) -> None:
    path = tmp_path / "intent.yaml"
    text = yaml.safe_dump(intent(**changes), sort_keys=False)
    path.write_text(text, encoding="utf-8")
    assert main(["plan", "-i", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "(fix: " in err
    field = words[0].rsplit(".", 1)[-1]  # the line of the field at fault (the last one of that name)
    line = max(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith(f"{field}:"))
    assert f"{path}:{line}: " in err, (line, err)
    for w in words:
        assert w in err, (w, err)
