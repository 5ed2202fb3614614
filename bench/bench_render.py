"""Benchmark: plan + render (and check, when available) of ~1K, 4K, 16K and 32K-GPU fabrics (128K on request).

Each size runs in a fresh interpreter so that its peak RSS is its own.  The
fabric-link pool of the large fabrics exceeds 198.18.0.0/15, so the generated
intents take their /31s from 127.64.0.0/15 (loopback space, text only): these addresses only
ever appear as text in rendered files, never on an interface of this machine.

Times: plan, render (without its default checks), the checks render runs alone (RoCE
invariants, NIC consistency and the structural rules but the costly ones) and the full `check`.

128K GPUs (`--sizes 131072 --no-check`) uses 51.2T switches (128 x 400G, 3 tiers, 5,120 switches, 393K links);
it plans under the design-size guard (plan/topology.py MAX_SWITCHES), which needs no raise.

`--tenants N` runs each size twice, without tenants and with N (EVPN-VXLAN, GPU isolation, the servers
split into N equal ranges), and prints the ratio: issue 25 asks that 16K GPUs x 64 tenants plan and
render within 2x of the same fabric without tenants (`make bench` runs that).

Usage: python bench/bench_render.py [--sizes 1024,4096,16384,32768] [--workers N] [--no-check] [--tenants N]
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

SIZES = (1024, 4096, 16384, 32768)


def intent_for(gpus: int) -> dict[str, Any]:
    """2-tier while 64-port spines can hold the leaves (<= 2,048 GPUs), 3-tier above."""
    servers = gpus // 8
    base: dict[str, Any] = {
        "fabric": {"name": f"bench{gpus // 1024}k"},
        "servers": {"count": servers, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": "400G"},
        "switch_models": {"leaf": {"ports": 64, "port_speed": "400G"}, "spine": {"ports": 64, "port_speed": "400G"}},
        "topology": {"tiers": 2, "rail_optimized": True, "scalable_unit": 32},
        "addressing": {"loopbacks": "198.18.0.0/20", "p2p": "127.64.0.0/15", "gpu": "198.19.0.0/16",
                       "management": "198.18.32.0/19"},
        "ecmp": {"adaptive_routing": {"enabled": True}},
    }
    if gpus <= 2048:
        base["platforms"] = {"leaf": "sonic", "spine": "nxos"}
        return base
    base["switch_models"]["super_spine"] = {"ports": 64, "port_speed": "400G"}
    base["platforms"] = {"leaf": "sonic", "spine": "sonic", "super_spine": "nxos"}
    if gpus > 65536:  # beyond 3 tiers of 64 ports: 51.2T switches, 128 x 400G (32 pods of 4,096 GPUs at 128K)
        for role in ("leaf", "spine", "super_spine"):
            base["switch_models"][role] = {"ports": 128, "port_speed": "400G"}
        base["topology"].update(tiers=3, scalable_unit=64, max_pods=max(1, gpus // 4096),
                                super_spines_per_group=16)
        base["addressing"].update(loopbacks="198.18.0.0/19", management="198.18.128.0/17",
                                  p2p="127.64.0.0/12", gpu="127.128.0.0/13")
        return base
    pods = servers // 128  # 4 SUs of 32 servers per pod with 64-port switches
    base["topology"].update(tiers=3, super_spines_per_group=max(1, pods // 2), max_pods=pods)
    return base


def with_tenants(intent: dict[str, Any], tenants: int) -> dict[str, Any]:
    """The same fabric shared by `tenants` tenants, each a contiguous range of servers (ids 1..N)."""
    count = intent["servers"]["count"]
    width = max(4, len(str(count)))  # plan/topology.py: servers are gpu0001, gpu0002, ...
    per = count // tenants
    out = dict(intent, tenancy={"scope": "gpu", "mechanism": "evpn-vxlan"})
    out["tenants"] = []
    for i in range(tenants):
        last = (i + 1) * per if i < tenants - 1 else count
        members = f"gpu{i * per + 1:0{width}d}-gpu{last:0{width}d}"
        out["tenants"].append({"name": f"t{i + 1}", "id": i + 1, "servers": [members]})
    return out


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from fabricgen.plan.build import load_plan
from fabricgen.render.build import render_all
from fabricgen.check.run import fast_findings, run_checks
intent, out, workers, do_check = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
t0 = time.perf_counter()
plan = load_plan(intent)
t1 = time.perf_counter()
res = render_all(plan, out, workers=workers or None)
t2 = time.perf_counter()
fast = full = None
if do_check:
    configs, hosts = Path(out) / "configs", Path(out) / "hosts"
    t = time.perf_counter()
    assert not fast_findings(plan, configs, hosts, structural=True)  # what render runs
    fast = time.perf_counter() - t
    t = time.perf_counter()
    findings = run_checks(plan, configs, hosts, full=True)
    full = time.perf_counter() - t
    assert not findings, findings[:3]
self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
child_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(json.dumps({"switches": res.switches, "links": len(plan.links), "lines": res.lines, "files": res.files,
                  "plan_s": t1 - t0, "render_s": t2 - t1, "total_s": t2 - t0,
                  "rss_mb": self_rss, "worker_rss_mb": child_rss, "fast": fast, "full": full}))
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--workers", type=int, default=0, help="0 = automatic")
    ap.add_argument("--no-check", action="store_true", help="skip the fast and full check timings")
    ap.add_argument("--tenants", type=int, default=0, help="also each size with this many tenants, and the ratio")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-") as tmp:
        for gpus in (int(s) for s in args.sizes.split(",")):
            for tenants in (0, args.tenants) if args.tenants else (0,):
                doc = intent_for(gpus) if not tenants else with_tenants(intent_for(gpus), tenants)
                intent = Path(tmp, f"{gpus}-{tenants}.yaml")
                intent.write_text(yaml.safe_dump(doc), encoding="utf-8")
                out = Path(tmp, f"out{gpus}-{tenants}")
                proc = subprocess.run([sys.executable, "-c", CHILD, str(intent), str(out), str(args.workers),
                                       "0" if args.no_check else "1"], capture_output=True, text=True, check=False)
                if proc.returncode:
                    print(proc.stderr, file=sys.stderr)
                    return 1
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                r["gpus"], r["tenants"] = gpus, tenants
                rows.append(r)
                print(f"  {gpus} GPUs, {tenants} tenants done in {r['total_s']:.1f}s", file=sys.stderr)
    print(f"cores: {os.cpu_count()}")
    head = ("GPUs", "tenants", "switches", "links", "config lines", "plan s", "render s", "plan+render s",
            "x without tenants", "peak RSS MB", "worker peak RSS MB", "fast checks s", "full check s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    base = {r["gpus"]: r["total_s"] for r in rows if not r["tenants"]}
    for r in rows:
        fast = f"{r['fast']:.1f}" if r.get("fast") is not None else "n/a"
        full = f"{r['full']:.1f}" if r.get("full") is not None else "n/a"
        ratio = f"{r['total_s'] / base[r['gpus']]:.2f}" if r["tenants"] else "1"
        print(f"| {r['gpus']:,} | {r['tenants']} | {r['switches']:,} | {r['links']:,} | {r['lines']:,} | "
              f"{r['plan_s']:.2f} | {r['render_s']:.2f} | {r['total_s']:.2f} | {ratio} | {r['rss_mb']} | "
              f"{r['worker_rss_mb']} | {fast} | {full} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
