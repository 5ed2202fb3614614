"""One device through a deploy: diff, refuse or drain, commit, check, roll back; never raises.

The nornir task ``deploy_device`` runs this per device in the run's threads (see ``run``); every
step is journaled through ``RunContext.phase`` so an interrupted run can be resumed.  The steps
themselves (napalm calls) are ``phases``; the graceful-shutdown transform is ``drain``.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from napalm.base.exceptions import CommandTimeoutException, ConnectionClosedException
from nornir.core.task import Result, Task

from fabricgen.base.ssh import ConfigUndetermined
from fabricgen.catalog.registry import platform
from fabricgen.connect import describe
from fabricgen.deploy import drain, phases
from fabricgen.deploy import report as R
from fabricgen.deploy.context import RunContext
from fabricgen.deploy.impact import needs_session_reset
from fabricgen.deploy.state import (
    CHECKED,
    COMMITTED,
    COMMITTING,
    DIFFED,
    DRAINED,
    DRAINING,
    FAILED,
    INTERRUPTED,
    RESET_BGP,
    ROLLED_BACK,
    ROLLING_BACK,
    UNCHANGED,
    UNDETERMINED,
    UNDRAINING,
)
from fabricgen.platforms.change import HITLESS, exceeds
from fabricgen.render.manifest import candidate_config, setup_script

if TYPE_CHECKING:
    from napalm.base import NetworkDriver


def deploy_device(task: Task, ctx: RunContext) -> Result:
    """nornir task: one device through the phases; never raises (the outcome says what happened)."""
    sw = ctx.plan.switches[task.host.name]
    try:
        outcome = _deploy_one(task, ctx)
    except BaseException as exc:  # noqa: BLE001 - one device's surprise must not stop the others
        outcome = R.DeviceOutcome(sw.hostname, sw.mgmt_ip, R.FAILED, reason=describe(exc),
                                  traceback="".join(traceback.format_exception(exc)))
        ctx.phase(sw.hostname, FAILED, outcome.reason)
    if sw.hostname in ctx.broken:
        outcome.notes.insert(0, ctx.broken[sw.hostname])
    outcome.not_deployed = list(ctx.skipped.get(sw.hostname, []))
    ctx.tick(outcome)
    return Result(host=task.host, result=outcome, changed=outcome.status == R.CHANGED)


def _deploy_one(task: Task, ctx: RunContext) -> R.DeviceOutcome:
    from fabricgen.base.ssh import CommandInterrupted

    sw = ctx.plan.switches[task.host.name]
    host, dry = sw.hostname, ctx.opts.dry_run

    def outcome(status: str, reason: str = "", exc: BaseException | None = None, **kw: Any) -> R.DeviceOutcome:
        tb = "".join(traceback.format_exception(exc)) if exc is not None else ""
        return R.DeviceOutcome(host, sw.mgmt_ip, status, reason=reason, traceback=tb, **kw)

    if ctx.cancel.is_set():
        ctx.phase(host, INTERRUPTED, "not started")
        why = "the journal could not be written" if ctx.journal_error else "the deploy was interrupted first"
        return outcome(R.INTERRUPTED, f"not started: {why}")
    if host in ctx.unreachable:
        return _unreachable(ctx, host, outcome, ctx.unreachable[host])
    candidate = candidate_config(ctx.build, sw)
    try:
        device = task.host.get_connection("napalm", task.nornir.config)
    except Exception as exc:  # noqa: BLE001 - unreachable is a per-device outcome
        return _unreachable(ctx, host, outcome, describe(exc), exc)
    if hasattr(device, "cancel"):
        device.cancel = ctx.cancel
    try:
        gaps = phases.live_mtu_gaps(device, sw)
        if gaps and ctx.opts.accept_undeployable:
            with ctx.lock:
                ctx.skipped.setdefault(host, []).append(
                    f"qos.mtu: platform {sw.platform} cannot set an interface MTU from its config; these live ports "
                    f"keep theirs:\n" + "\n".join(gaps))
            gaps = []
        if gaps:
            reason = (f"undeployable: qos.mtu: platform {sw.platform} cannot set an interface MTU from its config, "
                      f"and the live ports differ from the plan:\n" + "\n".join(gaps) +
                      "\n(fix: set the MTU on the ports themselves - the lab: `fabricgen lab down` and `lab up` - "
                      "or --accept-undeployable to deploy the rest)")
            if not dry:
                ctx.phase(host, FAILED, reason)
                return outcome(R.FAILED, reason)
        d = phases.diff(device, candidate)
        labels = (phases.impact(sw, d, ctx.opts.day0 and sw.platform == "sonic", ctx.plan.settings.sonic_release)
                  if d.text else None)
        if dry:
            if gaps:
                return outcome(R.FAILED, reason, diff=d.text, changes=d.changes, impact=labels)
            phases.discard(device)
            first = ([f"the commit runs {platform(sw.platform).lab_script} on the switch first (creates only what is "
                      "missing: tenant namespaces, ports moved in); a tenant it created that the build no longer "
                      "has is removed inside the commit, after FRR's reload without it and before the ports get "
                      "their default-VRF config"] if d.text and setup_script(ctx.build, sw) else [])
            return outcome(R.CHANGED if d.text else R.UNCHANGED, diff=d.text, changes=d.changes, impact=labels,
                           notes=first)
        ctx.phase(host, DIFFED)
        limit = ctx.opts.max_impact
        if labels is not None and limit is not None and exceeds(labels.worst, limit):
            phases.discard(device)
            worst_hunk = labels.worst
            assert worst_hunk is not None
            why = f"its changes are {worst_hunk.label} ({worst_hunk.why}), above --max-impact {limit}; nothing changed"
            ctx.phase(host, FAILED, why)
            return outcome(R.REFUSED, why, diff=d.text, changes=d.changes, impact=labels)
        left = ctx.journal.unsettled(host) if ctx.journal is not None else None
        if not d.text and left is not None:  # an interrupted run's commit went in: finish what it needs
            phases.discard(device)
            try:
                settled = _settle(device, sw, ctx, *left)
            except Exception as exc:  # noqa: BLE001 - its config is the build's: nothing to roll back to
                reason = (f"its config is the build's (left {left[0]} by the interrupted run), but "
                          f"{exc if isinstance(exc, phases.CheckFailed) else describe(exc)}")
                status = UNDETERMINED if undetermined(exc) else FAILED
                ctx.phase(host, status, reason)
                return outcome(R.UNDETERMINED if status == UNDETERMINED else R.FAILED, reason, exc)
            ctx.phase(host, CHECKED)
            return outcome(R.CHANGED, notes=settled)
        if not d.text:
            phases.discard(device)
            repaired = phases.repair(device)
            ctx.phase(host, UNCHANGED)
            return outcome(R.UNCHANGED, notes=repaired)
        if ctx.cancel.is_set():
            phases.discard(device)
            ctx.phase(host, INTERRUPTED, "stopped before its commit")
            return outcome(R.INTERRUPTED, "stopped before its commit: nothing changed", diff=d.text)
        drain_now = ctx.opts.drain and labels is not None and exceeds(labels.worst, HITLESS)
        undrain_to = ""
        notes: list[str] = []
        if drain_now:
            phases.discard(device)
            undrain_to, took = _drain(device, sw, ctx)
            notes.append(f"drained (graceful shutdown): neighbors moved their traffic in {took:.1f}s")
            d = phases.diff(device, drain.drained(sw.platform, candidate))
        before = phases.sessions(device)
        ctx.phase(host, COMMITTING, actions=[RESET_BGP] if labels is not None and needs_session_reset(labels) else [])
        if ctx.journal_error:  # nothing is committed that the journal could not record
            phases.discard(device)
            return outcome(R.INTERRUPTED, f"not committed: {ctx.journal_error}", diff=d.text)
        try:
            notes += phases.setup(device, setup_script(ctx.build, sw))
            phases.commit(device)
        except Exception as exc:  # noqa: BLE001 - the driver restored the previous config (or says it could not)
            if undetermined(exc):  # silent mid-commit, or not undone: the journal keeps it for --resume
                reason = f"commit did not complete: {describe(exc)}\n{LOST}"
                ctx.phase(host, UNDETERMINED, reason)
                return outcome(R.UNDETERMINED, reason, exc, diff=d.text)
            ctx.phase(host, FAILED, describe(exc))
            reason = f"commit failed: {describe(exc)}" + _undrain_after_failure(device, sw, ctx, undrain_to)
            return outcome(R.FAILED, reason, exc, diff=d.text)
        ctx.phase(host, COMMITTED)
        try:
            notes += phases.repair(device)
            if labels is not None and needs_session_reset(labels):
                phases.reset_sessions(device)
                notes.append("BGP sessions reset so the new keepalive/hold time apply")
            phases.check(device, before, ctx.expected.get(host, {}), ctx.opts.check_timeout, ctx.cancel,
                         ctx.opts.grace)
            if drain_now:
                ctx.phase(host, UNDRAINING)
                phases.diff(device, candidate)
                phases.commit(device)
                notes.append("undrained")
                phases.check(device, before, ctx.expected.get(host, {}), ctx.opts.check_timeout, ctx.cancel,
                             ctx.opts.grace)
        except Exception as exc:  # noqa: BLE001 - CheckFailed, or the device went away: roll back either way
            reason = str(exc) if isinstance(exc, phases.CheckFailed) else describe(exc)
            ctx.phase(host, ROLLING_BACK, reason)
            try:
                phases.rollback(device)
            except Exception as rb:  # noqa: BLE001
                reason = f"{reason}\nAND the rollback failed: {describe(rb)}\n{LOST}"
                ctx.phase(host, UNDETERMINED, reason)
                return outcome(R.UNDETERMINED, reason, rb, diff=d.text)
            ctx.phase(host, ROLLED_BACK, reason)
            why = "interrupted during its check" if ctx.cancel.is_set() else "its post-commit check failed"
            reason = f"{why}; rolled back to the previous config:\n{reason}"
            return outcome(R.ROLLED_BACK, reason + _undrain_after_failure(device, sw, ctx, undrain_to), exc,
                           diff=d.text)
        ctx.phase(host, CHECKED)
        return outcome(R.CHANGED, diff=d.text, changes=d.changes, notes=notes, impact=labels)
    except CommandInterrupted as exc:
        ctx.phase(host, INTERRUPTED, str(exc))
        return outcome(R.INTERRUPTED, f"stopped before its commit: nothing changed ({exc})")
    except Exception as exc:  # noqa: BLE001
        ctx.phase(host, FAILED, describe(exc))
        return outcome(R.FAILED, describe(exc), exc)


LOST = ("its config is undetermined (the old one, the new one, or saved and running apart); `fabricgen deploy "
        "--resume` retries it once it answers: it takes over the device lock this run left and re-diffs saved and "
        "running against the build")


def undetermined(exc: BaseException) -> bool:
    """Whether a failed commit or rollback left the device's config unknown: the driver says it could not
    undo the change, or the device went silent (connection lost, a command timed out) in the middle."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, (ConfigUndetermined, ConnectionClosedException, CommandTimeoutException)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _unreachable(ctx: RunContext, host: str, outcome: Callable[..., R.DeviceOutcome], why: str,
                 exc: BaseException | None = None) -> R.DeviceOutcome:
    """A device this run cannot reach: failed, unless a resumed run left it mid-change (then it stays
    undetermined, and the journal unfinished, until a run reaches it)."""
    left = ctx.journal.unsettled(host) if ctx.journal is not None else None
    if left is not None:
        reason = f"still unreachable ({why}); the interrupted run left it {left[0]}\n{LOST}"
        ctx.phase(host, UNDETERMINED, reason)
        return outcome(R.UNDETERMINED, reason, exc)
    ctx.phase(host, FAILED, why)
    return outcome(R.FAILED, f"unreachable: {why}", exc)


def _settle(device: NetworkDriver, sw: Any, ctx: RunContext, was: str, actions: list[str]) -> list[str]:
    """A device an interrupted run left ``was`` (committing, committed, ...) whose config already equals
    the build: do what its commit still needed (re-apply lost policy; reset BGP sessions when the
    change set timers or the sessions still run other ones), then the post-commit check."""
    notes = [f"resumed: its config was already in (the interrupted run left it {was})"]
    before = phases.sessions(device)
    notes += phases.repair(device)
    stale = phases.stale_timers(device, sw)
    if RESET_BGP in actions or stale:
        phases.reset_sessions(device)
        why = "the interrupted change set keepalive/hold time" if RESET_BGP in actions else \
            "sessions still ran other keepalive/hold times: " + "; ".join(stale)
        notes.append(f"BGP sessions reset so the new keepalive/hold time apply ({why})")
    phases.check(device, before, ctx.expected.get(sw.hostname, {}), ctx.opts.check_timeout, ctx.cancel,
                 ctx.opts.grace)
    return notes


def _open_neighbor(ctx: RunContext) -> Callable[[str], NetworkDriver]:
    """A function opening a fresh napalm driver of a neighbor switch (never a connection another thread uses)."""
    from napalm.base import get_network_driver

    def open_device(name: str) -> NetworkDriver:
        assert ctx.nornir is not None
        host = ctx.nornir.inventory.hosts[name]
        params = host.get_connection_parameters("napalm")
        extras = dict(params.extras or {})
        assert params.platform and params.hostname, f"{name}: no napalm platform or address in the inventory"
        device = get_network_driver(params.platform)(
            # None passes through as nornir has it (key-based logins carry no password)
            hostname=params.hostname, username=cast(str, params.username), password=cast(str, params.password),
            timeout=extras.get("timeout", 60), optional_args=dict(extras.get("optional_args", {})))
        device.open()
        return device

    return open_device


def _drain(device: NetworkDriver, sw: Any, ctx: RunContext) -> tuple[str, float]:
    """Commit the switch's saved config with the drain on; wait for its neighbors to move traffic.

    Returns (the config to undrain to if the change fails, seconds the neighbors took).  On a
    failure it undrains again and raises.
    """
    old = drain.saved_candidate(device, sw.platform)
    ctx.phase(sw.hostname, DRAINING)
    if phases.diff(device, drain.drained(sw.platform, old)).text:
        phases.commit(device)
    else:
        phases.discard(device)
    try:
        took = drain.wait_moved(ctx.plan, sw, _open_neighbor(ctx), ctx.opts.drain_timeout, ctx.cancel)
    except BaseException as exc:
        undo = _undrain_after_failure(device, sw, ctx, old)
        raise drain.DrainFailed(f"{describe(exc)}{undo}") from exc
    ctx.phase(sw.hostname, DRAINED)
    return old, took


def _undrain_after_failure(device: NetworkDriver, sw: Any, ctx: RunContext, undrain_to: str) -> str:
    """After a failed change of a drained switch: its config (as rolled back) without the drain."""
    if not undrain_to:
        return ""
    try:
        current = drain.saved_candidate(device, sw.platform)
        if phases.diff(device, drain.drained(sw.platform, current, on=False)).text:
            phases.commit(device)
        else:
            phases.discard(device)
    except Exception as exc:  # noqa: BLE001
        return f"\nAND undraining failed: {describe(exc)}; the switch still sends graceful-shutdown"
    return "\nundrained again"
