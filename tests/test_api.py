"""fabricgen as a library: the four stages from `import fabricgen`, used as a program would."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fabricgen
from tests.conftest import EXAMPLE, ROOT, small_intent, write_intent


def test_import_fabricgen_is_cheap() -> None:
    """`import fabricgen` loads none of the pipeline (pydantic, jinja2, the stages) until a function is used."""
    code = ("import sys, fabricgen; before = set(sys.modules); fabricgen.build_plan; "
            "print(sorted(m for m in before if m.split('.')[0] in ('fabricgen', 'pydantic', 'jinja2', 'yaml'))); "
            "print('fabricgen.api' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["['fabricgen']", "True"]


def test_stages_from_intent_to_findings(tmp_path: Path) -> None:
    intent = fabricgen.load_intent(EXAMPLE)
    plan = fabricgen.build_plan(intent)
    assert plan.switches and plan.links
    result = fabricgen.render(plan, tmp_path / "build")
    written = [p for p in (tmp_path / "build").rglob("*") if p.is_file()]
    assert result.files == len(written) and result.switches == len(plan.switches)
    assert fabricgen.check(plan, tmp_path / "build" / "configs", full=False) == []
    assert json.loads((tmp_path / "build" / "plan.json").read_text())  # the same outputs as `fabricgen render`
    assert fabricgen.build_plan(EXAMPLE).switches.keys() == plan.switches.keys()  # a path works too


def test_full_check_as_a_library(sonic_yang_models: Path, tmp_path: Path) -> None:
    if shutil.which("vtysh") is None:
        pytest.skip("needs FRR's vtysh")
    plan = fabricgen.build_plan(EXAMPLE)
    fabricgen.render(plan, tmp_path / "build")
    configs = tmp_path / "build" / "configs"
    assert fabricgen.check(plan, configs, sonic_yang=sonic_yang_models, cache=False) == []
    leaf = next(h for h, sw in plan.switches.items() if sw.platform == "sonic")
    db_path = configs / leaf / "config_db.json"
    db = json.loads(db_path.read_text())
    db["PORT"][next(iter(db["PORT"]))]["mtu"] = "9300"
    db_path.write_text(json.dumps(db))
    found = fabricgen.check(plan, configs, sonic_yang=sonic_yang_models, cache=False)
    assert {f.rule for f in found} >= {"sonic-yang"} and all(f.device == leaf for f in found)


def test_render_refuses_what_the_checks_reject(tmp_path: Path, pfc_bug_on_a_leaf: str) -> None:
    plan = fabricgen.build_plan(EXAMPLE)
    out = tmp_path / "build"
    with pytest.raises(fabricgen.CheckFailed) as exc:
        fabricgen.render(plan, out)
    assert not out.exists()
    assert {(f.device, f.rule) for f in exc.value.findings} >= {(pfc_bug_on_a_leaf, "roce-pfc-both-ends")}
    fabricgen.render(plan, out, check=False)
    found = fabricgen.check(plan, out / "configs", full=False)
    assert found and {f.device for f in found} >= {pfc_bug_on_a_leaf}


def test_plan_errors_name_the_file_and_line(tmp_path: Path) -> None:
    path = write_intent(tmp_path, small_intent(topology__spines=40))
    intent = fabricgen.load_intent(path)
    with pytest.raises(fabricgen.FabricError) as exc:
        fabricgen.build_plan(intent)
    assert exc.value.source == str(path)
    assert any(p.line is not None for p in exc.value.problems), str(exc.value)


def test_the_api_names_survive_importing_their_modules() -> None:
    """fabricgen.render / fabricgen.check stay the functions after their packages are imported."""
    import fabricgen.check.run  # noqa: F401
    import fabricgen.render.build  # noqa: F401
    from fabricgen import api
    from fabricgen.render.build import render_all

    assert fabricgen.render is api.render and fabricgen.check is api.check
    assert callable(render_all) and sys.modules["fabricgen.render.build"].render_all is render_all
