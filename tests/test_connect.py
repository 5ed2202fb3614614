"""deploy and validate talk only to the fabric the user means (issue 23, the lab walk-through)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.connect import lab_state
from fabricgen.errors import FabricError
from fabricgen.lab.engine import LabState, NodeState
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from tests.conftest import EXAMPLE, ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"


def saved_lab(plan: Plan, workdir: Path, drop: str = "") -> LabState:
    """A lab state file as `lab up` of ``plan`` writes it (no processes: only what deploy reads)."""
    nodes = {sw.hostname: NodeState(sw.hostname, "switch", f"lab-{sw.hostname}", sw.mgmt_ip,
                                    str(workdir / sw.hostname), "veth0")
             for sw in plan.switches.values() if sw.hostname != drop}
    state = LabState(plan.settings.name, str(workdir), "br-lab", "198.19.255.254/24", str(workdir / "id"), nodes, [],
                     phase="up")
    state.save()
    return state


def test_a_lab_dir_of_another_fabric_is_refused_not_ignored(tmp_path: Path) -> None:
    """`lab up` (the lab intent), then `deploy --lab-dir` without -i used to SSH to the 256-GPU example's 16
    management addresses; now it is refused before any connection, naming both fabrics."""
    lab, other = load_plan(LAB), load_plan(EXAMPLE)
    saved_lab(lab, tmp_path)
    assert lab_state(lab, tmp_path) is not None
    with pytest.raises(FabricError, match=rf"the lab in {tmp_path} runs fabric 'lab', and this intent is fabric "
                                          rf"'{other.settings.name}'.*fix: -i the intent"):
        lab_state(other, tmp_path)
    assert lab_state(other, tmp_path / "elsewhere") is None  # no lab there: a real fabric's deploy goes on


def test_a_switch_the_lab_does_not_have_is_refused(tmp_path: Path) -> None:
    lab = load_plan(LAB)
    saved_lab(lab, tmp_path, drop="lab-leaf04")
    sw = lab.switches["lab-leaf04"]
    with pytest.raises(FabricError, match=rf"switches lab-leaf04 {sw.mgmt_ip} are no nodes of the lab"):
        lab_state(lab, tmp_path)


def test_the_header_says_whose_lab_runs_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lab up` (the lab intent by default), then `deploy` without -i (the example): the first line says the
    deploy goes to the example's own addresses and that the lab here is another fabric's."""
    from fabricgen.connect import target
    from fabricgen.lab.engine import DEFAULT_LAB_DIR

    monkeypatch.chdir(tmp_path)
    lab, other = load_plan(LAB), load_plan(EXAMPLE)
    (tmp_path / DEFAULT_LAB_DIR).mkdir(parents=True)
    saved_lab(lab, tmp_path / DEFAULT_LAB_DIR)
    assert target(other) == (f"fabric '{other.settings.name}': {len(other.switches)} switches, {len(other.servers)} "
                             f"servers, at their management addresses; the lab in {DEFAULT_LAB_DIR} runs fabric "
                             f"'lab', not this one (-i the intent `lab up` used to deploy to it)")
    assert target(lab, DEFAULT_LAB_DIR).endswith(f"at the lab in {tmp_path / DEFAULT_LAB_DIR}")
