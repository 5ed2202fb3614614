"""Change impact of a device's deploy diff: every hunk labelled by its platform's rules.

The labels (hitless < bgp-reset < port-flap < buffer-recarve < daemon-restart < reload-required <
refused-live) and the diff machinery are ``platforms/change.py``; each platform's rules are in its
folder (``platforms/<os>/change.py``), named by its registry record (``impact``).  A device's and
the fabric's impact is the worst of its hunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fabricgen.catalog.registry import load, platform
from fabricgen.platforms.change import LABELS, Context, Hunk, Impact, hunks_from_sides, hunks_from_text, worst
from fabricgen.platforms.change import needs_session_reset as hunks_need_session_reset


@dataclass
class DeviceImpact:
    host: str
    platform: str
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def worst(self) -> Impact | None:
        return worst(h.impact for h in self.hunks)

    def counts(self) -> dict[str, int]:
        """Hunks per label, worst label first."""
        out: dict[str, int] = {}
        for label in reversed(LABELS):
            n = sum(1 for h in self.hunks if h.impact.label == label)
            if n:
                out[label] = n
        return out


def needs_session_reset(impact: DeviceImpact) -> bool:
    return hunks_need_session_reset(impact.hunks)


def device_impact(host: str, platform_name: str, sides: Sequence[tuple[str, Sequence[str], Sequence[str]]] | None,
                  diff: str, hwsku: str = "", branch: str | None = None, day0: bool = False) -> DeviceImpact:
    """Label a device's diff with its platform's rules: from the driver's ``last_sides`` when it has them
    (every changed line knows its full path), else from the diff text."""
    rules = load(platform(platform_name).impact)
    ctx = Context(hwsku, branch, day0)
    if not sides:
        hunks = hunks_from_text(diff)
        rules(hunks, ctx, None)
        return DeviceImpact(host, platform_name, hunks)
    out: list[Hunk] = []
    for file, old, new in sides:
        hunks = hunks_from_sides(file, old, new)
        rules(hunks, ctx, {file: (old, new)})
        out += hunks
    return DeviceImpact(host, platform_name, out)
def diff_sources(diff: str) -> dict[str, str]:
    """``+++`` file -> its ``---`` file in a unified diff: which side is the device's (running or saved)."""
    lines = diff.splitlines()
    return {b[4:]: a[4:] for a, b in zip(lines, lines[1:], strict=False)
            if a.startswith("--- ") and b.startswith("+++ ")}


def labelled_diff(impact: DeviceImpact, diff: str = "") -> str:
    """The diff with each hunk's label (and why) after its ``@@`` header; each file's ``---``/``+++``
    header as ``diff`` (the device's unified diff) has it, so the reader sees whether the device side
    is its running or its saved config."""
    sources = diff_sources(diff)
    out: list[str] = []
    file = None
    for hunk in impact.hunks:
        if hunk.file != file:
            file = hunk.file
            if file and file in sources:
                out.append(f"--- {sources[file]}")
            out.append(f"+++ {file}" if file else "")
        worst_change = hunk.impact
        out.append(f"{hunk.header} [{worst_change.label}] {worst_change.why}")
        out += hunk.lines
    return "\n".join(ln for ln in out if ln != "") + "\n" if out else ""
