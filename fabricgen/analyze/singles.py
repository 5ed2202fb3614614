"""Every single failure, exactly and incrementally.

`failures.impact` re-routes every QP of the collective in every scenario; at
32K GPUs that is 131K QPs times 68K scenarios.  A single failure changes the
ECMP groups of few (switch, destination) pairs, and only the QPs whose
intact path meets one of those pairs can take another path: every other QP
hashes over the same groups as before, hop by hop, so its path is the intact
one.  Here each scenario

* takes the changed (switch, destination) entries from the BGP simulation
  (`routing.route_delta`, the same simulation `impact` runs);
* re-routes only the QPs that visit a changed entry (an index of the intact
  traversal by (switch, destination column)), with the same hash model;
* updates link bytes, per-job link use and lost QPs by the difference, and
  takes each job's most loaded link from the changed arcs and the intact
  arcs it still uses (the intact ones sorted once);
* recomputes capacities only at the switches the failure touches.

The result of every scenario equals `failures.impact`'s (tests compare them on
the examples and at 2,048 GPUs); link bytes are summed in another order, so
slowdowns may differ in the last bits of a float, which `ROUND` removes in
both.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from fabricgen.analyze.ecmp import busy_seconds, job_ideals, route_hashed, slowdown_of
from fabricgen.analyze.overlay import headers
from fabricgen.analyze.routing import compute_routes
from fabricgen.analyze.scenarios import Baseline, Failure


@dataclass
class _Intact:
    """The intact traversal, indexed for the scenarios."""

    visit_key: np.ndarray  # sorted (switch * columns + destination column) of every hop of every flow
    visit_flow: np.ndarray  # the flow of each visit
    arcs: np.ndarray  # [hops, flows] intact arcs (-1 where none)
    delivered: np.ndarray
    nbytes: np.ndarray  # per arc
    busy: np.ndarray  # per arc, seconds
    pair_key: np.ndarray  # sorted job * arcs + arc the jobs use
    pair_count: np.ndarray  # flows of that job on that arc
    job_top: list[np.ndarray]  # per job, its arcs by intact busy time, busiest first
    undelivered: np.ndarray  # per job
    ideals: list[float | None]


class SingleFailures:
    """The intact fabric indexed once; `row(failure)` gives `impact`'s row for one failure."""

    def __init__(self, base: Baseline) -> None:
        self.base = base
        f = base.fabric
        flows = base.flows
        self.n_cols = len(base.routes.dests)
        self.n_jobs = len(flows.jobs)
        tr = route_hashed(base.routes, flows, base.model)
        dcol = base.routes.column[f.ep_leaf[flows.dst]].astype(np.int64)
        nodes = tr.nodes[1:]
        seen = nodes >= 0
        keys = (nodes * self.n_cols + dcol[None, :])[seen]
        who = np.broadcast_to(np.arange(len(flows)), nodes.shape)[seen]
        order = np.argsort(keys, kind="stable")
        used = tr.arcs >= 0
        flat = tr.arcs[used]
        nbytes = np.bincount(flat, weights=np.broadcast_to(flows.nbytes, tr.arcs.shape)[used], minlength=f.n_arcs)
        jobs = np.broadcast_to(flows.job, tr.arcs.shape)[used].astype(np.int64)
        pair_key, pair_count = np.unique(jobs * f.n_arcs + flat, return_counts=True)
        busy = busy_seconds(f, nbytes)
        job_top = []
        for j in range(self.n_jobs):
            arcs = pair_key[(pair_key // f.n_arcs) == j] % f.n_arcs
            job_top.append(arcs[np.argsort(-busy[arcs], kind="stable")])
        self.intact = _Intact(keys[order], who[order], tr.arcs, tr.delivered, nbytes, busy, pair_key, pair_count,
                              job_top, np.bincount(flows.job[~tr.delivered], minlength=self.n_jobs),
                              job_ideals(f, flows))
        self.capacity = f.arc_capacity() * 1e9 / 8
        self._capacity_index()

    def _capacity_index(self) -> None:
        f = self.base.fabric
        n = len(f.nodes)
        up = np.flatnonzero(f.rank[f.arc_dst] > f.rank[f.arc_src])
        order = up[np.argsort(f.arc_src[up], kind="stable")]
        self.up_arcs = order
        self.up_start = np.searchsorted(f.arc_src[order], np.arange(n + 1))
        self.down_cap = np.bincount(f.ep_leaf, weights=f.ep_speed, minlength=n)
        ep_order = np.argsort(f.ep_leaf, kind="stable")
        self.leaf_eps = ep_order
        self.leaf_ep_start = np.searchsorted(f.ep_leaf[ep_order], np.arange(n + 1))
        self.rail_weight = {rail: np.bincount(f.ep_leaf[f.ep_rail == rail], minlength=n).astype(float)
                            for rail in np.unique(f.ep_rail).tolist()}
        self.rail_total = {rail: float((w * self.base.uplink_capacity).sum()) for rail, w in self.rail_weight.items()}
        self.plane_sel = {plane: f.plane == plane for plane in np.unique(f.plane).tolist()}
        self.plane_total = {p: float(self.base.uplink_capacity[sel].sum()) for p, sel in self.plane_sel.items()}
        self.is_leaf = f.rank == 0
        self.n_leaves = int(self.is_leaf.sum())

    @cached_property
    def hash_key(self) -> np.ndarray:
        """Every QP's hash key, as `route_hashed` builds it (the orbit batches re-route subsets of QPs)."""
        return headers(self.base.fabric, self.base.flows).key

    @cached_property
    def visit_start(self) -> np.ndarray:
        """Where each (switch, destination column) starts in the sorted visits: a dense index for the batches."""
        out: np.ndarray = np.searchsorted(self.intact.visit_key, np.arange(len(self.base.fabric.nodes) * self.n_cols
                                                                          + 1))
        return out

    # ------------------------------------------------------------------ routes and flows

    def _changed(self, failure: Failure) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
        """Entries whose ECMP group differs from the intact one: keys, intact sizes, new sizes; and the routes."""
        base = self.base
        routes = compute_routes(base.fabric, failure.arcs, failure.nodes, base=base.route_base)
        keys = np.flatnonzero(routes.group_of.ravel() != base.routes.group_of.ravel())
        g = routes.group_of.ravel()[keys].astype(np.int64)
        new_size = np.where(g >= 0, routes.g_size[np.maximum(g, 0)], 0)
        return keys, base.group_size.ravel()[keys], new_size, routes

    def _affected(self, keys: np.ndarray) -> np.ndarray:
        """Flows whose intact path visits one of the changed entries (sorted, unique)."""
        vk = self.intact.visit_key
        lo = np.searchsorted(vk, keys, "left")
        hi = np.searchsorted(vk, keys, "right")
        size = hi - lo
        if not size.sum():
            return np.zeros(0, dtype=np.int64)
        idx = np.repeat(lo - np.cumsum(size) + size, size) + np.arange(int(size.sum()))
        return np.unique(self.intact.visit_flow[idx])

    def _slowdowns(self, routes: Any, affected: np.ndarray) -> list[float]:
        """Per job, the slowdown with the affected flows on their new paths and every other flow as intact."""
        intact = self.intact
        f = self.base.fabric
        flows = self.base.flows
        if not len(affected):
            return [slowdown_of(float(intact.busy[top[0]]) if len(top) else 0.0, ideal, int(und))
                    for top, ideal, und in zip(intact.job_top, intact.ideals, intact.undelivered.tolist(),
                                               strict=True)]
        sub = flows.take(affected)
        tr = route_hashed(routes, sub, self.base.model)
        old = intact.arcs[:, affected]
        job = sub.job.astype(np.int64)

        def spread(arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            used = arcs >= 0
            return (arcs[used], np.broadcast_to(sub.nbytes, arcs.shape)[used],
                    np.broadcast_to(job, arcs.shape)[used])

        o_arc, o_bytes, o_job = spread(old)
        n_arc, n_bytes, n_job = spread(tr.arcs)
        changed, inv = np.unique(np.concatenate([o_arc, n_arc]), return_inverse=True)
        k = len(o_arc)
        delta = (np.bincount(inv[k:], weights=n_bytes, minlength=len(changed))
                 - np.bincount(inv[:k], weights=o_bytes, minlength=len(changed)))
        busy_new = busy_seconds(f, intact.nbytes[changed] + delta, changed) if len(changed) else np.zeros(0)
        # per (job, changed arc): intact flow count - old + new
        n_arcs = f.n_arcs
        pk = np.concatenate([n_job * n_arcs + n_arc, o_job * n_arcs + o_arc])
        sign = np.concatenate([np.ones(len(n_arc), dtype=np.int64), -np.ones(len(o_arc), dtype=np.int64)])
        ukeys, uinv = np.unique(pk, return_inverse=True)
        count = np.bincount(uinv, weights=sign, minlength=len(ukeys)).astype(np.int64)
        pos = np.searchsorted(intact.pair_key, ukeys)
        pos_ok = pos < len(intact.pair_key)
        hit = pos_ok.copy()
        hit[pos_ok] = intact.pair_key[pos[pos_ok]] == ukeys[pos_ok]
        count[hit] += intact.pair_count[pos[hit]]
        und = intact.undelivered.copy()
        und -= np.bincount(job[~intact.delivered[affected]], minlength=self.n_jobs)
        und += np.bincount(job[~tr.delivered], minlength=self.n_jobs)
        changed_set = set(changed.tolist())
        out = []
        for j in range(self.n_jobs):
            best = 0.0
            for a in intact.job_top[j].tolist():  # the busiest intact arc this job still uses unchanged
                if a not in changed_set:
                    best = float(intact.busy[a])
                    break
            mine = ukeys[(ukeys // n_arcs == j) & (count > 0)] % n_arcs
            if len(mine):
                best = max(best, float(busy_new[np.searchsorted(changed, mine)].max()))
            out.append(slowdown_of(best, intact.ideals[j], int(und[j])))
        return out

    # ------------------------------------------------------------------ the row

    def row(self, failure: Failure) -> dict[str, Any]:
        keys, old_size, new_size, routes = self._changed(failure)
        return self._row(failure, keys, old_size, new_size, routes)[0]

    def _row(self, failure: Failure, keys: np.ndarray, old_size: np.ndarray, new_size: np.ndarray, routes: Any
             ) -> tuple[dict[str, Any], list[int]]:
        """The row, and the leaves its `leaves` entries name (in order)."""
        base = self.base
        fabric = base.fabric
        slow = self._slowdowns(routes, self._affected(keys))
        n = len(fabric.nodes)
        dead = np.zeros(n, dtype=bool)
        dead[list(failure.nodes)] = True
        # capacity changes only at the switches whose up arcs failed or lead to a dead switch, and the dead ones
        arcs = np.fromiter(failure.arcs, dtype=np.int64, count=len(failure.arcs))
        touched = set(fabric.arc_src[arcs].tolist()) | set(failure.nodes)
        for d in failure.nodes:
            touched.update(fabric.arc_src[fabric.arc_dst == d].tolist())
        cap = base.uplink_capacity.copy()
        frac = np.ones(n)
        np.divide(cap, base.uplink_capacity, out=frac, where=base.uplink_capacity > 0)
        for t in sorted(touched):
            up = self.up_arcs[self.up_start[t]:self.up_start[t + 1]]
            ok = ~np.isin(up, arcs) & ~dead[fabric.arc_dst[up]] & ~dead[t]
            cap[t] = np.bincount(np.zeros(int(ok.sum()), dtype=np.int64), weights=fabric.arc_speed[up[ok]],
                                 minlength=1)[0]
            frac[t] = cap[t] / base.uplink_capacity[t] if base.uplink_capacity[t] > 0 else 1.0
        frac[dead] = 0.0
        leaf_rows = []
        row_leaves = []
        touched_leaves = [t for t in sorted(touched) if self.is_leaf[t]]
        for leaf in touched_leaves:
            if frac[leaf] < 1.0:
                over = self.down_cap[leaf] / cap[leaf] if cap[leaf] > 0 else float("inf")
                leaf_rows.append({"leaf": fabric.nodes[leaf], "capacity": float(frac[leaf]),
                                  "oversubscription": 0.0 if dead[leaf] else over})
                row_leaves.append(leaf)
        alive_cap = np.where(dead, 0, cap)
        rails = {rail: float((w * alive_cap).sum()) / self.rail_total[rail] if self.rail_total[rail] else 1.0
                 for rail, w in self.rail_weight.items()}
        planes = {p: float(alive_cap[sel].sum()) / self.plane_total[p] if self.plane_total[p] else 1.0
                  for p, sel in self.plane_sel.items()}
        lost = [leaf for leaf in touched_leaves if dead[leaf]]
        degraded = [leaf for leaf in touched_leaves if frac[leaf] < 1.0 and not dead[leaf]]
        lost_eps, degraded_eps = self._eps(lost), self._eps(degraded)
        alive = ~dead[keys // self.n_cols]
        shrunk = int((alive & (new_size < old_size) & (new_size > 0)).sum())
        withdrawn = int((alive & (new_size == 0) & (old_size > 0)).sum())
        leaf_fracs = [float(frac[leaf]) for leaf in touched_leaves]
        if len(touched_leaves) < self.n_leaves:
            leaf_fracs.append(1.0)
        return {
            "failure": failure.name,
            "slowdown": max(slow) if slow else 1.0,
            "slowdown_intact": max(base.slowdown) if base.slowdown else 1.0,
            "jobs": [{"name": j.name, "slowdown": s} for j, s in zip(base.flows.jobs, slow, strict=True)],
            "min_leaf_capacity": min(leaf_fracs) if self.n_leaves else 1.0,
            "worst_oversubscription": max((r["oversubscription"] for r in leaf_rows), default=0.0),
            "leaves": leaf_rows,
            "rails": rails,
            "planes": planes,
            "gpus_cut_off": int(len(lost_eps)),
            "gpus_degraded": int(len(degraded_eps)),
            "rails_affected": sorted({int(r) for r in fabric.ep_rail[np.concatenate([lost_eps, degraded_eps])]}),
            "ecmp_groups_shrunk": shrunk,
            "routes_withdrawn": withdrawn,
        }, row_leaves

    def _eps(self, leaves: list[int]) -> np.ndarray:
        if not leaves:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.leaf_eps[self.leaf_ep_start[x]:self.leaf_ep_start[x + 1]] for x in leaves])

