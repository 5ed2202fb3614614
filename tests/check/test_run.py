"""run_checks: the pooled schedule finds exactly what the serial one finds."""

from __future__ import annotations

import gc
import json
import re
import shutil
from pathlib import Path

import pytest

from fabricgen.base.findings import Finding, sorted_findings
from fabricgen.check import run
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import render_all
from tests.conftest import EXAMPLE

pytestmark = [pytest.mark.skipif(shutil.which("vtysh") is None, reason="needs vtysh"),
              pytest.mark.usefixtures("sonic_yang_models")]


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> tuple[Plan, Path]:
    """The example fabric with one fault per checker."""
    plan = load_plan(EXAMPLE)
    out = tmp_path_factory.mktemp("run") / "out"
    render_all(plan, out, workers=1)
    configs = out / "configs"
    sonic = sorted(h for h, sw in plan.switches.items() if sw.platform == "sonic")
    nxos = sorted(h for h, sw in plan.switches.items() if sw.platform == "nxos")
    db_path = configs / sonic[0] / "config_db.json"
    db = json.loads(db_path.read_text())
    db["PORT"][next(iter(db["PORT"]))]["mtu"] = "jumbo"  # sonic-yang
    db_path.write_text(json.dumps(db))
    frr = configs / sonic[1] / "frr.conf"
    frr.write_text(frr.read_text().replace(" remote-as ", " remote-az ", 1))  # frr-parse, roce-p2p-pair
    nx = configs / nxos[0] / "nxos.cfg"
    off = "priority-flow-control watch-dog interval 999"  # nxos-watchdog: timers off the intent
    nx.write_text(re.sub(r"^priority-flow-control watch-dog interval \d+$", off, nx.read_text(), flags=re.M))
    (configs / nxos[1] / "nxos.cfg").unlink()  # roce-missing-config
    return plan, out


def test_pooled_equals_serial(broken: tuple[Plan, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    plan, out = broken
    serial = run.run_checks(plan, out / "configs", out / "hosts", full=True, workers=1, cache=False)
    serial_fast = run.fast_findings(plan, out / "configs", out / "hosts", workers=1)
    monkeypatch.setattr(run, "_POOL_THRESHOLD_S", 0.0)
    pooled = run.run_checks(plan, out / "configs", out / "hosts", full=True, workers=2, cache=False)
    pooled_fast = run.fast_findings(plan, out / "configs", out / "hosts", workers=2)
    assert sorted_findings(pooled) == sorted_findings(serial)
    assert sorted_findings(pooled_fast) == sorted_findings(serial_fast)
    assert set(serial_fast) < set(serial)
    rules = {f.rule for f in serial}
    assert {"sonic-yang", "frr-parse", "nxos-watchdog", "roce-missing-config", "roce-p2p-pair"} <= rules
    assert all(isinstance(f, Finding) for f in pooled)


def test_cache_reuses_whole_per_file_results(broken: tuple[Plan, Path], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-check of unchanged files comes from .check-cache, findings included; a changed file is re-checked."""
    from fabricgen.check import cache, frr_parser, sonic_yang

    plan, src = broken
    out = tmp_path / "out"
    shutil.copytree(src, out, ignore=shutil.ignore_patterns(".check-cache"))
    configs, hosts = out / "configs", out / "hosts"
    first = run.run_checks(plan, configs, hosts, workers=1)
    assert (out / cache.DIRNAME / "sonic-yang.json").is_file() and (out / cache.DIRNAME / "frr-parse.json").is_file()
    assert {"sonic-yang", "frr-parse"} <= {f.rule for f in first}

    def boom(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("checked again although unchanged")

    with monkeypatch.context() as m:
        m.setattr(sonic_yang, "check_sonic_file", boom)
        m.setattr(frr_parser, "check_frr_configs", boom)
        again = run.run_checks(plan, configs, hosts, workers=1)
    assert sorted_findings(again) == sorted_findings(first)  # the cached findings, errors included

    # Fix the broken config_db and break a clean one: both are checked again, nothing stale survives.
    sonic = sorted(h for h, sw in plan.switches.items() if sw.platform == "sonic")
    fixed, newly = configs / sonic[0] / "config_db.json", configs / sonic[2] / "config_db.json"
    shutil.copy(newly, fixed)  # a clean config_db, renamed below
    fixed.write_text(fixed.read_text().replace(sonic[2], sonic[0]))
    db = json.loads(newly.read_text())
    db["PORT"][next(iter(db["PORT"]))]["mtu"] = "huge"
    newly.write_text(json.dumps(db))
    third = run.run_checks(plan, configs, hosts, workers=1)
    assert third == run.run_checks(plan, configs, hosts, workers=1, cache=False)
    yang_devices = {f.device for f in third if f.rule == "sonic-yang"}
    assert sonic[2] in yang_devices and sonic[0] not in yang_devices


def test_cache_salt_and_opt_out(broken: tuple[Plan, Path], tmp_path: Path) -> None:
    from fabricgen.check.cache import DIRNAME, ResultCache

    plan, src = broken
    out = tmp_path / "out"
    shutil.copytree(src, out, ignore=shutil.ignore_patterns(".check-cache"))
    run.run_checks(plan, out / "configs", out / "hosts", workers=1, cache=False)
    assert not (out / DIRNAME).exists()
    run.run_checks(plan, out / "configs", out / "hosts", workers=1)
    some = next((out / "configs").glob("*/config_db.json"))
    other_salt = ResultCache(out / DIRNAME, "sonic-yang", "another checker version")
    assert other_salt.get(other_salt.key(some)) is None
    assert ResultCache.key(out / "configs" / "no-such-file") is None


def test_cache_salt_is_the_same_in_a_fresh_process(sonic_yang_models: Path) -> None:
    """The salt must not depend on what the process happened to load before (else every run misses)."""
    import subprocess
    import sys

    root = sonic_yang_models
    code = ("import sys; from pathlib import Path; from fabricgen.check import run; "
            "print(run._yang_salt(Path(sys.argv[1])))")
    fresh = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    from fabricgen.check.sonic_yang import SonicYangValidator

    SonicYangValidator(root)  # libyang loaded in this process now
    assert fresh.stdout.strip() == run._yang_salt(root)


def test_render_runs_the_structural_rules_and_names_what_it_leaves(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    """render's checks: the fast ones plus each platform's structural rules from the same parse (a broken NX-OS
    watchdog timer is found), never the costly file checkers (a broken ConfigDB is left to `fabricgen check`),
    and the render says which it left."""
    from fabricgen.check.fast import skipped
    from fabricgen.cli import main

    plan = load_plan(EXAMPLE)
    assert main(["render", "-i", str(EXAMPLE), "-o", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "left to `fabricgen check`: sonic-yang" in err and "frr-parse" in err
    assert set(skipped(plan)) == {"sonic-yang", "frr-parse"}
    configs = tmp_path / "b" / "configs"
    nx = configs / next(h for h, sw in plan.switches.items() if sw.platform == "nxos") / "nxos.cfg"
    nx.write_text(re.sub(r"^priority-flow-control watch-dog interval \d+$", "priority-flow-control watch-dog "
                         "interval 999", nx.read_text(), flags=re.M))
    db_path = configs / next(h for h, sw in plan.switches.items() if sw.platform == "sonic") / "config_db.json"
    db = json.loads(db_path.read_text())
    db["PORT"][next(iter(db["PORT"]))]["fec"] = "bogus"  # sonic-yang only
    db_path.write_text(json.dumps(db))
    hosts = tmp_path / "b" / "hosts"
    assert {f.rule for f in run.fast_findings(plan, configs, hosts, structural=True)} == {"nxos-watchdog"}
    assert run.fast_findings(plan, configs, hosts) == []  # the RoCE invariants alone do not see it


@pytest.mark.parametrize("share", [0.5, 1.0])
def test_facts_from_the_workers_and_the_forked_nic_check_find_what_serial_finds(
        broken: tuple[Plan, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: float) -> None:
    """Fast checks with SONiC facts (and their per-device rules) shipped back from the pool, and the NIC scripts
    and the address rules checked in forked children: the same findings, in the same order, as one process."""
    plan, out = broken
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    sonic = sorted(h for h, sw in plan.switches.items() if sw.platform == "sonic")
    db_path = copy / "configs" / sonic[-1] / "config_db.json"  # the last hosts are the ones shipped
    db = json.loads(db_path.read_text())
    roce_dscp = str(plan.qos.roce_dscp[0]) if plan.qos else "26"
    for table in db["DSCP_TO_TC_MAP"].values():
        table[roce_dscp] = "0"  # roce-chain on every port of that leaf: a per-device rule
    db_path.write_text(json.dumps(db))
    first = copy / "configs" / sonic[0] / "config_db.json"  # its loopback also on the last leaf: addr-duplicate
    db0 = json.loads(first.read_text())
    loopback = next(k for k in db["LOOPBACK_INTERFACE"] if "|" in k)
    db0["LOOPBACK_INTERFACE"][loopback] = {}
    first.write_text(json.dumps(db0))
    scripts = sorted((copy / "hosts").iterdir())
    scripts[0].write_text(scripts[0].read_text().replace("# fabricgen:", "# nothing:"))  # the NIC check's
    scripts[1].unlink()
    serial = run.fast_findings(plan, copy / "configs", copy / "hosts", workers=1)
    monkeypatch.setattr(run, "_POOL_THRESHOLD_S", 0.0)
    monkeypatch.setattr(run, "_shipped", lambda *_: share)
    pooled = run.fast_findings(plan, copy / "configs", copy / "hosts", workers=2)
    assert pooled == serial
    devices = {f.device for f in serial if f.rule == "roce-lossless-chain"}
    assert sonic[-1] in devices
    assert {scripts[0].stem, scripts[1].stem} <= {f.device for f in serial}
    assert {"roce-p2p-pair", "roce-missing-config", "addr-duplicate"} <= {f.rule for f in serial}
    assert gc.isenabled() and gc.get_freeze_count() == 0  # the collector as it was before the checks


@pytest.mark.parametrize(("light", "pool_cost", "workers"), [(24.6, 16.0, 2), (10.0, 2.0, 4), (5.0, 0.0, 2)])
def test_the_shipped_share_leaves_every_process_the_same_cpu(light: float, pool_cost: float, workers: int) -> None:
    share = run._shipped(light, pool_cost, workers)
    assert 0 < share < 1
    here = (1 - share) * light + share * light * run._SHIP_LOAD
    everything = pool_cost + light + share * light * (run._SHIP_DUMP + run._SHIP_LOAD)
    assert here == pytest.approx(everything / (workers + 1))


def test_no_share_when_the_pool_is_busier_than_this_process() -> None:
    assert run._shipped(10.0, 40.0, 2) == 0.0
    assert run._shipped(10.0, 0.0, 1) == 0.0
