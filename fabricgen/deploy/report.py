"""Deploy outcomes per device, and the summary an operator reads.

Every failure line carries its whole reason; a multi-line reason is indented under it.
Tracebacks appear only with ``--debug``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

# Outcome statuses, in summary order.
CHANGED, UNCHANGED, ROLLED_BACK, INTERRUPTED, FAILED = "changed", "unchanged", "rolled back", "interrupted", "failed"
STATUSES = (CHANGED, UNCHANGED, ROLLED_BACK, INTERRUPTED, FAILED)


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


@dataclass
class DeployReport:
    dry_run: bool
    build: str = ""
    outcomes: dict[str, DeviceOutcome] = field(default_factory=dict)
    interrupted: bool = False
    run: str = ""

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
        """Every device that did not end as planned: failed, rolled back or interrupted."""
        return {h: f"{o.status}: {o.reason}" if o.status != FAILED else o.reason
                for h, o in self.outcomes.items() if o.status in (FAILED, ROLLED_BACK, INTERRUPTED)}

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
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
        if out.is_terminal:
            out.print(Syntax(o.diff, "diff", theme="ansi_dark", background_color="default"))
        else:
            out.print(o.diff, markup=False, highlight=False, end="" if o.diff.endswith("\n") else "\n")
        if o.changes:
            out.print(f"# {host}: what the platform will do\n{o.changes.rstrip()}", markup=False, highlight=False)
    title = "deploy summary" + (" (dry run: nothing was changed)" if report.dry_run else "")
    if report.interrupted:
        title += " (INTERRUPTED)"
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
    if report.build:
        out.print(("would push " if report.dry_run else "pushed ") + report.build, markup=False, highlight=False)
    for host, o in report.outcomes.items():
        for note in o.notes:
            out.print(f"NOTE {host}: {indent_reason(note)}", markup=False, highlight=False)
        if o.status in (FAILED, ROLLED_BACK, INTERRUPTED):
            word = {FAILED: "FAILED", ROLLED_BACK: "ROLLED BACK", INTERRUPTED: "INTERRUPTED"}[o.status]
            out.print(f"{word} {host} ({o.address}): {indent_reason(o.reason)}", markup=False, highlight=False)
            if debug and o.traceback:
                out.print(o.traceback.rstrip(), markup=False, highlight=False)
