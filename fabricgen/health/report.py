"""The health run as JSON, and the atomic file write `validate --output` uses."""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fabricgen.health.collect import HealthRun


def health_json(run: HealthRun) -> dict[str, Any]:
    """Findings (device, rule, port, priority/queue, counter, delta, window, limit), notes and advice."""
    return {
        "window_seconds": run.window,
        "findings": [asdict(f) for sh in sorted(run.switches, key=lambda s: s.device) for f in sh.findings],
        "judged": {sh.device: dict(sorted(sh.judged.items())) for sh in sorted(run.switches, key=lambda s: s.device)},
        "notes": run.notes,
        "advice": run.advice,
    }


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``: a reader (the
    node_exporter textfile collector) sees the old file or the new one, never half of one."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
