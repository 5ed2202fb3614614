"""The deploy run: which build, which devices, one change at a time, and what Ctrl-C does.

* The configs pushed are the files of a checked build (see fabricgen.manifest), never a
  fresh render; changed or ``--no-check`` files are refused unless ``--force``.
* A real run holds the fabric lock and journals every device's phase (see ``state``);
  an unfinished journal blocks the next run until ``--resume`` or ``--discard``.
* Devices run in nornir's threaded runner, each through ``phases``: lock, diff, commit,
  check, roll back on a failed check.  One device failing never stops the others.
* Ctrl-C stops scheduling devices at once: devices not yet committing stop at their
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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.filter import F
from nornir.core.task import Result, Task
from rich.console import Console

from fabricgen.deploy import phases
from fabricgen.deploy import report as R
from fabricgen.deploy.state import (
    CHECKED,
    COMMITTED,
    COMMITTING,
    DIFFED,
    DONE_PHASES,
    FAILED,
    INTERRUPTED,
    LOCKED,
    ROLLED_BACK,
    ROLLING_BACK,
    UNCHANGED,
    DeployRefused,
    FabricLock,
    Journal,
    Owner,
    new_run_id,
    state_dir,
)
from fabricgen.expect import expected_prefixes
from fabricgen.manifest import Build
from fabricgen.model import Plan

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


class Abandoned(KeyboardInterrupt):
    """A second Ctrl-C: the run is left as it is; ``report`` holds what finished."""

    def __init__(self, report: R.DeployReport) -> None:
        super().__init__()
        self.report = report


def select(nr: Nornir, limit: str | None = None, role: str | None = None) -> Nornir:
    if limit:
        names = {h.strip() for h in limit.split(",") if h.strip()}
        unknown = names - set(nr.inventory.hosts)
        if unknown:
            raise ValueError(f"--limit names hosts that are not in the plan: {', '.join(sorted(unknown))} "
                             "(fix: name switches of this intent, as `fabricgen plan --format json` lists them)")
        nr = nr.filter(F(name__any=sorted(names)))
    if role:
        nr = nr.filter(F(role=role))
    return nr


def describe(exc: BaseException) -> str:
    """The whole reason: exception type and every line of its text."""
    from fabricgen.ssh import HostKeyError

    text = str(exc).strip()
    if isinstance(exc, HostKeyError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
    expected: dict[str, dict[str, int]] = field(default_factory=dict)
    done: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def phase(self, host: str, phase: str, reason: str = "") -> None:
        if self.journal is not None:
            self.journal.set(host, phase, reason)

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
    ctx.tick(outcome)
    return Result(host=task.host, result=outcome, changed=outcome.status == R.CHANGED)


def _deploy_one(task: Task, ctx: _Context) -> R.DeviceOutcome:
    from fabricgen.drivers.frr import CommandInterrupted

    sw = ctx.plan.switches[task.host.name]
    host, dry = sw.hostname, ctx.opts.dry_run

    def outcome(status: str, reason: str = "", exc: BaseException | None = None, **kw: Any) -> R.DeviceOutcome:
        tb = "".join(traceback.format_exception(exc)) if exc is not None else ""
        return R.DeviceOutcome(host, sw.mgmt_ip, status, reason=reason, traceback=tb, **kw)

    if ctx.cancel.is_set():
        ctx.phase(host, INTERRUPTED, "not started")
        return outcome(R.INTERRUPTED, "not started: the deploy was interrupted first")
    candidate = phases.candidate_config(ctx.build, sw)
    try:
        device = task.host.get_connection("napalm", task.nornir.config)
    except Exception as exc:  # noqa: BLE001 - unreachable is a per-device outcome
        ctx.phase(host, FAILED, describe(exc))
        return outcome(R.FAILED, f"unreachable: {describe(exc)}", exc)
    if hasattr(device, "cancel"):
        device.cancel = ctx.cancel
    locked = False
    try:
        if not dry:
            phases.lock(device, ctx.run, ctx.owner, ctx.takeover)
            locked = True
            ctx.phase(host, LOCKED)
        gaps = phases.live_mtu_gaps(device, sw)
        if gaps and not ctx.opts.accept_undeployable:
            reason = (f"undeployable: qos.mtu: platform {sw.platform} cannot set an interface MTU from its config, "
                      f"and the live ports differ from the plan:\n" + "\n".join(gaps) +
                      "\n(fix: set the MTU on the ports themselves - the lab: `fabricgen lab down` and `lab up` - "
                      "or --accept-undeployable to deploy the rest)")
            if not dry:
                ctx.phase(host, FAILED, reason)
                return outcome(R.FAILED, reason)
        d = phases.diff(device, candidate)
        if dry:
            if gaps:
                return outcome(R.FAILED, reason, diff=d.text, changes=d.changes)
            phases.discard(device)
            return outcome(R.CHANGED if d.text else R.UNCHANGED, diff=d.text, changes=d.changes)
        ctx.phase(host, DIFFED)
        if not d.text:
            phases.discard(device)
            repaired = phases.repair(device)
            ctx.phase(host, UNCHANGED)
            return outcome(R.UNCHANGED, notes=repaired)
        if ctx.cancel.is_set():
            phases.discard(device)
            ctx.phase(host, INTERRUPTED, "stopped before its commit")
            return outcome(R.INTERRUPTED, "stopped before its commit: nothing changed", diff=d.text)
        before = phases.sessions(device)
        ctx.phase(host, COMMITTING)
        try:
            phases.commit(device)
        except Exception as exc:  # noqa: BLE001 - the driver restored the previous config (or says it could not)
            ctx.phase(host, FAILED, describe(exc))
            return outcome(R.FAILED, f"commit failed: {describe(exc)}", exc, diff=d.text)
        ctx.phase(host, COMMITTED)
        try:
            notes = phases.repair(device)
            phases.check(device, before, ctx.expected.get(host, {}), ctx.opts.check_timeout, ctx.cancel,
                         ctx.opts.grace)
        except Exception as exc:  # noqa: BLE001 - CheckFailed, or the device went away: roll back either way
            reason = str(exc) if isinstance(exc, phases.CheckFailed) else describe(exc)
            ctx.phase(host, ROLLING_BACK, reason)
            try:
                phases.rollback(device)
            except Exception as rb:  # noqa: BLE001
                ctx.phase(host, FAILED, f"{reason}\nrollback failed: {describe(rb)}")
                return outcome(R.FAILED, f"{reason}\nAND the rollback failed: {describe(rb)}\nthe device config is "
                                         f"undetermined", rb, diff=d.text)
            ctx.phase(host, ROLLED_BACK, reason)
            why = "interrupted during its check" if ctx.cancel.is_set() else "its post-commit check failed"
            return outcome(R.ROLLED_BACK, f"{why}; rolled back to the previous config:\n{reason}", exc, diff=d.text)
        ctx.phase(host, CHECKED)
        return outcome(R.CHANGED, diff=d.text, changes=d.changes, notes=notes)
    except CommandInterrupted as exc:
        ctx.phase(host, INTERRUPTED, str(exc))
        return outcome(R.INTERRUPTED, f"stopped before its commit: nothing changed ({exc})")
    except Exception as exc:  # noqa: BLE001
        ctx.phase(host, FAILED, describe(exc))
        return outcome(R.FAILED, describe(exc), exc)
    finally:
        if locked:  # an unreachable device keeps its lock; the next run names it
            with contextlib.suppress(Exception):
                phases.unlock(device, ctx.run)


@contextmanager
def _sigint_cancels(cancel: threading.Event, console: Console, enabled: bool) -> Iterator[None]:
    """First Ctrl-C sets ``cancel``; the second raises KeyboardInterrupt in the main thread."""
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        console.print("interrupted: no new devices; commits in flight finish or roll back "
                      "(Ctrl-C again to exit at once)", markup=False, highlight=False)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
    from fabricgen.nornir_inventory import connection_settings, nornir_for

    opts = opts or DeployOptions()
    console = console or Console(stderr=True, highlight=False)
    settings = connection_settings(plan, opts.lab_dir, opts.known_hosts)
    nr = select(nornir_for(plan, settings, workers=opts.workers), opts.limit, opts.role)
    hosts = list(nr.inventory.hosts)
    problems = opts_refusals(plan, build, hosts, opts)
    if problems:
        raise DeployRefused("\n".join(problems))
    ctx = _Context(plan, build, opts, threading.Event(), console, len(hosts))
    report = R.DeployReport(dry_run=opts.dry_run, build=build.label)
    lock: FabricLock | None = None
    if opts.dry_run:
        journal = Journal.load(Journal.path_for(state_dir(build.root), plan.settings.name))
        if journal is not None and journal.unfinished:
            console.print(f"note: the last deploy (run {journal.run}) did not finish: {journal.summary()}",
                          markup=False, highlight=False)
    else:
        lock, hosts = _begin(ctx, hosts)
        nr = nr.filter(F(name__any=hosts))
        ctx.total = len(hosts)
        report.run = ctx.run
    ctx.expected = _expected_by_host(plan) if not opts.dry_run else {}
    results: dict[str, R.DeviceOutcome] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            multi = nr.run(task=deploy_device, ctx=ctx, on_failed=True)
            for host in multi:
                value = multi[host][0].result
                if isinstance(value, R.DeviceOutcome):
                    results[host] = value
                else:  # nornir caught something before our task ran
                    exc = multi[host][0].exception
                    sw = plan.switches[host]
                    results[host] = R.DeviceOutcome(host, sw.mgmt_ip, R.FAILED,
                                                    reason=describe(exc) if exc else str(value))
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="fabricgen-deploy", daemon=True)
    try:
        with _sigint_cancels(ctx.cancel, console, opts.handle_signals):
            worker.start()
            try:
                while not finished.wait(0.2):
                    pass
            except KeyboardInterrupt:
                report.interrupted = True
                _collect(report, plan, hosts, results, ctx, unfinished_reason="abandoned by a second Ctrl-C")
                if ctx.journal is not None:
                    ctx.journal.finish("interrupted")
                raise Abandoned(report) from None
    finally:
        if finished.is_set():
            nr.close_connections(on_failed=True)
    report.interrupted = ctx.cancel.is_set()
    _collect(report, plan, hosts, results, ctx)
    if ctx.journal is not None:
        done = all(ctx.journal.phase(h) in DONE_PHASES | {FAILED, ROLLED_BACK} for h in ctx.journal.devices)
        ctx.journal.finish("done" if done and not report.interrupted else "interrupted")
    if lock is not None:
        lock.release()
    return report


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
    from fabricgen.deployable import undeployable

    out: list[str] = []
    if not opts.force:
        out += build.problems(plan.switches[h] for h in hosts)
    if not opts.accept_undeployable:
        for item in undeployable(plan, hosts):
            out.append(f"{item.message} (fix: {item.fix}, or --accept-undeployable to deploy the rest)")
    return out


def _begin(ctx: _Context, hosts: list[str]) -> tuple[FabricLock, list[str]]:
    """Take the fabric lock and start (or resume) the journal; returns the hosts to run."""
    plan, build, opts = ctx.plan, ctx.build, ctx.opts
    fabric = plan.settings.name
    directory = state_dir(build.root)
    path = Journal.path_for(directory, fabric)
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
    lock = FabricLock(directory, fabric)
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
        ctx.journal = Journal.start(path, me, str(build.root), build.manifest_sha256, hosts, resumed)
        ctx.run, ctx.owner, ctx.takeover = run, me.describe(), frozenset(takeover)
        return lock, [h for h in hosts if ctx.journal.phase(h) not in DONE_PHASES]
    except BaseException:
        lock.release()
        raise


