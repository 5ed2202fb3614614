"""What one deploy run is told (``DeployOptions``) and what its threads share (``RunContext``).

A module of its own because every part of the run reads them: the device task (``device``), the
locks and journal (``locking``), the rollout plan (``rollout``) and the run itself (``run``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from nornir.core import Nornir
from rich.console import Console

from fabricgen.deploy import phases
from fabricgen.deploy import report as R
from fabricgen.deploy.state import Journal, StateUnwritable
from fabricgen.plan.model import Plan
from fabricgen.render.manifest import Build

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


@dataclass
class RunContext:
    """One run's shared state: the device threads journal, tick and read the cancel flag through it."""

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
