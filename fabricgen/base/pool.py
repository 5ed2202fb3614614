"""The one process pool render and check use: fork workers that read the parent's state copy-on-write.

A 32K-GPU plan is ~600 MB of small objects; pickling it to every worker would cost more than
the work.  So the caller hands its state (the plan, a validator, ...) to `forked_pool`, which
publishes it as `shared()` before forking: workers read it from their copy of the parent's
memory and only their results come back pickled.  The parent's objects are frozen out of the
garbage collector while the pool lives (a child's collection would otherwise touch, and so
copy, every page of the parent's heap).  One pool at a time per process.
"""

from __future__ import annotations

import gc
import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import Any

_SHARED: Any = None


def shared() -> Any:
    """The state of the pool this worker belongs to (what the parent passed to `forked_pool`)."""
    if _SHARED is None:
        raise RuntimeError("fabricgen.base.pool.shared() outside a forked_pool")
    return _SHARED


@contextmanager
def forked_pool(workers: int, state: Any) -> Iterator[Pool]:
    """A fork-context pool of `workers` processes sharing `state`; terminated and joined on exit."""
    global _SHARED
    if _SHARED is not None:
        raise RuntimeError("fabricgen.base.pool.forked_pool is already open in this process")
    _SHARED = state
    gc.freeze()
    try:
        pool = multiprocessing.get_context("fork").Pool(workers)
        try:
            yield pool
        finally:
            pool.terminate()
            pool.join()
    finally:
        gc.unfreeze()
        _SHARED = None


@contextmanager
def collector_off() -> Iterator[None]:
    """The cyclic garbage collector paused while a stage allocates many small acyclic objects.

    Each generation-2 pass walks every object alive, and a 32K-GPU plan is millions of them: building
    the plan or its cables would otherwise spend a third of its time in collections that free nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def serial(state: Any) -> Iterator[None]:
    """The same `shared()` state for work done in this process (small jobs, no pool)."""
    global _SHARED
    previous, _SHARED = _SHARED, state
    try:
        yield
    finally:
        _SHARED = previous
