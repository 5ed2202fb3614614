"""Live-lab fixtures: skip cleanly where the lab cannot run (not root, FRR/lldpd/sshd missing)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.lab import LabState, lab_down, lab_up, prune_stale_labs
from fabricgen.lab.daemons import missing_tools
from fabricgen.lab.from_plan import lab_topology
from fabricgen.plan.model import Plan
from tests.conftest import STATE_ENV


@pytest.fixture(autouse=True)
def own_deploy_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each lab test's deploys get their own fabric locks and journals (keyed by fabric, not by build
    directory): an unfinished run one test leaves is never another test's business."""
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))


def lab_skip_reason() -> str | None:
    """Why the live lab cannot run on this host, None if it can."""
    if os.geteuid() != 0:
        return "live lab needs root (network namespaces, mounts)"
    missing = missing_tools()
    if missing:
        return f"live lab needs {', '.join(missing)} (apt install frr lldpd openssh-server)"
    if shutil.which("ping") is None:
        return "live lab tests need ping (iputils-ping)"
    if not os.path.isdir("/proc/self/ns"):
        return "no namespace support in /proc"
    return None


@pytest.fixture(scope="session")
def lab_host() -> None:
    """Gate for every live-lab test: skip (not fail) when the host cannot run a lab."""
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)


@contextlib.contextmanager
def fabric_lab(plan: Plan, workdir: Path) -> Iterator[LabState]:
    """The plan's lab, up for the block, with deploy/validate pointed at its SSH key; always torn down.

    Leftovers of labs whose run was cut off (every process gone) are pruned first.
    """
    prune_stale_labs()
    state = lab_up(lab_topology(plan, workdir))
    saved = os.environ.get("FABRICGEN_SSH_KEY")
    os.environ["FABRICGEN_SSH_KEY"] = state.key_file
    try:
        yield state
    finally:
        if saved is None:
            os.environ.pop("FABRICGEN_SSH_KEY", None)
        else:
            os.environ["FABRICGEN_SSH_KEY"] = saved
        lab_down(workdir)


LAB_INTENT = Path(__file__).resolve().parents[2] / "inventory" / "lab" / "fabric.yaml"


@pytest.fixture(scope="module")
def lab_plan() -> Plan:
    """The plan of inventory/lab/fabric.yaml (2 spines, 4 leaves, 8 servers)."""
    from fabricgen.plan.build import load_plan

    return load_plan(LAB_INTENT)
