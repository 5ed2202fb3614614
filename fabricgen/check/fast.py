"""The checks `render` runs before it swaps new configs in (opt out with --no-check): the fabric-wide RoCE
invariants, duplicate addresses, NIC consistency, the range rules, and each platform's structural rules from
the same parse -- every check but those `RENDER_SKIPS` names (left to `fabricgen check`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fabricgen.check.run import RENDER_SKIPS, CheckFailed, fast_findings
from fabricgen.plan.model import Plan


def skipped(plan: Plan) -> dict[str, str]:
    """The checks of this plan's platforms that render does not run, each with why."""
    from fabricgen.catalog.registry import platform

    ids = {r for name in {sw.platform for sw in plan.switches.values()} for r in platform(name).rule_ids()}
    return {rule: why for rule, why in RENDER_SKIPS.items() if rule in ids}


def fast_checks(plan: Plan) -> Callable[[Path], None]:
    """A hook for render_all: the checks above on the scratch output directory."""

    def run(outdir: Path) -> None:
        errors = [f for f in fast_findings(plan, outdir / "configs", outdir / "hosts", structural=True)
                  if f.severity == "error"]
        if errors:
            raise CheckFailed(errors)

    return run
