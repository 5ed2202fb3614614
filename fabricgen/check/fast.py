"""The checks `render` runs before it swaps new configs in (opt out with --no-check)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fabricgen.check.run import CheckFailed, fast_findings
from fabricgen.plan.model import Plan


def fast_checks(plan: Plan) -> Callable[[Path], None]:
    """A hook for render_all: RoCE invariants and NIC consistency on the scratch output directory."""

    def run(outdir: Path) -> None:
        errors = [f for f in fast_findings(plan, outdir / "configs", outdir / "hosts") if f.severity == "error"]
        if errors:
            raise CheckFailed(errors)

    return run
