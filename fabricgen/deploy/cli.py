"""`fabricgen deploy`: push the checked build; see fabricgen.deploy.run for the run and .context for every option."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

from rich.console import Console

from fabricgen.base.options import add_build, add_connection, add_intent, add_scope, add_workers
from fabricgen.deploy.phases import CHECK_TIMEOUT
from fabricgen.platforms.change import LABELS
from fabricgen.validate.output import window_seconds_or_off


def _error(text: str) -> int:
    con = Console(stderr=True, highlight=False, soft_wrap=True)
    lines = text.strip().splitlines()
    con.print("deploy refused: " + lines[0], markup=False)
    for line in lines[1:]:
        con.print("  " + line, markup=False)
    return 2


def cmd_deploy(args: argparse.Namespace) -> int:
    from fabricgen.connect import target
    from fabricgen.deploy.context import DeployOptions  # nornir (the [deploy] extra), like run
    from fabricgen.deploy.report import print_report
    from fabricgen.deploy.run import Abandoned, run_deploy
    from fabricgen.deploy.state import DeployRefused
    from fabricgen.plan.build import load_plan
    from fabricgen.render import manifest

    plan = load_plan(args.intent)
    build = manifest.load(args.build, plan)
    opts = DeployOptions(dry_run=args.dry_run, limit=args.limit, role=args.role, workers=args.workers,
                         check_timeout=args.check_timeout, force=args.force, resume=args.resume,
                         discard=args.discard, break_lock=args.break_lock,
                         accept_undeployable=args.accept_undeployable, lab_dir=args.lab_dir,
                         known_hosts=args.known_hosts, handle_signals=True, max_impact=args.max_impact,
                         waves=args.waves, canary=args.canary, drain=args.drain, drain_timeout=args.drain_timeout,
                         pause_on_failure=args.pause_on_failure, wave_timeout=args.wave_timeout,
                         wave_health=args.wave_health, day0=args.day0)
    out = Console(highlight=False, soft_wrap=True)
    progress = Console(stderr=True, highlight=False, soft_wrap=True)
    where = target(plan, args.lab_dir)  # which fabric and lab; a lab of another fabric is refused here
    progress.print(f"{'dry run of' if args.dry_run else 'deploying'} intent {args.intent} ({where})\n"
                   f"  {'would push' if args.dry_run else 'pushing'} {build.label}", markup=False)
    try:
        with _sigterm_interrupts() as got:
            report = run_deploy(plan, build, opts, console=progress)
    except (DeployRefused, ValueError) as exc:
        return _error(str(exc))
    except Abandoned as exc:
        print_report(exc.report, out, debug=args.debug)
        out.print("abandoned: see the journal; `fabricgen deploy --resume` continues the run", markup=False)
        sys.stdout.flush()
        os._exit(exc.report.exit_code)  # threads still in a commit are left to the journal; do not wait for them
    except KeyboardInterrupt:  # outside the device phase (loading, locking, finishing): no device mid-change
        name = got[0] if got else "Ctrl-C"
        out.print(f"deploy interrupted ({name}) while no device was being changed; `fabricgen deploy` says "
                  "whether the last run needs --resume", markup=False)
        return 143 if name == "SIGTERM" else 130
    print_report(report, out, debug=args.debug)
    if report.interrupted:
        out.print("interrupted: `fabricgen deploy --resume` continues the run", markup=False)
    return report.exit_code


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[list[str]]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does (the run's own handlers take over while devices
    change); the list names the signal that did."""
    got: list[str] = []

    def handler(signum: int, frame: Any) -> None:
        got.append("SIGTERM")
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield got
    finally:
        signal.signal(signal.SIGTERM, previous)


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("deploy", help="push the checked build with nornir + napalm, device by device")
    add_intent(p)
    add_build(p, "rendered build to push: its manifest must match the intent")
    p.add_argument("--dry-run", action="store_true", help="show per-device diffs and which build; change nothing")
    add_scope(p)
    add_workers(p, 10, "devices in parallel")
    p.add_argument("--check-timeout", type=float, default=CHECK_TIMEOUT,
                   help="seconds for BGP sessions and their prefixes to come back after a commit (default 60)")
    p.add_argument("--force", action="store_true",
                   help="push files that changed after the check, or were rendered with --no-check")
    run = p.add_mutually_exclusive_group()
    run.add_argument("--resume", action="store_true", help="continue the last, unfinished deploy")
    run.add_argument("--discard", action="store_true",
                     help="forget the last, unfinished deploy's journal and start over")
    p.add_argument("--break-lock", action="store_true", help="take over the deploy lock of a deploy that is dead")
    p.add_argument("--accept-undeployable", action="store_true",
                   help="deploy although the intent sets things the platforms cannot deploy (see `fabricgen plan`)")
    add_connection(p)
    p.add_argument("--max-impact", choices=list(LABELS), default=None, metavar="LABEL",
                   help="refuse changes whose impact is worse than LABEL (" + " < ".join(LABELS) + "); a real run "
                        "diffs every device first and changes nothing if one exceeds it")
    staged = p.add_argument_group("staged rollout (fabricgen.deploy.waves, fabricgen.deploy.drain)")
    staged.add_argument("--waves", metavar="auto|FILE", default=None,
                        help="deploy in waves that never take more than one switch of a spine group, a quarter of "
                             "any switch's uplinks or one rail of a server at a time (auto), or as a YAML file "
                             "lists them; the fabric is validated between waves and the first failure stops it")
    staged.add_argument("--canary", metavar="HOST", default=None, help="with --waves: this switch alone, first")
    staged.add_argument("--drain", action="store_true",
                        help="before a change that is not hitless: BGP graceful shutdown (RFC 8326), wait for the "
                             "neighbors to move traffic, commit, check, undrain")
    staged.add_argument("--drain-timeout", type=float, default=60.0,
                        help="seconds for the neighbors to move traffic off a drained switch (default 60)")
    staged.add_argument("--pause-on-failure", action="store_true",
                        help="with --waves: a failed wave asks whether to go on instead of stopping")
    staged.add_argument("--wave-timeout", type=float, default=120.0,
                        help="seconds for BGP, ECMP and routes to validate after a wave (default 120)")
    staged.add_argument("--wave-health", type=window_seconds_or_off, metavar="SECONDS",
                        help="with --waves: lossless-health window judged after each wave (default the intent's "
                             "health.window_seconds; 0 = skip the health check)")
    p.add_argument("--day0", action="store_true",
                   help="SONiC: apply the whole ConfigDB with `config load` + `config reload` instead of GCU, the "
                        "day-0 path `plan` names for a SKU whose lossless config GCU refuses live (labelled "
                        "reload-required: every service restarts)")
    p.add_argument("--debug", action="store_true", help="print each failure's traceback")
    p.set_defaults(func=cmd_deploy)
