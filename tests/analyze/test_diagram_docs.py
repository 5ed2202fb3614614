"""fabricgen diagram and docs: the content matches the plan."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from fabricgen.analyze import diagram
from fabricgen.analyze.fabric import from_plan
from fabricgen.cli import main
from fabricgen.render.summary import summary
from tests.conftest import EXAMPLE

SVG = "{http://www.w3.org/2000/svg}"


def test_diagram_draws_every_switch_and_cable_pair(example_plan) -> None:  # type: ignore[no-untyped-def]
    svg = ET.fromstring(diagram.draw(from_plan(example_plan)))
    boxes = [t.text for t in svg.iter(f"{SVG}text") if t.text and t.text.startswith("ai256-")]
    assert sorted(boxes) == sorted(example_plan.switches)
    assert len(list(svg.iter(f"{SVG}line"))) == 8 * 8 + 8  # one line per leaf-spine pair, one per leaf's GPUs


def test_diagram_aggregates_large_fabrics() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_render import intent_for

    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import build_plan

    plan = build_plan(Intent.model_validate(intent_for(4096)))
    svg = ET.fromstring(diagram.draw(from_plan(plan)))
    texts = [t.text or "" for t in svg.iter(f"{SVG}text")]
    assert any(t.startswith("leafs, plane 1 pod 1 (") for t in texts)
    assert len([t for t in texts if t.endswith(")")]) < 20  # a box per plane, pod and tier, not per switch


def test_heat_map_from_ecmp_result(tmp_path: Path) -> None:
    result = tmp_path / "ecmp.json"
    assert main(["analyze", "ecmp", "-i", str(EXAMPLE), "--pattern", "alltoall", "--cross-rail", "-o", str(result),
                 "--format", "json"]) == 0
    out = tmp_path / "d.svg"
    assert main(["diagram", "-i", str(EXAMPLE), "--heat", str(result), "-o", str(out)]) == 0
    colours = Counter(e.get("stroke") for e in ET.parse(out).getroot().iter(f"{SVG}line"))
    assert "#ff0030" in colours  # the hottest leaf-spine pair is red
    assert main(["diagram", "-i", str(EXAMPLE), "--heat", str(EXAMPLE), "-o", str(out)]) == 2


def test_docs_numbers_match_the_plan(tmp_path: Path, example_plan) -> None:  # type: ignore[no-untyped-def]
    assert main(["docs", "-i", str(EXAMPLE), "-o", str(tmp_path)]) == 0
    s = summary(example_plan)
    index = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert f"| GPUs | {s['gpus']} |" in index and f"| switches | {s['switches']} |" in index
    assert "| leaf | NVIDIA SN5600 | sonic | 8 |" in index
    assert "| spine | N9364D-GX2A | nxos | 8 |" in index
    for kind, n in s["cables"].items():
        assert f"| {kind} | {n} |" in index
    for name, u in s["pools"].items():
        assert f"| {name} | {u['used']} | {u['size']} |" in index
    leaf = example_plan.switches["ai256-leaf01"]
    page = (tmp_path / "devices" / "ai256-leaf01.md").read_text(encoding="utf-8")
    rows = [line for line in page.splitlines() if re.match(r"\| Ethernet\d+ \|", line)]
    assert len(rows) == len(leaf.interfaces)
    first = leaf.interfaces[0]
    assert f"| {first.name} | {first.speed}G | {first.tier} | {first.peer_device} |" in page
    assert sum(1 for line in page.splitlines() if line.startswith("| 198.18.")) == len(leaf.bgp.neighbors)
    cabling = (tmp_path / "cabling.md").read_text(encoding="utf-8")
    assert cabling.count("\n| ") - 1 == sum(s["cables"].values())
    assert sorted(p.stem for p in (tmp_path / "devices").glob("*.md")) == sorted(example_plan.switches)
    assert (tmp_path / "diagram.svg").read_text(encoding="utf-8").startswith("<svg")


@pytest.mark.parametrize("path", ["inventory/examples/three-tier.yaml"])
def test_docs_and_diagram_three_tier(tmp_path: Path, path: str) -> None:
    root = Path(__file__).resolve().parents[2]
    assert main(["docs", "-i", str(root / path), "-o", str(tmp_path)]) == 0
    assert "| super-spines | 32 |" in (tmp_path / "index.md").read_text(encoding="utf-8")
