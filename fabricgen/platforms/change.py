"""What a change does to traffic, in words every platform's rules share, and how a candidate is changed.

Change impact: what each hunk of a deploy diff does to the traffic of a running fabric.

Every hunk of a device's diff gets one label, the worst of its changed lines:

==================  =========================================================================
``hitless``         nothing stops: descriptions, policy (route refresh), ECN and scheduler
                    settings, BFD timers (poll sequence), a new session or address
``bgp-reset``       one or more BGP sessions go down and come back (or keep their old timers
                    until they do): ECMP routes around the switch's links meanwhile
``port-flap``       a port goes down and up: MTU, speed, FEC, breakout, shutdown
``buffer-recarve``  buffers or queue mapping are re-programmed: PFC, PGs, buffer profiles,
                    DSCP/TC/queue maps; lossless traffic pauses or moves queue mid-flight
``daemon-restart``  a routing daemon or container restarts: every session of the switch drops
``reload-required`` takes effect only after a reload (NX-OS ``hardware profile dlb``, SONiC's
                    buffer model or HWSKU)
``refused-live``    the platform refuses it on a running switch (SONiC GCU's field rules)
==================  =========================================================================

The labels are ordered, hitless least; a device's and the fabric's impact is the worst of its
hunks.  Each platform's rules live in its folder (``platforms/<os>/change.py``) and its registry
record names them (``impact``); a line no rule knows gets a conservative label and says so.

Hunks come from the two normalised sides a driver diffed (``last_sides``, so every changed line
knows its full stanza or JSON path), or, for drivers that do not expose them, from the unified
diff text alone (then a line's path is what the hunk itself shows).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Label(StrEnum):
    """What a change does to traffic, least first (the order is the severity)."""

    HITLESS = "hitless"
    BGP_RESET = "bgp-reset"
    PORT_FLAP = "port-flap"
    BUFFER_RECARVE = "buffer-recarve"
    DAEMON_RESTART = "daemon-restart"
    RELOAD_REQUIRED = "reload-required"
    REFUSED_LIVE = "refused-live"


LABELS: tuple[Label, ...] = tuple(Label)
HITLESS, BGP_RESET, PORT_FLAP, BUFFER_RECARVE, DAEMON_RESTART, RELOAD_REQUIRED, REFUSED_LIVE = LABELS
SEVERITY: dict[str, int] = {label: rank for rank, label in enumerate(LABELS)}


@dataclass(frozen=True)
class Impact:
    label: str
    why: str

    @property
    def severity(self) -> int:
        return SEVERITY[self.label]


@dataclass(frozen=True)
class Change:
    """One changed line: ``sign`` "+"/"-", its ancestors (outermost first, stripped) and its text."""

    file: str
    sign: str
    path: tuple[str, ...]
    text: str
    whole: bool = False  # an ancestor was added/removed with it (an object or stanza as a whole)


@dataclass
class Hunk:
    file: str
    header: str  # "@@ -a,b +c,d @@"
    lines: list[str]  # the hunk's lines as the unified diff shows them
    changes: list[Change] = field(default_factory=list)
    impacts: list[Impact] = field(default_factory=list)  # per change, same order
    old_span: tuple[int, int] = (0, 0)  # 0-based, end excluded: the side lines the hunk covers
    new_span: tuple[int, int] = (0, 0)

    @property
    def impact(self) -> Impact:
        return worst(self.impacts) or Impact(HITLESS, "no changed line")


def worst(impacts: Iterable[Impact]) -> Impact | None:
    best: Impact | None = None
    for impact in impacts:
        if best is None or impact.severity > best.severity:
            best = impact
    return best


def exceeds(impact: Impact | None, limit: str) -> bool:
    return impact is not None and impact.severity > SEVERITY[limit]


_TIMERS = re.compile(r"^(timers bgp |neighbor \S+ timers \d|timers \d)")


def needs_session_reset(hunks: Iterable[Hunk]) -> bool:
    """The change sets BGP keepalive/hold time, which a session takes only when it re-establishes:
    deploy resets the sessions so the new timers apply (the hunk is labelled bgp-reset)."""
    for hunk in hunks:
        for c in hunk.changes:
            if c.sign == "+" and (_TIMERS.match(c.text) or json_key(c.text) in ("holdtime", "keepalive")):
                return True
    return False


def json_key(line: str) -> str | None:
    m = re.match(r'^"((?:[^"\\]|\\.)*)"\s*:', line)
    return json.loads(f'"{m.group(1)}"') if m else None


# --------------------------------------------------------------------------- hunks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def ancestors(lines: Sequence[str]) -> list[tuple[int, ...]]:
    """Per line, the indices of its ancestors (outermost first): the nearest earlier line of smaller
    indentation, recursively.  Works for indented config text and for pretty-printed JSON."""
    out: list[tuple[int, ...]] = []
    stack: list[int] = []
    for i, line in enumerate(lines):
        if not line.strip():
            out.append(tuple(stack))
            continue
        depth = _indent(line)
        while stack and _indent(lines[stack[-1]]) >= depth:
            stack.pop()
        out.append(tuple(stack))
        stack.append(i)
    return out


def _range(start: int, length: int) -> str:
    """A unified diff hunk range, as difflib writes it."""
    beginning = start + 1
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def hunks_from_sides(file: str, old: Sequence[str], new: Sequence[str], context: int = 3) -> list[Hunk]:
    """The hunks ``difflib.unified_diff(old, new, n=context)`` prints, each changed line with its full path."""
    old_parents, new_parents = ancestors(old), ancestors(new)
    groups = list(difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(context))
    removed = {i for g in groups for tag, i1, i2, _, _ in g if tag in ("replace", "delete") for i in range(i1, i2)}
    added = {j for g in groups for tag, _, _, j1, j2 in g if tag in ("replace", "insert") for j in range(j1, j2)}
    out = []
    for group in groups:
        first, last = group[0], group[-1]
        header = f"@@ -{_range(first[1], last[2] - first[1])} +{_range(first[3], last[4] - first[3])} @@"
        hunk = Hunk(file, header, [], old_span=(first[1], last[2]), new_span=(first[3], last[4]))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                hunk.lines += [" " + ln for ln in old[i1:i2]]
                continue
            for i in range(i1, i2):
                hunk.lines.append("-" + old[i])
                hunk.changes.append(Change(file, "-", tuple(old[a].strip() for a in old_parents[i]), old[i].strip(),
                                           any(a in removed for a in old_parents[i])))
            for j in range(j1, j2):
                hunk.lines.append("+" + new[j])
                hunk.changes.append(Change(file, "+", tuple(new[a].strip() for a in new_parents[j]), new[j].strip(),
                                           any(a in added for a in new_parents[j])))
        out.append(hunk)
    return out


_HUNK_RE = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def hunks_from_text(diff: str) -> list[Hunk]:
    """Hunks of a unified diff text (any number of files); a line's path is what its hunk shows.

    Each hunk is read by the line counts of its header, so a changed line that itself starts
    with ``--``/``++`` is never taken for a file header.
    """
    out: list[Hunk] = []
    file = ""
    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("+++ "):
            file = line[4:].strip()
            continue
        m = _HUNK_RE.match(line)
        if not m:
            continue
        old_left = int(m.group(1)) if m.group(1) is not None else 1
        new_left = int(m.group(2)) if m.group(2) is not None else 1
        hunk = Hunk(file, m.group(0), [])
        while i < len(lines) and (old_left > 0 or new_left > 0):
            body = lines[i]
            i += 1
            if body.startswith("\\"):  # "\ No newline at end of file"
                continue
            hunk.lines.append(body)
            if body[:1] != "+":
                old_left -= 1
            if body[:1] != "-":
                new_left -= 1
        out.append(hunk)
    for hunk in out:
        texts = [ln[1:] for ln in hunk.lines]
        parents = ancestors(texts)
        changed = {k for k, ln in enumerate(hunk.lines) if ln[:1] in "+-"}
        for k, ln in enumerate(hunk.lines):
            if ln[:1] in "+-":
                hunk.changes.append(Change(hunk.file, ln[0], tuple(texts[a].strip() for a in parents[k]),
                                           texts[k].strip(), any(a in changed for a in parents[k])))
    return out


# --------------------------------------------------------------------------- the platforms' rules and drains


@dataclass(frozen=True)
class Context:
    """What a platform's rules may need besides the diff: the switch's HWSKU and SONiC branch, when known."""

    hwsku: str = ""
    branch: str | None = None
    day0: bool = False  # the SONiC day-0 path: the whole ConfigDB by `config load` + `config reload`


# (hunks of one device, context, the diffed sides per file or None) -> sets every hunk's impacts
Labeller = Callable[[list[Hunk], Context, "dict[str, tuple[Sequence[str], Sequence[str]]] | None"], None]

_ROUTER_BGP = re.compile(r"^router bgp \d+\s*$")


def with_bgp_line(text: str, on: bool, line: str) -> str:
    """``text`` without ``line``, and with it right under `router bgp` when ``on`` (a drain line)."""
    lines = [ln for ln in text.splitlines() if ln.rstrip() != line]
    if on:
        out = []
        for ln in lines:
            out.append(ln)
            if _ROUTER_BGP.match(ln):
                out.append(line)
        lines = out
    return "\n".join(lines) + "\n"
