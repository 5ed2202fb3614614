"""Command line: one fabric intent -> plan, configs, checks, deploy and validation of a RoCEv2 AI fabric.

Every command takes `-i INTENT` the same way.  Bad input exits 2 with a
message naming file, field, line and fix (never a traceback); failed checks
or validations exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabricgen.base.options import DEFAULT_BUILD, add_intent, add_workers
from fabricgen.errors import FabricError

if TYPE_CHECKING:
    from rich.console import Console

    from fabricgen.plan.model import Plan

DEFAULT_OUT = DEFAULT_BUILD

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _console(stderr: bool = False) -> Console:
    from rich.console import Console  # rich only where a command prints: `--version` and `--help` do not

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


# --------------------------------------------------------------------------- plan


def cmd_plan(args: argparse.Namespace) -> int:
    from rich.table import Table

    from fabricgen.base.templating import to_json
    from fabricgen.plan.build import load_plan, warning_lines
    from fabricgen.render.summary import cabling_csv, plan_dict, summary

    plan = load_plan(args.intent)
    if args.format == "json":
        sys.stdout.write(to_json(plan_dict(plan)) + "\n")
        return EXIT_OK
    if args.format == "csv":
        sys.stdout.write(cabling_csv(plan))
        return EXIT_OK
    s = summary(plan)
    con = _console()
    con.print(f"[bold]{s['fabric']}[/bold]: {s['gpus']} GPUs on {s['servers']} servers, {s['tiers']}-tier, "
              f"{s['planes']} plane(s)" + (f", {s['pods']} pods" if s["pods"] else "")
              + ("; endpoints: " + ", ".join(f"{n} {role}" for role, n in s["endpoints"].items())
                 if s["endpoints"] else ""))
    t = Table(title="switches and links")
    t.add_column("item")
    t.add_column("count", justify="right")
    for role in ("leaves", "spines", "super_spines"):
        t.add_row(role, str(s[role]))
    for tier, n in s["links"].items():
        t.add_row(f"links {tier}", str(n))
    for tier, ratio in s["oversubscription"].items():
        t.add_row(f"oversubscription {tier} (ports in use)", ratio)
    con.print(t)
    u = Table(title="ports per switch: in use / budget (busiest switch of each role)")
    for col in ("role", "down", "up"):
        u.add_column(col, justify="left" if col == "role" else "right")
    for role, use in s["port_use"].items():
        u.add_row(role, *(f"{use[d][0]} / {use[d][1]}" if use[d][1] else "-" for d in ("down", "up")))
    con.print(u)
    if s["choices"]:
        c = Table(title="derived choices")
        for col in ("choice", "value", "why"):
            c.add_column(col)
        for ch in s["choices"]:
            c.add_row(ch["name"], ch["value"], ch["why"])
        con.print(c)
    o = Table(title=f"physical layer: {s['ports']} ports")
    o.add_column("part")
    o.add_column("class")
    o.add_column("count", justify="right")
    for kind, n in s["modules"].items():
        o.add_row("module", kind, str(n))
    for kind, n in s["cables"].items():
        o.add_row("cable", kind, str(n))
    con.print(o)
    p = Table(title="address pools")
    for col in ("pool", "used", "size", "use"):
        p.add_column(col, justify="right" if col != "pool" else "left")
    for name, u in s["pools"].items():
        p.add_row(name, str(u["used"]), str(u["size"]), f"{100 * u['used'] / u['size']:.1f}%")
    con.print(p)
    h = Table(title="switch hardware")
    for col in ("role", "platform", "sku", "ports", "names"):
        h.add_column(col, no_wrap=col in ("sku", "names"))
    for role, hw in s["hardware"].items():
        h.add_row(role, hw["platform"], hw["sku"], hw["ports"], hw["port_names"])
    con.print(h)
    for role, hw in s["hardware"].items():
        if hw["facts"]:
            con.print(f"{role} {hw['sku']} facts: {hw['facts']}", markup=False)
        if hw.get("lossless_apply"):
            con.print(f"{role} {hw['sku']} lossless config: {hw['lossless_apply']}", markup=False)
    if s["headroom"]:
        _print_headroom(con, s["headroom"])
    generic = [role for role, hw in s["hardware"].items() if hw["port_names"] == "generic"]
    if generic:
        con.print(f"port names of {', '.join(generic)} are generic: no sku in switch_models, so they follow the "
                  "platform's naming scheme, not a real front panel (set switch_models.<role>.sku)", markup=False)
    ar = s["adaptive_routing"]
    if ar.get("enabled"):
        con.print(f"adaptive routing ({ar['mode']}): active on {ar['active_ports']} fabric ports of "
                  f"{len(ar['switches'])} switches (plan.json lists them)", markup=False)
    if "tenancy" in s:
        _print_tenancy(con, s["tenancy"])
    _print_warnings(warning_lines(plan))
    _warn_undeployable(plan)
    return EXIT_OK


def _print_tenancy(con: Any, ten: dict[str, Any]) -> None:
    """The tenants table and the MTU chain the overlay needs (fabricgen.plan.tenants)."""
    from rich.table import Table

    t = Table(title=f"tenants: {ten['scope']} isolation, {ten['mechanism']}",
              caption=f"MTU: {ten['mtu']}", caption_justify="left")
    for col in ("tenant", "id", "vni", "route target", "leaves", "servers", "ports", "reaches"):
        t.add_column(col, justify="right" if col in ("id", "vni", "leaves", "servers", "ports") else "left")
    for tp in ten["tenants"]:
        t.add_row(tp["name"], str(tp["id"]), str(tp["vni"] or "-"), tp["route_target"], str(tp["leaves"]),
                  str(tp["servers"]), str(tp["ports"]), ", ".join(tp["reach"]) or "-")
    con.print(t)


def _print_headroom(con: Any, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    """SONiC lossless PG headroom: what the switch applies, beside fabricgen's own planning figure."""
    t = Table(title="SONiC lossless PG headroom, bytes (xon / xoff / size)",
              caption="applied: what the switch uses, from the source named (dynamic model: its buffer manager "
                      "computes it and fabricgen renders no number; traditional model: the SKU's "
                      "pg_profile_lookup.ini row, which fabricgen renders). fabricgen's: the plan's lane-"
                      "conservative figure, used for NX-OS pause buffers and their check; shown to compare only.",
              caption_justify="left")
    for col in ("role", "buffer model", "speed", "cable", "applied", "applied from", "fabricgen's"):
        t.add_column(col)

    def triple(values: dict[str, Any]) -> str:
        return " / ".join(str(values[k]) if values[k] is not None else "-" for k in ("xon", "xoff", "size"))

    for r in rows:
        t.add_row(r["role"], r["model"], f"{r['speed']}G", f"{r['cable_m']:g} m", triple(r["switch"]),
                  r["source"] + (" (flagged)" if r["flagged"] else ""), triple(r["fabricgen"]))
    con.print(t)


def _print_warnings(lines: list[str]) -> None:
    con = _console(stderr=True)
    for line in lines:
        con.print(line, markup=False)


def _warn_undeployable(plan: Plan) -> None:
    """Settings the intent sets that a role's platform cannot deploy (deploy refuses them)."""
    from fabricgen.plan.deployable import undeployable

    _print_warnings([f"warning: {item.message} (fix: {item.fix})" for item in undeployable(plan)])


# --------------------------------------------------------------------------- render


def cmd_render(args: argparse.Namespace) -> int:
    from fabricgen.check.run import CheckFailed
    from fabricgen.plan.build import load_plan, warning_lines
    from fabricgen.render.build import CablingAhead, render_all

    with CablingAhead(args.workers) as ahead:  # the cabling, computed beside the plan's addresses
        plan = load_plan(args.intent, topology_done=ahead.start)
        _print_warnings(warning_lines(plan))
        checks = None
        if not args.no_check:
            from fabricgen.check.fast import fast_checks

            checks = fast_checks(plan)
        try:
            result = render_all(plan, args.output, workers=args.workers, checks=checks, force=args.force, ahead=ahead)
        except CheckFailed as exc:
            from fabricgen.base.findings import format_findings

            sys.stderr.write(format_findings(exc.findings, "table"))
            _console(stderr=True).print("render refused: the configs break the checks above; nothing was written "
                                        "(fix: correct the intent or the templates the findings name, or "
                                        "--no-check to write them anyway)", markup=False)
            return EXIT_FAIL
    _console(stderr=True).print(
        f"rendered {result.switches} switches, {result.files} files, {result.lines} config lines -> {result.outdir}")
    if checks is not None:
        from fabricgen.check.fast import skipped

        left = skipped(plan)
        if left:
            _console(stderr=True).print("checked; left to `fabricgen check`: " + "; ".join(
                f"{rule} ({why})" for rule, why in left.items()), markup=False)
    return EXIT_OK


# --------------------------------------------------------------------------- inventory


def cmd_inventory(args: argparse.Namespace) -> int:
    from fabricgen.plan.build import load_plan
    from fabricgen.render import inventory

    plan = load_plan(args.intent)
    inventory.write(plan, Path(args.output))
    _console(stderr=True).print(f"nornir inventory of {len(plan.switches)} switches -> {args.output}", markup=False)
    return EXIT_OK


# --------------------------------------------------------------------------- main


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given the command line, only the stage command it names is registered, so a command
    imports no other stage's modules (`fabricgen render` loads no numpy, nornir or napalm)."""
    from fabricgen import __version__

    parser = argparse.ArgumentParser(prog="fabricgen", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"fabricgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("plan", help="resolve the intent and print the plan summary")
    add_intent(p)
    p.add_argument("--format", choices=["table", "json", "csv"], default="table",
                   help="table: the summary; json: the whole plan; csv: the cabling plan, one row per cable")
    p.set_defaults(func=cmd_plan)

    p = sub.add_parser("render", help="write every switch config, the plan, cabling and NIC scripts")
    add_intent(p)
    p.add_argument("-o", "--output", default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    add_workers(p, None, "render processes")
    p.add_argument("--no-check", action="store_true", help="skip the RoCE invariant and NIC checks")
    p.add_argument("--force", action="store_true",
                   help="replace the output directory even though no earlier render made it (deletes its files)")
    p.set_defaults(func=cmd_render)

    p = sub.add_parser("inventory", help="write the nornir SimpleInventory (hosts, groups, defaults) of the plan")
    add_intent(p)
    p.add_argument("-o", "--output", default="inventory", help="directory (default inventory/)")
    p.set_defaults(func=cmd_inventory)

    _add_stage_commands(sub, _named_stage(argv))
    for command in _every_command(parser):  # every command reads the intent, so every one takes the SKU data
        _add_sonic_platform(command, argparse.SUPPRESS)
        _add_debug(command, argparse.SUPPRESS)
    _add_sonic_platform(parser, None)
    _add_debug(parser, False)
    return parser


def _every_command(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every sub-command's parser, nested ones too (`lab up`, `analyze ecmp`), so the global options work
    wherever a user puts them."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += [sub, *_every_command(sub)]
    return out


def _add_debug(p: argparse.ArgumentParser, default: object) -> None:
    if "--debug" not in p._option_string_actions:  # deploy has its own (it also prints per-device tracebacks)
        p.add_argument("--debug", action="store_true", default=default,
                       help="print the traceback of an unexpected error")


def _add_sonic_platform(p: argparse.ArgumentParser, default: object) -> None:
    p.add_argument("--sonic-platform", metavar="DIR", default=default,
                   help="SONiC SKU files for a SKU fabricgen does not ship, or a newer copy of one it does (a "
                        "sonic-buildimage checkout or its device/ tree; default $FABRICGEN_SONIC_PLATFORM)")


# The later pipeline stages (check, lab, deploy, validate, ...) each register their own sub-commands; here,
# which module registers which top-level command, in `--help` order (tests/test_startup.py holds the map
# to what each module's register_cli adds).
STAGE_COMMANDS = {"check": "fabricgen.check.cli", "lab": "fabricgen.lab.cli", "deploy": "fabricgen.deploy",
                  "validate": "fabricgen.validate", "analyze": "fabricgen.analyze.cli",
                  "diagram": "fabricgen.analyze.cli", "docs": "fabricgen.analyze.cli",
                  "platforms": "fabricgen.catalog.cli", "sot": "fabricgen.sot.cli"}
CORE_COMMANDS = ("plan", "render", "inventory")


def _named_stage(argv: list[str] | None) -> str | None:
    """The stage module the command line's command needs, "" for a core command (plan, render, inventory),
    None when every stage is needed: no argv, no command, `--help` before it, or a name no stage has (so
    argparse's "invalid choice" lists them all)."""
    if argv is None:
        return None
    args = iter(argv)
    for arg in args:
        if arg in ("-h", "--help", "--version"):
            return None
        if arg == "--sonic-platform":  # the one global option with a separate value
            next(args, None)
            continue
        if arg.startswith("-"):
            continue
        return "" if arg in CORE_COMMANDS else STAGE_COMMANDS.get(arg)
    return None


def _add_stage_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser], stage: str | None) -> None:
    """Every stage module's commands (`stage` None), or that module's and, for the others, bare placeholders
    that keep usage and "invalid choice" messages whole: a placeholder is never chosen, as the command line
    names no command of theirs."""
    import importlib

    for module in dict.fromkeys(STAGE_COMMANDS.values()):
        if stage is None or module == stage:
            importlib.import_module(module).register_cli(sub)
        else:
            for name in (n for n, m in STAGE_COMMANDS.items() if m == module):
                sub.add_parser(name)


def main(argv: list[str] | None = None, one_shot: bool = False) -> int:
    """`one_shot`: this process ends with the command (the console script; see `pool.one_shot`)."""
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:  # nothing to import for it; exits as argparse does
        from fabricgen import __version__

        print(f"fabricgen {__version__}")
        raise SystemExit(EXIT_OK)
    if one_shot:
        from fabricgen.base import pool

        pool.one_shot()
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    from fabricgen.catalog import skus

    try:
        with skus.platform_dir_used(args.sonic_platform):
            return int(args.func(args))
    except FabricError as exc:
        con = _console(stderr=True)
        con.print("[red]error:[/red]", end=" ")
        con.print(str(exc), markup=False)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug or an unforeseen failure: one line, the traceback on --debug
        if getattr(args, "debug", False):
            raise
        lines = str(exc).strip().splitlines() or ["(no message)"]
        con = _console(stderr=True)
        con.print(f"error: `fabricgen {args.command}` failed: {type(exc).__name__}: {lines[0]}", markup=False)
        for line in lines[1:]:
            con.print(f"    {line}", markup=False)
        con.print("(rerun with --debug for the traceback)", markup=False)
        return EXIT_FAIL


def console() -> int:
    """The `fabricgen` console script: `main` in a process that ends with the command."""
    return main(one_shot=True)


if __name__ == "__main__":
    raise SystemExit(console())

