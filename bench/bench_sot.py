"""Benchmark: `fabricgen sot push` of a 4K-GPU fabric into the NetBox and Nautobot of `make sot-servers`.

For each server: empty it of fabricgen's objects (tests/sot/wipe.py), push the fabric (first push:
everything created), push again (idempotent: 0 writes, everything read and compared); the time,
the writes and the objects per second of each.  The fabric is bench/bench_render.py's
`intent_for(gpus)` (4,096 GPUs: 320 switches, 512 servers, 12,288 cables); its fabric-link pool is
text in 127.64.0.0/15 as there, never an address on this machine.

Usage: python bench/bench_sot.py [--gpus 4096] [--servers netbox,nautobot] [--workers 4] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_render import intent_for  # noqa: E402


def push(server: str, url: str, intent: Path, workers: int) -> dict[str, Any]:
    """One `fabricgen sot push --format json` in a child process (its own memory), timed from outside too."""
    import subprocess

    t0 = time.perf_counter()
    # stderr (the push's per-kind progress, its errors) passes through: a long run shows where it is
    out = subprocess.run([sys.executable, "-m", "fabricgen.cli", "sot", "push", "-i", str(intent), f"--{server}",
                          url, "--format", "json", "--workers", str(workers)], stdout=subprocess.PIPE, text=True,
                         cwd=ROOT, check=False)
    wall = time.perf_counter() - t0
    if out.returncode not in (0, 1) or not out.stdout.strip().startswith("{"):
        raise SystemExit(f"{server} push failed ({out.returncode}); its errors are above")
    doc = json.loads(out.stdout)
    return {"writes": doc["writes"], "objects": doc["objects"], "read": doc["read"], "seconds": doc["seconds"],
            "wall": wall, "rate": doc["objects_per_second"],
            "changes": {a: sum(1 for c in doc["changes"] if c["action"] == a)
                        for a in ("create", "update", "conflict", "stale")}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--gpus", type=int, default=4096)
    p.add_argument("--servers", default="netbox,nautobot")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--keep", action="store_true", help="leave the fabric in the servers afterwards")
    p.add_argument("--record", type=Path, help="append each push's result to this file (JSON lines) as it ends")
    args = p.parse_args()
    from tests.sot import wipe
    from tests.sot.servers import read_state

    state = read_state()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fabricgen-bench-sot-") as tmp:
        intent = Path(tmp) / "fabric.yaml"
        intent.write_text(yaml.safe_dump(intent_for(args.gpus), sort_keys=False), encoding="utf-8")
        for server in args.servers.split(","):
            info = state.get(server, {})
            if info.get("status") != "ready":
                print(f"{server}: not running (make sot-servers), skipped", file=sys.stderr)
                continue
            os.environ[f"FABRICGEN_{server.upper()}_TOKEN_FILE"] = info["token_file"]
            t = time.perf_counter()
            removed = wipe.wipe(server)
            print(f"{server}: emptied ({removed} objects) in {time.perf_counter() - t:.0f} s", file=sys.stderr)
            for label in ("first push", "second push"):
                r = push(server, info["url"], intent, args.workers)
                rows.append((server, label, r))
                if args.record:
                    with args.record.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps({"server": server, "gpus": args.gpus, "push": label, **r}) + "\n")
                print(f"{server} {label}: {r['writes']} writes, {r['read']} read, {r['seconds']:.0f} s, "
                      f"{r['rate']:.0f} objects/s, changes {r['changes']}", file=sys.stderr, flush=True)
            if not args.keep:
                wipe.wipe(server)
    print(f"\n{args.gpus} GPUs ({rows[0][2]['objects'] if rows else '?'} objects in the plan)")
    print("| server | push | objects in the plan | writes | objects read | seconds | writes/s | objects/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for server, label, r in rows:
        print(f"| {server} | {label} | {r['objects']} | {r['writes']} | {r['read']} | {r['seconds']:.0f} | "
              f"{r['writes'] / r['seconds']:.1f} | {r['objects'] / r['seconds']:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
