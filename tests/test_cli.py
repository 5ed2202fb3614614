"""CLI behaviour: plan formats, render outputs, determinism, atomicity, bad input exits 2 writing nothing."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest

from fabricgen.catalog.registry import platform
from fabricgen.cli import main
from fabricgen.plan.build import load_plan
from fabricgen.render.build import render_all
from tests.conftest import EXAMPLE, small_intent, write_intent


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_plan_json_has_summary_keys(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(EXAMPLE), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    s = data["summary"]
    assert (s["gpus"], s["servers"], s["leaves"], s["spines"], s["super_spines"]) == (256, 32, 8, 8, 0)
    assert s["links"] == {"gpu_leaf": 256, "leaf_spine": 256, "spine_super_spine": 0}
    assert len(data["switches"]) == 16 and len(data["links"]) == 512


def test_plan_json_file_is_compact_and_the_same_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """build/plan.json is `plan --format json` without the indentation: one line (sorted keys), the same data."""
    assert main(["render", "-i", str(EXAMPLE), "-o", str(tmp_path / "b"), "--no-check"]) == 0
    capsys.readouterr()
    assert main(["plan", "-i", str(EXAMPLE), "--format", "json"]) == 0
    printed = capsys.readouterr().out
    raw = (tmp_path / "b" / "plan.json").read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"}\n") and printed.count("\n") > 1000
    assert json.loads(raw) == json.loads(printed)


def test_plan_csv_is_the_cabling_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(EXAMPLE), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # one row per physical cable: the SN5600 leaf's 800G cages split 2 x 400G, so each cable carries two links
    assert len(rows) == 256
    assert {r["cable_type"] for r in rows} == {"800G to 2x400G DAC breakout", "800G to 2x400G AOC breakout"}
    assert all(r["a_device"] and r["z_ends"] and r["links"] == "2" for r in rows)


def test_plan_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "256 GPUs on 32 servers" in out and "2x400G DAC breakout" in out and "physical layer: 1024 ports" in out


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_intent(tmp_path, small_intent(servers__count=100))
    out = tmp_path / "build"
    assert main(["render", "-i", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:" in err and "servers.count" in err and "fix:" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_render_outputs_and_determinism(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["render", "-i", str(EXAMPLE), "-o", str(a)]) == 0
    assert main(["render", "-i", str(EXAMPLE), "-o", str(b), "--workers", "2"]) == 0
    da, db = tree_digest(a), tree_digest(b)
    assert da == db, "same intent, byte-identical output (serial and parallel alike)"
    plan = load_plan(EXAMPLE)
    for sw in plan.switches.values():
        for f in platform(sw.platform).files:
            assert f"configs/{sw.hostname}/{f}" in da
    assert {f"hosts/{s.name}.sh" for s in plan.servers} <= set(da)
    assert {"plan.json", "cabling.csv", "inventory/hosts.yaml"} <= set(da)


def test_failed_render_keeps_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "build"
    plan = load_plan(EXAMPLE)
    render_all(plan, out)
    before = tree_digest(out)

    def boom(_: Path) -> None:
        raise RuntimeError("check failed")

    with pytest.raises(RuntimeError):
        render_all(plan, out, checks=boom)
    assert tree_digest(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["build"], "no scratch directory left behind"


def test_render_refuses_configs_that_break_invariants(tmp_path: Path, pfc_bug_on_a_leaf: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A renderer bug (PFC on the wrong priority on one port) is caught by the default fast checks."""
    out = tmp_path / "build"
    assert main(["render", "-i", str(EXAMPLE), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "ai256-leaf03" in err and "roce-" in err and "nothing was written" in err
    assert not out.exists()
    assert main(["render", "-i", str(EXAMPLE), "-o", str(out), "--no-check"]) == 0
    assert '"pfc_enable": "4"' in (out / "configs" / "ai256-leaf03" / "config_db.json").read_text()


def test_an_unexpected_error_is_one_message_and_the_traceback_only_with_debug(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import fabricgen.plan.build

    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("disk vanished\nwhile reading the intent")

    monkeypatch.setattr(fabricgen.plan.build, "load_plan", boom)
    assert main(["validate", "-i", str(EXAMPLE)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "error: `fabricgen validate` failed: RuntimeError: disk vanished\n    while reading the intent" in err
    assert "--debug" in err
    with pytest.raises(RuntimeError, match="disk vanished"):
        main(["validate", "-i", str(EXAMPLE), "--debug"])
    with pytest.raises(RuntimeError, match="disk vanished"):
        main(["--debug", "plan", "-i", str(EXAMPLE)])
