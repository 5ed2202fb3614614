"""The benchmark tables in docs/benchmarks.md are written by `make bench`, never by hand.

Each bench script replaces its own section, the lines between `<!-- bench:NAME -->` and
`<!-- /bench:NAME -->`, with what it measured, headed by the date, the machine's core count and its load
average at the start, so a table can never be older than the run that printed it.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def machine_line(runs: int) -> str:
    """When and where: the date, the cores, the load average, how many runs each figure is the minimum of."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    day = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    shared = " (a shared machine: other jobs were running)" if load > (os.cpu_count() or 1) else ""
    runs_text = f"each time the minimum of {runs} runs" if runs > 1 else "one run"
    return (f"Measured {day} by `make bench` on {os.cpu_count()} cores, load average {load:.1f} at the start"
            f"{shared}; {runs_text}.")


def write_section(name: str, body: str, doc: Path = DOC) -> None:
    """Replace the section `name` of the doc with `body` (the markers must exist)."""
    text = doc.read_text(encoding="utf-8")
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{doc}: no {begin} ... {end} section to write the {name} table into")
    doc.write_text(pattern.sub(lambda _: f"{begin}\n{body.strip()}\n{end}", text), encoding="utf-8")
