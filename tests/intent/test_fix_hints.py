"""Every refusal says what to do: `(fix: …)` on the command-line errors outside the intent model
(issue 7 §4; the intent's own errors carry one by construction, `errors.Problem.hint`).

Each case runs the command as an operator would and asserts exit 2, the problem and its fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.deploy.state import FabricLock, Owner
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "(fix: " in err, err
    return err


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hints") / "build"
    assert main(["render", "-i", str(LAB), "-o", str(out)]) == 0
    return out


def test_check_without_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(["check", "-i", str(LAB), "--configs", str(tmp_path / "nope")], capsys)
    assert "no such directory (fix: run `fabricgen render` first" in err


def test_deploy_limit_naming_unknown_hosts(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(["deploy", "-i", str(LAB), "-b", str(build), "--dry-run", "--limit", "lab-leaf01,nope9"], capsys)
    assert "--limit names hosts that are not in the plan: nope9 (fix: name switches of this intent" in err


def test_deploy_resume_with_nothing_to_resume(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(["deploy", "-i", str(LAB), "-b", str(build), "--resume"], capsys)
    assert "nothing to resume" in err and "(fix: run `fabricgen deploy` without --resume)" in err


def test_deploy_while_another_runs(tmp_path: Path) -> None:
    """The fabric lock held by a live process (this one): the second deploy is told to wait."""
    from fabricgen.deploy.state import DeployRefused, new_run_id

    first = FabricLock(tmp_path, "lab")
    assert first.acquire(Owner.me(new_run_id())) is None
    try:
        with pytest.raises(DeployRefused, match=r"is being deployed by .*\(fix: wait for that deploy to finish"):
            FabricLock(tmp_path, "lab").acquire(Owner.me(new_run_id()))
    finally:
        first.release()


def test_render_refused_by_its_checks_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      pfc_bug_on_a_leaf: str) -> None:
    from tests.conftest import EXAMPLE

    assert main(["render", "-i", str(EXAMPLE), "-o", str(tmp_path / "out")]) == 1
    assert "nothing was written (fix: correct the intent or the templates" in capsys.readouterr().err
