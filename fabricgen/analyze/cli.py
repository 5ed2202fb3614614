"""`fabricgen analyze ecmp|failures|deadlock`, `fabricgen diagram`, `fabricgen docs`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from fabricgen.analyze.hashing import HASHES, SEED_SCHEMES, SPORTS

DEFAULT_INTENT = "inventory/fabric.yaml"


def _console() -> Console:
    """Wide enough for the report tables when stdout is a file or a pipe."""
    con = Console(highlight=False)
    if not con.is_terminal:
        con = Console(highlight=False, width=160)
    return con


def _plain(value: Any) -> Any:
    """JSON-safe: numpy arrays and numbers to lists and floats, inf to a string."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, float | np.floating):
        f = float(value)
        return "inf" if f == float("inf") else round(f, 6)
    if isinstance(value, np.integer):
        return int(value)
    return value


def write_result(result: dict[str, Any], path: str | None) -> None:
    if not path:
        return
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(_plain(result), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out)


def _fmt_slowdown(s: float) -> str:
    return "stalled" if s == float("inf") else f"{s:.2f}x"


# --------------------------------------------------------------------------- ecmp


def cmd_ecmp(args: argparse.Namespace) -> int:
    from fabricgen.analyze.ecmp import ecmp_report
    from fabricgen.analyze.fabric import from_plan
    from fabricgen.plan.build import load_plan

    fabric = from_plan(load_plan(args.intent))
    seeds = "tier" if args.seed_per_tier else args.seeds
    result = ecmp_report(fabric, args.pattern, args.qps_per_conn, args.hash, seeds, args.jobs, args.cross_rail,
                         args.salt, args.udp_sport)
    write_result(result, args.output)
    if args.format == "json":
        sys.stdout.write(json.dumps(_plain({k: v for k, v in result.items() if k != "link_load"}), indent=1) + "\n")
        return 0
    print_ecmp(result)
    return 0


def print_ecmp(result: dict[str, Any]) -> None:
    con = _console()
    cols = result["columns"]
    con.print(f"[bold]{result['fabric']}[/bold]: {result['pattern']} per rail, {cols[0]['connections']} connections; "
              f"hash {result['hash']} over {', '.join(result['hash_fields'])} (a model: real ASIC hashes are "
              f"proprietary)" + ("; the plan enables adaptive routing" if result["adaptive_routing_planned"] else ""))
    for role, how in result.get("seeds_from", {}).items():
        con.print(f"  {role} hash seed: {how}")
    if result["qp_hashing_planned"]:
        con.print(f"  QP hashing (BTH destination QP) as planned on {', '.join(result['qp_hashing_planned'])} ...")
    if result["udp_sport"] == "connection":
        con.print("  NICs give every QP of a connection one UDP source port (--udp-sport connection)")
    tenancy = result.get("tenancy")
    if tenancy:
        con.print(f"  {tenancy['tenants']} tenants, {tenancy['mechanism']}; tenant traffic between leaves on the "
                  f"fabric links: {tenancy['outer']}; {cols[0]['vxlan_flows']:,} of {cols[0]['flows']:,} QPs "
                  "encapsulated" + ("; QP hashing reads the VNI there, not the QP" if cols[0]["vxlan_flows"] else ""))
    t = Table(title="ECMP load: max/mean per tier, slowdown of the collective")
    t.add_column("")
    for c in cols:
        t.add_column(c["setting"], justify="right")
    t.add_row("flows (QPs)", *[f"{c['flows']:,}" for c in cols])
    tiers = [k for k in ("gpu_leaf", "leaf_spine", "spine_super_spine") if k in cols[0]["tiers"]]
    for tier in tiers:
        t.add_row(f"{tier} max/mean", *[_ratio(c["tiers"][tier]) for c in cols])
        t.add_row(f"{tier} max flows/link", *[f"{c['tiers'][tier]['max_flows']:.1f}" for c in cols])
    pols = sorted({k for c in cols for k in c["polarization"]})
    for p in pols:
        t.add_row(f"polarization {p}", *[f"{c['polarization'][p]:.2f}" if p in c["polarization"] else "-"
                                         for c in cols])
    t.add_row("slowdown (worst job)", *[_fmt_slowdown(c["slowdown"]) for c in cols])
    t.add_row("bus bandwidth", *[f"{100 / c['slowdown']:.0f}% of line rate" if c["slowdown"] != float("inf")
                                 else "0" for c in cols])
    con.print(t)
    if len(cols[0]["jobs"]) > 1 or tenancy:
        j = Table(title="jobs: slowdown (max link busy / ideal busy ms as planned)" if tenancy else "jobs")
        for col in ("job", "servers", "pattern", *(("VRF", "VXLAN QPs", "max link / ideal ms") if tenancy else ()),
                    *[c["setting"] for c in cols]):
            j.add_column(col)
        for i, job in enumerate(cols[0]["jobs"]):
            extra = ((job["vrf"], f"{job['vxlan_flows']:,}/{job['flows']:,}"
                      + (f" ({job['isolated_flows']:,} isolated)" if job["isolated_flows"] else ""),
                      f"{job['max_link_ms']:.1f} / {job['ideal_ms']:.1f}") if tenancy else ())
            j.add_row(job["name"], str(job["servers"]), job["pattern"], *extra,
                      *[_fmt_slowdown(c["jobs"][i]["slowdown"]) for c in cols])
        con.print(j)
    hot = cols[0]["hottest"]
    if hot:
        h = Table(title=f"hottest links ({cols[0]['setting']})")
        for col in ("link", "tier", "flows", "GB", "busy ms"):
            h.add_column(col, justify="left" if col in ("link", "tier") else "right")
        for row in hot:
            h.add_row(row["link"], row["tier"], f"{row['flows']:.0f}", f"{row['gbytes']:.2f}",
                      f"{row['busy_ms']:.1f}")
        con.print(h)


def _ratio(stats: dict[str, float]) -> str:
    return f"{stats['max_over_mean']:.2f}" if stats["used"] else "idle"


# --------------------------------------------------------------------------- failures


def _jobs_for(args: argparse.Namespace, fabric: Any) -> list[Any]:
    from fabricgen.analyze.flows import default_jobs
    from fabricgen.analyze.jobs import load_jobs

    qps = args.qps_per_conn or fabric.qps
    if getattr(args, "jobs", None):
        return load_jobs(args.jobs, fabric, args.pattern, qps)
    return default_jobs(fabric, args.pattern, qps)


def cmd_failures(args: argparse.Namespace) -> int:
    from fabricgen.analyze.fabric import from_plan
    from fabricgen.analyze.failures import failures_report
    from fabricgen.plan.build import load_plan

    fabric = from_plan(load_plan(args.intent))
    seeds = "tier" if args.seed_per_tier else args.seeds or "plan"
    result = failures_report(fabric, _jobs_for(args, fabric), args.hash or fabric.hash_kind, seeds, args.fail,
                             args.any,
                             args.min_rail_capacity, args.top)
    write_result(result, args.output)
    if args.format == "json":
        sys.stdout.write(json.dumps(_plain(result), indent=1) + "\n")
        return 1 if result["rules"] else 0
    con = _console()
    con.print(f"[bold]{result['fabric']}[/bold]: {result['scenarios']} failure scenario(s), worst first; "
              f"intact slowdown {_fmt_slowdown(result['slowdown_intact'])}")
    _say_sampled(con, result)
    t = Table(title="failure impact")
    for col in ("failure", "slowdown", "min leaf cap", "worst oversub", "GPUs cut off", "GPUs degraded", "rails",
                "groups shrunk", "routes withdrawn"):
        t.add_column(col, justify="left" if col == "failure" else "right")
    for row in result["worst"]:
        t.add_row(row["failure"], _fmt_slowdown(row["slowdown"]), f"{100 * row['min_leaf_capacity']:.0f}%",
                  "-" if not row["worst_oversubscription"] else f"{row['worst_oversubscription']:.2f}:1",
                  str(row["gpus_cut_off"]), str(row["gpus_degraded"]),
                  ",".join(map(str, row["rails_affected"])) or "-", str(row["ecmp_groups_shrunk"]),
                  str(row["routes_withdrawn"]))
    con.print(t)
    if result["worst"]:
        w = result["worst"][0]
        r = Table(title=f"remaining capacity: {w['failure']}")
        r.add_column("rail / plane")
        r.add_column("capacity", justify="right")
        for rail, frac in sorted(w["rails"].items()):
            r.add_row(f"rail {rail}", f"{100 * frac:.0f}%")
        for plane, frac in sorted(w["planes"].items()):
            r.add_row(f"plane {plane}", f"{100 * frac:.0f}%")
        con.print(r)
    for f in result["rules"]:
        con.print(f"[yellow]rule {f['rule']}[/yellow] {f['where']}: {f['message']} (source: {f['source']})")
    return 1 if result["rules"] else 0


def _say_sampled(con: Console, result: dict[str, Any]) -> None:
    s = result.get("sampled")
    if s:
        con.print(f"[yellow]sampled[/yellow]: {s['analysed']:,} of {s['of']:,} double failures ({s['how']}; "
                  f"every pair is analysed up to {s['limit']:,})")


# --------------------------------------------------------------------------- deadlock


def cmd_deadlock(args: argparse.Namespace) -> int:
    from fabricgen.analyze.deadlock import deadlock_report
    from fabricgen.analyze.fabric import from_plan, replan_with_asn_scheme
    from fabricgen.analyze.failures import parse_failures
    from fabricgen.intent.model import load_intent
    from fabricgen.plan.build import build_plan

    intent, lines = load_intent(args.intent)
    plan = build_plan(intent, args.intent, lines)
    schemes = ([plan.settings.asn_scheme] if args.asn_scheme == "planned"
               else ["multi-as", "same-tier"] if args.asn_scheme == "both" else [args.asn_scheme])
    results = []
    for scheme in schemes:
        fabric = from_plan(replan_with_asn_scheme(intent, plan, scheme))
        failures = [parse_failures(fabric, args.fail)] if args.fail else None
        results.append(deadlock_report(fabric, args.any, scheme, failures))
    if args.format == "json":
        sys.stdout.write(json.dumps(_plain(results), indent=1) + "\n")
    else:
        con = _console()
        for r in results:
            what = "the intact fabric" + (f" and {r['scenarios'] - 1} failure scenario(s), converged and converging"
                                          if r["scenarios"] > 1 else "")
            head = f"[bold]{r['fabric']}[/bold] ({r['asn_scheme']}): {what}: "
            _say_sampled(con, r)
            if r["acyclic"]:
                con.print(head + "[green]the lossless buffer-dependency graph is acyclic[/green]"
                          + (f"; {r['with_bounces']} scenario(s) route through bounce paths" if r["with_bounces"]
                             else "; every route is valley-free"))
            else:
                con.print(head + f"[red]{len(r['cycles'])} scenario(s) with a buffer-dependency cycle[/red]")
                for c in r["cycles"][:3]:
                    con.print(f"  failure: {c['failure']}")
                    for b in c["bounces"]:
                        con.print("    bounce: " + " -> ".join(b))
                    con.print("    cycle:  " + " -> ".join([*c["cycle"], c["cycle"][0]]))
            for b in r["bounce_examples"][:2] if r["acyclic"] else []:
                con.print(f"  bounce after {b['failure']}: " + " -> ".join(b["bounces"][0]))
    return 0 if all(r["acyclic"] for r in results) else 1


# --------------------------------------------------------------------------- diagram and docs


def cmd_diagram(args: argparse.Namespace) -> int:
    from fabricgen.analyze import diagram
    from fabricgen.analyze.fabric import from_plan
    from fabricgen.plan.build import load_plan

    fabric = from_plan(load_plan(args.intent))
    heat = diagram.load_heat(args.heat) if args.heat else None
    diagram.write(diagram.draw(fabric, heat), args.output)
    _console().print(f"diagram of {len(fabric.nodes)} switches -> {args.output}", markup=False)
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    from fabricgen.analyze.docs import write_docs
    from fabricgen.plan.build import load_plan

    n = write_docs(load_plan(args.intent), args.output)
    _console().print(f"{n} documentation files -> {args.output}", markup=False)
    return 0


# --------------------------------------------------------------------------- registration


def _intent(p: argparse.ArgumentParser) -> None:
    p.add_argument("-i", "--intent", default=DEFAULT_INTENT, help=f"fabric intent YAML (default {DEFAULT_INTENT})")


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("analyze", help="predict ECMP collisions, failure impact and PFC deadlock from the plan")
    asub = p.add_subparsers(dest="analysis", required=True)

    e = asub.add_parser("ecmp", help="route a collective's QPs through the planned ECMP groups",
                        description="Route NCCL-like flows (per rail, N QPs per connection, one UDP source port "
                                    "each) hop by hop through the planned ECMP groups with a modelled hash; "
                                    "report per-link load by tier, polarization and the predicted slowdown, with "
                                    "what-if columns for more QPs, per-tier seeds, adaptive routing and QP hashing. "
                                    "With tenants, one job per tenant; evpn-vxlan tenants' QPs are hashed by their "
                                    "VXLAN outer header.")
    _intent(e)
    e.add_argument("--pattern", choices=["ring", "tree", "alltoall"], default="ring")
    e.add_argument("--qps-per-conn", type=int, metavar="N",
                   help="QPs per connection (default: the plan's, qos.nic.qps_per_connection)")
    e.add_argument("--hash", choices=list(HASHES), help="modelled hash (default: the plan's, ecmp.algorithm)")
    e.add_argument("--seeds", choices=list(SEED_SCHEMES),
                   help="hash seeds: as each switch's platform renders them (plan, default), one for all, per "
                        "tier, or per switch")
    e.add_argument("--seed-per-tier", action="store_true", help="same as --seeds tier")
    e.add_argument("--cross-rail", action="store_true",
                   help="alltoall from every GPU to every GPU over the sender's NIC (NCCL without PXN)")
    e.add_argument("--jobs", metavar="FILE", help="YAML list of jobs on server subsets (fragmented placement)")
    e.add_argument("--udp-sport", choices=list(SPORTS), default="qp",
                   help="the NICs' RoCEv2 UDP source port: one per QP (ConnectX from the QP numbers, default) or "
                        "one per connection (then only QP hashing spreads a connection's QPs)")
    e.add_argument("--salt", type=int, default=0, help="vary QP numbers and seeds (default 0)")
    e.add_argument("--format", choices=["table", "json"], default="table")
    e.add_argument("-o", "--output", metavar="FILE", help="also write the full result as JSON (for diagram --heat)")
    e.set_defaults(func=cmd_ecmp)

    f = asub.add_parser("failures", help="capacity, routes and slowdown after named or every single/double failure")
    _intent(f)
    f.add_argument("--fail", metavar="DEV|DEV:PORT,...", help="one scenario: these switches and cables down")
    f.add_argument("--any", type=int, choices=[1, 2], default=1, help="every single (1) or double (2) failure")
    f.add_argument("--pattern", choices=["ring", "tree", "alltoall"], default="ring")
    f.add_argument("--qps-per-conn", type=int, metavar="N", help="default: the plan's")
    f.add_argument("--hash", choices=list(HASHES), help="default: the plan's")
    f.add_argument("--seeds", choices=list(SEED_SCHEMES), help="default: the plan's (plan)")
    f.add_argument("--seed-per-tier", action="store_true")
    f.add_argument("--jobs", metavar="FILE")
    f.add_argument("--min-rail-capacity", type=float, default=0.75, metavar="FRACTION",
                   help="rule: a single failure must leave every rail this much uplink capacity (default 0.75)")
    f.add_argument("--top", type=int, default=20, help="rows to show (default 20)")
    f.add_argument("--format", choices=["table", "json"], default="table")
    f.add_argument("-o", "--output", metavar="FILE", help="also write the result as JSON (for diagram --heat)")
    f.set_defaults(func=cmd_failures)

    d = asub.add_parser("deadlock", help="simulate eBGP routes and look for PFC buffer-dependency cycles")
    _intent(d)
    d.add_argument("--any", type=int, choices=[0, 1, 2], default=1,
                   help="also every single (1, default) or double (2) cable/switch failure; 0: intact only")
    d.add_argument("--fail", metavar="DEV|DEV:PORT,...", help="only this failure scenario")
    d.add_argument("--asn-scheme", choices=["planned", "multi-as", "same-tier", "both"], default="planned",
                   help="analyse the plan's ASN scheme (default) or re-plan the intent with another")
    d.add_argument("--format", choices=["table", "json"], default="table")
    d.set_defaults(func=cmd_deadlock)

    g = sub.add_parser("diagram", help="draw the fabric as SVG, optionally a heat map of an analyze result")
    _intent(g)
    g.add_argument("-o", "--output", default="build/diagram.svg", help="SVG file (default build/diagram.svg)")
    g.add_argument("--heat", metavar="RESULT.json", help="colour by `analyze ecmp -o` or `analyze failures -o`")
    g.set_defaults(func=cmd_diagram)

    m = sub.add_parser("docs", help="write Markdown fabric documentation (overview, devices, cabling, BOM)")
    _intent(m)
    m.add_argument("-o", "--output", default="build/docs", help="directory (default build/docs)")
    m.set_defaults(func=cmd_docs)
