"""The cabling computed in a child forked while the plan is built (`CablingAhead`) writes what the render would."""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from fabricgen.errors import FabricError
from fabricgen.plan.build import load_plan
from fabricgen.render import manifest
from fabricgen.render.build import CablingAhead, render_all
from tests.conftest import EXAMPLE, ROOT
from tests.golden import DIGESTS, GOLDEN


def _digest(out: Path) -> str:
    files = json.loads((out / manifest.MANIFEST).read_text(encoding="utf-8"))["files"]
    return hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()


@pytest.mark.parametrize("intent", [EXAMPLE, GOLDEN / "mid-4k.yaml"], ids=lambda p: p.name)
def test_cabling_from_the_forked_child_renders_the_recorded_output(intent: Path, tmp_path: Path) -> None:
    """Two workers and the cabling started at topology time: every file as `tests/golden/digests.json` records it
    (rendered there in one process, with the cabling computed in the render)."""
    started: list[bool] = []
    with CablingAhead(workers=2) as ahead, contextlib.chdir(ROOT):
        def start(plan):  # type: ignore[no-untyped-def]
            started.append(not plan.links[0].a_ip)  # called before any address is given
            ahead.start(plan)
            started.append(ahead.started)

        plan = load_plan(intent.relative_to(ROOT), topology_done=start)
        render_all(plan, tmp_path / "out", workers=2, ahead=ahead)
        assert not ahead.started  # its result was taken
    assert started == [True, True]
    assert _digest(tmp_path / "out") == json.loads(DIGESTS.read_text())[intent.relative_to(ROOT).as_posix()]


def test_a_plan_that_fails_after_its_topology_leaves_no_child() -> None:
    """The child starts before the addresses are given: a plan that fails after that must not leave it running."""
    assert multiprocessing.active_children() == []
    seen: list[int] = []

    def start_then_fail(plan):  # type: ignore[no-untyped-def]
        ahead.start(plan)
        seen.append(len(multiprocessing.active_children()))
        raise FabricError.single(str(EXAMPLE), "addressing", "a later step failed", "none: a test")

    with pytest.raises(FabricError, match="a later step failed"), CablingAhead(workers=2) as ahead:
        load_plan(EXAMPLE, topology_done=start_then_fail)
    assert seen == [1]
    assert multiprocessing.active_children() == []  # stopped and joined
