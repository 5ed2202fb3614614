"""One result type for every `fabricgen check` rule, and its three output formats.

Every checker (SONiC YANG, FRR parser, NX-OS references, RoCE consistency, ...) returns
plain `Finding`s so the CLI can merge, sort and print them the same way: a table for
people, JSON for scripts and JUnit XML for CI systems that draw one test per
device and rule.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

Severity = Literal["error", "warning"]
OutputFormat = Literal["table", "json", "junit"]


@dataclass(frozen=True)
class Finding:
    """One problem in one generated file.

    `location` is "L12" for line-oriented configs, or a JSON pointer into the file
    (e.g. "/PORT/Ethernet0/mtu") for JSON configs; empty when the whole file is meant.
    `rule` is a stable id ("sonic-yang", "frr-parse", ...) that users filter and
    suppress on, so never rename one.
    """

    device: str
    file: str
    location: str
    rule: str
    message: str
    severity: Severity = "error"


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort "L9" before "L10" and "Ethernet8" before "Ethernet16"."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", text) if p)


def sort_key(f: Finding) -> tuple[object, ...]:
    """Deterministic order: device, file, position in the file, rule, message."""
    return (_natural(f.device), f.file, _natural(f.location), f.rule, f.message, f.severity)


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings in the order every output format uses (duplicates dropped)."""
    return sorted(set(findings), key=sort_key)


def format_findings(
    findings: Iterable[Finding],
    fmt: OutputFormat,
    checked: list[tuple[str, str]] | None = None,
    *,
    color: bool | None = None,
) -> str:
    """Render findings as a table, a JSON list or JUnit XML.

    `checked` lists the (device, rule) pairs that were run; JUnit needs it to emit
    passing test cases too, and the table uses it for the summary line.  When it
    is None the pairs are taken from the findings.  `color` defaults to whether
    stdout is a terminal, so piped output stays plain.
    """
    items = sorted_findings(findings)
    if fmt == "json":
        return json.dumps([asdict(f) for f in items], indent=2) + "\n"
    if fmt == "junit":
        return _junit(items, checked)
    if fmt == "table":
        return _table(items, checked, sys.stdout.isatty() if color is None else color)
    raise ValueError(f"unknown output format {fmt!r} (use table, json or junit)")


def _summary(items: list[Finding], checked: list[tuple[str, str]] | None) -> str:
    errors = sum(1 for f in items if f.severity == "error")
    warnings = len(items) - errors
    pairs = set(checked) if checked is not None else {(f.device, f.rule) for f in items}
    devices = {d for d, _ in pairs} | {f.device for f in items}
    return (
        f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
        f" ({len(devices)} device{'s' if len(devices) != 1 else ''} checked)"
    )


def _table(items: list[Finding], checked: list[tuple[str, str]] | None, color: bool) -> str:
    """A rich table on a terminal; unwrapped, borderless columns otherwise (grep-friendly)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    out = io.StringIO()
    console = Console(
        file=out,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=shutil.get_terminal_size().columns if color else 100_000,
        highlight=False,
    )
    if items:
        table = Table(box=box.SIMPLE_HEAD if color else None, show_edge=color, pad_edge=False)
        for name in ("device", "file", "location", "severity", "rule"):
            table.add_column(name, no_wrap=True, overflow="ignore")
        table.add_column("message", overflow="fold" if color else "ignore", no_wrap=not color)
        for f in items:
            style = ("red" if f.severity == "error" else "yellow") if color else ""
            # Text cells, not markup: messages quote config text that may contain "[...]".
            table.add_row(
                Text(f.device),
                Text(f.file),
                Text(f.location),
                Text(f.severity, style=style),
                Text(f.rule),
                Text(f.message),
            )
        console.print(table)
    console.print(_summary(items, checked), markup=False)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def _junit(items: list[Finding], checked: list[tuple[str, str]] | None) -> str:
    """One <testcase> per (device, rule); every error is a <failure>, warnings go to system-out."""
    pairs = set(checked or ()) | {(f.device, f.rule) for f in items}
    by_case: dict[tuple[str, str], list[Finding]] = {p: [] for p in pairs}
    for f in items:
        by_case[(f.device, f.rule)].append(f)
    order = sorted(by_case, key=lambda p: (_natural(p[0]), p[1]))
    failed = sum(1 for p in order if any(f.severity == "error" for f in by_case[p]))
    suites = ET.Element("testsuites", name="fabricgen check", tests=str(len(order)), failures=str(failed))
    suite = ET.SubElement(
        suites, "testsuite", name="fabricgen check", tests=str(len(order)), failures=str(failed), errors="0"
    )
    for device, rule in order:
        case = ET.SubElement(suite, "testcase", classname=device, name=rule)
        notes = []
        for f in by_case[(device, rule)]:
            where = f"{f.file}:{f.location}" if f.location else f.file
            if f.severity == "error":
                fail = ET.SubElement(case, "failure", message=f"{where}: {f.message}", type=rule)
                fail.text = f"{where}: {f.message}"
            else:
                notes.append(f"warning: {where}: {f.message}")
        if notes:
            ET.SubElement(case, "system-out").text = "\n".join(notes)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
