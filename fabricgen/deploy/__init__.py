"""Deploy: push a checked build with nornir + napalm, one change at a time, interruptible and resumable.

Modules: ``run`` (the run: build, selection, threads, Ctrl-C, summary), ``context`` (its options and
shared state), ``device`` (one device's change, journaled), ``locking`` (fabric lock, journal, device
locks), ``rollout`` (refusals up front, waves, validation between them), ``phases`` (the napalm steps:
lock, diff, commit, check, rollback), ``impact`` (what each diff hunk does to traffic), ``waves`` (which
switches may change together), ``drain`` (graceful shutdown around a change), ``state`` (fabric
lock and journal), ``report`` (outcomes and summary), ``cli`` (``fabricgen deploy``).

nornir and napalm are the ``[deploy]`` extra: the names below are imported when first used, so
``fabricgen render`` and ``check`` run without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabricgen.deploy.cli import register_cli
    from fabricgen.deploy.context import DeployOptions
    from fabricgen.deploy.phases import CHECK_TIMEOUT
    from fabricgen.deploy.report import DeployReport, DeviceOutcome
    from fabricgen.deploy.run import Abandoned, run_deploy
    from fabricgen.deploy.state import DeployRefused

_HOME = {"register_cli": "cli", "CHECK_TIMEOUT": "phases", "DeployReport": "report", "DeviceOutcome": "report",
         "Abandoned": "run", "DeployOptions": "context", "run_deploy": "run", "DeployRefused": "state"}

__all__ = ["CHECK_TIMEOUT", "Abandoned", "DeployOptions", "DeployRefused", "DeployReport", "DeviceOutcome",
           "register_cli", "run_deploy"]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'fabricgen.deploy' has no attribute {name!r}")
    return getattr(importlib.import_module(f"fabricgen.deploy.{_HOME[name]}"), name)
