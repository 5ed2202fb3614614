"""The physical layer: optic names by lanes and reach, modules per cage, cables per physical run."""

from __future__ import annotations

import csv
import io
import random
from dataclasses import replace
from typing import Any

import pytest

from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.physical import (
    Physical,
    build_physical,
    csv_line,
    csv_text,
    fibre_name,
    module_name,
    optic_name,
    overfull_cages,
)
from fabricgen.render.summary import cabling_csv, summary
from tests.conftest import small_intent


def plan_of(data: dict[str, Any]):  # type: ignore[no-untyped-def]
    return build_plan(Intent.model_validate(data))


@pytest.mark.parametrize(("speed", "lanes", "kind", "name"), [
    (400, 4, "DR", "400G-DR4"),  # a 400G half of an 800G cage: 4 x 100G, not SR8
    (400, 4, "SR", "400G-SR4"),
    (400, 8, "SR", "400G-SR8"),  # 8 x 50G QSFP-DD
    (100, 1, "SR", "100G-SR1"),  # a single-lane 100G breakout, not SR4
    (100, 1, "DR", "100G-DR"),
    (800, 8, "FR", "800G-2xFR4"),
    (400, 8, "FR", "400G-FR4"),
    (800, 8, "DAC", "800G-DAC"),
])
def test_optic_names_follow_lanes_and_reach(speed: int, lanes: int, kind: str, name: str) -> None:
    assert optic_name(speed, lanes, kind) == name


def test_module_and_fibre_names() -> None:
    assert module_name("osfp", "400G-DR4", 2) == "OSFP 2x400G-DR4 twin-port"
    assert module_name("qsfp-dd", "400G-DR4", 1) == "QSFP-DD 400G-DR4"
    assert fibre_name("400G-DR4") == "MPO-12 fibre" and fibre_name("800G-DR8") == "MPO-16 fibre"
    assert fibre_name("400G-FR4") == "duplex LC fibre" and fibre_name("100G-DR") == "duplex LC fibre"


def _twin(**over: Any) -> dict[str, Any]:
    data = small_intent(**over)
    twin = {"ports": 8, "port_speed": "800G", "breakout": 2, "cage": "osfp"}
    data["switch_models"] = {"leaf": dict(twin), "spine": dict(twin)}
    return data


def test_twin_port_module_counts_once_per_cage_and_fibres_per_link() -> None:
    plan = plan_of(_twin(cabling={"gpu_leaf_m": 20, "leaf_spine_m": 150}))
    phys = build_physical(plan)
    s = summary(plan)
    links = len(plan.links)
    # Every used switch cage holds one twin-port module; NICs one single-port OSFP each.
    switch_cages = {(sw.hostname, i.cage) for sw in plan.switches.values() for i in sw.interfaces
                    if i.tier == "leaf_spine"}
    assert s["modules"]["OSFP 2x400G-DR4 twin-port"] == len(switch_cages)
    assert s["cables"]["MPO-12 fibre"] == sum(link.tier == "leaf_spine" for link in plan.links)
    assert s["ports"] == 2 * links
    assert sum(s["cables"].values()) == len(phys.cables)


def test_breakout_cable_serves_two_ports_and_twin_plane_nic_one_cable() -> None:
    plan = plan_of(_twin(cabling={"gpu_leaf_m": 2, "leaf_spine_m": 2}))
    s = summary(plan)
    gpu_links = sum(link.tier == "gpu_leaf" for link in plan.links)
    # Leaf cage 2 x 400G to two servers' NICs: one DAC breakout per two GPU links, no modules.
    assert s["cables"]["800G to 2x400G DAC breakout"] == gpu_links // 2
    assert "modules" in s and not any("DAC" in m for m in s["modules"])
    # Twin-plane: each NIC's two ports (one per plane) share its cage; one 800G cable splits to both planes.
    dual = small_intent(topology__planes=2, servers__ports_per_nic=2, cabling={"gpu_leaf_m": 2, "leaf_spine_m": 2})
    dual["addressing"]["gpu"] = "198.18.32.0/21"
    ds = summary(plan_of(dual))
    nics = 4 * 4  # 4 servers x 4 NICs
    assert ds["cables"]["800G to 2x400G DAC breakout"] == nics


def test_cabling_csv_is_one_row_per_physical_cable() -> None:
    plan = plan_of(_twin(cabling={"gpu_leaf_m": 2, "leaf_spine_m": 150}))
    rows = list(csv.DictReader(io.StringIO(cabling_csv(plan))))
    assert len(rows) == len(build_physical(plan).cables)
    breakout = next(r for r in rows if "breakout" in r["cable_type"])
    assert len(breakout["z_ends"].split(";")) == 2 and breakout["links"] == "2" and breakout["a_module"] == ""
    fibre = next(r for r in rows if r["cable_type"] == "MPO-12 fibre")
    assert fibre["a_module"] == fibre["z_module"] == "OSFP 2x400G-DR4 twin-port"
    assert sum(int(r["links"]) for r in rows) == len(plan.links)


def test_csv_line_is_what_csv_writer_writes() -> None:
    """cabling.csv joins a row itself when nothing needs quoting: every row, quoted or not, is csv.writer's."""
    rng = random.Random(28)
    alphabet = ["a", "Z", " ", "\t", ",", '"', "\r", "\n", ";", ":", "é", "\\", "'", ""]
    for _ in range(20000):
        row = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 11))]
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(row)
        assert csv_line(row) == out.getvalue()[:-1], row


def test_csv_text_is_what_csv_writer_writes() -> None:
    """The whole cabling.csv is joined at once when nothing in it needs quoting, else row by row: csv.writer's
    bytes either way (plain tables, and tables with one awkward field somewhere)."""
    rng = random.Random(2828)
    plain, awkward = ["a", "Z", " ", ";", ":", "é", "-", "1", ""], [",", '"', "\r", "\n"]
    for _ in range(2000):
        rows = [["".join(rng.choice(plain) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(1, 11))]
                for _ in range(rng.randint(1, 8))]
        if rng.random() < 0.5:
            row = rng.choice(rows)
            row[rng.randrange(len(row))] += rng.choice(awkward)
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        assert csv_text(rows) == out.getvalue(), rows


def test_overfull_cages_are_found() -> None:
    """Two plugs in one cage (an integrated cable and a module, or two integrated cables) are named; the fast
    all-clear of a real plan must not hide them."""
    plan = plan_of(_twin(cabling={"gpu_leaf_m": 2, "leaf_spine_m": 150}))
    physical = build_physical(plan)
    assert overfull_cages(physical) == []
    dac = next(c for c in physical.cables if not c.a_module and not c.z_module)
    fibre = next(c for c in physical.cables if c.a_module)
    twice = Physical([*physical.cables, dac], physical.modules, physical.ports)
    a = dac.a[0]
    assert (a.device, a.cage + 1, 2) in overfull_cages(twice)
    shared = Physical([*physical.cables, replace(fibre, a=[a])], physical.modules, physical.ports)
    assert (a.device, a.cage + 1, 2) in overfull_cages(shared)


def _cables(phys: Physical) -> list[tuple[object, ...]]:
    return [(c.tier, c.kind, c.length_m, [(e.device, e.port, e.cage) for e in c.a],
             [(e.device, e.port, e.cage) for e in c.z], c.a_module, c.z_module) for c in phys.cables]


@pytest.mark.parametrize("data", [small_intent(), _twin(),
                                  small_intent(cabling={"gpu_leaf_m": 40, "leaf_spine_m": 300}),
                                  small_intent(cabling={"gpu_leaf_m": 2, "leaf_spine_m": 20})],
                         ids=["default", "twin-port", "optics", "copper"])
def test_one_cable_per_link_is_what_the_grouping_makes(data: dict[str, Any]) -> None:
    """The shortcut for plans without breakouts gives the grouping's own cables and modules, and declines the
    rest (a twin-port 800G cage carries two links)."""
    from fabricgen.plan import physical

    plan = plan_of(data)
    ends = physical._ends(plan)
    grouped = physical._build(plan, ends)
    short = physical._one_cable_per_link(plan, ends)
    if data is not None and data["switch_models"]["leaf"].get("breakout", 1) > 1:
        assert short is None
        return
    assert short is not None
    assert _cables(short) == _cables(grouped)
    assert short.modules == grouped.modules and short.ports == grouped.ports
