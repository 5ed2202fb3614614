"""run_checks: the pooled schedule finds exactly what the serial one finds."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from fabricgen.check import run
from fabricgen.check.findings import Finding, sorted_findings
from fabricgen.model import Plan
from fabricgen.plan import load_plan
from fabricgen.render import render_all
from tests.conftest import EXAMPLE

pytestmark = pytest.mark.skipif(run.default_yang_dir() is None or shutil.which("vtysh") is None,
                                reason="needs the SONiC YANG models and vtysh")


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
    nx.write_text(re.sub(r"^priority-flow-control watch-dog-interval on\n", "", nx.read_text(), flags=re.M))
    (configs / nxos[1] / "nxos.cfg").unlink()  # roce-missing-config
    return plan, out


def test_pooled_equals_serial(broken: tuple[Plan, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    plan, out = broken
    serial = run.run_checks(plan, out / "configs", out / "hosts", full=True, workers=1)
    serial_fast = run.fast_findings(plan, out / "configs", out / "hosts", workers=1)
    monkeypatch.setattr(run, "_POOL_THRESHOLD_S", 0.0)
    pooled = run.run_checks(plan, out / "configs", out / "hosts", full=True, workers=2)
    pooled_fast = run.fast_findings(plan, out / "configs", out / "hosts", workers=2)
    assert sorted_findings(pooled) == sorted_findings(serial)
    assert sorted_findings(pooled_fast) == sorted_findings(serial_fast)
    assert set(serial_fast) < set(serial)
    rules = {f.rule for f in serial}
    assert {"sonic-yang", "frr-parse", "nxos-watchdog", "roce-missing-config", "roce-p2p-pair"} <= rules
    assert all(isinstance(f, Finding) for f in pooled)
