"""The deploy run: which build, which devices, one change at a time, and what Ctrl-C does.

* The configs pushed are the files of a checked build (see fabricgen.render.manifest), never a
  fresh render; changed or ``--no-check`` files are refused unless ``--force``.
* A real run holds the fabric lock and journals every device's phase (see ``state``);
  an unfinished journal blocks the next run until ``--resume`` or ``--discard``.
* Devices run in nornir's threaded runner, each through ``phases``: lock, diff, commit,
  check, roll back on a failed check.  One device failing never stops the others.
* Ctrl-C (or SIGTERM) stops scheduling devices at once: devices not yet committing stop at their
  next SSH read; a commit in flight finishes (its driver restores the previous config
  on failure), then gets at most ``grace`` seconds of post-check before it is rolled
  back.  Then the summary is printed and the exit status is 130.  A second Ctrl-C exits
  at once; the journal shows which devices were mid-commit for ``--resume``.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, cast

from napalm.base.exceptions import CommandTimeoutException, ConnectionClosedException
from nornir.core import Nornir
from nornir.core.filter import F
from nornir.core.task import Result, Task
from rich.console import Console

from fabricgen.base.ssh import ConfigUndetermined, DeviceLocked
from fabricgen.catalog.registry import platform
from fabricgen.connect import describe, select
from fabricgen.deploy import drain, phases
from fabricgen.deploy import report as R
from fabricgen.deploy.impact import needs_session_reset
from fabricgen.deploy.state import (
    CHECKED,
    COMMITTED,
    COMMITTING,
    DIFFED,
    DONE_PHASES,
    DRAINED,
    DRAINING,
    FAILED,
    INTERRUPTED,
    LOCKED,
    RESET_BGP,
    ROLLED_BACK,
    ROLLING_BACK,
    UNCHANGED,
    UNDETERMINED,
    UNDRAINING,
    DeployRefused,
    FabricLock,
    Journal,
    Owner,
    StateUnwritable,
    fabric_lock,
    journal_path,
    new_run_id,
)
from fabricgen.deploy.waves import Wave, auto_waves, load_waves
from fabricgen.plan.expect import expected_prefixes
from fabricgen.plan.model import Plan
from fabricgen.platforms.change import HITLESS, exceeds
from fabricgen.render.manifest import Build, candidate_config, setup_script

if TYPE_CHECKING:
    from napalm.base import NetworkDriver

GRACE = 10.0  # seconds a commit in flight gets after Ctrl-C to pass its check or be rolled back


@dataclass
class DeployOptions:
    dry_run: bool = False
    limit: str | None = None
    role: str | None = None
    workers: int = 10
    check_timeout: float = phases.CHECK_TIMEOUT
    force: bool = False  # push files that changed after the check or were never checked
    resume: bool = False
    discard: bool = False
    break_lock: bool = False
    accept_undeployable: bool = False
    lab_dir: str | None = None
    known_hosts: str | None = None
    grace: float = GRACE
    handle_signals: bool = False  # the CLI: Ctrl-C handling as described in the module doc
    max_impact: str | None = None  # refuse changes whose impact label is worse (fabricgen.deploy.impact)
    waves: str | None = None  # "auto" or a waves file (fabricgen.deploy.waves); None = every device at once
    canary: str | None = None  # with waves: this switch alone, first
    drain: bool = False  # graceful-shutdown a switch before a change that is not hitless (fabricgen.deploy.drain)
    drain_timeout: float = 60.0  # seconds for the neighbors to move their traffic
    pause_on_failure: bool = False  # a failed wave asks whether to go on (on a terminal), instead of stopping
    wave_checks: tuple[str, ...] = ("bgp", "ecmp", "routes")  # validate between waves
    wave_timeout: float = 120.0  # seconds for those checks to pass after a wave
    wave_health: float | None = None  # lossless-health window between waves; None = the plan's, 0 = off
    day0: bool = False  # SONiC: the whole ConfigDB by `config load` + `config reload` (napalm_sonic apply="day0")
    ask: Any = None  # with pause_on_failure: callable(question) -> bool; default: input() on a terminal


class Abandoned(KeyboardInterrupt):
    """A second Ctrl-C: the run is left as it is; ``report`` holds what finished."""

    def __init__(self, report: R.DeployReport) -> None:
        super().__init__()
        self.report = report


@dataclass
class _Context:
    plan: Plan
    build: Build
    opts: DeployOptions
    cancel: threading.Event
    console: Console
    total: int
    journal: Journal | None = None
    run: str = ""
    owner: str = ""
    takeover: frozenset[str] = frozenset()
    who: dict[str, Any] = field(default_factory=dict)  # the run's Owner, stored in device locks
    locked: set[str] = field(default_factory=set)  # devices whose own lock this run holds
    unreachable: dict[str, str] = field(default_factory=dict)  # devices the lock pass could not reach
    broken: dict[str, str] = field(default_factory=dict)  # --break-lock: device -> whose lock it took over
    expected: dict[str, dict[str, int]] = field(default_factory=dict)
    nornir: Nornir | None = None  # the whole inventory: drains read the neighbors' routes
    done: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    signal: str = ""  # the signal that interrupted the run (Ctrl-C, SIGTERM), "" while none did
    journal_error: str = ""  # why the journal could not be written (the run stopped)
    skipped: dict[str, list[str]] = field(default_factory=dict)  # --accept-undeployable: device -> not deployed

    def phase(self, host: str, phase: str, reason: str = "", actions: list[str] | None = None) -> None:
        """Journal ``host``'s phase.  A journal the disk refuses stops the run like an interrupt (no new
        device, none commits: see ``_deploy_one``); the summary says so (``journal_error``)."""
        if self.journal is not None:
            try:
                self.journal.set(host, phase, reason, actions)
            except StateUnwritable as exc:
                self.unwritable(exc)

    def unwritable(self, exc: StateUnwritable) -> None:
        with self.lock:
            if not self.journal_error:
                self.journal_error = str(exc)
                self.console.print(f"the journal cannot be written, stopping: {exc}", markup=False, highlight=False)
        self.cancel.set()

    def tick(self, outcome: R.DeviceOutcome) -> None:
        with self.lock:
            self.done += 1
            self.console.print(f"[{self.done}/{self.total}] {outcome.host} {outcome.status}", markup=False,
                               highlight=False)


def deploy_device(task: Task, ctx: _Context) -> Result:
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


def _deploy_one(task: Task, ctx: _Context) -> R.DeviceOutcome:
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
                      "missing: tenant namespaces, ports moved in; removes what it created for a tenant the build no "
                      "longer has)"] if d.text and setup_script(ctx.build, sw) else [])
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


def _unreachable(ctx: _Context, host: str, outcome: Callable[..., R.DeviceOutcome], why: str,
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


def _settle(device: NetworkDriver, sw: Any, ctx: _Context, was: str, actions: list[str]) -> list[str]:
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


def _open_neighbor(ctx: _Context) -> Callable[[str], NetworkDriver]:
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


def _drain(device: NetworkDriver, sw: Any, ctx: _Context) -> tuple[str, float]:
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


def _undrain_after_failure(device: NetworkDriver, sw: Any, ctx: _Context, undrain_to: str) -> str:
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


STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}  # SIGTERM: what systemd, CI and kill send


@contextmanager
def _signals_cancel(ctx: _Context, enabled: bool) -> Iterator[None]:
    """The first Ctrl-C or SIGTERM sets ``ctx.cancel`` (and ``ctx.signal``); a second raises
    KeyboardInterrupt in the main thread.  SIGTERM is an interrupt like Ctrl-C, not a SIGKILL: commits in
    flight finish or roll back, and the summary is printed (issue 23 D9)."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        name = STOP_SIGNALS.get(signal.Signals(signum), signal.Signals(signum).name)
        if ctx.signal:
            raise KeyboardInterrupt
        ctx.signal = name
        ctx.cancel.set()
        ctx.console.print(f"interrupted ({name}): no new devices; commits in flight finish or roll back "
                          f"({name} again to exit at once)", markup=False, highlight=False)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _expected_by_host(plan: Plan) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (host, ip), count in expected_prefixes(plan).items():
        out.setdefault(host, {})[ip] = count
    return out


def run_deploy(plan: Plan, build: Build, opts: DeployOptions | None = None,
               console: Console | None = None) -> R.DeployReport:
    """Deploy ``build`` to the selected switches of ``plan``; see the module doc.

    Raises DeployRefused (nothing touched) and ValueError (bad --limit).
    """
    from fabricgen.connect import connection_settings, nornir_for

    opts = opts or DeployOptions()
    console = console or Console(stderr=True, highlight=False)
    settings = connection_settings(plan, opts.lab_dir, opts.known_hosts)
    # a dry run's drivers are read-only: no candidate, lock or directory is written on a device (issue 23)
    driver_args = {**({"apply": "day0"} if opts.day0 else {}), **({"read_only": True} if opts.dry_run else {})}
    everyone = nornir_for(plan, settings, workers=opts.workers, driver_args=driver_args)
    nr = select(everyone, opts.limit, opts.role)
    hosts = list(nr.inventory.hosts)
    problems = opts_refusals(plan, build, hosts, opts)
    if problems:
        raise DeployRefused("\n".join(problems))
    undrainable = sorted({p for p in {plan.switches[h].platform for h in hosts} if not drain.can_drain(p)}
                         ) if opts.drain else []
    if undrainable:
        raise DeployRefused(f"--drain: platform {', '.join(undrainable)} has no graceful shutdown in its record "
                            "(capability `drain`) (fix: deploy those switches without --drain, e.g. --role or "
                            "--limit, after draining them by hand)")
    if opts.canary is not None and opts.canary not in hosts:
        raise DeployRefused(f"--canary {opts.canary} is not among the switches this deploy selects "
                            f"(fix: a hostname of {', '.join(sorted(hosts)[:4])}, ...)")
    preview: R.DeployReport | None = None
    if not opts.dry_run and (opts.max_impact is not None or opts.waves is not None):
        preview = _preview(plan, build, opts, console)
    ctx = _Context(plan, build, opts, threading.Event(), console, len(hosts), nornir=everyone)
    if opts.accept_undeployable:
        ctx.skipped = accepted_gaps(plan, hosts)
    report = R.DeployReport(dry_run=opts.dry_run, build=build.label)
    lock: FabricLock | None = None
    waves: list[Wave] | None = None
    if preview is not None and opts.waves is not None:
        waves = plan_waves(plan, opts, preview)
        _print_waves(console, waves)
        for host, o in preview.outcomes.items():
            if o.status == R.UNCHANGED:  # nothing to do: not journaled, reported as the preview found it
                report.outcomes[host] = o
        hosts = [h for w in waves for h in w.hosts]
    if opts.dry_run:
        journal = Journal.load(journal_path(plan))
        if journal is not None and journal.unfinished:
            console.print(f"note: the last deploy (run {journal.run}) did not finish: {journal.summary()}",
                          markup=False, highlight=False)
    else:
        lock, hosts = _begin(ctx, hosts)
        ctx.total = len(hosts)
        report.run = ctx.run
        if waves is not None:  # --resume: only what is left, in the planned order
            left = set(hosts)
            placed = {h for w in waves for h in w.hosts}
            for host in sorted(left - placed):  # journaled as unfinished, and the preview finds nothing to do
                ctx.phase(host, UNCHANGED, "nothing left to change")
            waves = [Wave(w.number, [h for h in w.hosts if h in left], w.note) for w in waves]
            waves = [w for w in waves if w.hosts]
    ctx.expected = _expected_by_host(plan) if not opts.dry_run else {}
    results: dict[str, R.DeviceOutcome] = {}
    finished = threading.Event()
    stages = waves if waves is not None else [Wave(1, list(hosts), "")]

    def run_hosts(names: list[str]) -> None:
        multi = nr.filter(F(name__any=names)).run(task=deploy_device, ctx=ctx, on_failed=True)
        for host in multi:
            value = multi[host][0].result
            if isinstance(value, R.DeviceOutcome):
                results[host] = value
            else:  # nornir caught something before our task ran
                exc = multi[host][0].exception
                sw = plan.switches[host]
                results[host] = R.DeviceOutcome(host, sw.mgmt_ip, R.FAILED,
                                                reason=describe(exc) if exc else str(value))

    def work() -> None:
        try:
            for n, wave in enumerate(stages):
                if ctx.cancel.is_set():
                    break
                if waves is not None:
                    console.print(f"wave {wave.number}/{stages[-1].number} ({wave.note}): {', '.join(wave.hosts)}",
                                  markup=False, highlight=False)
                run_hosts(wave.hosts)
                if waves is None:
                    continue
                stop = _wave_failure(wave, results) or (
                    "" if n == len(stages) - 1 or ctx.cancel.is_set() else _validate_between(plan, ctx, wave))
                if stop:
                    report.stopped = stop
                    console.print(f"rollout stopped: {stop}", markup=False, highlight=False)
                    if not (opts.pause_on_failure and _ask(opts, console, "continue with the next wave?")):
                        break
                    report.stopped += " (the operator went on)"
        finally:
            finished.set()
    worker = threading.Thread(target=work, name="fabricgen-deploy", daemon=True)
    try:
        with _signals_cancel(ctx, opts.handle_signals):
            worker.start()
            try:
                while not finished.wait(0.2):
                    pass
            except KeyboardInterrupt:
                report.interrupted, report.signal = True, ctx.signal or "Ctrl-C"
                _collect(report, plan, hosts, results, ctx,
                         unfinished_reason=f"abandoned by a second {report.signal}")
                if ctx.journal is not None:
                    with contextlib.suppress(StateUnwritable):  # it says "running": unfinished all the same
                        ctx.journal.finish("interrupted")
                raise Abandoned(report) from None
    finally:
        if finished.is_set():
            _unlock_devices(ctx)
            everyone.close_connections(on_failed=True)
    report.interrupted, report.signal = bool(ctx.signal), ctx.signal
    _collect(report, plan, hosts, results, ctx,
             unfinished_reason=f"not started: the rollout stopped ({report.stopped})" if report.stopped
             else "no result")
    if opts.dry_run and opts.waves is not None:
        report.waves = plan_waves(plan, opts, report)
    elif waves is not None:
        report.waves = waves
    if ctx.journal is not None:
        left = {ctx.journal.phase(h) for h in ctx.journal.devices} - DONE_PHASES - {FAILED, ROLLED_BACK}
        try:
            ctx.journal.finish("interrupted" if report.interrupted or ctx.journal_error or left - {UNDETERMINED}
                               else UNDETERMINED if left else "done")
        except StateUnwritable as exc:
            ctx.unwritable(exc)
    report.journal_error = ctx.journal_error
    if report.journal_error and ctx.journal is not None:
        report.journal_error += (f"\nthe journal on disk ({ctx.journal.path}) may lag behind this summary: check the "
                                 f"devices it names before `fabricgen deploy --resume`")
    if lock is not None:
        lock.release()
    return report


def _preview(plan: Plan, build: Build, opts: DeployOptions, console: Console) -> R.DeployReport:
    """A real run with --max-impact or --waves diffs every selected device first (a dry run).

    Any change above --max-impact refuses the whole deploy before anything is committed
    (devices check again at their commit); the waves are planned from what changes.
    """
    from dataclasses import replace

    console.print("diffing every device first (--max-impact / --waves) ...", markup=False, highlight=False)
    preview = run_deploy(plan, build, replace(opts, dry_run=True, max_impact=None, waves=None, canary=None,
                                              drain=False, handle_signals=False), console)
    if opts.max_impact is None:
        return preview
    over = []
    limit = str(opts.max_impact)
    for host, o in sorted(preview.outcomes.items()):
        if o.impact is None or not exceeds(o.impact.worst, limit):
            continue
        hunks = [f"  {h.file} {h.header} [{h.impact.label}] {h.impact.why}" for h in o.impact.hunks
                 if exceeds(h.impact, limit)]
        over.append(f"{host}: {o.impact.worst.label if o.impact.worst else ''}\n" + "\n".join(hunks))
    if over:
        raise DeployRefused(f"changes above --max-impact {opts.max_impact} on {len(over)} device(s); nothing was "
                            f"changed (fix: split the change, or raise --max-impact):\n" + "\n".join(over))
    return preview


def plan_waves(plan: Plan, opts: DeployOptions, preview: R.DeployReport) -> list[Wave]:
    """The waves over the devices the preview found changing (or failing); see fabricgen.deploy.waves."""
    todo = sorted(h for h, o in preview.outcomes.items() if o.status != R.UNCHANGED)
    if opts.waves == "auto":
        canary = opts.canary if opts.canary in todo else None
        return auto_waves(plan, todo, canary)
    waves = load_waves(str(opts.waves), plan, todo)
    if opts.canary is not None:
        rest = [Wave(0, [h for h in w.hosts if h != opts.canary], w.note) for w in waves]
        waves = [Wave(0, [opts.canary], "canary")] + [w for w in rest if w.hosts]
        for i, w in enumerate(waves, 1):
            w.number = i
    return waves


def _print_waves(console: Console, waves: list[Wave]) -> None:
    from rich.table import Table

    t = Table(title=f"rollout: {len(waves)} wave(s), the fabric validated between them")
    for col in ("wave", "switches", "kind"):
        t.add_column(col)
    for w in waves:
        t.add_row(str(w.number), ", ".join(w.hosts), w.note)
    console.print(t)


def _wave_failure(wave: Wave, results: dict[str, R.DeviceOutcome]) -> str:
    """"wave N: host: reason" for the first device of the wave that did not end as planned."""
    for host in wave.hosts:
        o = results.get(host)
        if o is None:
            return f"wave {wave.number}: {host}: no result"
        if o.status not in (R.CHANGED, R.UNCHANGED):
            return f"wave {wave.number}: {host}: {o.status}: {o.reason}"
    return ""


def _validate_between(plan: Plan, ctx: _Context, wave: Wave) -> str:
    """Wait (up to --wave-timeout) for the between-wave checks to pass; "" or why the rollout stops."""
    import time

    from fabricgen.validate import CHECKS, run_validate

    checks = tuple(dict.fromkeys(c for c in ctx.opts.wave_checks if c in CHECKS))
    window = plan.health.window_seconds if ctx.opts.wave_health is None else ctx.opts.wave_health
    judged = ", ".join((*checks, f"health over {window:g} s")) if window else ", ".join(checks)
    deadline = time.monotonic() + ctx.opts.wave_timeout
    while True:
        found = run_validate(plan, checks, workers=ctx.opts.workers, lab_dir=ctx.opts.lab_dir,
                             known_hosts=ctx.opts.known_hosts, health_window=window or None).failures
        if not found:
            ctx.console.print(f"wave {wave.number}: fabric validates ({judged})", markup=False,
                              highlight=False)
            return ""
        if time.monotonic() > deadline or ctx.cancel.wait(1.0):
            first = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return (f"after wave {wave.number} ({', '.join(wave.hosts)}) the fabric does not validate: "
                    f"{first.device} {first.check} {first.item}: expected {first.expected}, got {first.actual}{more}")


def _ask(opts: DeployOptions, console: Console, question: str) -> bool:
    if opts.ask is not None:
        return bool(opts.ask(question))
    import sys

    if not sys.stdin.isatty():
        console.print("(not a terminal: stopping)", markup=False, highlight=False)
        return False
    console.print(f"{question} [y/N] ", end="", markup=False, highlight=False)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _collect(report: R.DeployReport, plan: Plan, hosts: list[str], results: dict[str, R.DeviceOutcome],
             ctx: _Context, unfinished_reason: str = "no result") -> None:
    for host in sorted(hosts):
        if host in results:
            report.outcomes[host] = results[host]
            continue
        phase = ctx.journal.phase(host) if ctx.journal is not None else ""
        reason = f"{unfinished_reason} (journal phase: {phase})" if phase else unfinished_reason
        report.outcomes[host] = R.DeviceOutcome(host, plan.switches[host].mgmt_ip, R.INTERRUPTED, reason=reason)


def opts_refusals(plan: Plan, build: Build, hosts: list[str], opts: DeployOptions) -> list[str]:
    """Why this deploy must not start: unchecked or changed files (unless --force),
    settings the platforms cannot deploy (unless --accept-undeployable)."""
    from fabricgen.plan.deployable import undeployable

    out: list[str] = []
    if not opts.force:
        out += build.problems(plan.switches[h] for h in hosts)
    if not opts.accept_undeployable:
        for item in undeployable(plan, hosts):
            out.append(f"{item.message} (fix: {item.fix}, or --accept-undeployable to deploy the rest)")
    return out


def accepted_gaps(plan: Plan, hosts: list[str]) -> dict[str, list[str]]:
    """--accept-undeployable: per selected device, the intent settings its platform will not deploy (D3)."""
    from fabricgen.plan.deployable import undeployable

    out: dict[str, list[str]] = {}
    for item in undeployable(plan, hosts):
        for host in hosts:
            sw = plan.switches[host]
            if sw.platform == item.platform and sw.role in item.roles:
                out.setdefault(host, []).append(f"{item.setting}: platform {item.platform} cannot deploy it: "
                                                f"{item.why}")
    return out


def _begin(ctx: _Context, hosts: list[str]) -> tuple[FabricLock, list[str]]:
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
        broken_devices = _lock_devices(ctx, todo)  # all or nothing: raises DeployRefused, every lock released
        ctx.journal = Journal.start(path, me, str(build.root), build.manifest_sha256, hosts, resumed)
        if broken is not None or broken_devices:
            ctx.journal.record_broken_locks(broken, broken_devices)
        for host in sorted(ctx.locked):
            ctx.phase(host, LOCKED)
        return lock, [h for h in hosts if ctx.journal.phase(h) not in DONE_PHASES]
    except BaseException:
        _unlock_devices(ctx)
        lock.release()
        raise


def _lock_task(task: Task, ctx: _Context, takeover: frozenset[str] | None = None) -> Result:
    """nornir task: take the device's own deploy lock; the result is None, or the exception that stopped it."""
    try:
        device = task.host.get_connection("napalm", task.nornir.config)
        phases.lock(device, ctx.run, ctx.owner, ctx.takeover if takeover is None else takeover, ctx.who)
    except Exception as exc:  # noqa: BLE001 - held, or unreachable: the caller decides
        return Result(host=task.host, result=exc)
    return Result(host=task.host, result=None)


def _lock_devices(ctx: _Context, hosts: list[str]) -> dict[str, dict[str, Any]]:
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
    results = nr.run(task=_lock_task, ctx=ctx, on_failed=True)
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
        again = nr.filter(F(name=host)).run(task=_lock_task, ctx=ctx, on_failed=True,
                                            takeover=ctx.takeover | {str(exc.holder.get("run"))})
        if again[host][0].result is None:
            ctx.locked.add(host)
            broken[host] = exc.holder
            ctx.broken[host] = (f"took over its device lock from {exc.holder.get('owner')} (run "
                                f"{exc.holder.get('run')}), which no longer runs (--break-lock; in the journal)")
        else:
            refusals.append(f"{host}: {describe(again[host][0].result)}")
    if refusals:
        _unlock_devices(ctx)
        raise DeployRefused(f"{len(refusals)} device(s) are locked by another deploy; no device was locked or "
                            f"changed:\n" + "\n".join(refusals))
    return broken


def _unlock_task(task: Task, ctx: _Context) -> Result:
    with contextlib.suppress(Exception):  # gone: its lock names this run, which --resume takes over
        phases.unlock(task.host.get_connection("napalm", task.nornir.config), ctx.run)
    return Result(host=task.host)


def _unlock_devices(ctx: _Context) -> None:
    """Release every device lock this run took (those whose device answers)."""
    if ctx.nornir is None or not ctx.locked:
        return
    ctx.nornir.filter(F(name__any=sorted(ctx.locked))).run(task=_unlock_task, ctx=ctx, on_failed=True)
    ctx.locked.clear()


