"""Syntax-check FRR configs with FRR's own parser: `vtysh --dryrun` (no daemons needed).

Why: FRR skips a line it cannot parse and keeps going, so a typo in a generated
frr.conf silently drops e.g. a BGP neighbor.  `vtysh --dryrun` runs the same command
graph as a real load and reports every bad line as ``line N: % Unknown command[node]: text``
(exit status 2), which becomes one Finding per line.

Speed: one vtysh run costs ~25-45 ms, almost all of it start-up, and vtysh honours only
the last ``--inputfile``.  So files are checked in batches: concatenated, with a
``line vty`` line between them.  That top-level command is valid from any node (vtysh
walks up to the config node to find it) and enters the small VTY node, so a block
left open by one file (``router bgp`` ...) cannot swallow the next file's lines.  Line
numbers are mapped back per file.  If a file leaves the config mode altogether (a stray
top-level ``exit``), the separator itself fails; that batch is then re-run one file
per vtysh call.  Batches run in parallel threads (the work is in the subprocesses).

Most frr.confs of a fabric differ only in values the parser treats alike, so vtysh reads one file per
*shape* (check.frr_shapes, with the proof) and every file of a shape whose first file has a finding.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fabricgen.base.findings import Finding
from fabricgen.catalog.rules import ids
from fabricgen.check.frr_shapes import Shaper, grammar, group, long_line

(RULE,) = ids("config", "frr-parse")
SEPARATOR = "line vty"
BATCH_FILES = 64
TIMEOUT_S = 120.0

# "line 5: % Unknown command[17]:  ip adress 198.18.0.1/31", "line 9: Warning[4]...: text"
_ERROR_LINE = re.compile(r"^line (\d+): (%?\s*[^\[:]*?)(?:\[\d+\])?(?:\.\.\.)?: ?(.*)$")
_HOSTNAME = re.compile(r"^\s*hostname\s+(\S+)", re.MULTILINE)


class FrrCheckSetupError(Exception):
    """vtysh is not available, so FRR configs cannot be checked at all."""


@dataclass
class _Source:
    path: Path
    text: str
    device: str
    index: int  # its place in the input: findings come back in input order


def _device(path: Path, text: str) -> str:
    """The config's own `hostname`, else the directory the file sits in."""
    m = _HOSTNAME.search(text)
    return m.group(1) if m else (path.resolve().parent.name or str(path))


def _vtysh(binary: str, text: str) -> tuple[int, str]:
    """One dry run over `text` fed on stdin; returns (exit status, combined output)."""
    proc = subprocess.run(
        [binary, "--dryrun", "--inputfile", "/dev/stdin"],
        input=text,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return proc.returncode, proc.stderr + proc.stdout


def _parse_output(output: str) -> tuple[list[tuple[int, str]], list[str]]:
    """(line number, message) for every error line vtysh printed, and any other message (a command vtysh ran
    itself, such as `hostname`, complains without naming the line)."""
    errors = []
    other = []
    for raw in output.splitlines():
        m = _ERROR_LINE.match(raw.strip())
        if m:
            kind = m.group(2).strip().lstrip("%").strip()
            errors.append((int(m.group(1)), f"{kind}: {m.group(3).strip()}"))
        elif raw.strip():
            other.append(raw.strip())
    return errors, other


def _check_batch(binary: str, sources: list[_Source]) -> list[tuple[int, Finding]]:
    """Dry-run several files in one vtysh call; fall back to one call per file if a file escapes."""
    parts: list[str] = []
    starts: list[int] = []  # first line number of each file in the combined text
    line = 1
    for i, src in enumerate(sources):
        if i:
            parts.append(SEPARATOR + "\n")
            line += 1
        body = src.text if src.text.endswith("\n") or not src.text else src.text + "\n"
        starts.append(line)
        parts.append(body)
        line += body.count("\n")
    try:
        status, output = _vtysh(binary, "".join(parts))
    except subprocess.TimeoutExpired:
        msg = f"vtysh --dryrun did not finish within {TIMEOUT_S:.0f} s"
        return [(src.index, Finding(src.device, str(src.path), "", RULE, msg)) for src in sources]
    errors, other = _parse_output(output)
    separators = {s - 1 for s in starts[1:]}
    if len(sources) > 1 and (other or any(n in separators for n, _ in errors)):
        return [f for src in sources for f in _check_batch(binary, [src])]
    findings = []
    for n, msg in errors:
        idx = max(i for i, s in enumerate(starts) if s <= n)
        src = sources[idx]
        findings.append((src.index, Finding(src.device, str(src.path), f"L{n - starts[idx] + 1}", RULE, msg)))
    if status != 0 and not errors and len(sources) > 1:  # failed without naming a line: find out which file
        return [f for src in sources for f in _check_batch(binary, [src])]
    if status != 0 and not errors or other:
        detail = "; ".join(other) if other else f"exit status {status}"
        findings.append((sources[0].index, Finding(sources[0].device, str(sources[0].path), "", RULE,
                                                   f"vtysh --dryrun failed: {detail}")))
    return findings


def check_frr_configs(
    paths: list[Path], workers: int | None = None, *, vtysh: str | None = None, batch: int = BATCH_FILES,
    shapes: bool = True, stats: dict[str, int] | None = None,
) -> list[Finding]:
    """Every line FRR's parser rejects, across many frr.conf / bgpd.conf / zebra.conf files.

    `shapes` runs vtysh on one file per shape (check.frr_shapes) and on every file of a shape with a finding;
    False runs it on every file.  `stats`, if given, receives how many files vtysh read and how many shapes."""
    binary = vtysh or shutil.which("vtysh") or ""
    if not binary or not os.access(binary, os.X_OK):
        raise FrrCheckSetupError("vtysh not found: install FRR (Debian/Ubuntu: apt install frr) to check FRR configs")
    findings: list[Finding] = []
    sources: list[_Source] = []
    for p in paths:
        path = Path(p)
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding(path.resolve().parent.name, str(path), "", RULE, f"cannot read: {exc}"))
            continue
        sources.append(_Source(path, text, _device(path, text), len(sources)))
    if not sources:
        return findings
    n = max(1, workers if workers is not None else (os.cpu_count() or 1))
    groups = group(sources, lambda s: s.text, Shaper(grammar(binary))) if shapes else [[src] for src in sources]
    found = _check_all(binary, [g[0] for g in groups], n, batch)
    dirty = [src for g in groups if found.get(g[0].index) for src in g[1:]]  # a shape with a finding: each file
    found.update(_check_all(binary, dirty, n, batch))
    if stats is not None:
        stats.update(files=len(sources), shapes=len(groups), checked=len(groups) + len(dirty))
    return findings + [f for src in sources for f in found.get(src.index, [])]


def _check_all(binary: str, sources: list[_Source], n: int, batch: int) -> dict[int, list[Finding]]:
    """The findings of each source (by index), batches run in parallel threads."""
    out: dict[int, list[Finding]] = {}
    if not sources:
        return out
    # vtysh reads a line of 4,095 bytes or more as several, so such a file's line numbers are its own only alone
    alone = [[src] for src in sources if long_line(src.text)]
    sources = [src for src in sources if not long_line(src.text)]
    size = max(1, min(batch, -(-len(sources) // n)))  # spread small jobs over all workers
    batches = [sources[i : i + size] for i in range(0, len(sources), size)] + alone
    with ThreadPoolExecutor(max_workers=min(n, len(batches))) as pool:
        for result in pool.map(lambda b: _check_batch(binary, b), batches):
            for index, f in result:
                out.setdefault(index, []).append(f)
    return out
