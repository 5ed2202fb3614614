"""What a new user meets first: the example renders cleanly from what the package ships, every intent under
inventory/ plans and renders, `--version`, `platforms`, `check` without SONiC's YANG models, and a README
whose commands table is the CLI's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen import __version__
from fabricgen.catalog import skus
from fabricgen.catalog.registry import PLATFORMS
from fabricgen.check.yang_models import ENV_VAR as YANG_ENV
from fabricgen.cli import main
from tests.conftest import EXAMPLE, ROOT

NORNIR_FILES = {"defaults.yaml", "groups.yaml", "hosts.yaml"}  # `fabricgen inventory` output, not intents
INTENTS = sorted(p for p in (ROOT / "inventory").rglob("*.yaml") if p.name not in NORNIR_FILES)


@pytest.fixture()
def no_user_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a user without any SONiC tree: only what the package ships."""
    monkeypatch.delenv(skus.PLATFORM_ENV, raising=False)
    monkeypatch.setattr(skus, "_override", None)


def test_the_example_renders_with_no_warning(no_user_tree: None, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "-i", str(EXAMPLE), "-o", str(tmp_path / "build")]) == 0
    err = capsys.readouterr().err
    assert "warning" not in err.lower(), err
    assert "rendered 16 switches" in err


@pytest.mark.parametrize("intent", INTENTS, ids=lambda p: p.relative_to(ROOT / "inventory").as_posix())
def test_every_intent_under_inventory_plans_and_renders(intent: Path, no_user_tree: None, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(intent)]) == 0
    assert main(["render", "-i", str(intent), "-o", str(tmp_path / "build")]) == 0
    assert "rendered" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"fabricgen {__version__}"


def test_platforms_lists_every_platform_and_shipped_model(no_user_tree: None,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["platforms", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["platforms"]] == list(PLATFORMS)
    nxos = next(p for p in data["platforms"] if p["name"] == "nxos")
    assert "adaptive-routing flowlet" in nxos["capabilities"] and "pfc-watchdog (drop)" in nxos["capabilities"]
    frr = next(p for p in data["platforms"] if p["name"] == "frr")
    assert "lossless-qos" not in frr["capabilities"] and "qos" in frr["not_deployed"]
    models = {(m["platform"], m["name"]): m for m in data["hardware"]}
    for name in skus.shipped_sonic_skus():
        assert models["sonic", name]["facts"].startswith("shipped with fabricgen"), name
    assert models["sonic", "Mellanox-SN5600-O128"]["ports"] == "128 x 400G (64 cages x 2)"
    assert models["sonic", "Mellanox-SN5600-C224O8"]["lossless"] == "no (lossy-only)"
    assert models["sonic", "Mellanox-SN5600-O128"]["adaptive_routing"] == []
    assert set(skus.NXOS_MODELS) <= {n for p, n in models if p == "nxos"}
    assert main(["platforms"]) == 0
    assert "Mellanox-SN5600-O128" in capsys.readouterr().out


def test_plan_shows_port_budget_and_use_apart(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(EXAMPLE)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "oversubscription leaf (ports in use) │ 1.00:1" in out
    assert "│ leaf │ 32 / 96 │ 32 / 32 │" in out  # 32 of the 96 down ports the design sets aside are cabled
    assert main(["plan", "-i", str(EXAMPLE), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["port_use"]["leaf"] == {"down": [32, 96], "up": [32, 32]}
    (leaf,) = (c for c in summary["choices"] if c["name"] == "leaf ports")
    assert leaf["why"].startswith("port budget; 3.00:1 down:up bandwidth if every down port is used")


def test_headroom_table_says_which_value_the_switch_applies(capsys: pytest.CaptureFixture[str]) -> None:
    from fabricgen.plan.build import load_plan
    from fabricgen.platforms.sonic.buffers import headroom_table

    assert main(["plan", "-i", str(EXAMPLE)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "applied: what the switch uses" in out and "shown to compare only" in out
    row = headroom_table(load_plan(EXAMPLE))[0]
    applied = " / ".join(str(row["switch"][k]) for k in ("xon", "xoff", "size"))
    ours = " / ".join(str(row["fabricgen"][k]) for k in ("xon", "xoff", "size"))
    assert applied != ours and out.index(applied.split(" / ")[0]) < out.index(ours.split(" / ")[0])


def test_check_without_yang_models_runs_the_rest_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "build"
    assert main(["render", "-i", str(EXAMPLE), "-o", str(out)]) == 0
    monkeypatch.delenv(YANG_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))  # nothing fetched either
    capsys.readouterr()
    rc = main(["check", "-i", str(EXAMPLE), "--configs", str(out / "configs"), "--format", "json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "not run: sonic-yang" in captured.err and "make sonic-yang" in captured.err
    assert json.loads(captured.out) == []  # every other check ran and passed
    rc = main(["check", "-i", str(EXAMPLE), "--configs", str(out / "configs"), "--require-yang"])
    assert rc == 2 and "the SONiC YANG check cannot run" in capsys.readouterr().err


def test_check_without_yang_still_finds_what_the_other_checks_find(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "build"
    assert main(["render", "-i", str(EXAMPLE), "-o", str(out)]) == 0
    conf = out / "configs" / "ai256-leaf01" / "frr.conf"
    conf.write_text(conf.read_text(encoding="utf-8").replace("router bgp", "router bgpp", 1), encoding="utf-8")
    monkeypatch.delenv(YANG_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))
    capsys.readouterr()
    assert main(["check", "-i", str(EXAMPLE), "--configs", str(out / "configs"), "--format", "json"]) == 1
    assert any(f["device"] == "ai256-leaf01" for f in json.loads(capsys.readouterr().out))


def test_check_without_frr_runs_the_rest_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "build"
    assert main(["render", "-i", str(EXAMPLE), "-o", str(out)]) == 0
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no vtysh anywhere
    capsys.readouterr()
    rc = main(["check", "-i", str(EXAMPLE), "--configs", str(out / "configs"), "--format", "json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert "not run: frr-parse" in captured.err and "apt install frr" in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("argv", [["lab", "up", "--sonic-platform", "/nowhere", "--help"],
                                  ["analyze", "ecmp", "--debug", "--help"]])
def test_global_options_work_after_nested_commands(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0 and "--sonic-platform DIR" in capsys.readouterr().out
