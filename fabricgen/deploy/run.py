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

This module is the run's course (checks, preview, waves, threads, signals, the summary); one device's
change is ``device``, the locks and journal ``locking``, the rollout plan ``rollout``, and the options
and shared state ``context``.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from nornir.core.filter import F
from rich.console import Console

from fabricgen.connect import describe, select
from fabricgen.deploy import drain
from fabricgen.deploy import report as R
from fabricgen.deploy.context import DeployOptions, RunContext
from fabricgen.deploy.device import deploy_device
from fabricgen.deploy.locking import begin, unlock_devices
from fabricgen.deploy.rollout import (
    accepted_gaps,
    ask_operator,
    opts_refusals,
    plan_waves,
    print_waves,
    validate_between,
    wave_failure,
)
from fabricgen.deploy.state import (
    DONE_PHASES,
    FAILED,
    ROLLED_BACK,
    UNCHANGED,
    UNDETERMINED,
    DeployRefused,
    FabricLock,
    Journal,
    StateUnwritable,
    journal_path,
)
from fabricgen.deploy.waves import Wave
from fabricgen.plan.expect import expected_prefixes
from fabricgen.plan.model import Plan
from fabricgen.platforms.change import exceeds
from fabricgen.render.manifest import Build


class Abandoned(KeyboardInterrupt):
    """A second Ctrl-C: the run is left as it is; ``report`` holds what finished."""

    def __init__(self, report: R.DeployReport) -> None:
        super().__init__()
        self.report = report


STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}  # SIGTERM: what systemd, CI and kill send


@contextmanager
def _signals_cancel(ctx: RunContext, enabled: bool) -> Iterator[None]:
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
    ctx = RunContext(plan, build, opts, threading.Event(), console, len(hosts), nornir=everyone)
    if opts.accept_undeployable:
        ctx.skipped = accepted_gaps(plan, hosts)
    report = R.DeployReport(dry_run=opts.dry_run, build=build.label)
    lock: FabricLock | None = None
    waves: list[Wave] | None = None
    if preview is not None and opts.waves is not None:
        waves = plan_waves(plan, opts, preview)
        print_waves(console, waves)
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
        lock, hosts = begin(ctx, hosts)
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
                stop = wave_failure(wave, results) or (
                    "" if n == len(stages) - 1 or ctx.cancel.is_set() else validate_between(plan, ctx, wave))
                if stop:
                    report.stopped = stop
                    console.print(f"rollout stopped: {stop}", markup=False, highlight=False)
                    if not (opts.pause_on_failure and ask_operator(opts, console, "continue with the next wave?")):
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
            unlock_devices(ctx)
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


def _collect(report: R.DeployReport, plan: Plan, hosts: list[str], results: dict[str, R.DeviceOutcome],
             ctx: RunContext, unfinished_reason: str = "no result") -> None:
    for host in sorted(hosts):
        if host in results:
            report.outcomes[host] = results[host]
            continue
        phase = ctx.journal.phase(host) if ctx.journal is not None else ""
        reason = f"{unfinished_reason} (journal phase: {phase})" if phase else unfinished_reason
        report.outcomes[host] = R.DeviceOutcome(host, plan.switches[host].mgmt_ip, R.INTERRUPTED, reason=reason)
