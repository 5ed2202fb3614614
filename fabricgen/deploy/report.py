"""Deploy outcomes per device, and the summary an operator reads.

Every failure line carries its whole reason; a multi-line reason is indented under it.
Tracebacks appear only with ``--debug``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from fabricgen.deploy.impact import DeviceImpact, labelled_diff
from fabricgen.deploy.waves import Wave
from fabricgen.platforms.change import LABELS, worst

# Outcome statuses, in summary order.
CHANGED, UNCHANGED, ROLLED_BACK, INTERRUPTED, FAILED = "changed", "unchanged", "rolled back", "interrupted", "failed"
REFUSED = "refused"  # not committed: its changes exceed --max-impact (nothing changed on it)
UNDETERMINED = "undetermined"  # went silent mid-commit, or its failed commit could not be undone: config unknown
STATUSES = (CHANGED, UNCHANGED, ROLLED_BACK, INTERRUPTED, REFUSED, UNDETERMINED, FAILED)
NOT_AS_PLANNED = (FAILED, ROLLED_BACK, INTERRUPTED, REFUSED, UNDETERMINED)


@dataclass
class DeviceOutcome:
    host: str
    address: str
    status: str
    diff: str = ""
    changes: str = ""  # the platform's own change list
    reason: str = ""  # why it failed, was rolled back or interrupted (whole text)
    notes: list[str] = field(default_factory=list)  # e.g. what the post-commit verification re-applied
    traceback: str = ""
    impact: DeviceImpact | None = None  # every hunk of ``diff`` labelled (fabricgen.deploy.impact)
    not_deployed: list[str] = field(default_factory=list)  # --accept-undeployable: intent settings left out


@dataclass
class DeployReport:
    dry_run: bool
    build: str = ""
    outcomes: dict[str, DeviceOutcome] = field(default_factory=dict)
    interrupted: bool = False
    run: str = ""
    waves: list[Wave] | None = None  # --waves: the rollout plan (a dry run prints it)
    stopped: str = ""  # --waves: why the rollout stopped (wave, device, reason)
    signal: str = ""  # what interrupted the run: "Ctrl-C" or "SIGTERM"
    journal_error: str = ""  # the journal could not be written (disk full, ...): the run stopped

    def hosts(self, status: str) -> list[str]:
        return [h for h, o in self.outcomes.items() if o.status == status]

    @property
    def changed(self) -> dict[str, str]:
        return {h: o.diff for h, o in self.outcomes.items() if o.status == CHANGED}

    @property
    def unchanged(self) -> list[str]:
        return self.hosts(UNCHANGED)

    @property
    def failed(self) -> dict[str, str]:
        """Every device that did not end as planned: failed, rolled back, interrupted, refused, undetermined."""
        return {h: f"{o.status}: {o.reason}" if o.status != FAILED else o.reason
                for h, o in self.outcomes.items() if o.status in NOT_AS_PLANNED}

    def impacts(self) -> dict[str, list[str]]:
        """Fabric-wide: label -> devices whose worst change it is, worst label first."""
        out: dict[str, list[str]] = {}
        for label in reversed(LABELS):
            hosts = [h for h, o in self.outcomes.items()
                     if o.impact is not None and o.impact.worst is not None and o.impact.worst.label == label]
            if hosts:
                out[label] = hosts
        return out

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted and not self.journal_error

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 143 if self.signal == "SIGTERM" else 130  # 128 + the signal, as a shell reports it
        return 0 if self.ok else 1


def indent_reason(reason: str) -> str:
    """First line as is, every further line indented under it."""
    lines = reason.strip().splitlines() or [""]
    return "\n".join([lines[0], *(f"    {ln}" for ln in lines[1:])])


def print_report(report: DeployReport, out: Console, debug: bool = False) -> None:
    for host, o in report.outcomes.items():
        if not o.diff:
            continue
        out.rule(f"{host}{' (dry run)' if report.dry_run else ''}")
        text = o.diff
        if o.impact is not None and o.impact.hunks:  # the labelled hunks, then the driver's notes on the diff
            notes = [ln for ln in o.diff.splitlines() if ln.startswith("# ")]
            text = labelled_diff(o.impact, o.diff) + "".join(f"{ln}\n" for ln in notes)
        if out.is_terminal:
            out.print(Syntax(text, "diff", theme="ansi_dark", background_color="default"))
        else:
            out.print(text, markup=False, highlight=False, end="" if text.endswith("\n") else "\n")
        if o.changes:
            out.print(f"# {host}: what the platform will do\n{o.changes.rstrip()}", markup=False, highlight=False)
        if o.impact is not None and o.impact.worst is not None:
            counts = ", ".join(f"{n} {label}" for label, n in o.impact.counts().items())
            out.print(f"# {host}: impact {o.impact.worst.label} ({counts} hunk(s))", markup=False, highlight=False)
    title = "deploy summary" + (" (dry run: nothing was changed)" if report.dry_run else "")
    if report.interrupted:
        title += f" (INTERRUPTED{' by ' + report.signal if report.signal else ''})"
    t = Table(title=title)
    t.add_column("status")
    t.add_column("devices", justify="right")
    t.add_column("hosts")
    for status in STATUSES:
        hosts = report.hosts(status)
        label = "would change" if report.dry_run and status == CHANGED else status
        if hosts or status in (CHANGED, UNCHANGED, FAILED):
            t.add_row(label, str(len(hosts)), ", ".join(hosts))
    out.print(t)
    print_impacts(report, out)
    if report.waves is not None and report.dry_run:
        w = Table(title=f"rollout plan: {len(report.waves)} wave(s), the fabric validated between them")
        for col in ("wave", "switches", "kind"):
            w.add_column(col)
        for wave in report.waves:
            w.add_row(str(wave.number), ", ".join(wave.hosts), wave.note)
        out.print(w)
    if report.stopped:
        out.print(f"ROLLOUT STOPPED {indent_reason(report.stopped)}", markup=False, highlight=False)
    if report.journal_error:
        out.print(f"JOURNAL NOT WRITTEN, the deploy stopped: {indent_reason(report.journal_error)}", markup=False,
                  highlight=False)
    if report.build:
        out.print(("would push " if report.dry_run else "pushed ") + report.build, markup=False, highlight=False)
    skipped = [h for h, o in report.outcomes.items() if o.not_deployed]
    if skipped:
        out.print(f"--accept-undeployable: {len(skipped)} device(s) {'would' if report.dry_run else 'did'} not get "
                  f"everything the intent asks for (NOT DEPLOYED below)", markup=False, highlight=False)
    for host, o in report.outcomes.items():
        for note in o.notes:
            out.print(f"NOTE {host}: {indent_reason(note)}", markup=False, highlight=False)
        for item in o.not_deployed:
            out.print(f"NOT DEPLOYED {host}: {indent_reason(item)}", markup=False, highlight=False)
        if o.status in NOT_AS_PLANNED:
            out.print(f"{o.status.upper()} {host} ({o.address}): {indent_reason(o.reason)}", markup=False,
                      highlight=False)
            if debug and o.traceback:
                out.print(o.traceback.rstrip(), markup=False, highlight=False)
    lost = report.hosts(UNDETERMINED)
    if lost and not report.dry_run:
        out.print(f"undetermined: {', '.join(lost)}: `fabricgen deploy --resume` retries them once they answer "
                  "(it takes over their device locks and reconciles saved with running)", markup=False,
                  highlight=False)


def print_impacts(report: DeployReport, out: Console) -> None:
    """Per device and fabric-wide, worst first: what the changes do to traffic."""
    by_label = report.impacts()
    if not by_label:
        return
    t = Table(title="change impact (worst first)")
    for col in ("impact", "devices", "hunks", "hosts"):
        t.add_column(col, justify="right" if col in ("devices", "hunks") else "left")
    for label, hosts in by_label.items():
        hunks = sum(sum(1 for h in o.impact.hunks if h.impact.label == label)
                    for o in report.outcomes.values() if o.impact is not None)
        t.add_row(label, str(len(hosts)), str(hunks), ", ".join(hosts))
    out.print(t)
    fabric = worst(o.impact.worst for o in report.outcomes.values() if o.impact is not None and o.impact.worst)
    if fabric is not None:
        out.print(f"fabric-wide impact: {fabric.label}", markup=False, highlight=False)
