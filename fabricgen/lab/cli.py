"""`fabricgen lab up | down | status | prune`: the live lab of the intent on this machine."""

from __future__ import annotations

import argparse
from pathlib import Path

from fabricgen.base.options import DEFAULT_LAB_INTENT, add_intent
from fabricgen.base.outdir import DEFAULT_LAB_DIR
from fabricgen.lab.records import prune_stale_labs, records_dir
from fabricgen.lab.topology import LabError

# The lab engine, the plan-to-lab converter and rich are imported by the commands that use them, so that
# `fabricgen --help` and the other commands do not load them.


def cmd_up(args: argparse.Namespace) -> int:
    from rich.console import Console

    from fabricgen.lab.engine import lab_up
    from fabricgen.lab.from_plan import lab_topology, require_frr, write_lab_files
    from fabricgen.plan.build import load_plan

    plan = load_plan(args.intent)
    require_frr(plan, args.intent)
    topo = lab_topology(plan, args.workdir)
    con = Console(stderr=True, highlight=False)
    try:
        state = lab_up(topo)
    except LabError as exc:
        con.print(f"lab up failed: {exc}", markup=False)
        return 1
    files = write_lab_files(plan, Path(args.workdir), Path(state.key_file))
    con.print(f"lab {topo.name} up: {len(topo.nodes)} nodes, {len(topo.links)} cables in "
              f"{state.timings.get('total', 0):.1f}s; ssh -i {state.key_file} root@<mgmt ip>", markup=False)
    for f in files:
        con.print(f"  wrote {f}", markup=False)
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from rich.console import Console

    from fabricgen.lab.engine import lab_down

    try:
        lab_down(args.workdir)
    except LabError as exc:
        Console(stderr=True).print(f"lab down failed: {exc}", markup=False)
        return 1
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from fabricgen.lab.engine import lab_status

    status = lab_status(args.workdir)
    con = Console(highlight=False)
    if not status.running:
        con.print(f"no lab in {args.workdir}")
        return 1
    t = Table(title=f"lab {status.name} ({status.phase})")
    for col in ("node", "kind", "mgmt", "netns", "daemons", "ssh"):
        t.add_column(col)
    for n in status.nodes:
        daemons = " ".join(f"{d}{'' if ok else '(DOWN)'}" for d, ok in sorted(n.daemons.items()))
        t.add_row(n.name, n.kind, n.mgmt_ip, "yes" if n.namespace_present else "NO", daemons,
                  "not probed" if n.ssh_reachable is None else "yes" if n.ssh_reachable else "NO")
    con.print(t)
    return 0 if status.healthy else 1


def cmd_prune(args: argparse.Namespace) -> int:
    """Remove what dead labs (every recorded process gone) left on this host, by their records only."""
    from rich.console import Console

    con = Console(highlight=False, soft_wrap=True)  # one line per lab: paths stay greppable
    try:
        outcomes = prune_stale_labs(args.names or None)
    except LabError as exc:
        Console(stderr=True).print(f"lab prune failed: {exc}", markup=False)
        return 1
    status = 0
    for o in outcomes:
        if o.running:
            con.print(f"kept lab {o.name!r} ({o.workdir}): running, processes {', '.join(map(str, o.running))}",
                      markup=False)
            status = status or (1 if args.names else 0)
            continue
        removed = ", ".join(o.removed) or "nothing left to remove"
        verdict = "pruned dead lab" if o.pruned else "could not fully prune dead lab"
        con.print(f"{verdict} {o.name!r} (workdir {o.workdir}): {removed}", markup=False)
        if o.foreign:
            con.print(f"  left alone (same name, not created by this lab): {', '.join(o.foreign)}", markup=False)
        if o.error:
            con.print(f"  {o.error}", markup=False)
            status = 1
    for name in sorted(set(args.names) - {o.name for o in outcomes}):
        con.print(f"no record of lab {name!r} in {records_dir()}: fabricgen prunes only what it recorded",
                  markup=False)
        status = 1
    if not outcomes and not args.names:
        con.print(f"no recorded labs in {records_dir()}: nothing to prune", markup=False)
    return status


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lab = sub.add_parser("lab", help="build, inspect or remove the live lab (namespaces + FRR + sshd + lldpd)")
    lab_sub = lab.add_subparsers(dest="lab_command", required=True)
    for name, func, text in (("up", cmd_up, "build the lab of the intent"),
                             ("down", cmd_down, "remove every namespace, cable and process of the lab"),
                             ("status", cmd_status, "show what runs")):
        p = lab_sub.add_parser(name, help=text)
        add_intent(p, DEFAULT_LAB_INTENT, "lab intent")
        p.add_argument("--lab-dir", "--workdir", dest="workdir", default=str(DEFAULT_LAB_DIR),
                       help=f"lab state directory (default {DEFAULT_LAB_DIR}/, outside any render output)")
        p.set_defaults(func=func)
    p = lab_sub.add_parser(
        "prune", help="remove what labs whose processes are all gone left behind (after a cut-off run)",
        description="Remove the namespaces, bridge and host veths of every dead lab, exactly as its record "
                    f"in {records_dir()} lists them. A lab with a live process and anything without a record "
                    "are never touched.")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these labs (default: every dead one)")
    p.set_defaults(func=cmd_prune)
