"""Routes: eBGP best-path selection simulated over the planned topology.

Every leaf originates its GPU subnets.  For each origin the simulation runs
path-vector BGP as the plan configures it: a router rejects a path holding its
own AS more often than its `allowas-in` allows, a sender with the peer-AS check
on (NX-OS's default unless `disable-peer-as-check`) does not send a path holding
the receiver's AS, the shortest AS path wins, equal-length paths are multipath
(the configs set `bestpath as-path multipath-relax`) up to `maximum-paths`
sessions, one session per cable.  With no local-pref or MED in the design the
stable state is found by a breadth-first pass in path-length order.

Leaves that are *twins* (the same neighbours over the same number of cables,
the same BGP settings, ASNs unique or shared alike) get the same routes up to
swapping their names, so the simulation runs once per class of twins and the
other members' routes are relabelled: one run per pod instead of one per leaf.

The result is the ECMP group every switch uses towards every leaf
(`Routes.group_of[node, column]`), the groups as arrays for vectorised flow
routing, and the AS path each switch advertises.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from fabricgen.analyze.fabric import Fabric

LOCAL = -2  # the switch is the destination leaf
NO_ROUTE = -1

Adjacency = list[list[tuple[int, tuple[int, ...]]]]  # node -> [(neighbour, arcs node->neighbour)]


def adjacency(fabric: Fabric, failed_arcs: Iterable[int] = (), dead: Iterable[int] = ()) -> Adjacency:
    """Working arcs grouped by neighbour, in neighbour order (the BGP tie-break order)."""
    down = set(failed_arcs)
    dead_set = set(dead)
    by_pair: dict[tuple[int, int], list[int]] = defaultdict(list)
    for arc, (s, d) in enumerate(zip(fabric.arc_src.tolist(), fabric.arc_dst.tolist(), strict=True)):
        if arc in down or (arc ^ 1) in down or s in dead_set or d in dead_set:
            continue
        by_pair[s, d].append(arc)
    adj: Adjacency = [[] for _ in fabric.nodes]
    for (s, d), arcs in sorted(by_pair.items()):
        adj[s].append((d, tuple(arcs)))
    return adj


@dataclass
class BgpRun:
    """Routes of every switch towards one origin leaf."""

    origin: int
    paths: list[tuple[int, ...] | None]  # AS path each switch advertises (own AS first), None = no route
    nexthops: list[tuple[int, ...]]  # egress arcs (ECMP members); () for the origin and for no route
    evaluated: set[int] | None = None  # bgp_update: the switches it re-evaluated (None: a full run)


def bgp_run(fabric: Fabric, adj: Adjacency, origin: int, dead: frozenset[int] = frozenset()) -> BgpRun:
    n = len(fabric.nodes)
    asn = fabric.as_list("asn")
    allowas = fabric.as_list("arc_allowas")
    peer_check = fabric.as_list("arc_peer_check")
    max_paths = fabric.as_list("max_paths")
    paths: list[tuple[int, ...] | None] = [None] * n
    nexthops: list[tuple[int, ...]] = [()] * n
    if origin in dead:
        return BgpRun(origin, paths, nexthops)
    paths[origin] = (asn[origin],)
    frontier = [origin]
    while frontier:
        offers: dict[int, list[tuple[int, tuple[int, ...]]]] = defaultdict(list)
        for u in frontier:
            path_u = paths[u]
            assert path_u is not None
            for v, arcs in adj[u]:
                if paths[v] is not None:
                    continue
                a = arcs[0]  # u -> v; every parallel session has the same settings
                seen = path_u.count(asn[v])
                if seen and peer_check[a]:
                    continue  # the sender does not advertise a path holding the receiver's AS
                if seen > allowas[a]:
                    continue  # receiver's AS-path loop check
                offers[v].append((u, arcs))
        frontier = []
        for v in sorted(offers):
            cands = sorted(offers[v])
            best_u = cands[0][0]
            path_best = paths[best_u]
            assert path_best is not None
            paths[v] = (asn[v], *path_best)
            members: list[int] = []
            for _u, arcs in cands:
                members.extend(a ^ 1 for a in arcs)  # v's egress arcs towards u
            nexthops[v] = tuple(sorted(members[: max_paths[v]]))
            frontier.append(v)
    return BgpRun(origin, paths, nexthops)


def _evaluate(fabric: Fabric, adj: Adjacency, paths: list[tuple[int, ...] | None], v: int,
              asn: list[int], allowas: list[int], peer_check: list[bool], max_paths: list[int]
              ) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """Best path and ECMP members of v given its neighbours' current paths."""
    best_len = 1 << 30
    cands: list[tuple[int, tuple[int, ...]]] = []
    own = asn[v]
    for u, arcs in adj[v]:
        path_u = paths[u]
        if path_u is None or len(path_u) > best_len:
            continue
        a = arcs[0] ^ 1  # u -> v
        seen = path_u.count(own)
        if (seen and peer_check[a]) or seen > allowas[a]:
            continue
        if len(path_u) < best_len:
            best_len = len(path_u)
            cands = []
        cands.append((u, arcs))
    if not cands:
        return None, ()
    best_path = paths[cands[0][0]]
    assert best_path is not None
    members = [a for _u, arcs in cands for a in arcs]
    return (own, *best_path), tuple(sorted(members[: max_paths[v]]))


def bgp_update(fabric: Fabric, adj: Adjacency, base: BgpRun, failed_arcs: frozenset[int],
               dead: frozenset[int]) -> BgpRun:
    """The run of `base.origin` after arcs and switches fail, recomputing only what depended on them.

    A switch is re-evaluated when one of its ECMP members failed or a neighbour's
    advertised path changed; a change of path (not only of members) spreads to
    its neighbours, in path-length order.  Falls back to a full run if the
    changes do not settle.
    """
    origin = base.origin
    if origin in dead:
        return bgp_run(fabric, adj, origin, dead)
    asn = fabric.as_list("asn")
    allowas = fabric.as_list("arc_allowas")
    peer_check = fabric.as_list("arc_peer_check")
    max_paths = fabric.as_list("max_paths")
    paths = list(base.paths)
    nexthops = list(base.nexthops)
    arc_src = fabric.arc_src
    touched = {int(arc_src[a]) for a in failed_arcs} | {int(arc_src[a ^ 1]) for a in failed_arcs}
    for d in dead:
        touched.add(d)
        touched.update(v for v, _arcs in base_neighbours(fabric, d))
    import heapq

    heap = [(len(paths[v]) if paths[v] is not None else 1 << 30, v) for v in touched]  # type: ignore[arg-type]
    heapq.heapify(heap)
    budget = 20 * len(paths) + 100
    evaluated: set[int] = set()
    while heap:
        budget -= 1
        if budget < 0:
            return bgp_run(fabric, adj, origin, dead)
        _, v = heapq.heappop(heap)
        if v == origin:
            continue
        new_path: tuple[int, ...] | None
        new_nh: tuple[int, ...]
        if v in dead:
            new_path, new_nh = None, ()
        else:
            new_path, new_nh = _evaluate(fabric, adj, paths, v, asn, allowas, peer_check, max_paths)
        nexthops[v] = new_nh
        evaluated.add(v)
        if new_path != paths[v]:
            paths[v] = new_path
            for w, _arcs in adj[v]:
                heapq.heappush(heap, (len(paths[w]) if paths[w] is not None else 1 << 30, w))  # type: ignore[arg-type]
    return BgpRun(origin, paths, nexthops, evaluated)


def base_neighbours(fabric: Fabric, node: int) -> list[tuple[int, tuple[int, ...]]]:
    arcs = np.flatnonzero(fabric.arc_src == node)
    by: dict[int, list[int]] = defaultdict(list)
    for a in arcs.tolist():
        by[int(fabric.arc_dst[a])].append(a)
    return sorted((d, tuple(x)) for d, x in by.items())


class RouteBase:
    """The intact fabric's adjacency and BGP runs, reused by every failure scenario."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.adj = adjacency(fabric)
        self._runs: dict[int, BgpRun] = {}
        shared = _shared_asns(fabric)
        self.keys = {leaf: _twin_key(fabric, self.adj, leaf, shared) for leaf in fabric.leaves().tolist()}
        self.intact = compute_routes(fabric)
        self._runs.update(self.intact.runs)
        self.class_of = {rep: frozenset(m for m, r in self.intact.rep_of.items() if r == rep)
                         for rep in self.intact.runs}

    def run(self, origin: int) -> BgpRun:
        """The intact run towards a leaf: its twin class representative's, relabelled (as `compute_routes` does)."""
        run = self._runs.get(origin)
        if run is None:
            rep = self.intact.rep_of.get(origin)
            if rep is not None and rep != origin:
                run = relabel_run(self.fabric, self.adj, self.intact.runs[rep], origin)
            else:
                run = bgp_run(self.fabric, self.adj, origin)
            self._runs[origin] = run
        return run

    def touched(self, failed: frozenset[int], dead: frozenset[int]) -> set[int]:
        """Switches whose adjacency a failure changes."""
        f = self.fabric
        touched = {int(f.arc_src[a]) for a in failed} | {int(f.arc_dst[a]) for a in failed} | set(dead)
        for d in dead:
            touched.update(v for v, _arcs in self.adj[d])
        return touched

    def patched(self, failed: frozenset[int], dead: frozenset[int]) -> Adjacency:
        """The adjacency with failed cables and dead switches removed (only touched nodes rebuilt)."""
        if not failed and not dead:
            return self.adj
        f = self.fabric
        touched = {int(f.arc_src[a]) for a in failed} | {int(f.arc_dst[a]) for a in failed} | set(dead)
        for d in dead:
            touched.update(v for v, _arcs in self.adj[d])
        adj = list(self.adj)
        for v in touched:
            if v in dead:
                adj[v] = []
                continue
            row = []
            for u, arcs in self.adj[v]:
                if u in dead:
                    continue
                keep = tuple(a for a in arcs if a not in failed and (a ^ 1) not in failed)
                if keep:
                    row.append((u, keep))
            adj[v] = row
        return adj


@dataclass
class Routes:
    """ECMP groups of every switch towards every leaf, as arrays."""

    fabric: Fabric
    dests: np.ndarray  # node id of each destination column (the leaves)
    column: np.ndarray  # node -> column, -1 for non-leaves
    group_of: np.ndarray  # int32 [nodes, columns]: group id, LOCAL or NO_ROUTE
    groups: list[tuple[int, ...]]
    g_offset: np.ndarray
    g_size: np.ndarray
    g_members: np.ndarray
    runs: dict[int, BgpRun] = field(default_factory=dict)  # class representative -> its run
    rep_of: dict[int, int] = field(default_factory=dict)  # leaf -> its class representative
    failed_arcs: frozenset[int] = frozenset()
    dead: frozenset[int] = frozenset()
    members_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # deadlock: every (node, col, arc)
    down_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # deadlock: downward members
    interned: dict[tuple[int, ...], int] = field(default_factory=dict)  # group -> its id

    def nexthops(self, node: int, dest: int) -> tuple[int, ...]:
        g = int(self.group_of[node, self.column[dest]])
        return self.groups[g] if g >= 0 else ()

    def as_path(self, node: int, dest: int) -> tuple[int, ...] | None:
        """The AS path `node` advertises towards leaf `dest` (relabelled from the twin's run)."""
        rep = self.rep_of.get(dest)
        if rep is None:
            return None
        run = self.runs[rep]
        asn = self.fabric.asn
        if dest == rep:
            return run.paths[node]
        swapped = {rep: dest, dest: rep}.get(node, node)
        path = run.paths[swapped]
        if path is None:
            return None
        a, b = int(asn[rep]), int(asn[dest])
        return tuple(b if x == a else a if x == b else x for x in path)


def _twin_key(fabric: Fabric, adj: Adjacency, leaf: int, shared: set[int]) -> tuple[object, ...]:
    asn = int(fabric.asn[leaf])
    inbound = tuple((int(fabric.arc_allowas[arcs[0] ^ 1]), bool(fabric.arc_peer_check[arcs[0]]))
                    for _v, arcs in adj[leaf])
    return (tuple((v, len(arcs)) for v, arcs in adj[leaf]), asn if asn in shared else "unique", inbound,
            int(fabric.max_paths[leaf]), int(fabric.plane[leaf]))


def _shared_asns(fabric: Fabric) -> set[int]:
    counts: dict[int, int] = defaultdict(int)
    for a in fabric.as_list("asn"):
        counts[a] += 1
    return {a for a, c in counts.items() if c > 1}


def twin_classes(fabric: Fabric, adj: Adjacency, dead: frozenset[int],
                 keys: dict[int, tuple[object, ...]] | None = None, touched: set[int] | None = None
                 ) -> list[list[int]]:
    """Leaves with identical neighbourhoods and BGP settings, each class in node order.

    `keys` are the intact fabric's; only the `touched` leaves' keys are recomputed.
    """
    shared = _shared_asns(fabric)
    classes: dict[tuple[object, ...], list[int]] = {}
    for leaf in fabric.leaves().tolist():
        if leaf in dead:
            continue
        if keys is not None and touched is not None and leaf not in touched:
            key = keys[leaf]
        else:
            key = _twin_key(fabric, adj, leaf, shared)
        classes.setdefault(key, []).append(leaf)
    return list(classes.values())


class _PairArcs:
    """Working arcs from s to d, looked up lazily per node."""

    def __init__(self, adj: Adjacency) -> None:
        self.adj = adj
        self.rows: dict[int, dict[int, tuple[int, ...]]] = {}

    def get(self, s: int, d: int) -> tuple[int, ...]:
        row = self.rows.get(s)
        if row is None:
            row = self.rows[s] = dict(self.adj[s])
        return row.get(d, ())


def _relabel(arcs: tuple[int, ...], rep: int, m: int, fabric: Fabric, pair_arcs: _PairArcs) -> tuple[int, ...]:
    """Swap twins rep and m in arcs: v->rep becomes the matching v->m, rep->x becomes m->x."""
    out = []
    for a in arcs:
        s, d = int(fabric.arc_src[a]), int(fabric.arc_dst[a])
        s2 = m if s == rep else rep if s == m else s
        d2 = m if d == rep else rep if d == m else d
        out.append(a if (s2, d2) == (s, d) else pair_arcs.get(s2, d2)[pair_arcs.get(s, d).index(a)])
    return tuple(sorted(out))


def relabel_run(fabric: Fabric, adj: Adjacency, run: BgpRun, twin: int) -> BgpRun:
    """The run towards `twin` from its twin's: swap the two leaves' names, ASNs and cables.

    Twins have the same neighbours over the same cables with the same settings,
    so swapping them maps the fabric onto itself and one BGP solution onto the
    other; only the switches next to either twin hold arcs that change.
    """
    rep = run.origin
    a, b = int(fabric.asn[rep]), int(fabric.asn[twin])
    swap = {rep: twin, twin: rep}
    pair_arcs = _PairArcs(adj)
    near = {rep, twin} | {v for v, _arcs in adj[rep]} | {v for v, _arcs in adj[twin]}
    paths: list[tuple[int, ...] | None] = []
    nexthops: list[tuple[int, ...]] = []
    for v in range(len(run.paths)):
        src = swap.get(v, v)
        path = run.paths[src]
        paths.append(None if path is None else tuple(b if x == a else a if x == b else x for x in path))
        nh = run.nexthops[src]
        nexthops.append(_relabel(nh, rep, twin, fabric, pair_arcs) if v in near and nh else nh)
    return BgpRun(twin, paths, nexthops)


def compute_routes(fabric: Fabric, failed_arcs: Iterable[int] = (), dead: Iterable[int] = (),
                   base: RouteBase | None = None) -> Routes:
    """Routes of the fabric with the given arcs (both directions of their cables) and switches down.

    With `base` (the intact fabric's runs) only what the failure touches is recomputed.
    """
    failed = frozenset(failed_arcs) | frozenset(a ^ 1 for a in failed_arcs)
    dead_set = frozenset(dead)
    adj = base.patched(failed, dead_set) if base is not None else adjacency(fabric, failed, dead_set)
    touched = base.touched(failed, dead_set) if base is not None else set()
    n = len(fabric.nodes)
    dests = fabric.leaves()
    column = np.full(n, -1, dtype=np.int64)
    column[dests] = np.arange(len(dests))
    intact = base.intact if base is not None else None
    if intact is not None:
        # start from the intact table; groups new to this scenario are appended after the intact ones
        group_of = intact.group_of.copy()
        interned_base: dict[tuple[int, ...], int] = intact.interned
        groups: list[tuple[int, ...]] = list(intact.groups)
    else:
        group_of = np.full((n, len(dests)), NO_ROUTE, dtype=np.int32)
        interned_base = {}
        groups = []
    interned: dict[tuple[int, ...], int] = {}

    def gid(members: tuple[int, ...]) -> int:
        if not members:
            return NO_ROUTE
        g = interned_base.get(members)
        if g is None:
            g = interned.get(members)
            if g is None:
                g = interned[members] = len(groups)
                groups.append(members)
        return g

    # Arcs between each pair of neighbours in port order: what relabelling a twin maps onto.
    pair_arcs = _PairArcs(adj)
    runs: dict[int, BgpRun] = {}
    rep_of: dict[int, int] = {}
    classes = twin_classes(fabric, adj, dead_set, base.keys if base is not None else None, touched)
    for members in classes:
        rep = members[0]
        prior = base.run(rep) if base is not None else None
        run = (bgp_update(fabric, adj, prior, failed, dead_set) if prior is not None
               else bgp_run(fabric, adj, rep, dead_set))
        runs[rep] = run
        cols = column[members]
        neighbours = [v for v, _arcs in adj[rep]]
        incremental = (base is not None and prior is not None and rep in base.class_of
                       and base.class_of[rep].issuperset(members) and not touched.intersection(members))
        if incremental:
            assert prior is not None
            changed = (sorted(run.evaluated) if run.evaluated is not None
                       else [v for v in range(n) if run.nexthops[v] is not prior.nexthops[v]])
            neighbour_set = set(neighbours)
            member_set = set(members)
            for v in changed:
                if v == rep or v in dead_set:
                    continue
                if v in neighbour_set:
                    for m in members:
                        group_of[v, column[m]] = gid(run.nexthops[v] if m == rep else
                                                     _relabel(run.nexthops[v], rep, m, fabric, pair_arcs))
                else:
                    group_of[v, cols] = gid(run.nexthops[v])
                    if v in member_set:
                        group_of[v, column[v]] = LOCAL
                        group_of[rep, column[v]] = gid(_relabel(run.nexthops[v], rep, v, fabric, pair_arcs))
            for m in members:
                rep_of[m] = rep
            continue
        base_gid = np.array([gid(nh) for nh in run.nexthops], dtype=np.int32)
        group_of[:, cols] = base_gid[:, None]
        for m in members:
            rep_of[m] = rep
            group_of[m, column[m]] = LOCAL
            if m == rep:
                continue
            for v in neighbours:
                nh = run.nexthops[v]
                direct = pair_arcs.get(v, rep)
                if nh == direct:  # the usual case: all of v's cables to the destination leaf
                    group_of[v, column[m]] = gid(pair_arcs.get(v, m))
                else:
                    group_of[v, column[m]] = gid(_relabel(nh, rep, m, fabric, pair_arcs))
            group_of[rep, column[m]] = gid(_relabel(run.nexthops[m], rep, m, fabric, pair_arcs))
    for d in dead_set:
        group_of[d, :] = NO_ROUTE
        if column[d] >= 0:
            group_of[:, column[d]] = NO_ROUTE
    if intact is not None:
        new = groups[len(intact.groups):]
        new_sizes = np.array([len(g) for g in new], dtype=np.int64)
        sizes = np.concatenate([intact.g_size, new_sizes])
        offsets = np.concatenate([intact.g_offset, len(intact.g_members) + np.cumsum(new_sizes) - new_sizes])
        flat = np.concatenate([intact.g_members, np.fromiter((a for g in new for a in g), dtype=np.int64,
                                                             count=int(new_sizes.sum()))])
    else:
        sizes = np.array([len(g) for g in groups], dtype=np.int64)
        offsets = (np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if len(groups)
                   else np.zeros(0, dtype=np.int64))
        flat = np.fromiter((a for g in groups for a in g), dtype=np.int64, count=int(sizes.sum()))
    routes = Routes(fabric, dests, column, group_of, groups, offsets, sizes, flat, runs, rep_of, failed, dead_set)
    routes.interned = {**interned_base, **interned} if intact is not None else {g: i for i, g in enumerate(groups)}
    return routes


def static_routes(fabric: Fabric, nexthops: dict[tuple[int, int], tuple[int, ...]]) -> Routes:
    """Routes given by hand, {(switch, destination leaf): egress arcs}: for constructed cases and tests."""
    n = len(fabric.nodes)
    dests = fabric.leaves()
    column = np.full(n, -1, dtype=np.int64)
    column[dests] = np.arange(len(dests))
    group_of = np.full((n, len(dests)), NO_ROUTE, dtype=np.int32)
    group_of[dests, column[dests]] = LOCAL
    groups: list[tuple[int, ...]] = []
    for (node, dest), arcs in sorted(nexthops.items()):
        group_of[node, column[dest]] = len(groups)
        groups.append(tuple(sorted(arcs)))
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64) if groups else np.zeros(0, np.int64)
    flat = np.array([a for g in groups for a in g], dtype=np.int64)
    return Routes(fabric, dests, column, group_of, groups, offsets, sizes, flat)
