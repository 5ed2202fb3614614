"""The health run as JSON, and the atomic file write `validate --output` uses."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fabricgen.validate.health_collect import HealthRun


def health_json(run: HealthRun) -> dict[str, Any]:
    """Findings (device, rule, port, priority/queue, counter, delta, window, limit), notes and advice."""
    return {
        "window_seconds": run.window,
        "findings": [asdict(f) for sh in sorted(run.switches, key=lambda s: s.device) for f in sh.findings],
        "judged": {sh.device: dict(sorted(sh.judged.items())) for sh in sorted(run.switches, key=lambda s: s.device)},
        "notes": run.notes,
        "advice": run.advice,
    }


