"""`fabricgen check`: prove rendered configs against vendor schemas/parsers and RoCE invariants."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fabricgen.base.findings import format_findings
from fabricgen.base.options import add_intent, add_workers


def cmd_check(args: argparse.Namespace) -> int:
    from fabricgen.check.run import checked_pairs, run_checks, unavailable_checks
    from fabricgen.check.yang_models import SonicYangSetupError
    from fabricgen.plan.build import load_plan
    from fabricgen.render import manifest

    plan = load_plan(args.intent)
    configs = Path(args.configs)
    if not configs.is_dir():
        print(f"error: {configs}: no such directory (fix: run `fabricgen render` first, or pass --configs DIR)",
              file=sys.stderr)
        return 2
    hosts = Path(args.hosts) if args.hosts else configs.parent / "hosts"
    yang_dir = Path(args.sonic_yang) if args.sonic_yang else None
    unavailable = {} if args.fast else unavailable_checks(plan, configs, yang_dir)
    if "sonic-yang" in unavailable and args.require_yang:
        print(f"error: the SONiC YANG check cannot run: {unavailable['sonic-yang']}", file=sys.stderr)
        return 2
    skip = frozenset(unavailable)
    try:
        findings = run_checks(plan, configs, hosts, yang_dir, full=not args.fast, workers=args.workers,
                              cache=not args.no_cache, skip=skip)
    except SonicYangSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(format_findings(findings, args.format, checked_pairs(plan, not args.fast, skip)))
    if not args.fast and "sonic-yang" not in skip and any(sw.platform == "sonic" for sw in plan.switches.values()):
        from fabricgen.check.yang_models import release_models

        print(f"sonic-yang: {release_models(yang_dir, plan.settings.sonic_release).describe()}", file=sys.stderr)
    what = {"sonic-yang": "SONiC's YANG models on every config_db.json", "frr-parse": "FRR's parser on every frr.conf"}
    for checker, why in unavailable.items():
        print(f"not run: {checker} ({what[checker]}): {why}; every other check ran, and the build is not recorded "
              "as checked" + (" (--require-yang makes this an error)" if checker == "sonic-yang" else ""),
              file=sys.stderr)
    failed = any(f.severity == "error" for f in findings)
    if not args.fast and not skip and manifest.record_check(configs.parent, passed=not failed):
        # a hand-edited build that passes the full check is what deploy may push
        print(f"recorded the checked files in {configs.parent / manifest.MANIFEST}", file=sys.stderr)
    return 1 if failed else 0


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="validate rendered configs: SONiC YANG, FRR parser, NX-OS structure, "
                                     "RoCE invariants, NIC consistency")
    add_intent(p)
    p.add_argument("--configs", default="build/configs",
                   help="directory of <host>/<file> configs (default build/configs)")
    p.add_argument("--hosts", default=None, help="NIC scripts directory (default: <configs>/../hosts)")
    p.add_argument("--sonic-yang", default=None,
                   help="SONiC YANG models (default: $FABRICGEN_SONIC_YANG, else the models `make sonic-yang` "
                        "fetched)")
    p.add_argument("--require-yang", action="store_true",
                   help="fail (exit 2) when the SONiC YANG check cannot run (no models or no libyang) instead of "
                        "running every other check and saying which did not run")
    p.add_argument("--format", choices=["table", "json", "junit"], default="table",
                   help="findings as a table, a JSON list or JUnit XML (for CI)")
    p.add_argument("--fast", action="store_true", help="only the RoCE invariant and NIC checks")
    add_workers(p, None, "check processes")
    p.add_argument("--no-cache", action="store_true",
                   help="re-check every file: ignore and do not write <configs>/../.check-cache (per-file "
                        "SONiC YANG and FRR parser results, reused while a file's bytes, the checker, the "
                        "models and vtysh are unchanged)")
    p.set_defaults(func=cmd_check)
