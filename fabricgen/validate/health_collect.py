"""The live health run: two reads of every switch ``window`` seconds apart, the servers' NICs.

``validate`` calls :func:`first_read` before its other checks and :func:`finish` after them, so
the window overlaps the rest of the validation instead of adding to it.  Each switch's window is
the time between its own two reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nornir.core import Nornir
from nornir.core.task import Result, Task

from fabricgen.plan.model import Plan
from fabricgen.platforms.health import Snapshot, read_snapshot
from fabricgen.validate.checks import Outcome
from fabricgen.validate.health import SwitchHealth, judge_switch
from fabricgen.validate.nic import collect_nics, nccl_advice

if TYPE_CHECKING:
    from fabricgen.connect import ConnectionSettings


@dataclass
class HealthRun:
    """What ``validate --health`` found, beyond its outcomes: counters, findings, notes, advice."""

    window: float
    switches: list[SwitchHealth] = field(default_factory=list)
    snapshots: dict[str, Snapshot] = field(default_factory=dict)  # the second read of each switch
    notes: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)


def read_task(task: Task, plan: Plan) -> Result:
    """nornir task: one read of every health getter of one switch (a failure: a failed Result, not a logged
    traceback)."""
    from fabricgen.connect import failed_result

    try:
        device = task.host.get_connection("napalm", task.nornir.config)
        sw = plan.switches[task.host.name]
        return Result(host=task.host, result=read_snapshot(device, sw.hostname, sw.platform))
    except Exception as exc:  # noqa: BLE001
        return failed_result(task.host, exc)


def _read(nr: Nornir, plan: Plan) -> tuple[dict[str, Snapshot], list[Outcome]]:
    from fabricgen.connect import describe

    results = nr.run(task=read_task, plan=plan, on_failed=True)
    snaps: dict[str, Snapshot] = {}
    errors: list[Outcome] = []
    for host in sorted(results):
        multi = results[host]
        if multi.failed:
            exc = multi[0].exception
            errors.append(Outcome(host, "counters", "health getters", False, "counters readable",
                                  describe(exc) if exc is not None else str(multi[0].result)))
        else:
            snaps[host] = multi[0].result
    return snaps, errors


@dataclass
class Pending:
    """The first read, waiting for the second."""

    started: float  # when the last switch's first read returned
    window: float
    first: dict[str, Snapshot]
    errors: list[Outcome]


def first_read(nr: Nornir, plan: Plan, window: float) -> Pending:
    first, errors = _read(nr, plan)
    # the window runs from the last first read: every switch then gets at least `window` seconds
    started = max((snap.taken for snap in first.values()), default=time.monotonic())
    return Pending(started, window, first, errors)


def finish(pending: Pending, nr: Nornir, plan: Plan, creds: ConnectionSettings, workers: int,
           servers: bool) -> tuple[list[Outcome], HealthRun]:
    """Wait out the window, read again, judge; then the servers' NICs (``servers``)."""
    qos = plan.qos
    assert qos is not None
    outcomes = list(pending.errors)
    run = HealthRun(pending.window)
    if servers and plan.servers:
        outcomes += collect_nics(plan, creds, workers)
        run.advice.append(nccl_advice(qos))
    rest = pending.window - (time.monotonic() - pending.started)
    if rest > 0:
        time.sleep(rest)
    second, errors = _read(nr, plan)
    outcomes += [e for e in errors if e.device not in {o.device for o in pending.errors}]
    for host in sorted(second):
        before = pending.first.get(host)
        if before is None:
            continue
        result = judge_switch(plan.switches[host], qos, plan.health, before, second[host])
        run.switches.append(result)
        run.snapshots[host] = second[host]
        outcomes += result.outcomes()
    by_note: dict[str, list[str]] = {}
    for result in run.switches:
        for note in result.notes:
            by_note.setdefault(note, []).append(result.device)
    run.notes = [f"{note}: {', '.join(devices)}" for note, devices in sorted(by_note.items())]
    return outcomes, run
