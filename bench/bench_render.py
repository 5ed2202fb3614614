"""Benchmark: plan + render (and check) of ~1K, 4K, 16K and 32K-GPU fabrics, plan + render of 128K GPUs, render
speed against Arista's pyavd at 16 spines x 512 leaves, and start-up.

Each measurement runs in a fresh interpreter so that its peak RSS is its own, `--runs` times (default 3);
every figure is the minimum over the runs (the machine may be shared).  The fabric-link pool of the large
fabrics exceeds 198.18.0.0/15, so the generated intents take their /31s from 127.64.0.0/15 (loopback space,
text only): these addresses only ever appear as text in rendered files, never on an interface of this machine.

Tables (`--write-docs` puts them into docs/benchmarks.md, with the date and the core count):
* sizes: plan, render (without its default checks), the checks render runs alone (RoCE invariants, NIC
  consistency and the structural rules but the costly ones) and the full `check`; CPU s is user + system of
  the whole run, render workers included (and the checks, where they ran): on a shared machine the figure
  to compare; full check CPU s is the full check's alone (its workers and vtysh included);
* vs pyavd: the same 528-switch eBGP fabric (16 spines x 512 leaves, 8,192 GPUs) planned and rendered by
  fabricgen (SONiC leaves, NX-OS spines; all workers, then one) and by pyavd 6.4 (eos_designs + eos_cli_config_gen:
  validate_inputs, get_avd_facts, get_device_structured_config and get_device_config per switch, each eos.cfg
  written), in the same run;
* start-up: `fabricgen --version`, `--help` and a render of the 6-switch lab fabric, end to end.

`--baseline DIR` runs every fabricgen measurement a second time with the fabricgen of another checkout
(PYTHONPATH=DIR, e.g. a detached worktree of an earlier main) in the same run, and prints the ratios.

128K GPUs uses 51.2T switches (128 x 400G, 3 tiers, 5,120 switches, 393K links, 35M config lines, 1.9 GB of
files); it plans under the design-size guard (plan/topology.py MAX_SWITCHES), which needs no raise.  Its row
times plan + render (issue 28's target: 15 s and 2 GB) and the fast checks (30 s): sizes above CHECK_UP_TO
run no full check.  "CPU s" and the peak RSS are plan + render's (workers included), measured before the checks.

`--tenants N` also times each size shared by N tenants (EVPN-VXLAN, GPU isolation, the servers split into N
equal ranges) and prints its ratio to the same fabric without: issue 25 asks that 16K GPUs x 64 tenants plan
and render within 2x (`make bench` runs that).

Usage: python bench/bench_render.py [--sizes 1024,4096,16384,32768,131072] [--workers N] [--no-check] [--runs 3]
       [--no-pyavd] [--baseline DIR] [--write-docs] [--tenants N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from doc_tables import machine_line, write_section  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1024, 4096, 16384, 32768, 131072)
CHECK_UP_TO = 32768  # the full check's target stops at 32K GPUs (a full check of 128K would take the bench's hour);
# above, the fast checks only (issue 28: within 30 s at 128K GPUs)


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


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from fabricgen.plan.build import load_plan
from fabricgen.render import build
from fabricgen.check.run import fast_findings, run_checks
intent, out, workers, checks = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]  # "0", "fast" or "1" (both)
do_check = checks != "0"
from fabricgen.base import pool
if hasattr(pool, "one_shot"):  # as the `fabricgen` console script does: this process ends with the command
    pool.one_shot()
if hasattr(build, "CablingAhead"):  # as `fabricgen render` does: the cabling beside the plan's addresses
    with build.CablingAhead(workers or None) as ahead:
        t0 = time.perf_counter()
        plan = load_plan(intent, topology_done=ahead.start)
        t1 = time.perf_counter()
        res = build.render_all(plan, out, workers=workers or None, ahead=ahead)
        t2 = time.perf_counter()
else:  # a --baseline checkout from before it
    t0 = time.perf_counter()
    plan = load_plan(intent)
    t1 = time.perf_counter()
    res = build.render_all(plan, out, workers=workers or None)
    t2 = time.perf_counter()
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
self_rss, child_rss = me.ru_maxrss // 1024, kids.ru_maxrss // 1024  # plan + render's, before any check
cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
fast = full = full_cpu = None
if do_check:
    configs, hosts = Path(out) / "configs", Path(out) / "hosts"
    t = time.perf_counter()
    assert not fast_findings(plan, configs, hosts, structural=True)  # what render runs
    fast = time.perf_counter() - t
if checks == "1":
    t = time.perf_counter()
    before = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    findings = run_checks(plan, configs, hosts, full=True, cache=False)
    full = time.perf_counter() - t
    after = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    full_cpu = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before))
    assert not findings, findings[:3]
print(json.dumps({"switches": res.switches, "links": len(plan.links), "lines": res.lines, "files": res.files,
                  "plan_s": t1 - t0, "render_s": t2 - t1, "total_s": t2 - t0, "cpu_s": cpu,
                  "rss_mb": self_rss, "worker_rss_mb": child_rss, "fast": fast, "full": full,
                  "full_cpu": full_cpu}))
"""



def intent_16x512() -> dict[str, Any]:
    """16 spines x 512 leaves (528 switches, 8,192 GPUs): SONiC leaves, NX-OS spines, as `make render` does."""
    return {
        "fabric": {"name": "b16x512"},
        "servers": {"count": 1024, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": "400G"},
        "switch_models": {"leaf": {"ports": 32, "port_speed": "400G"}, "spine": {"ports": 512, "port_speed": "400G"}},
        "platforms": {"leaf": "sonic", "spine": "nxos"},
        "topology": {"tiers": 2, "rail_optimized": True, "leaf_uplinks": 16, "spines": 16},
        "addressing": {"loopbacks": "198.18.0.0/20", "p2p": "127.64.0.0/15", "gpu": "198.19.0.0/16",
                       "management": "198.18.32.0/19"},
    }


# The same fabric through pyavd: AVD's l3ls eBGP underlay (no overlay), one uplink from every leaf to every
# spine.  Keys from pyavd 6.4's eos_designs schema (validate_inputs accepts them; docs: avd.arista.com,
# "eos_designs" node type settings: uplink_switches, uplink_interfaces, uplink_switch_interfaces,
# max_uplink_switches, uplink_ipv4_pool, loopback_ipv4_pool, bgp_as).  The fabric-wide inputs are validated
# once per node type, as every switch's inputs are the same but for the hostname.
AVD_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from pyavd import validate_inputs, get_avd_facts, get_device_structured_config, get_device_config
spines, leaves, out = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
common = {
    "fabric_name": "BENCH", "underlay_routing_protocol": "ebgp", "overlay_routing_protocol": "none",
    "spine": {"defaults": {"loopback_ipv4_pool": "198.18.0.0/24", "bgp_as": "4200100000",
                           "mgmt_gateway": "198.18.32.1"},
              "nodes": [{"name": f"spine{i}", "id": i, "mgmt_ip": f"198.18.{32 + i // 250}.{i % 250 + 2}/19"}
                        for i in range(1, spines + 1)]},
    "l3leaf": {"defaults": {"loopback_ipv4_pool": "198.18.4.0/22", "uplink_ipv4_pool": "127.64.0.0/15",
                            "uplink_interfaces": [f"Ethernet{p}" for p in range(17, 17 + spines)],
                            "uplink_switches": [f"spine{i}" for i in range(1, spines + 1)],
                            "max_uplink_switches": spines, "vtep": False, "spanning_tree_mode": "none",
                            "mgmt_gateway": "198.18.32.1"},
               "nodes": [{"name": f"leaf{n}", "id": n, "bgp_as": str(4200000000 + n),
                          "mgmt_ip": f"198.18.{40 + n // 250}.{n % 250 + 2}/19",
                          "uplink_switch_interfaces": [f"Ethernet{n}"] * spines} for n in range(1, leaves + 1)]},
}
t0 = time.perf_counter()
validated = {}
for node_type in ("spine", "l3leaf"):
    result = validate_inputs({**common, "type": node_type})
    assert result.validated_data is not None, result.validation_result
    validated[node_type] = result.validated_data
inputs = {f"spine{i}": validated["spine"] for i in range(1, spines + 1)}
inputs |= {f"leaf{n}": validated["l3leaf"] for n in range(1, leaves + 1)}
facts = get_avd_facts(inputs)
lines = 0
for host in inputs:
    text = get_device_config(get_device_structured_config(host, inputs[host], facts))
    (out / f"{host}.cfg").write_text(text)
    lines += text.count("\n")
total = time.perf_counter() - t0
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"switches": len(inputs), "lines": lines, "total_s": total, "cpu_s": me.ru_utime + me.ru_stime,
                  "rss_mb": me.ru_maxrss // 1024}))
"""


def _run(code_or_cmd: list[str], baseline: Path | None = None) -> dict[str, Any]:
    """One measurement in a fresh interpreter: its last stdout line as JSON."""
    env = dict(os.environ)
    if baseline is not None:
        env["PYTHONPATH"] = str(baseline)
    # the tree on sys.path[0] (the working directory) is the fabricgen timed
    proc = subprocess.run(code_or_cmd, capture_output=True, text=True, check=False, env=env, cwd=baseline or ROOT)
    if proc.returncode:
        raise SystemExit(f"{' '.join(code_or_cmd[:3])} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _best(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The minimum of every figure over the runs (counts are the same in each)."""
    out = dict(results[0])
    for key, value in results[0].items():
        if isinstance(value, float) or key.endswith(("_s", "_mb", "_cpu")) or key in ("fast", "full"):
            values = [r[key] for r in results if r.get(key) is not None]
            out[key] = min(values) if values else None
    return out


def _wall(cmd: list[str], baseline: Path | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    if baseline is not None:
        env["PYTHONPATH"] = str(baseline)
    before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, cwd=baseline or ROOT)
    wall, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": wall, "cpu_s": cpu}


def _sizes_table(rows: list[dict[str, Any]], base: dict[int, dict[str, Any]]) -> str:
    head = ["GPUs", "switches", "links", "config lines", "plan s", "render s", "plan+render s", "CPU s", "peak RSS MB",
            "worker peak RSS MB", "fast checks s", "full check s", "full check CPU s"]
    if base:
        head += ["previous plan+render s", "previous CPU s", "previous fast checks s", "previous full check s",
                 "previous full check CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"{r['gpus']:,}", f"{r['switches']:,}", f"{r['links']:,}", f"{r['lines']:,}", f"{r['plan_s']:.2f}",
                 f"{r['render_s']:.2f}", f"{r['total_s']:.2f}", f"{r['cpu_s']:.1f}", str(r["rss_mb"]),
                 str(r["worker_rss_mb"]), _num(r.get("fast")), _num(r.get("full")), _num(r.get("full_cpu"))]
        if base:
            b = base[r["gpus"]]
            cells += [f"{b['total_s']:.2f}", f"{b['cpu_s']:.1f}", _num(b.get("fast")), _num(b.get("full")),
                      _num(b.get("full_cpu"))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def _tenants_table(rows: list[dict[str, Any]], tenanted: dict[int, dict[str, Any]], tenants: int) -> str:
    head = ("GPUs", "tenants", "config lines", "plan s", "render s", "plan+render s", "x without tenants")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        t = tenanted.get(r["gpus"])
        if t is None:
            continue
        for n, x in ((0, r), (tenants, t)):
            ratio = f"{x['total_s'] / r['total_s']:.2f}" if n else "1"
            lines.append(f"| {r['gpus']:,} | {n} | {x['lines']:,} | {x['plan_s']:.2f} | {x['render_s']:.2f} | "
                         f"{x['total_s']:.2f} | {ratio} |")
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "n/a"


def _pyavd_table(fg: dict[str, Any], fg1: dict[str, Any], avd: dict[str, Any],
                 base: dict[str, Any] | None) -> str:
    rows = [("fabricgen plan+render, all workers", fg), ("fabricgen plan+render, 1 worker", fg1)]
    if base is not None:
        rows.append(("previous fabricgen plan+render, all workers", base))
    rows.append(("pyavd 6.4 (eos_designs + eos_cli_config_gen)", avd))
    lines = ["| tool | switches | config lines | seconds | switches/s | pyavd s / this s | CPU s | pyavd CPU s / this "
             "CPU s | peak RSS MB |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows:
        lines.append(f"| {name} | {r['switches']:,} | {r['lines']:,} | {r['total_s']:.2f} | "
                     f"{r['switches'] / r['total_s']:,.0f} | {avd['total_s'] / r['total_s']:.1f}x | {r['cpu_s']:.1f} | "
                     f"{avd['cpu_s'] / r['cpu_s']:.1f}x | {r['rss_mb']} |")
    return "\n".join(lines)


def _startup_table(now: dict[str, dict[str, Any]], base: dict[str, dict[str, Any]] | None) -> str:
    head = "| command | seconds | CPU s |" + (" previous s | previous CPU s |" if base else "")
    lines = [head, "|---|---|---|" + ("---|---|" if base else "")]
    for name, r in now.items():
        row = f"| `{name}` | {r['wall_s']:.2f} | {r['cpu_s']:.2f} |"
        if base:
            row += f" {base[name]['wall_s']:.2f} | {base[name]['cpu_s']:.2f} |"
        lines.append(row)
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--workers", type=int, default=0, help="0 = automatic")
    ap.add_argument("--no-check", action="store_true", help="skip the fast and full check timings")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement; each figure is their minimum")
    ap.add_argument("--no-pyavd", action="store_true", help="skip the 16 x 512 comparison with pyavd")
    ap.add_argument("--baseline", type=Path, help="another fabricgen checkout to time in the same run")
    ap.add_argument("--write-docs", action="store_true", help="write the tables into docs/benchmarks.md")
    ap.add_argument("--tenants", type=int, default=0, help="also each size with this many tenants, and the ratio")
    args = ap.parse_args()
    runs = max(1, args.runs)
    header = machine_line(runs)
    baseline = args.baseline.resolve() if args.baseline else None
    if baseline is not None:
        rev = subprocess.run(["git", "-C", str(baseline), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=False).stdout.strip() or "?"
        header += f" \"Previous\": the fabricgen of commit {rev}, timed in the same run."
    rows: list[dict[str, Any]] = []
    base_rows: dict[int, dict[str, Any]] = {}
    tenanted: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-") as tmp:
        for gpus in (int(s) for s in args.sizes.split(",") if s):
            intent = Path(tmp, f"{gpus}.yaml")
            intent.write_text(yaml.safe_dump(intent_for(gpus)), encoding="utf-8")
            child = [sys.executable, "-c", CHILD, str(intent), str(Path(tmp, f"out{gpus}")), str(args.workers),
                     "0" if args.no_check else "fast" if gpus > CHECK_UP_TO else "1"]
            shared = Path(tmp, f"{gpus}-tenants.yaml")  # the same fabric shared by --tenants tenants
            shared.write_text(yaml.safe_dump(with_tenants(intent_for(gpus), max(1, args.tenants))), encoding="utf-8")
            with_them = [sys.executable, "-c", CHILD, str(shared), str(Path(tmp, f"out{gpus}-tenants")),
                         str(args.workers), "0"]
            now, before, ten = [], [], []
            for _ in range(runs):  # interleaved, so each column sees the same machine
                now.append(_run(child))
                if baseline is not None:
                    before.append(_run(child, baseline))
                if args.tenants > 0:
                    ten.append(_run(with_them))
            r = _best(now)
            r["gpus"] = gpus
            rows.append(r)
            if before:
                base_rows[gpus] = _best(before)
            if ten:
                tenanted[gpus] = _best(ten)
            print(f"  {gpus} GPUs done: plan+render {r['total_s']:.1f}s, full check {_num(r.get('full'))}s",
                  file=sys.stderr)
        sections = {"render": f"{header}\n\n{_sizes_table(rows, base_rows)}"} if rows else {}
        if tenanted:
            sections["tenants"] = f"{header}\n\n{_tenants_table(rows, tenanted, args.tenants)}"
        if not args.no_pyavd:
            intent = Path(tmp, "16x512.yaml")
            intent.write_text(yaml.safe_dump(intent_16x512()), encoding="utf-8")
            out = Path(tmp, "out16x512")
            avd_out = Path(tmp, "avd16x512")
            avd_out.mkdir()
            fg, fg1, avd, prev = [], [], [], []
            for _ in range(runs):
                fg.append(_run([sys.executable, "-c", CHILD, str(intent), str(out), str(args.workers), "0"]))
                fg1.append(_run([sys.executable, "-c", CHILD, str(intent), str(out), "1", "0"]))
                avd.append(_run([sys.executable, "-c", AVD_CHILD, "16", "512", str(avd_out)]))
                if baseline is not None:
                    prev.append(_run([sys.executable, "-c", CHILD, str(intent), str(out), str(args.workers), "0"],
                                     baseline))
            table = _pyavd_table(_best(fg), _best(fg1), _best(avd), _best(prev) if prev else None)
            sections["pyavd"] = f"{header}\n\n{table}"
            print("  16 x 512 vs pyavd done", file=sys.stderr)
        lab = ROOT / "inventory" / "lab" / "fabric.yaml"
        commands = {"fabricgen --version": ["--version"], "fabricgen --help": ["--help"],
                    "fabricgen render (6-switch lab fabric)": ["render", "-i", str(lab), "-o", str(Path(tmp, "lab"))]}
        start: dict[str, dict[str, Any]] = {}
        start_before: dict[str, dict[str, Any]] = {}
        for name, argv in commands.items():
            cmd = [sys.executable, "-m", "fabricgen.cli", *argv]
            start[name] = _best([_wall(cmd) for _ in range(runs)])
            if baseline is not None:
                start_before[name] = _best([_wall(cmd, baseline) for _ in range(runs)])
        sections["startup"] = f"{header}\n\n{_startup_table(start, start_before or None)}"
    for name, body in sections.items():
        print(f"\n## {name}\n\n{body}")
        if args.write_docs and (name == "tenants" or not args.tenants):  # a --tenants run writes its table only
            write_section(name, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
