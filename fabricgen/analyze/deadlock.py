"""`analyze deadlock`: can the lossless priority's buffers wait on each other in a cycle?

Lossless traffic follows the routes of the BGP simulation (routing.py), in
the intact fabric and after each failure.  Every ingress queue of the lossless
priority is a node of the buffer-dependency graph, named by the arc that feeds
it (switch, ingress port); a packet in queue (v, from u) that v forwards to w
waits for queue (w, from v), so that is an edge whenever u's ECMP group towards
some destination holds the arc u->v and v's group towards the same destination
holds v->w (Guo et al., SIGCOMM 2016; Hu et al., HotNets 2016; Tagger, CoNEXT 2017).

A cycle in that graph can freeze the priority under PFC.  Routes that only
ever climb tiers and then descend (valley-free, as a Clos routed by eBGP with
shared spine ASNs is) give an acyclic graph: queues can be ordered by
(phase, tier).  So the full graph is only built when some route turns upward
after coming down (a *bounce*) or moves within a tier; then a concrete cycle is
searched for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.failures import DOUBLE_EXACT_LIMIT, every_failure, pair_count, single_failures
from fabricgen.analyze.routing import RouteBase, Routes, compute_routes
from fabricgen.analyze.scenarios import Failure
from fabricgen.analyze.symmetry import symmetry, tie_free


@dataclass
class Verdict:
    failure: str
    acyclic: bool
    bounces: list[list[str]]  # example bounce paths: switch names from the bouncing hop to the destination
    cycle: list[str]  # queues "switch[in:peer]" around one cycle, empty when acyclic


def _group_arrays(routes: Routes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, column, arc) of every ECMP member of every route."""
    if routes.members_cache is not None:
        return routes.members_cache
    g = routes.group_of
    node, col = np.nonzero(g >= 0)
    gid = g[node, col].astype(np.int64)
    size = routes.g_size[gid]
    rep = np.repeat(np.arange(len(gid)), size)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(size) - size, size)
    arcs = routes.g_members[routes.g_offset[gid][rep] + offs]
    routes.members_cache = (node[rep], col[rep], arcs)
    return routes.members_cache


def _upstream(routes: Routes, previous: Routes | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ECMP members that feed switches: the current routes, plus the pre-failure ones while converging."""
    node, col, arcs = _group_arrays(routes)
    if previous is None:
        return node, col, arcs
    pn, pc, pa = _group_arrays(previous)
    alive = ~np.isin(pa, list(routes.failed_arcs)) & ~np.isin(pn, list(routes.dead))
    alive &= ~np.isin(routes.fabric.arc_dst[pa], list(routes.dead))
    return np.concatenate([node, pn[alive]]), np.concatenate([col, pc[alive]]), np.concatenate([arcs, pa[alive]])


def dependency_edges(routes: Routes, previous: Routes | None = None) -> np.ndarray:
    """Unique (queue, next queue) pairs, queues named by their feeding arc: int64 [edges, 2].

    With `previous` (the routes before a failure) the upstream switches may still
    forward by their old routes while the downstream ones already use the new:
    the dependencies of a fabric that is converging.
    """
    f = routes.fabric
    _node, col, arcs = _upstream(routes, previous)
    v = f.arc_dst[arcs].astype(np.int64)
    gv = routes.group_of[v, col].astype(np.int64)
    ok = gv >= 0
    a, gv = arcs[ok], gv[ok]
    size = routes.g_size[gv]
    rep = np.repeat(np.arange(len(gv)), size)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(size) - size, size)
    b = routes.g_members[routes.g_offset[gv][rep] + offs]
    edges = np.stack([a[rep], b], axis=1)
    return np.unique(edges, axis=0) if len(edges) else edges.reshape(0, 2)


def _downward(routes: Routes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, column, arc) of the ECMP members that go down or sideways: only groups holding one are expanded."""
    if routes.down_cache is not None:
        return routes.down_cache
    f = routes.fabric
    rank = f.rank.astype(np.int64)
    if not len(routes.groups):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    down = rank[f.arc_dst[routes.g_members]] <= rank[f.arc_src[routes.g_members]]
    g_down = np.maximum.reduceat(down.astype(np.int8), routes.g_offset).astype(bool)
    g = routes.group_of
    node, col = np.nonzero(g >= 0)
    gid = g[node, col].astype(np.int64)
    keep = g_down[gid]
    node, col, gid = node[keep], col[keep], gid[keep]
    size = routes.g_size[gid]
    rep = np.repeat(np.arange(len(gid)), size)
    offs = np.arange(len(rep)) - np.repeat(np.cumsum(size) - size, size)
    idx = routes.g_offset[gid][rep] + offs
    m = down[idx]
    routes.down_cache = (node[rep][m], col[rep][m], routes.g_members[idx][m])
    return routes.down_cache


def bounces(routes: Routes, limit: int = 3, previous: Routes | None = None) -> list[list[str]]:
    """Routes that come down into a switch and leave it upward (or move within a tier), as example paths."""
    f = routes.fabric
    rank = f.rank.astype(np.int64)
    node, col, arcs = _downward(routes)
    if previous is not None:
        pn, pc, pa = _downward(previous)
        alive = ~np.isin(pa, list(routes.failed_arcs)) & ~np.isin(pn, list(routes.dead))
        alive &= ~np.isin(f.arc_dst[pa], list(routes.dead))
        node, col, arcs = np.concatenate([node, pn[alive]]), np.concatenate([col, pc[alive]]), \
            np.concatenate([arcs, pa[alive]])
    v = f.arc_dst[arcs].astype(np.int64)
    if not len(v):
        return []
    u2, v2, c2 = node, v, col
    gv = routes.group_of[v2, c2].astype(np.int64)
    has = gv >= 0
    u2, v2, c2, gv = u2[has], v2[has], c2[has], gv[has]
    if not len(gv) or not len(routes.groups):
        return []
    # the highest tier each group's members lead to
    top = np.maximum.reduceat(rank[f.arc_dst[routes.g_members]], routes.g_offset)
    hits = np.flatnonzero(top[gv] >= rank[v2])
    return [_path(routes, int(u2[i]), int(routes.dests[c2[i]])) for i in hits[:limit].tolist()]


def _path(routes: Routes, start: int, dest: int) -> list[str]:
    f = routes.fabric
    names = [f.nodes[start]]
    cur = start
    for _ in range(32):
        nh = routes.nexthops(cur, dest)
        if not nh:
            break
        cur = int(f.arc_dst[nh[0]])
        names.append(f.nodes[cur])
    return names


def find_cycle(edges: np.ndarray, n_queues: int) -> list[int]:
    """One cycle of the dependency graph as a list of queues (iterative DFS), or []."""
    if not len(edges):
        return []
    order = np.argsort(edges[:, 0], kind="stable")
    src, dst = edges[order, 0], edges[order, 1]
    start = np.searchsorted(src, np.arange(n_queues + 1))
    state = np.zeros(n_queues, dtype=np.int8)  # 0 new, 1 on stack, 2 done
    for root in np.unique(src).tolist():
        if state[root]:
            continue
        stack = [(root, int(start[root]))]
        state[root] = 1
        while stack:
            q, i = stack[-1]
            if i < start[q + 1]:
                stack[-1] = (q, i + 1)
                w = int(dst[i])
                if state[w] == 1:
                    path = [s for s, _ in stack]
                    return path[path.index(w):]
                if state[w] == 0:
                    state[w] = 1
                    stack.append((w, int(start[w])))
            else:
                state[q] = 2
                stack.pop()
    return []


def queue_name(fabric: Fabric, arc: int) -> str:
    """The lossless ingress queue an arc feeds: switch[in:port from peer]."""
    switch, peer = fabric.nodes[fabric.arc_dst[arc]], fabric.nodes[fabric.arc_src[arc]]
    return f"{switch}[in:{fabric.arc_peer_port[arc]} from {peer}]"


def verdict(routes: Routes, name: str, previous: Routes | None = None) -> Verdict:
    """Converged routes alone, or (with `previous`) while converging from them."""
    f = routes.fabric
    flat = bool((f.rank[f.arc_src] == f.rank[f.arc_dst]).any())
    found = bounces(routes, previous=previous)
    if not found and not flat:
        return Verdict(name, True, [], [])
    cycle = find_cycle(dependency_edges(routes, previous), f.switch_arcs)
    return Verdict(name, not cycle, found, [queue_name(f, q) for q in cycle])


def _verdicts(fabric: Fabric, base: RouteBase, intact: Routes, failure: Failure) -> tuple[Verdict, Verdict, Routes]:
    routes = compute_routes(fabric, failure.arcs, failure.nodes, base=base)
    return (verdict(routes, failure.name), verdict(routes, f"{failure.name} (converging)", previous=intact), routes)


def scenario_verdicts(fabric: Fabric, base: RouteBase, intact: Routes, scenarios: list[Failure]
                      ) -> list[tuple[bool, bool, bool, bool]]:
    """Per scenario (acyclic, bounces) converged and converging; one computation per orbit of the fabric's symmetry.

    A member of an orbit whose representative's routes are tie-free (symmetry.py)
    has the representative's verdicts: its routes are their image under an
    automorphism, which maps dependency cycles onto cycles and bounces onto
    bounces.  The rest are computed one by one.
    """
    reps = symmetry(fabric).classes(scenarios) if len(scenarios) > 1 and tie_free(intact) else \
        list(range(len(scenarios)))
    known: dict[int, tuple[bool, bool, bool, bool]] = {}
    out = []
    for i, failure in enumerate(scenarios):
        rep = reps[i]
        if rep != i and rep in known:
            out.append(known[rep])
            continue
        converged, converging, routes = _verdicts(fabric, base, intact, failure)
        row = (converged.acyclic, bool(converged.bounces), converging.acyclic, bool(converging.bounces))
        if rep == i and tie_free(routes):
            known[i] = row
        out.append(row)
    return out


def deadlock_report(fabric: Fabric, any_k: int, scheme: str, failures: list[Failure] | None = None
                    ) -> dict[str, Any]:
    """Intact fabric, then each failure converged and converging (old routes upstream, new downstream).

    Verdicts come per orbit (`scenario_verdicts`); the cycles and bounce paths
    the report shows are computed for their own scenarios.
    """
    base = RouteBase(fabric)
    intact = compute_routes(fabric, base=base)
    first = verdict(intact, "intact")
    scenarios = failures if failures is not None else (every_failure(fabric, any_k, DOUBLE_EXACT_LIMIT) if any_k
                                                       else [])
    sampled = None
    if failures is None and any_k == 2 and len(scenarios) < pair_count(len(single_failures(fabric))):
        sampled = {"analysed": len(scenarios), "of": pair_count(len(single_failures(fabric))),
                   "limit": DOUBLE_EXACT_LIMIT, "how": "evenly spaced over every pair of single failures"}
    flags = [(first.acyclic, bool(first.bounces))]
    for row in scenario_verdicts(fabric, base, intact, scenarios):
        flags += [row[:2], row[2:]]
    cyclic = [i for i, (acyclic, _b) in enumerate(flags) if not acyclic][:10]
    bouncing = [i for i, (_a, b) in enumerate(flags) if b]
    detail: dict[int, Verdict] = {0: first}
    for i in sorted(set(cyclic) | set(bouncing[:5])):
        if i not in detail:
            converged, converging, _routes = _verdicts(fabric, base, intact, scenarios[(i - 1) // 2])
            detail[i - (i - 1) % 2], detail[i + 1 - (i - 1) % 2] = converged, converging
    return {
        "kind": "deadlock",
        "fabric": fabric.name,
        "asn_scheme": scheme,
        "scenarios": 1 + len(scenarios),
        "sampled": sampled,
        "acyclic": not cyclic,
        "with_bounces": len(bouncing),
        "cycles": [{"failure": detail[i].failure, "cycle": detail[i].cycle, "bounces": detail[i].bounces}
                   for i in cyclic],
        "bounce_examples": [{"failure": detail[i].failure, "bounces": detail[i].bounces} for i in bouncing[:5]],
    }
