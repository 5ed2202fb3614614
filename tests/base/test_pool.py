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
