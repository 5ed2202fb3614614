"""Deploy: nornir + napalm full replace of the rendered configs, device by device.

`--dry-run` loads each candidate, prints napalm's diff and discards it: nothing
on any device changes.  A real run commits, then checks that every BGP session
that was Established before the commit is Established again within a timeout,
and rolls that device back if not.  One device failing never stops the others;
the summary names it and the exit status is non-zero.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from nornir.core.filter import F
from nornir.core.task import Result, Task
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from fabricgen.model import Plan, Switch
from fabricgen.render import environment, render_switch

CHECK_TIMEOUT = 60.0


class DeployError(Exception):
    """A device-level failure after which the device was left on (or returned to) its previous config."""


def candidate_config(sw: Switch, plan: Plan, env: Any = None) -> str:
    """What the platform's napalm driver takes as a full-replace candidate."""
    files = render_switch(sw, plan, env or environment())
    if sw.platform == "sonic":
        # napalm_sonic takes both files as one JSON document keyed by file name.
        return json.dumps({"config_db.json": json.loads(files["config_db.json"]), "frr.conf": files["frr.conf"]},
                          indent=2, sort_keys=True)
    return files["nxos.cfg"] if sw.platform == "nxos" else files["frr.conf"]


def established(device: Any) -> set[str]:
    """Peer addresses of the sessions up right now (global table)."""
    data = device.get_bgp_neighbors()
    peers = data.get("global", {}).get("peers", {})
    return {ip for ip, p in peers.items() if p.get("is_up")}


def wait_sessions(device: Any, expected: set[str], timeout: float, poll: float = 1.0) -> set[str]:
    """Wait until all `expected` sessions are up again; return those still down at the timeout."""
    deadline = time.monotonic() + timeout
    missing = set(expected)
    while True:
        try:
            missing = expected - established(device)
        except Exception:  # noqa: BLE001 - the daemon may be restarting right after the commit
            missing = set(expected)
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(poll)


def deploy_device(task: Task, plan: Plan, dry_run: bool, check_timeout: float,
                  progress: _Progress | None = None) -> Result:
    """nornir task: load, diff, and (unless dry-run) commit + post-check + rollback on failure."""
    try:
        sw = plan.switches[task.host.name]
        device = task.host.get_connection("napalm", task.nornir.config)
        candidate = candidate_config(sw, plan)
        before = set() if dry_run else established(device)
        device.load_replace_candidate(config=candidate)
        diff = device.compare_config()
        if dry_run or not diff:
            device.discard_config()
            return Result(host=task.host, diff=diff, changed=bool(diff),
                          result="would change" if diff else "unchanged")
        device.commit_config()
        missing = wait_sessions(device, before, check_timeout)
        if missing:
            device.rollback()
            raise DeployError(f"BGP sessions {', '.join(sorted(missing))} were up before the commit and did not "
                              f"come back within {check_timeout:.0f}s; rolled back to the previous config")
        return Result(host=task.host, diff=diff, changed=True, result="changed")
    finally:
        if progress is not None:
            progress.tick(task.host.name)


class _Progress:
    """One line per finished device on stderr, so long runs show they are moving."""

    def __init__(self, total: int, console: Console) -> None:
        self.total, self.done, self.console = total, 0, console
        self.lock = threading.Lock()

    def tick(self, host: str) -> None:
        with self.lock:
            self.done += 1
            self.console.print(f"[{self.done}/{self.total}] {host}", markup=False, highlight=False)


@dataclass
class DeployReport:
    dry_run: bool
    changed: dict[str, str] = field(default_factory=dict)  # host -> diff
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # host -> reason

    @property
    def ok(self) -> bool:
        return not self.failed


def _reason(result: Any) -> str:
    exc = result.exception
    if exc is None:
        return str(result.result)
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def select(nr: Nornir, limit: str | None = None, role: str | None = None) -> Nornir:
    if limit:
        names = {h.strip() for h in limit.split(",") if h.strip()}
        unknown = names - set(nr.inventory.hosts)
        if unknown:
            raise ValueError(f"--limit names hosts that are not in the plan: {', '.join(sorted(unknown))}")
        nr = nr.filter(F(name__any=sorted(names)))
    if role:
        nr = nr.filter(F(role=role))
    return nr


def run_deploy(plan: Plan, dry_run: bool, limit: str | None = None, role: str | None = None, workers: int = 10,
               check_timeout: float = CHECK_TIMEOUT, console: Console | None = None,
               lab_workdir: str = "build/lab") -> DeployReport:
    from fabricgen.nornir_inventory import nornir_for

    nr = select(nornir_for(plan, workers=workers, lab_workdir=lab_workdir), limit, role)
    progress = _Progress(len(nr.inventory.hosts), console or Console(stderr=True))
    try:
        results = nr.run(task=deploy_device, plan=plan, dry_run=dry_run, check_timeout=check_timeout,
                         progress=progress, on_failed=True)
    finally:
        nr.close_connections(on_failed=True)
    report = DeployReport(dry_run=dry_run)
    for host in sorted(results):
        multi = results[host]
        if multi.failed:
            failed = next((r for r in multi if r.failed), multi[0])
            report.failed[host] = _reason(failed)
        elif multi[0].diff:
            report.changed[host] = multi[0].diff
        else:
            report.unchanged.append(host)
    return report


def print_report(report: DeployReport, out: Console) -> None:
    for host, diff in report.changed.items():
        out.rule(f"{host}{' (dry run)' if report.dry_run else ''}")
        if out.is_terminal:
            out.print(Syntax(diff, "diff", theme="ansi_dark", background_color="default"))
        else:
            out.print(diff, markup=False, highlight=False)
    t = Table(title="deploy summary" + (" (dry run: nothing was changed)" if report.dry_run else ""))
    t.add_column("status")
    t.add_column("devices", justify="right")
    t.add_column("hosts")
    t.add_row("would change" if report.dry_run else "changed", str(len(report.changed)), ", ".join(report.changed))
    t.add_row("unchanged", str(len(report.unchanged)), ", ".join(report.unchanged))
    t.add_row("failed", str(len(report.failed)), ", ".join(report.failed))
    out.print(t)
    for host, reason in report.failed.items():
        out.print(f"FAILED {host}: {reason}", markup=False, highlight=False)


def cmd_deploy(args: argparse.Namespace) -> int:
    from fabricgen.plan import load_plan

    plan = load_plan(args.intent)
    out = Console(highlight=False, soft_wrap=True)
    try:
        report = run_deploy(plan, args.dry_run, args.limit, args.role, args.workers, args.check_timeout,
                            console=Console(stderr=True))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_report(report, out)
    return 0 if report.ok else 1


def register_cli(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deploy", help="push the rendered configs with nornir + napalm (full replace)")
    p.add_argument("-i", "--intent", default="inventory/fabric.yaml")
    p.add_argument("--dry-run", action="store_true", help="show per-device diffs; change nothing")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--limit", help="comma-separated hostnames")
    scope.add_argument("--role", choices=["leaf", "spine", "super_spine"])
    p.add_argument("--workers", type=int, default=10, help="devices in parallel (default 10)")
    p.add_argument("--check-timeout", type=float, default=CHECK_TIMEOUT,
                   help="seconds for BGP sessions to come back after a commit (default 60)")
    p.set_defaults(func=cmd_deploy)
