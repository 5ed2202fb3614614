"""Command line: fabricgen plan|render|check|lab|deploy|validate (filled in by the pipeline modules)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("fabricgen: not yet wired", file=sys.stderr)
    return 2
