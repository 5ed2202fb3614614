"""Benchmark the live-lab workflow: lab up, deploy, BGP convergence (sessions + full ECMP), validate, lab down.

Runs the 2x4 lab (inventory/lab/fabric.yaml) and a generated 4-spine x 16-leaf lab, and
the per-device cost of a dry-run deploy with 1 worker and with N workers; then the 2x4 PTP lab
(inventory/lab/ptp.yaml): the time from lab up until every client names the grandmaster (pmc over
SSH, `validate --ptp`'s reading), until every clock is as planned, and one `validate --ptp`.  Needs root.
Every address is in 198.18.0.0/15; nothing leaves the machine.

Usage: python bench/bench_lab.py [--workers N] [--only 2x4|4x16|ptp]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from fabricgen.check.fast import fast_checks
from fabricgen.deploy import DeployOptions, run_deploy
from fabricgen.lab import lab_down, lab_up, prune_stale_labs
from fabricgen.lab.from_plan import lab_topology
from fabricgen.plan.build import load_plan
from fabricgen.render import manifest
from fabricgen.render.build import render_all
from fabricgen.validate import run_validate

ROOT = Path(__file__).resolve().parent.parent


def intent_4x16() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "inventory" / "lab" / "fabric.yaml").read_text())
    data["fabric"]["name"] = "lab4x16"
    data["servers"]["count"] = 32  # 8 SUs of 4 servers x 2 rails -> 16 leaves
    data["switch_models"]["spine"]["ports"] = 16
    data["topology"]["spines"] = 4
    data["addressing"]["management"] = "198.19.252.0/24"
    return data


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t, result


def wait_converged(plan: Any, workdir: str, timeout: float = 120.0) -> float:
    t = time.perf_counter()
    while time.perf_counter() - t < timeout:
        if not run_validate(plan, ("bgp", "ecmp"), lab_dir=workdir).failures:
            return time.perf_counter() - t
        time.sleep(0.5)
    raise RuntimeError("BGP did not converge")


def bench(name: str, intent: Path, workers: int) -> dict[str, Any]:
    plan = load_plan(intent)
    with tempfile.TemporaryDirectory(prefix=f"fabricgen-bench-{name}-") as workdir:
        build = manifest.load(render_all(plan, Path(workdir) / "build", checks=fast_checks(plan)).outdir, plan)
        prune_stale_labs()  # what a cut-off run left behind
        t_up, state = timed(lab_up, lab_topology(plan, Path(workdir) / "lab"))
        lab = state.workdir
        try:
            t_dry1, _ = timed(run_deploy, plan, build, DeployOptions(dry_run=True, workers=1, lab_dir=lab))
            t_dryn, _ = timed(run_deploy, plan, build, DeployOptions(dry_run=True, workers=workers, lab_dir=lab))
            t_deploy, rep = timed(run_deploy, plan, build, DeployOptions(workers=workers, lab_dir=lab))
            if not rep.ok:
                raise RuntimeError(f"deploy failed: {rep.failed}")
            t_conv = wait_converged(plan, lab)
            t_val, report = timed(run_validate, plan, lab_dir=lab, workers=workers, build=build)
            if not report.ok:
                raise RuntimeError(f"validate failed: {report.failures[:3]}")
        finally:
            t_down, _ = timed(lab_down, lab)
    n = len(plan.switches)
    return {"lab": name, "switches": n, "servers": len(plan.servers), "up": t_up, "deploy": t_deploy,
            "converge": t_conv, "validate": t_val, "down": t_down,
            "total": t_up + t_deploy + t_conv + t_val, "dev1": t_dry1 / n, "devn": t_dryn / n}


def bench_ptp(workers: int) -> dict[str, Any]:
    """The PTP lab: lab up, then `validate --ptp` readings until the grandmaster is everywhere, then as planned."""
    plan = load_plan(ROOT / "inventory" / "lab" / "ptp.yaml")
    assert plan.ptp is not None
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-ptp-") as workdir:
        prune_stale_labs()
        t_up, state = timed(lab_up, lab_topology(plan, Path(workdir) / "lab"))
        os.environ["FABRICGEN_SSH_KEY"] = state.key_file
        t0, t_gm, t_planned, reads = time.perf_counter(), 0.0, 0.0, []
        try:
            while time.perf_counter() - t0 < 180:
                t_read, report = timed(run_validate, plan, (), lab_dir=state.workdir, workers=workers, ptp=True)
                reads.append(t_read)
                gms = [o for o in report.outcomes if o.check == "ptp-grandmaster"]
                if not t_gm and len(gms) == len(plan.ptp.clocks) and all(o.ok for o in gms):
                    t_gm = time.perf_counter() - t0
                if not report.failures:
                    t_planned = time.perf_counter() - t0
                    break
            else:
                raise RuntimeError(f"PTP did not settle: {report.failures[:3]}")
            states = [s for clocks in report.ptp.values() for s in clocks.values()]
            offsets = [abs(s["offset_ns"]) for s in states if s["offset_ns"] and s["steps_removed"]]
            delays = [s["path_delay_ns"] for s in states if s["path_delay_ns"] and s["steps_removed"]]
        finally:
            t_down, _ = timed(lab_down, state.workdir)
    return {"clocks": len(plan.ptp.clocks), "up": t_up, "gm": t_gm, "planned": t_planned,
            "read": min(reads), "down": t_down, "offset": (min(offsets), max(offsets)),
            "delay": (min(delays), max(delays)), "granularity": max(reads)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=10)
    ap.add_argument("--only", choices=["2x4", "4x16", "ptp"])
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench-lab needs root (network namespaces)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp, "lab4x16.yaml")
        big.write_text(yaml.safe_dump(intent_4x16()))
        labs = [("2x4", ROOT / "inventory" / "lab" / "fabric.yaml"), ("4x16", big)]
        for name, intent in labs:
            if args.only and args.only != name:
                continue
            rows.append(bench(name, intent, args.workers))
            print(f"  {name} done", file=sys.stderr)
    print(f"cores: {os.cpu_count()}, workers N = {args.workers}")
    if args.only in (None, "ptp"):
        p = bench_ptp(args.workers)
        print("| lab | PTP clocks | lab up s | until every clock names the grandmaster s (after up) | "
              "until every clock is as planned s (after up) | validate --ptp s | |offset| ns | "
              "mean path delay ns | lab down s |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| 2x4 PTP | {p['clocks']} | {p['up']:.1f} | {p['gm']:.1f} | {p['planned']:.1f} | {p['read']:.1f} | "
              f"{p['offset'][0]:.0f}-{p['offset'][1]:.0f} | {p['delay'][0]:.0f}-{p['delay'][1]:.0f} | "
              f"{p['down']:.1f} |")
        print(f"(times after up are as fine as one validate --ptp read: at most {p['granularity']:.1f} s)")
        if args.only == "ptp":
            return 0
    head = ("lab", "switches", "servers", "lab up s", "deploy s", "BGP converge s", "validate s",
            "up+deploy+converge+validate s", "lab down s", "dry-run s/device (1 worker)",
            f"dry-run s/device ({args.workers} workers)")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r['lab']} | {r['switches']} | {r['servers']} | {r['up']:.1f} | {r['deploy']:.1f} | "
              f"{r['converge']:.1f} | {r['validate']:.1f} | {r['total']:.1f} | {r['down']:.1f} | "
              f"{r['dev1']:.2f} | {r['devn']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
