"""The one process pool render and check use: fork workers that read the parent's state copy-on-write.

A 32K-GPU plan is ~600 MB of small objects; pickling it to every worker would cost more than
the work.  So the caller hands its state (the plan, a validator, ...) to `forked_pool`, which
publishes it as `shared()` before forking: workers read it from their copy of the parent's
memory and only their results come back pickled.  The parent's objects are frozen out of the
garbage collector while the pool lives (a child's collection would otherwise touch, and so
copy, every page of the parent's heap).  One pool at a time per process.

The collector is this module's concern too: the stages that build millions of acyclic objects pause it
(`collector_off`), and a process that ends with its command (`one_shot`) keeps what they built out of it for good.
"""

from __future__ import annotations

import gc
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

_SHARED: Any = None
_ONE_SHOT = False
T = TypeVar("T")


def one_shot() -> None:
    """Declare this process one command's (the console script): what a paused stage built stays out of the collector.

    A 128K-GPU plan is millions of objects alive until the process exits.  Turned back on after building it, the
    collector walks all of them and frees none: 0.8 s right after the plan, 1.6 s more in the interpreter's last
    pass at exit.  So `collector_off` freezes (gc.freeze) what is alive when its stage ends, and `forked_pool`
    leaves it frozen.  Never in a process that goes on (the tests, the API): a frozen reference cycle is never
    freed.
    """
    global _ONE_SHOT
    _ONE_SHOT = True


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
    import multiprocessing

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
        if not _ONE_SHOT:
            gc.unfreeze()
        _SHARED = None


@contextmanager
def collector_off() -> Iterator[None]:
    """The cyclic garbage collector paused while a stage allocates many small acyclic objects.

    Each generation-2 pass walks every object alive, and a 32K-GPU plan is millions of them: building
    the plan or its cables would otherwise spend a third of its time in collections that free nothing.
    In a `one_shot` process, what is alive when the stage ends is frozen before the collector is back.
    """
    with collector_restored():
        gc.disable()
        try:
            yield
        finally:
            if _ONE_SHOT:
                gc.freeze()


@contextmanager
def collector_restored() -> Iterator[None]:
    """The collector's state as it was, restored on exit whatever the body turned off.

    Around a call that pauses the collector and builds millions of objects in its locals (the check's facts), it
    turns collection back on only once the call returned and freed them.  Turned on while they live, its first
    pass walks every one of them (~1 s at 128K GPUs) and frees nothing.
    """
    enabled = gc.isenabled()
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


class Forked(Generic[T]):
    """`fn()` running in a forked child: it reads this process's memory as it was at the fork (copy-on-write), so
    state built after a pool was forked (the check's facts) needs no pickling; only the result comes back."""

    def __init__(self, fn: Callable[[], T]) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_run_forked, args=(fn, child), daemon=True)
        self._proc.start()
        child.close()

    def get(self) -> T:
        """The result, or the child's exception raised here (as a RuntimeError with its traceback)."""
        try:
            ok, value = self._conn.recv()
        except EOFError:
            self._proc.join()
            raise RuntimeError(f"a forked process ended without a result (exit {self._proc.exitcode})") from None
        finally:
            self._conn.close()
        self._proc.join()
        if not ok:
            raise RuntimeError(f"in a forked process:\n{value}")
        result: T = value
        return result

    def close(self) -> None:
        """Stop the child if its result was never asked for (an error elsewhere)."""
        if self._proc.is_alive():
            self._proc.terminate()
        self._proc.join()
        self._conn.close()


def _run_forked(fn: Callable[[], Any], conn: Any) -> None:
    gc.freeze()  # the parent's heap: a collection here would touch, and so copy, all of it
    try:
        conn.send((True, fn()))
    except BaseException:  # noqa: BLE001 - every failure goes back to the parent, which raises it
        conn.send((False, traceback.format_exc()))
    finally:
        conn.close()
