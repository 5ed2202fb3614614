"""validate's output: a table for people, JSON and JUnit for machines; ``fabricgen validate``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.table import Table

from fabricgen.base.options import add_build, add_connection, add_intent, add_scope, add_workers
from fabricgen.validate.checks import CHECKS, Outcome, Report

FOLD = 20  # lines of one finding shown in the table; the rest is folded with its count


def folded(text: str, limit: int = FOLD) -> str:
    """``text`` cut to ``limit`` lines, saying how many were folded (JSON shows them all)."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join(lines[:limit] + [f"... {len(lines) - limit} more line(s) folded (--format json shows all)"])


def render_report(report: Report, fmt: str) -> str:
    if fmt == "json":
        doc: dict[str, object] = {"ok": report.ok, "failures": [asdict(o) for o in report.failures],
                                  "checked": len(report.outcomes),
                                  "coverage": report.coverage}
        if report.health is not None:
            from fabricgen.validate.health_report import health_json

            doc["health"] = health_json(report.health)
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
    if fmt == "prometheus":
        from fabricgen.validate.prometheus import render

        return render(report, report.health)
    if fmt == "junit":
        suites = ET.Element("testsuites", name="fabricgen validate")
        by_check: dict[str, list[Outcome]] = {}
        for o in report.outcomes:
            by_check.setdefault(o.check, []).append(o)
        for check, items in sorted(by_check.items()):
            suite = ET.SubElement(suites, "testsuite", name=check, tests=str(len(items)),
                                  failures=str(sum(1 for o in items if not o.ok)))
            for o in items:
                case = ET.SubElement(suite, "testcase", classname=f"{check}.{o.device}", name=o.item)
                if not o.ok:
                    ET.SubElement(case, "failure", message=f"expected {o.expected}, got {o.actual}")
        return ET.tostring(suites, encoding="unicode") + "\n"
    raise ValueError(fmt)


def print_table(report: Report, con: Console) -> None:
    summary = Table(title="validation")
    for col in ("check", "passed", "failed"):
        summary.add_column(col, justify="left" if col == "check" else "right")
    for check in sorted({o.check for o in report.outcomes}):
        items = [o for o in report.outcomes if o.check == check]
        bad = sum(1 for o in items if not o.ok)
        summary.add_row(check, str(len(items) - bad), str(bad))
    con.print(summary)
    for line in report.coverage:
        con.print(line, markup=False)
    if report.failures:
        t = Table(title="failures")
        for col in ("device", "check", "item", "expected", "actual"):
            t.add_column(col)
        for o in report.failures:
            t.add_row(o.device, o.check, o.item, o.expected, folded(o.actual))
        con.print(t)
    if report.health is not None:
        for line in [*report.health.notes, *report.health.advice]:
            con.print(line, markup=False)
    con.print("PASS" if report.ok else f"FAIL: {len(report.failures)} failure(s)")


def cmd_validate(args: argparse.Namespace) -> int:
    from fabricgen.errors import FabricError, Problem
    from fabricgen.plan.build import load_plan
    from fabricgen.render import manifest

    plan = load_plan(args.intent)
    if args.ptp and plan.ptp is None:
        raise FabricError(args.intent, [Problem("ptp", "validate --ptp: the intent has no ptp: section",
                                                "add a ptp: section (docs/ptp.md), or drop --ptp")])
    checks = tuple(c for c in CHECKS if c not in set(args.skip or []) and (c != "tenants" or args.tenants))
    if args.tenants and plan.tenancy is None:
        raise FabricError(args.intent, [Problem("tenancy", "--tenants: this fabric has no tenants to validate",
                                                "add tenancy: and tenants: to the intent, or drop --tenants")])
    build = None
    if {"config", "persisted"} & set(checks):
        try:
            build = manifest.load(args.build, plan)
        except FabricError as exc:
            raise FabricError(exc.source, [p.__class__(p.path, p.message, p.hint + " (or --skip config --skip "
                                                       "persisted to validate without a build)", p.line)
                                           for p in exc.problems]) from None
        problems = build.problems(plan.switches[h] for h in plan.switches)
        if problems and not args.force:
            con = Console(stderr=True, highlight=False, soft_wrap=True)
            con.print("validate refused: the build is not what was checked:", markup=False)
            for line in problems:
                con.print("  " + line, markup=False)
            con.print("  (--force compares with the files as they are)", markup=False)
            return 2
    from fabricgen.connect import target
    from fabricgen.validate.collect import run_validate  # nornir: the [deploy] extra

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    err.print(f"validating intent {args.intent} ({target(plan, args.lab_dir)})\n  against "
              f"{build.label if build is not None else 'no build (config and persisted skipped)'}", markup=False)
    window = None
    if args.health:
        window = float(args.window if args.window is not None else plan.health.window_seconds)
    report = run_validate(plan, checks, args.limit, args.role, args.workers, build=build, lab_dir=args.lab_dir,
                          known_hosts=args.known_hosts, full=args.full,
                          health_window=window, ptp=args.ptp or (args.health and plan.ptp is not None),
                          say=lambda line: err.print(line, markup=False))
    if args.output:
        from fabricgen.base.outdir import write_atomically

        # the table is for the terminal: with it, the file gets the JSON report
        write_atomically(args.output, render_report(report, "json" if args.format == "table" else args.format))
    if args.format == "table":
        print_table(report, Console(highlight=False, soft_wrap=True))
    elif not args.output:
        sys.stdout.write(render_report(report, args.format))
    return 0 if report.ok else 1


def window_seconds(text: str) -> float:
    """argparse type of --window: seconds between the two counter reads, 1 to 3600."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (fix: pass e.g. 10)") from None
    if not 1 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"{text} is not between 1 and 3600 seconds (fix: pass e.g. 10)")
    return value


def window_seconds_or_off(text: str) -> float:
    """argparse type of deploy --wave-health: a --window, or 0 for no health check between waves."""
    if text.strip() in ("0", "0.0"):
        return 0.0
    try:
        return window_seconds(text)
    except argparse.ArgumentTypeError as exc:
        fix = str(exc).replace("(fix: pass e.g. 10)", "(fix: pass e.g. 10, or 0 to skip)")
        raise argparse.ArgumentTypeError(fix) from None



def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("validate", help="compare live BGP (sessions, timers, BFD, routes), ECMP (paths and "
                                        "hash), LLDP, interfaces, MTU, config (running and saved) and GPU reachability "
                                        "with the plan")
    add_intent(p)
    p.add_argument("--format", choices=["table", "json", "junit", "prometheus"], default="table",
                   help="prometheus: text exposition for node_exporter's textfile collector")
    p.add_argument("-o", "--output", default=None,
                   help="write the report to this file (replaced atomically: safe for the textfile collector)")
    p.add_argument("--health", action="store_true",
                   help="also judge lossless health: PFC, queue and watchdog counter deltas against the intent's "
                        "health: limits, and every server's live NIC settings")
    p.add_argument("--ptp", action="store_true",
                   help="also judge every PTP clock of the intent's ptp: (mode, domain, grandmaster, steps removed, "
                        "parent, port states, last sync, offset, path delay; docs/ptp.md); --health includes "
                        "the clocks' offset and path delay when the intent has ptp:")
    p.add_argument("--window", type=window_seconds, default=None,
                   help="seconds between the two counter reads of --health (default: health.window_seconds, 10)")
    add_scope(p)
    p.add_argument("--skip", action="append", choices=list(CHECKS), help="skip a check (repeatable)")
    add_workers(p, 10, "devices read in parallel")
    p.add_argument("--tenants", action="store_true",
                   help="also the tenant reachability matrix (same-VRF pairs answer at the tenant MTU, cross-tenant "
                        "pairs do not unless leaked) and each switch's tenant VRFs, L3VNIs and routes read back")
    p.add_argument("--full", action="store_true",
                   help="ping every GPU NIC to every other server (default: a sample that reaches every NIC, rail, "
                        "leaf pair and leaf -> spine link at least once, and says so)")
    add_build(p, "the checked build to compare configs with")
    p.add_argument("--force", action="store_true", help="compare with build files that changed after their check")
    add_connection(p)
    p.set_defaults(func=cmd_validate)

