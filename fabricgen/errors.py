"""User-facing errors: every bad input names the file, the YAML path, the line and a fix.

A `Problem` cannot be made without its fix: the README promises `(fix: …)` on every error.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Problem:
    """One thing wrong with the intent."""

    path: str  # dotted YAML path, e.g. "topology.oversubscription"
    message: str
    hint: str  # what to do about it; printed as "(fix: …)"
    line: int | None = None

    def format(self, source: str) -> str:
        where = f"{source}:{self.line}" if self.line else source
        return f"{where}: {self.path or '<root>'}: {self.message} (fix: {self.hint})"


@dataclass
class FabricError(Exception):
    """Raised for any invalid intent; the CLI prints it and exits 2 without a traceback."""

    source: str
    problems: list[Problem] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(p.format(self.source) for p in self.problems)

    @classmethod
    def single(cls, source: str, path: str, message: str, hint: str, line: int | None = None) -> FabricError:
        return cls(source, [Problem(path, message, hint, line)])
