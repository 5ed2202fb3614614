"""fabricgen as a library: the stages the command line runs, one function each (as pyavd exposes its own).

    import fabricgen

    intent = fabricgen.load_intent("inventory/fabric.yaml")  # the validated intent (pydantic)
    plan = fabricgen.build_plan(intent)                        # resolved, vendor-neutral switches, links, BGP, QoS
    fabricgen.render(plan, "build")                            # configs, NIC scripts, plan.json, cabling, inventory
    findings = fabricgen.check(plan, "build/configs")          # [] when every check passes

Bad input raises `FabricError` carrying what `fabricgen` prints: file, line, YAML path, problem, fix.
These functions are what the CLI commands call; nothing here prints or exits.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from fabricgen.base.findings import Finding
from fabricgen.intent.model import Intent
from fabricgen.plan.model import Plan
from fabricgen.render.build import RenderResult

# Where each loaded intent came from (file, YAML path -> line), so a plan error names the line.
_ORIGINS: dict[int, tuple[str, dict[tuple[Any, ...], int]]] = {}


def load_intent(path: str | Path) -> Intent:
    """Read and validate an intent YAML file (FabricError on any problem, with its file and line)."""
    from fabricgen.intent.model import load_intent as load_and_validate

    intent, lines = load_and_validate(path)
    _ORIGINS[id(intent)] = (str(path), lines)
    weakref.finalize(intent, _ORIGINS.pop, id(intent), None)
    return intent


def build_plan(intent: Intent | str | Path) -> Plan:
    """Resolve an intent (or the intent file at a path) into the plan every later stage reads.

    Cross-field problems (too few ports, pools too small, inconsistent QoS...) raise FabricError,
    located in the intent file when the intent came from `load_intent`."""
    from fabricgen.plan import build as planner

    if not isinstance(intent, Intent):
        intent = load_intent(intent)
    source, lines = _ORIGINS.get(id(intent), ("<intent>", {}))
    return planner.build_plan(intent, source, lines)


def render(plan: Plan, output: str | Path = "build", *, check: bool = True, workers: int | None = None,
           force: bool = False) -> RenderResult:
    """Write every output of the plan into `output`, atomically (a failure leaves the previous output).

    With `check` (as `fabricgen render`), the fast RoCE and NIC checks run on the new files first and a
    failure raises `CheckFailed` (its `.findings`) without writing anything.  `output` must be new,
    empty or an earlier render's output unless `force`; otherwise FabricError says why."""
    from fabricgen.render.build import render_all

    checks = None
    if check:
        from fabricgen.check.fast import fast_checks

        checks = fast_checks(plan)
    return render_all(plan, output, workers=workers, checks=checks, force=force)


def check(plan: Plan, configs: str | Path = "build/configs", *, hosts: str | Path | None = None,
          sonic_yang: str | Path | None = None, full: bool = True, workers: int | None = None,
          cache: bool = True) -> list[Finding]:
    """Every finding on rendered configs, as `fabricgen check` reports them.

    `full=False` runs only the fast checks (RoCE invariants, NIC consistency).  The full check also runs
    SONiC's YANG models (`sonic_yang`, else found as `fabricgen check` finds them; SonicYangSetupError if
    none), FRR's parser and the NX-OS structure rules.  `hosts` defaults to <configs>/../hosts."""
    from fabricgen.check.run import run_checks

    return run_checks(plan, Path(configs), Path(hosts) if hosts is not None else None,
                      Path(sonic_yang) if sonic_yang is not None else None, full=full, workers=workers, cache=cache)
