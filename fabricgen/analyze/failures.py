"""`analyze failures`: what a failed cable or switch does to capacity, routes and the collective.

For each failure scenario (named, or every single / double failure) the
routes are recomputed by the BGP simulation and the collective's QPs are
routed again, so the ECMP groups that shrink, the leaves that lose uplinks and
the slowdown all come from the same model as `analyze ecmp`.

Design rules (each with its source):
* ``min-spines``: a leaf's ECMP group spans fewer than 4 spines.  Juniper's AI
  data-center JVD asks for at least 4, because with 2 a double failure plus
  congestion invites PFC storms.
* ``rail-capacity``: a single failure leaves a rail with less than a set
  fraction (default 75%) of its uplink capacity; an operator's policy, set with
  ``--min-rail-capacity``.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np

from fabricgen.analyze.ecmp import job_slowdowns, loads_hashed, route_hashed
from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import Job
from fabricgen.analyze.members import every_row
from fabricgen.analyze.routing import compute_routes
from fabricgen.analyze.scenarios import Baseline, Failure, baseline, group_sizes, uplink_capacity
from fabricgen.analyze.singles import SingleFailures
from fabricgen.errors import FabricError

MIN_SPINES = 4
MIN_SPINES_SOURCE = "Juniper Validated Design, AI data center back-end fabric: at least 4 spines"
RAIL_CAPACITY_SOURCE = "operator policy (--min-rail-capacity), applied to every single failure"
# Double failures analysed exactly up to this many pairs (the example's 36,856 included); above, a sample this size.
DOUBLE_EXACT_LIMIT = 40_000


def cable_failure(fabric: Fabric, arc: int) -> Failure:
    a = arc & ~1
    return Failure(f"{fabric.nodes[fabric.arc_src[a]]}:{fabric.arc_port[a]}", frozenset({a, a + 1}))


def switch_failure(fabric: Fabric, node: int) -> Failure:
    return Failure(fabric.nodes[node], nodes=frozenset({node}))


def parse_failures(fabric: Fabric, spec: str) -> Failure:
    """`DEV` or `DEV:PORT`, comma separated: one scenario with all of them down."""
    ports = {(fabric.nodes[s], p): a for a, (s, p) in enumerate(zip(fabric.arc_src.tolist(), fabric.arc_port,
                                                                     strict=True))}
    total = Failure("")
    names = []
    for item in (x.strip() for x in spec.split(",") if x.strip()):
        dev, _, port = item.partition(":")
        if dev not in fabric.index:
            raise FabricError.single("--fail", "", f"no switch {dev!r} in the plan",
                                     f"name a switch such as {fabric.nodes[0]!r}")
        if port:
            if (dev, port) not in ports:
                raise FabricError.single("--fail", "", f"{dev} has no fabric port {port!r}",
                                         "name a leaf-spine or spine-super-spine port, e.g. from `fabricgen plan "
                                         "--format csv`")
            total = total + cable_failure(fabric, ports[dev, port])
        else:
            total = total + switch_failure(fabric, fabric.index[dev])
        names.append(item)
    if not names:
        raise FabricError.single("--fail", "", "no failure named", "pass DEV or DEV:PORT, comma separated")
    return Failure(", ".join(names), total.arcs, total.nodes)


def single_failures(fabric: Fabric) -> list[Failure]:
    cables = [cable_failure(fabric, a) for a in range(0, fabric.switch_arcs, 2)]
    return cables + [switch_failure(fabric, n) for n in range(len(fabric.nodes))]


def every_failure(fabric: Fabric, k: int, limit: int | None = None) -> list[Failure]:
    """Every single failure, or every pair of them; more pairs than `limit`: an evenly spaced sample."""
    singles = single_failures(fabric)
    if k == 1:
        return singles
    total = pair_count(len(singles))
    if limit is None or total <= limit:
        return [a + b for a, b in combinations(singles, 2)]
    picks = np.unique(np.linspace(0, total - 1, limit).astype(np.int64))
    # pair p is (i, j): i the last row whose first pair index is <= p, j counted from i + 1
    n = len(singles)
    starts = np.concatenate([[0], np.cumsum(np.arange(n - 1, 0, -1, dtype=np.int64))])
    first = np.searchsorted(starts, picks, "right") - 1
    second = picks - starts[first] + first + 1
    return [singles[i] + singles[j] for i, j in zip(first.tolist(), second.tolist(), strict=True)]


def pair_count(n: int) -> int:
    return n * (n - 1) // 2


def impact(base: Baseline, failure: Failure) -> dict[str, Any]:
    fabric = base.fabric
    routes = compute_routes(fabric, failure.arcs, failure.nodes, base=base.route_base)
    flows = base.flows
    tr = route_hashed(routes, flows, base.model)
    slow = job_slowdowns(fabric, flows, loads_hashed(fabric, flows, tr))
    cap = uplink_capacity(fabric, failure)
    leaves = fabric.leaves()
    dead = np.zeros(len(fabric.nodes), dtype=bool)
    dead[list(failure.nodes)] = True
    frac = np.divide(cap, base.uplink_capacity, out=np.ones_like(cap), where=base.uplink_capacity > 0)
    frac[dead] = 0.0
    # leaf view: remaining uplink capacity and oversubscription (GPU ports / working uplinks)
    ep_leaf = fabric.ep_leaf
    down_cap = np.bincount(ep_leaf, weights=fabric.ep_speed, minlength=len(fabric.nodes))
    leaf_rows = []
    for leaf in leaves.tolist():
        if frac[leaf] < 1.0:
            over = down_cap[leaf] / cap[leaf] if cap[leaf] > 0 else float("inf")
            leaf_rows.append({"leaf": fabric.nodes[leaf], "capacity": float(frac[leaf]),
                              "oversubscription": 0.0 if dead[leaf] else over})
    # rail and plane views: uplink capacity of the leaves that carry each rail / of each plane's switches
    rails: dict[int, float] = {}
    for rail in np.unique(fabric.ep_rail).tolist():
        weight = np.bincount(ep_leaf[fabric.ep_rail == rail], minlength=len(fabric.nodes)).astype(float)
        total = float((weight * base.uplink_capacity).sum())
        rails[rail] = float((weight * np.where(dead, 0, cap)).sum()) / total if total else 1.0
    planes: dict[int, float] = {}
    for plane in np.unique(fabric.plane).tolist():
        sel = fabric.plane == plane
        total = float(base.uplink_capacity[sel].sum())
        planes[plane] = float(np.where(dead, 0, cap)[sel].sum()) / total if total else 1.0
    lost_eps = np.flatnonzero(dead[ep_leaf])
    degraded_eps = np.flatnonzero((frac[ep_leaf] < 1.0) & ~dead[ep_leaf])
    sizes = group_sizes(routes)
    alive = ~dead
    shrunk = int(((sizes < base.group_size) & (sizes > 0))[alive].sum())
    withdrawn = int(((sizes == 0) & (base.group_size > 0))[alive].sum())
    worst = max(slow) if slow else 1.0
    return {
        "failure": failure.name,
        "slowdown": worst,
        "slowdown_intact": max(base.slowdown) if base.slowdown else 1.0,
        "jobs": [{"name": j.name, "slowdown": s} for j, s in zip(flows.jobs, slow, strict=True)],
        "min_leaf_capacity": float(frac[leaves].min()) if len(leaves) else 1.0,
        "worst_oversubscription": max((r["oversubscription"] for r in leaf_rows), default=0.0),
        "leaves": leaf_rows,
        "rails": rails,
        "planes": planes,
        "gpus_cut_off": int(len(lost_eps)),
        "gpus_degraded": int(len(degraded_eps)),
        "rails_affected": sorted({int(r) for r in fabric.ep_rail[np.concatenate([lost_eps, degraded_eps])]}),
        "ecmp_groups_shrunk": shrunk,
        "routes_withdrawn": withdrawn,
    }


def _severity(row: dict[str, Any]) -> tuple[float, ...]:
    return (-row["slowdown"], -row["gpus_cut_off"], row["min_leaf_capacity"], -row["ecmp_groups_shrunk"])


def design_rules(fabric: Fabric, base: Baseline, singles: list[dict[str, Any]] | None,
                 min_rail: float) -> list[dict[str, str]]:
    findings: list[dict[str, str]] = []
    for leaf in fabric.leaves().tolist():
        spines = {int(fabric.arc_dst[a]) for a in np.flatnonzero(fabric.arc_src == leaf)
                  if fabric.rank[fabric.arc_dst[a]] > 0}
        if 0 < len(spines) < MIN_SPINES:
            findings.append({"rule": "min-spines", "where": fabric.nodes[leaf],
                             "message": f"ECMP over {len(spines)} spine(s), fewer than {MIN_SPINES}",
                             "source": MIN_SPINES_SOURCE})
            if len(findings) >= 5:
                break
    for row in singles or []:
        for rail, frac in row["rails"].items():
            if frac < min_rail:
                findings.append({"rule": "rail-capacity", "where": row["failure"],
                                 "message": f"rail {rail} keeps {100 * frac:.0f}% of its uplink capacity, "
                                            f"below {100 * min_rail:.0f}%",
                                 "source": RAIL_CAPACITY_SOURCE})
    return findings


def failures_report(fabric: Fabric, jobs: list[Job], hash_kind: str, seeds: str, fail: str | None, any_k: int,
                    min_rail: float = 0.75, top: int = 20, salt: int = 0) -> dict[str, Any]:
    """Every single failure exactly (incrementally, `singles`); pairs sampled above `DOUBLE_EXACT_LIMIT`."""
    base = baseline(fabric, jobs, hash_kind, seeds, salt)
    sampled: dict[str, Any] | None = None
    if fail:
        rows = [impact(base, parse_failures(fabric, fail))]
    elif any_k == 1:
        rows = every_row(SingleFailures(base), single_failures(fabric))
    else:
        scenarios = every_failure(fabric, any_k, DOUBLE_EXACT_LIMIT)
        total = pair_count(len(single_failures(fabric)))
        if len(scenarios) < total:
            sampled = {"analysed": len(scenarios), "of": total, "limit": DOUBLE_EXACT_LIMIT,
                       "how": "evenly spaced over every pair of single failures"}
        rows = [impact(base, f) for f in scenarios]
    rows.sort(key=_severity)
    singles = rows if (not fail and any_k == 1) else None
    return {
        "kind": "failures",
        "fabric": fabric.name,
        "scenarios": len(rows),
        "sampled": sampled,
        "slowdown_intact": max(base.slowdown) if base.slowdown else 1.0,
        "worst": rows[:top],
        "rules": design_rules(fabric, base, singles, min_rail),
        "node_heat": _node_heat(fabric, rows),
    }


def _node_heat(fabric: Fabric, rows: list[dict[str, Any]]) -> dict[str, float]:
    """Per switch, the worst slowdown among the scenarios that fail it or one of its cables (for the diagram)."""
    heat: dict[str, float] = {}
    for row in rows:
        for part in row["failure"].split(" + "):
            dev = part.split(":")[0]
            value = row["slowdown"] if row["slowdown"] != float("inf") else 1e9
            heat[dev] = max(heat.get(dev, 1.0), value)
    return heat
