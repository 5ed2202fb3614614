"""Benchmark: analyze ecmp, failures and deadlock at 2K, 8K and 32K GPUs; ecmp at 128K.

Each (analysis, size) runs in a fresh interpreter so its peak RSS is its own, `--runs` times (3; each figure
the minimum, as bench_render's).
The fabrics are bench_render's (2-tier up to 2,048 GPUs, 3-tier above).
`ecmp`: a ring per rail with 4 QPs per connection, all four report columns.
`failures`: `analyze failures --any 1`, every single failure at every size,
exactly (one BGP simulation per orbit of the fabric's checked symmetry, every
member's QPs re-routed: analyze/members.py).  `deadlock`: the intact fabric
and every single failure at every size, converged and converging (one
computation per orbit, analyze/symmetry.py).  Seconds are wall-clock from the
loaded plan (baseline included); "CPU s" is the process's CPU time and its
workers', which a loaded machine does not inflate; "peak RSS MB" the larger of
the process's and its largest worker's.  "QPs routed/s" is for ecmp only.

`--tenants N` times `analyze ecmp` instead on each size without tenants and
shared by N evpn-vxlan tenants: one job per tenant, every QP between leaves
hashed by its VXLAN outer header, and the QP-hashing what-if column the
tenants add.  Two layouts: bench_render's `with_tenants` (contiguous server
ranges, so a tenant's rail rings stay inside its scalable unit's leaves) and
`spread` (server i to tenant i mod N, so every ring hop crosses the spines
inside the tunnel).  Each is compared with the same traffic without tenants:
the whole fabric's ring for `ranges` (which crosses no spine either), and the
spread tenants' server sets as `--jobs` for `spread`.

Usage: python bench/bench_analyze.py [--sizes 2048,8192,32768,131072] [--analyses ecmp,failures,deadlock]
       python bench/bench_analyze.py --sizes 16384 --tenants 64 [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_render import _best, intent_for, with_tenants  # noqa: E402
from doc_tables import machine_line, write_section  # noqa: E402

SIZES = (2048, 8192, 32768, 131072)
ANALYSES = ("ecmp", "failures", "deadlock")
ONLY = {131072: ("ecmp",)}  # 128K GPUs (51.2T switches, bench_render's): analyze ecmp only

CHILD = r"""
import json, resource, sys, time
from fabricgen.plan.build import load_plan
from fabricgen.analyze.fabric import from_plan
from fabricgen.analyze.flows import whole_fabric_job
intent, analysis, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
jobs = sys.argv[4] if len(sys.argv) > 4 else None
fabric = from_plan(load_plan(intent))
WHO = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)  # this process and its workers (reaped when a pool closes)
def cpu():
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, WHO))
t0 = time.perf_counter()
c0 = cpu()
if analysis == "ecmp":
    from fabricgen.analyze.ecmp import ecmp_report
    r = ecmp_report(fabric, "ring", jobs_file=jobs)  # the fabric as planned: 4 QPs, each switch's own seed
    routed = sum(c["flows"] for c in r["columns"])
    scenarios = 1
    extra = {"columns": len(r["columns"]), "jobs": len(r["columns"][0]["jobs"]),
             "vxlan": r["columns"][0]["vxlan_flows"], "slowdown": r["columns"][0]["slowdown"]}
else:
    from fabricgen.analyze.failures import single_failures
    singles = single_failures(fabric)
    if analysis == "failures":  # what `analyze failures --any 1` runs
        from fabricgen.analyze.failures import failures_report
        r = failures_report(fabric, [whole_fabric_job(fabric, "ring", 4)], "crc32", "same", None, 1)
        assert r["scenarios"] == len(singles) and r["sampled"] is None
        routed = 0
    else:
        from fabricgen.analyze.deadlock import deadlock_report
        r = deadlock_report(fabric, 0, "multi-as", singles)
        routed = 0
    scenarios = 1 + len(singles)
    extra = {}
t = time.perf_counter() - t0
print(json.dumps({"s": t, "cpu": cpu() - c0, "scenarios": scenarios, "routed": routed,
                  "rss_mb": max(map(lambda w: resource.getrusage(w).ru_maxrss, WHO)) // 1024, **extra}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--analyses", default=",".join(ANALYSES))
    ap.add_argument("--write-docs", action="store_true", help="write the table into docs/benchmarks.md")
    ap.add_argument("--tenants", type=int, default=0, help="analyze ecmp without and with this many tenants")
    ap.add_argument("--runs", type=int, default=3, help="runs per (analysis, size); each figure is their minimum")
    args = ap.parse_args()
    if args.tenants > 0:
        return _tenants(args)
    header = machine_line(args.runs)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-analyze-") as tmp:
        for gpus in (int(s) for s in args.sizes.split(",")):
            intent = Path(tmp, f"{gpus}.yaml")
            intent.write_text(yaml.safe_dump(intent_for(gpus)), encoding="utf-8")
            for analysis in (a for a in args.analyses.split(",") if a in ONLY.get(gpus, ANALYSES)):
                runs = [_child(intent, analysis, gpus) for _ in range(args.runs)]
                if any(r is None for r in runs):
                    return 1
                r = _best([r for r in runs if r is not None])
                r.update(gpus=gpus, analysis=analysis)
                rows.append(r)
                print(f"  {analysis} {gpus} GPUs: {r['s']:.1f}s", file=sys.stderr)
    lines = ["| analysis | GPUs | scenarios | seconds | CPU s | QPs routed/s | peak RSS MB |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        rate = f"{r['routed'] / r['s']:,.0f}" if r["routed"] and r["s"] else "-"
        lines.append(f"| {r['analysis']} | {r['gpus']:,} | {r['scenarios']:,} | {r['s']:.1f} | {r['cpu']:.1f} | {rate} "
                     f"| {r['rss_mb']} |")
    body = header + f" Load average {os.getloadavg()[0]:.1f} at the end.\n\n" + "\n".join(lines)
    print(body)
    if args.write_docs:
        write_section("analyze", body)
    return 0


def _child(intent: Path, analysis: str, gpus: int, jobs: Path | None = None) -> dict[str, Any] | None:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(intent), analysis, str(gpus),
                           *([str(jobs)] if jobs else [])],
                          capture_output=True, text=True, check=False)
    if proc.returncode:
        print(proc.stderr, file=sys.stderr)
        return None
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def spread(intent: dict[str, Any], tenants: int) -> dict[str, Any]:
    """`with_tenants`, but server i belongs to tenant i mod `tenants`: every tenant in every scalable unit."""
    out = with_tenants(intent, tenants)
    count = intent["servers"]["count"]
    width = max(4, len(str(count)))
    for i, t in enumerate(out["tenants"]):
        t["servers"] = [f"gpu{s + 1:0{width}d}" for s in range(i, count, tenants)]
    return out


def _tenants(args: argparse.Namespace) -> int:
    """`analyze ecmp` on each size without tenants and with `args.tenants` evpn-vxlan tenants."""
    header = machine_line(1)
    lines = ["| GPUs | tenants | layout | jobs | report columns | QPs routed | as planned: QPs in VXLAN | slowdown as "
             "planned | seconds | CPU s | x same traffic without tenants (CPU) | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-analyze-") as tmp:
        for gpus in (int(s) for s in args.sizes.split(",")):
            base: dict[str, Any] = {}
            spread_jobs = Path(tmp, f"{gpus}-jobs.yaml")  # the spread tenants' server sets as jobs, no tenants
            tenants = spread(intent_for(gpus), args.tenants)["tenants"]
            sets = [{"name": t["name"], "servers": t["servers"]} for t in tenants]
            spread_jobs.write_text(yaml.safe_dump({"jobs": sets}), encoding="utf-8")
            for n, layout in ((0, "-"), (args.tenants, "ranges"), (0, "spread jobs"), (args.tenants, "spread")):
                intent = Path(tmp, f"{gpus}-{n}-{layout}.yaml")
                data = (intent_for(gpus) if not n else with_tenants(intent_for(gpus), n) if layout == "ranges"
                        else spread(intent_for(gpus), n))
                intent.write_text(yaml.safe_dump(data), encoding="utf-8")
                r = _child(intent, "ecmp", gpus, spread_jobs if layout == "spread jobs" else None)
                if r is None:
                    return 1
                if not n:  # each tenanted row against the run of the same traffic without tenants just before it
                    base = r
                ratio = float(r["cpu"]) / float(base["cpu"]) if float(base["cpu"]) else 0.0
                lines.append(f"| {gpus:,} | {n} | {layout} | {r['jobs']} | {r['columns']} | {r['routed']:,} "
                             f"| {r['vxlan']:,} | {float(r['slowdown']):.2f}x | {float(r['s']):.1f} "
                             f"| {float(r['cpu']):.1f} | {ratio:.2f} | {r['rss_mb']} |")
                print(f"  ecmp {gpus} GPUs x {n} tenants ({layout}): {float(r['s']):.1f}s", file=sys.stderr)
    body = header + f" Load average {os.getloadavg()[0]:.1f} at the end.\n\n" + "\n".join(lines)
    print(body)
    if args.write_docs:
        write_section("analyze-tenants", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
