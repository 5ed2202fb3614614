"""The one process pool of render and check: workers read the parent's state, nothing else is shared."""

from __future__ import annotations

import gc
import os

import pytest

from fabricgen.base import pool


def _worker_view(i: int) -> tuple[int, int, str]:
    state = pool.shared()
    return os.getpid(), i * state["factor"], state["name"]


def test_workers_read_the_parents_state_copy_on_write() -> None:
    state = {"factor": 7, "name": "plan"}
    with pool.forked_pool(2, state) as procs:
        results = procs.map(_worker_view, range(6), chunksize=1)
        assert gc.get_freeze_count() > 0  # the parent's objects stay out of the children's collections
    assert [r[1] for r in results] == [0, 7, 14, 21, 28, 35] and {r[2] for r in results} == {"plan"}
    assert os.getpid() not in {r[0] for r in results}
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError, match="outside a forked_pool"):
        pool.shared()


def test_serial_work_sees_the_same_state_and_pools_do_not_nest() -> None:
    with pool.serial({"factor": 2, "name": "small"}):
        assert _worker_view(3)[1:] == (6, "small")
    with (pool.forked_pool(1, {"factor": 1, "name": "x"}), pytest.raises(RuntimeError, match="already open"),
          pool.forked_pool(1, {})):
        pass


def test_a_paused_stage_leaves_the_collector_as_it_was() -> None:
    """In a process that goes on (this one), nothing is frozen for good: a frozen reference cycle is never freed."""
    with pool.collector_off():
        assert not gc.isenabled()
        kept = [[i] for i in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == 0 and len(kept) == 1000
    with pool.collector_restored():
        gc.disable()
    assert gc.isenabled()


_ONE_SHOT = """
import gc, json, sys
from fabricgen.base import pool
if sys.argv[1] == "one-shot":
    pool.one_shot()
with pool.collector_off():
    kept = [[i] for i in range(50000)]
after_stage = gc.get_freeze_count()
with pool.forked_pool(1, kept) as procs:
    procs.apply(len, ("x",))
print(json.dumps([after_stage, gc.get_freeze_count(), gc.isenabled()]))
"""


@pytest.mark.parametrize("mode", ["one-shot", "goes-on"])
def test_one_shot_keeps_what_a_paused_stage_built_out_of_the_collector(mode: str) -> None:
    """The console script's process: what a stage built with the collector paused is frozen when the stage ends, and
    stays frozen after a pool; any other process gets its collector back as it was."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _ONE_SHOT, mode], capture_output=True, text=True, check=True)
    after_stage, after_pool, enabled = json.loads(out.stdout)
    assert enabled
    if mode == "one-shot":
        assert after_stage >= 50000 and after_pool >= after_stage
    else:
        assert after_stage == 0 and after_pool == 0


def test_the_console_script_runs_its_command_one_shot() -> None:
    """`fabricgen` (the installed script) is `cli.console`, which declares its process one-shot; `cli.main`, which
    the tests and embedders call in their own process, does not."""
    import json
    import subprocess
    import sys
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "fabricgen"]
    assert script.value == "fabricgen.cli:console"
    code = ("import json, sys\nfrom fabricgen import cli\nfrom fabricgen.base import pool\n"
            "sys.argv = ['fabricgen', '--help']\n"
            "try:\n    cli.{fn}()\nexcept SystemExit:\n    pass\nprint(json.dumps(pool._ONE_SHOT))")
    for fn, expected in (("console", True), ("main", False)):
        out = subprocess.run([sys.executable, "-c", code.format(fn=fn)], capture_output=True, text=True, check=True)
        assert json.loads(out.stdout.splitlines()[-1]) is expected
