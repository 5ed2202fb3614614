"""Every single failure, one BGP simulation per orbit: the members' rows from their representative's routes.

`singles.SingleFailures.row` needs the routes after each failure, and the BGP
simulation behind them is most of its time (0.1 s a failure at 32K GPUs, 68K
failures).  A member of an orbit of the fabric's symmetry (symmetry.py) has
the representative's routes relabelled by an automorphism π: the ECMP entry
(v, towards leaf d) changes exactly when (π⁻¹v, π⁻¹d) does, to the image of
the representative's new group.  So here, per orbit and for up to 1,024
members at once:

* the changed entries are the representative's mapped through each member's
  π; the QPs whose intact path meets one (a dense index of the intact visits)
  are re-routed hop by hop with the same hash model as `route_hashed`;
* a hop is looked up through π⁻¹ among the representative's changed entries,
  and only where it hits one is that entry's new group mapped through π and
  sorted (a cable's image is the cable of the same index in the image bundle;
  in the failed bundle the survivors keep their order);
* link bytes, per-job link use, lost QPs and each job's most loaded link are
  updated by the difference, as `SingleFailures._slowdowns` does;
* the capacity, rail, plane, GPU and ECMP-group columns are the
  representative's (the automorphisms keep each switch's tier, plane, GPU ports
  and rails, so those numbers are invariant); the degraded leaves are renamed.

The flows are not symmetric (each QP hashes its own addresses and ports), so
the slowdowns are computed for every member, never copied.  Tests compare each
member's row with `impact`'s full re-route on the examples and at 2,048 GPUs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fabricgen.analyze.ecmp import MAX_HOPS, busy_seconds, slowdown_of
from fabricgen.analyze.routing import LOCAL, Routes
from fabricgen.analyze.scenarios import Failure
from fabricgen.analyze.symmetry import Symmetry, symmetry, tie_free
from fabricgen.base import pool

CHUNK_ENTRIES = 1 << 21  # members batched so that their changed entries stay about this many
PARALLEL_FROM = 4096  # failures from which the orbits run in worker processes (fewer: forking costs more)
TASKS_PER_WORKER = 4  # orbit slices per worker, so that the large orbits do not finish last on one

if TYPE_CHECKING:
    from fabricgen.analyze.singles import SingleFailures


def every_row(engine: SingleFailures, failures: list[Failure], workers: int | None = None) -> list[dict[str, Any]]:
    """`engine.row` of every failure; members of an orbit whose representative's routes are tie-free in batches.

    The orbits (and slices of the large ones) are independent: with `workers` > 1 they run in forked processes
    that share the engine copy-on-write.  A slice is a run of whole batches, the batches the serial loop makes,
    so every row is computed exactly as it would be in one process.
    """
    base = engine.base
    if len(failures) < 2 or not tie_free(base.routes):
        return [engine.row(f) for f in failures]
    sym = symmetry(base.fabric)
    reps = sym.classes(failures)
    members: dict[int, list[int]] = {}
    for i, r in enumerate(reps):
        if r != i:
            members.setdefault(r, []).append(i)
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(failures) >= PARALLEL_FROM else 1
    tasks = _tasks([i for i, r in enumerate(reps) if r == i], members, workers)
    state = _Orbits(engine, sym, failures, members)
    if workers > 1 and len(tasks) > 1:
        engine.visit_start, engine.hash_key  # noqa: B018 - built once here, shared by the workers
        with pool.forked_pool(workers, state) as workers_pool:
            parts = workers_pool.map(_orbit_rows, tasks, chunksize=1)
    else:
        with pool.serial(state):
            parts = [_orbit_rows(task) for task in tasks]
    rows: list[dict[str, Any] | None] = [None] * len(failures)
    for part in parts:
        for i, row in part:
            rows[i] = row
    done = [r for r in rows if r is not None]
    if len(done) != len(failures):
        raise RuntimeError("a failure got no row")  # every representative and member is filled above
    return done


def _tasks(reps: list[int], members: dict[int, list[int]], workers: int) -> list[tuple[int, int, int]]:
    """(representative, slice, slices) for every orbit: an orbit in slices by its share of all members, so that
    about `TASKS_PER_WORKER` tasks per worker keep both busy; the largest orbits first."""
    total = sum(len(m) for m in members.values()) or 1
    target = workers * TASKS_PER_WORKER if workers > 1 else 1
    tasks = []
    for i in sorted(reps, key=lambda r: -len(members.get(r, ()))):
        slices = max(1, round(target * len(members.get(i, ())) / total))  # 1 in one process: target 1
        tasks += [(i, k, slices) for k in range(slices)]
    return tasks


@dataclass
class _Orbits:
    """What every orbit task reads (shared by the forked workers), and the last representative computed."""

    engine: SingleFailures
    sym: Symmetry
    failures: list[Failure]
    members: dict[int, list[int]]
    last: tuple[int, Any] | None = None  # (representative, its _changed and _row) in this process


def _orbit_rows(task: tuple[int, int, int]) -> list[tuple[int, dict[str, Any]]]:
    """The rows of slice `k` of `slices` of orbit `i`: its batches k/slices to (k+1)/slices (and, in slice 0, the
    representative's own row)."""
    i, k, slices = task
    state: _Orbits = pool.shared()
    engine, sym, failures = state.engine, state.sym, state.failures
    if state.last is None or state.last[0] != i:
        keys, old_size, new_size, routes = engine._changed(failures[i])
        state.last = (i, (keys, routes, *engine._row(failures[i], keys, old_size, new_size, routes)))
    keys, routes, row, leaves = state.last[1]
    out: list[tuple[int, dict[str, Any]]] = [(i, row)] if k == 0 else []
    orbit = state.members.get(i, [])
    if not orbit:
        return out
    if not tie_free(routes):
        part = orbit[k * len(orbit) // slices:(k + 1) * len(orbit) // slices]
        return out + [(m, engine.row(failures[m])) for m in part]
    size = max(1, min(1024, CHUNK_ENTRIES // len(keys)))  # the batch: members whose changed entries fit
    batches = -(-len(orbit) // size)
    first, last = k * batches // slices, (k + 1) * batches // slices
    part = orbit[first * size:last * size]
    if not part:
        return out
    rep = _Rep(failures[i], keys, routes.group_of.ravel()[keys].astype(np.int64), routes, row, leaves)
    for chunk, perms in sym.images(failures, i, part, size):
        out += zip(chunk, _member_rows(engine, sym, failures, rep, chunk, perms), strict=True)
    return out


@dataclass
class _Rep:
    """An orbit's representative: its failure, changed entries (sorted) and their new group ids, routes, row."""

    failure: Failure
    keys: np.ndarray
    gid: np.ndarray
    routes: Routes
    row: dict[str, Any]
    leaves: list[int]


def _arc_images(sym: Symmetry, fabric: Any, rep: Failure, failed_rank: np.ndarray, perms: np.ndarray,
                owner: np.ndarray, arcs: np.ndarray) -> np.ndarray:
    """The image of each arc under its owner member's permutation (a cable keeps its index in its bundle; in the
    failed bundle the survivors keep their order around the failed cable)."""
    src, dst = fabric.arc_src[arcs].astype(np.int64), fabric.arc_dst[arcs].astype(np.int64)
    s2, d2 = perms[owner, src], perms[owner, dst]
    bundle = sym.bundle_of(s2, d2)
    rank = sym.cable_rank[arcs // 2]
    if rep.arcs:
        cable_r = min(rep.arcs) // 2
        i_r = int(sym.cable_rank[cable_r])
        skip = rank - (rank > i_r)
        in_failed = sym.cable_bundle[arcs // 2] == sym.cable_bundle[cable_r]
        rank = np.where(in_failed, skip + (skip >= failed_rank[owner]), rank)
    cable = sym.bundle_cables[sym.bundle_start[bundle] + rank]
    forward = 2 * cable
    out: np.ndarray = forward + (fabric.arc_src[forward] != s2)
    return out


def _member_rows(engine: SingleFailures, sym: Symmetry, failures: list[Failure], rep: _Rep, chunk: list[int],
                 perms: np.ndarray) -> list[dict[str, Any]]:
    base = engine.base
    f = base.fabric
    intact_routes = base.routes
    n, n_cols = len(f.nodes), engine.n_cols
    m = len(chunk)
    inverse = np.empty_like(perms)
    np.put_along_axis(inverse, perms, np.broadcast_to(np.arange(n), perms.shape), axis=1)
    failed_rank = (sym.cable_rank[np.array([min(failures[i].arcs) // 2 for i in chunk], dtype=np.int64)]
                   if rep.failure.arcs else np.zeros(m, dtype=np.int64))
    # each member's changed entries: the representative's, mapped
    node_r, col_r = rep.keys // n_cols, rep.keys % n_cols
    # np.take, not perms[:, idx]: that comes out column-major, and each ravel below then copied it (1.7 s at 32K)
    key_m = (np.take(perms, node_r, axis=1) * n_cols
             + intact_routes.column[np.take(perms, intact_routes.dests[col_r], axis=1)])
    # the QPs each member re-routes: those whose intact path meets one of its changed entries
    start = engine.visit_start
    lo, hi = start[key_m].ravel(), start[key_m + 1].ravel()
    cnt = hi - lo
    total = int(cnt.sum())
    idx = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(total)
    owner = np.repeat(np.repeat(np.arange(m), len(rep.keys)), cnt)
    n_flows = len(base.flows)
    pair = np.unique(owner * n_flows + engine.intact.visit_flow[idx])
    pm, pf = pair // n_flows, pair % n_flows
    arcs, delivered = _route(engine, sym, rep, failed_rank, perms, inverse, pm, pf)
    slow = _slowdowns(engine, m, pm, pf, arcs, delivered)
    out = []
    names = f.nodes
    for li, i in enumerate(chunk):
        row = dict(rep.row)
        row["failure"] = failures[i].name
        jobs = slow[li]
        row["slowdown"] = max(jobs) if jobs else 1.0
        row["jobs"] = [{"name": j.name, "slowdown": s} for j, s in zip(base.flows.jobs, jobs, strict=True)]
        if rep.leaves:
            leaves = perms[li, rep.leaves].tolist()
            by = sorted(range(len(leaves)), key=leaves.__getitem__)
            row["leaves"] = [{**rep.row["leaves"][k], "leaf": names[leaves[k]]} for k in by]
        out.append(row)
    return out


def _route(engine: SingleFailures, sym: Symmetry, rep: _Rep, failed_rank: np.ndarray, perms: np.ndarray,
           inverse: np.ndarray, pm: np.ndarray, pf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hop by hop as `route_hashed`; a hop whose entry is the image of a changed one takes the image of its group.

    The entry (v, towards d) of member π is changed iff (π⁻¹v, π⁻¹d) is one
    of the representative's; its group is then the image of that one's,
    sorted as the routes keep groups.
    """
    base = engine.base
    f = base.fabric
    flows = base.flows
    routes = base.routes
    failed = rep.routes
    n_cols = engine.n_cols
    p = len(pf)
    key = engine.hash_key[pf]
    rows = [f.ep_up_arc(flows.src[pf]).astype(np.int64)]
    cur = f.ep_leaf[flows.src[pf]].astype(np.int64)
    dcol = routes.column[f.ep_leaf[flows.dst[pf]]]
    down = f.ep_down_arc(flows.dst[pf]).astype(np.int64)
    delivered = np.zeros(p, dtype=bool)
    active = np.arange(p)
    arc_dst = f.arc_dst.astype(np.int64)
    n_keys = len(rep.keys)
    for _ in range(MAX_HOPS):
        if not len(active):
            break
        step = np.full(p, -1, dtype=np.int64)
        here, col, who = cur[active], dcol[active], pm[active]
        rk = inverse[who, here] * n_cols + routes.column[inverse[who, routes.dests[col]]]
        pos = np.minimum(np.searchsorted(rep.keys, rk), max(n_keys - 1, 0))
        hit = rep.keys[pos] == rk if n_keys else np.zeros(len(rk), dtype=bool)
        g = np.where(hit, rep.gid[pos], routes.group_of[here, col])
        done = active[g == LOCAL]
        step[done] = down[done]
        delivered[done] = True
        fwd = g >= 0
        go = active[fwd]
        if len(go):
            gf, patched = g[fwd], hit[fwd]
            size = np.where(patched, failed.g_size[gf], routes.g_size[np.where(patched, 0, gf)])
            choice = base.model.member(key[go], here[fwd], size)
            arc = routes.g_members[routes.g_offset[np.where(patched, 0, gf)] + np.where(patched, 0, choice)]
            if patched.any():  # the image of the representative's group, sorted, at the hashed index
                gp, cp, op = gf[patched], choice[patched], who[fwd][patched]
                sz = failed.g_size[gp]
                seg = np.repeat(np.arange(len(gp)), sz)
                flat = failed.g_members[np.repeat(failed.g_offset[gp] - np.cumsum(sz) + sz, sz) + np.arange(sz.sum())]
                img = _arc_images(sym, f, rep.failure, failed_rank, perms, op[seg], flat)
                img = np.sort(seg * f.n_arcs + img) % f.n_arcs
                arc[patched] = img[np.cumsum(sz) - sz + cp]
            step[go] = arc
            cur[go] = arc_dst[arc]
        rows.append(step)
        active = go  # NO_ROUTE stops a QP, undelivered
    return np.vstack(rows), delivered


def _slowdowns(engine: SingleFailures, m: int, pm: np.ndarray, pf: np.ndarray, new: np.ndarray,
               delivered: np.ndarray) -> list[list[float]]:
    """Per member, per job: the slowdown with its re-routed QPs on their new paths, as `_slowdowns` computes it."""
    intact = engine.intact
    f = engine.base.fabric
    flows = engine.base.flows
    n_arcs = f.n_arcs
    n_jobs = engine.n_jobs
    old = intact.arcs[:, pf]
    job = flows.job[pf].astype(np.int64)
    nbytes = flows.nbytes[pf]

    def spread(arcs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        used = arcs >= 0
        return (arcs[used], np.broadcast_to(nbytes, arcs.shape)[used], np.broadcast_to(job, arcs.shape)[used],
                np.broadcast_to(pm, arcs.shape)[used])

    o_arc, o_bytes, o_job, o_mem = spread(old)
    n_arc, n_bytes, n_job, n_mem = spread(new)
    k = len(o_arc)
    ck = np.concatenate([o_mem * n_arcs + o_arc, n_mem * n_arcs + n_arc])
    changed, inv = np.unique(ck, return_inverse=True)
    delta = (np.bincount(inv[k:], weights=n_bytes, minlength=len(changed))
             - np.bincount(inv[:k], weights=o_bytes, minlength=len(changed)))
    c_arc = changed % n_arcs
    busy_new = busy_seconds(f, intact.nbytes[c_arc] + delta, c_arc) if len(changed) else np.zeros(0)
    # per (member, job, changed arc): the intact count of the job's QPs - old + new
    jk = np.concatenate([(n_mem * n_jobs + n_job) * n_arcs + n_arc, (o_mem * n_jobs + o_job) * n_arcs + o_arc])
    sign = np.concatenate([np.ones(len(n_arc), dtype=np.int64), -np.ones(k, dtype=np.int64)])
    ukeys, uinv = np.unique(jk, return_inverse=True)
    count = np.bincount(uinv, weights=sign, minlength=len(ukeys)).astype(np.int64)
    u_arc = ukeys % n_arcs
    u_mj = ukeys // n_arcs  # member * n_jobs + job
    pair_key = (u_mj % n_jobs) * n_arcs + u_arc
    pos = np.minimum(np.searchsorted(intact.pair_key, pair_key), max(len(intact.pair_key) - 1, 0))
    hit = intact.pair_key[pos] == pair_key if len(intact.pair_key) else np.zeros(len(pair_key), dtype=bool)
    count[hit] += intact.pair_count[pos[hit]]
    best_new = np.zeros(m * n_jobs)
    use = count > 0
    if use.any():
        np.maximum.at(best_new, u_mj[use], busy_new[np.searchsorted(changed, (u_mj[use] // n_jobs) * n_arcs
                                                                     + u_arc[use])])
    und = np.broadcast_to(intact.undelivered, (m, n_jobs)).astype(np.int64).copy()
    np.subtract.at(und, (pm, job), (~intact.delivered[pf]).astype(np.int64))
    np.add.at(und, (pm, job), (~delivered).astype(np.int64))
    per_member = np.bincount(changed // n_arcs, minlength=m)
    depth = int(per_member.max(initial=0)) + 1
    out: list[list[float]] = [[] for _ in range(m)]
    for j in range(n_jobs):
        top = intact.job_top[j][:depth]
        if len(top):
            probe = np.arange(m)[:, None] * n_arcs + top[None, :]
            pos = np.minimum(np.searchsorted(changed, probe), max(len(changed) - 1, 0))
            taken = changed[pos] == probe if len(changed) else np.zeros(probe.shape, dtype=bool)
            free = ~taken
            first = np.argmax(free, axis=1)
            best_old = np.where(free.any(axis=1), intact.busy[top[first]], 0.0)
        else:
            best_old = np.zeros(m)
        best = np.maximum(best_old, best_new[np.arange(m) * n_jobs + j])
        ideal = intact.ideals[j]
        for li in range(m):
            out[li].append(slowdown_of(float(best[li]), ideal, int(und[li, j])))
    return out
