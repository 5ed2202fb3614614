"""Before any commit: the fabric lock, the journal (started or resumed) and every device's own lock.

All or nothing (issue 23 D2): a device held by another deploy refuses the whole run and every lock
taken is given back; ``--break-lock`` takes over a lock whose holder no longer runs.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict
from typing import Any

from nornir.core.filter import F
from nornir.core.task import Result, Task

from fabricgen.base.ssh import DeviceLocked
from fabricgen.connect import describe
from fabricgen.deploy import phases
from fabricgen.deploy.context import RunContext
from fabricgen.deploy.state import (
    DONE_PHASES,
    LOCKED,
    DeployRefused,
    FabricLock,
    Journal,
    Owner,
    fabric_lock,
    journal_path,
    new_run_id,
)


def begin(ctx: RunContext, hosts: list[str]) -> tuple[FabricLock, list[str]]:
    """Take the fabric lock and start (or resume) the journal; returns the hosts to run."""
    plan, build, opts = ctx.plan, ctx.build, ctx.opts
    fabric = plan.settings.name
    path = journal_path(plan)
    existing = Journal.load(path)
    if opts.resume and (existing is None or not existing.unfinished):
        raise DeployRefused(f"nothing to resume: {path} records no unfinished deploy "
                            "(fix: run `fabricgen deploy` without --resume)")

    def unfinished_refusal(journal: Journal) -> DeployRefused:
        owner = journal.owner()
        return DeployRefused(
            f"the last deploy of {fabric!r} (run {journal.run}"
            f"{', by ' + owner.describe() if owner else ''}) did not finish: {journal.summary()}; journal "
            f"{path} (fix: `fabricgen deploy --resume` to continue it, or `fabricgen deploy --discard` to "
            f"start over once you have checked those devices)")

    half_done = existing is not None and existing.unfinished and not (opts.resume or opts.discard)
    if half_done and existing is not None:
        owner = existing.owner()
        if owner is None or owner.alive() is not True:  # its deploy is gone: the journal is the news
            raise unfinished_refusal(existing)
    run = new_run_id()
    me = Owner.me(run)
    lock = fabric_lock(plan)
    # --resume / --discard take over the lock their dead run left behind
    own_run = existing.run if existing is not None and (opts.resume or opts.discard) else None
    broken = lock.acquire(me, opts.break_lock, own_run)
    try:
        if half_done and existing is not None:
            raise unfinished_refusal(existing)
        resumed = existing if opts.resume else None
        if resumed is not None:
            if resumed.data.get("manifest_sha256") != build.manifest_sha256:
                raise DeployRefused(
                    f"cannot resume run {resumed.run}: it pushed another build (manifest sha256 "
                    f"{str(resumed.data.get('manifest_sha256'))[:12]}, now {build.manifest_sha256[:12]}) (fix: "
                    f"re-render the build it pushed, or `fabricgen deploy --discard` to start over)")
            hosts = sorted(resumed.devices)
        takeover = {r for r in (own_run, broken.run if broken else None) if r}
        if resumed is not None and resumed.data.get("resumed_from"):
            takeover.add(str(resumed.data["resumed_from"]))
        ctx.run, ctx.owner, ctx.takeover, ctx.who = run, me.describe(), frozenset(takeover), asdict(me)
        todo = [h for h in hosts if resumed is None or resumed.phase(h) not in DONE_PHASES]
        broken_devices = lock_devices(ctx, todo)  # all or nothing: raises DeployRefused, every lock released
        ctx.journal = Journal.start(path, me, str(build.root), build.manifest_sha256, hosts, resumed)
        if broken is not None or broken_devices:
            ctx.journal.record_broken_locks(broken, broken_devices)
        for host in sorted(ctx.locked):
            ctx.phase(host, LOCKED)
        return lock, [h for h in hosts if ctx.journal.phase(h) not in DONE_PHASES]
    except BaseException:
        unlock_devices(ctx)
        lock.release()
        raise


def lock_task(task: Task, ctx: RunContext, takeover: frozenset[str] | None = None) -> Result:
    """nornir task: take the device's own deploy lock; the result is None, or the exception that stopped it."""
    try:
        device = task.host.get_connection("napalm", task.nornir.config)
        phases.lock(device, ctx.run, ctx.owner, ctx.takeover if takeover is None else takeover, ctx.who)
    except Exception as exc:  # noqa: BLE001 - held, or unreachable: the caller decides
        return Result(host=task.host, result=exc)
    return Result(host=task.host, result=None)


def lock_devices(ctx: RunContext, hosts: list[str]) -> dict[str, dict[str, Any]]:
    """Take every selected device's own lock before any commit, all or nothing (issue 23 D2).

    A device held by another deploy refuses the whole run (every lock taken is released again),
    unless ``--break-lock`` and its holder is dead or cannot be told (another host, no owner
    recorded): then it is taken over and returned (device -> the holder's lock) for the journal.
    An unreachable device is left to fail on its own (``ctx.unreachable``), as failures stay local.
    """
    assert ctx.nornir is not None
    if not hosts:
        return {}
    nr = ctx.nornir.filter(F(name__any=hosts))
    results = nr.run(task=lock_task, ctx=ctx, on_failed=True)
    held: dict[str, DeviceLocked] = {}
    for host in hosts:
        exc = results[host][0].result if host in results else None
        if exc is None:
            ctx.locked.add(host)
        elif isinstance(exc, DeviceLocked):
            held[host] = exc
        else:
            ctx.unreachable[host] = describe(exc)
    broken: dict[str, dict[str, Any]] = {}
    refusals = []
    for host, exc in sorted(held.items()):
        holder = Owner.from_json(exc.holder.get("who"))
        alive = holder.alive() if holder is not None else None
        if not ctx.opts.break_lock:
            refusals.append(f"{host}: {exc}")
            continue
        if alive is True:
            assert holder is not None
            refusals.append(f"{host}: {exc} (--break-lock: its owner {holder.describe()} still runs)")
            continue
        again = nr.filter(F(name=host)).run(task=lock_task, ctx=ctx, on_failed=True,
                                            takeover=ctx.takeover | {str(exc.holder.get("run"))})
        if again[host][0].result is None:
            ctx.locked.add(host)
            broken[host] = exc.holder
            ctx.broken[host] = (f"took over its device lock from {exc.holder.get('owner')} (run "
                                f"{exc.holder.get('run')}), which no longer runs (--break-lock; in the journal)")
        else:
            refusals.append(f"{host}: {describe(again[host][0].result)}")
    if refusals:
        unlock_devices(ctx)
        raise DeployRefused(f"{len(refusals)} device(s) are locked by another deploy; no device was locked or "
                            f"changed:\n" + "\n".join(refusals))
    return broken


def unlock_task(task: Task, ctx: RunContext) -> Result:
    with contextlib.suppress(Exception):  # gone: its lock names this run, which --resume takes over
        phases.unlock(task.host.get_connection("napalm", task.nornir.config), ctx.run)
    return Result(host=task.host)


def unlock_devices(ctx: RunContext) -> None:
    """Release every device lock this run took (those whose device answers)."""
    if ctx.nornir is None or not ctx.locked:
        return
    ctx.nornir.filter(F(name__any=sorted(ctx.locked))).run(task=unlock_task, ctx=ctx, on_failed=True)
    ctx.locked.clear()
