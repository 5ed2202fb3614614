"""Benchmark: analyze ecmp, failures and deadlock at 2K, 8K and 32K GPUs.

Each (analysis, size) runs in a fresh interpreter so its peak RSS is its own.
The fabrics are bench_render's (2-tier up to 2,048 GPUs, 3-tier above).
`ecmp`: a ring per rail with 4 QPs per connection, all four report columns.
`failures`: every single failure at 2K; above that a fixed sample of about
512 scenarios (every k-th cable and switch).  `analyze failures --any 1`
itself always analyses every single failure exactly (analyze/singles.py:
only the QPs whose path meets a changed ECMP entry are re-routed), but the
BGP re-simulation per scenario still makes 8K and 32K too slow for a bench.
`deadlock`: the intact fabric and every single failure at every size, converged
and converging (one computation per orbit of the fabric's checked symmetry,
analyze/symmetry.py).  "flows routed/s" counts QP routings (a QP re-routed in each
failure scenario counts again).

Usage: python bench/bench_analyze.py [--sizes 2048,8192,32768] [--analyses ecmp,failures,deadlock]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_render import intent_for  # noqa: E402

SIZES = (2048, 8192, 32768)
ANALYSES = ("ecmp", "failures", "deadlock")

CHILD = r"""
import json, resource, sys, time
from fabricgen.plan.build import load_plan
from fabricgen.analyze.fabric import from_plan
from fabricgen.analyze.flows import whole_fabric_job
intent, analysis, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
fabric = from_plan(load_plan(intent))
t0 = time.perf_counter()
if analysis == "ecmp":
    from fabricgen.analyze.ecmp import ecmp_report
    r = ecmp_report(fabric, "ring")  # the fabric as planned: 4 QPs, each switch's own seed
    routed = sum(c["flows"] for c in r["columns"])
    scenarios = 1
else:
    from fabricgen.analyze.failures import single_failures
    singles = single_failures(fabric)
    if gpus > 2048 and analysis == "failures":
        step = max(1, len(singles) // 512)
        singles = singles[::step]
    if analysis == "failures":
        from fabricgen.analyze.failures import baseline, impact
        base = baseline(fabric, [whole_fabric_job(fabric, "ring", 4)], "crc32", "same")
        for f in singles:
            impact(base, f)
        routed = len(base.flows) * (1 + len(singles))
    else:
        from fabricgen.analyze.deadlock import deadlock_report
        r = deadlock_report(fabric, 0, "multi-as", singles)
        routed = 0
    scenarios = 1 + len(singles)
t = time.perf_counter() - t0
print(json.dumps({"s": t, "scenarios": scenarios, "routed": routed,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--analyses", default=",".join(ANALYSES))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-analyze-") as tmp:
        for gpus in (int(s) for s in args.sizes.split(",")):
            intent = Path(tmp, f"{gpus}.yaml")
            intent.write_text(yaml.safe_dump(intent_for(gpus)), encoding="utf-8")
            for analysis in args.analyses.split(","):
                proc = subprocess.run([sys.executable, "-c", CHILD, str(intent), analysis, str(gpus)],
                                      capture_output=True, text=True, check=False)
                if proc.returncode:
                    print(proc.stderr, file=sys.stderr)
                    return 1
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                r.update(gpus=gpus, analysis=analysis)
                rows.append(r)
                print(f"  {analysis} {gpus} GPUs: {r['s']:.1f}s", file=sys.stderr)
    print("| analysis | GPUs | scenarios | seconds | QPs routed/s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        rate = f"{r['routed'] / r['s']:,.0f}" if r["routed"] and r["s"] else "-"
        print(f"| {r['analysis']} | {r['gpus']:,} | {r['scenarios']:,} | {r['s']:.1f} | {rate} | {r['rss_mb']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
