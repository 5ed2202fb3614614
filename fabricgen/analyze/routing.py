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


def bgp_run(fabric: Fabric, adj: Adjacency, origin: int, dead: frozenset[int] = frozenset()) -> BgpRun:
    n = len(fabric.nodes)
    asn = fabric.asn.tolist()
    allowas = fabric.arc_allowas.tolist()
    peer_check = fabric.arc_peer_check.tolist()
    max_paths = fabric.max_paths.tolist()
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


def twin_classes(fabric: Fabric, adj: Adjacency, dead: frozenset[int]) -> list[list[int]]:
    """Leaves with identical neighbourhoods and BGP settings, each class in node order."""
    counts: dict[int, int] = defaultdict(int)
    for a in fabric.asn.tolist():
        counts[a] += 1
    classes: dict[tuple[object, ...], list[int]] = {}
    for leaf in fabric.leaves().tolist():
        if leaf in dead:
            continue
        asn = int(fabric.asn[leaf])
        inbound = tuple((int(fabric.arc_allowas[arcs[0] ^ 1]), bool(fabric.arc_peer_check[arcs[0]]))
                        for _v, arcs in adj[leaf])
        key = (tuple((v, len(arcs)) for v, arcs in adj[leaf]), asn if counts[asn] > 1 else "unique", inbound,
               int(fabric.max_paths[leaf]), int(fabric.plane[leaf]))
        classes.setdefault(key, []).append(leaf)
    return list(classes.values())


def _relabel(arcs: tuple[int, ...], rep: int, m: int, fabric: Fabric,
             pair_arcs: dict[tuple[int, int], tuple[int, ...]]) -> tuple[int, ...]:
    """Swap twins rep and m in arcs: v->rep becomes the matching v->m, rep->x becomes m->x."""
    out = []
    for a in arcs:
        s, d = int(fabric.arc_src[a]), int(fabric.arc_dst[a])
        s2 = m if s == rep else rep if s == m else s
        d2 = m if d == rep else rep if d == m else d
        out.append(a if (s2, d2) == (s, d) else pair_arcs[s2, d2][pair_arcs[s, d].index(a)])
    return tuple(sorted(out))


def compute_routes(fabric: Fabric, failed_arcs: Iterable[int] = (), dead: Iterable[int] = ()) -> Routes:
    """Routes of the fabric with the given arcs (both directions of their cables) and switches down."""
    failed = frozenset(failed_arcs)
    dead_set = frozenset(dead)
    adj = adjacency(fabric, failed, dead_set)
    n = len(fabric.nodes)
    dests = fabric.leaves()
    column = np.full(n, -1, dtype=np.int64)
    column[dests] = np.arange(len(dests))
    group_of = np.full((n, len(dests)), NO_ROUTE, dtype=np.int32)
    interned: dict[tuple[int, ...], int] = {}
    groups: list[tuple[int, ...]] = []

    def gid(members: tuple[int, ...]) -> int:
        if not members:
            return NO_ROUTE
        g = interned.get(members)
        if g is None:
            g = interned[members] = len(groups)
            groups.append(members)
        return g

    # Arcs between each pair of neighbours in port order: what relabelling a twin maps onto.
    pair_arcs = {(s, d): arcs for s, lst in enumerate(adj) for d, arcs in lst}
    runs: dict[int, BgpRun] = {}
    rep_of: dict[int, int] = {}
    for members in twin_classes(fabric, adj, dead_set):
        rep = members[0]
        run = bgp_run(fabric, adj, rep, dead_set)
        runs[rep] = run
        base = np.array([gid(nh) for nh in run.nexthops], dtype=np.int32)
        cols = column[members]
        group_of[:, cols] = base[:, None]
        neighbours = [v for v, _arcs in adj[rep]]
        for m in members:
            rep_of[m] = rep
            group_of[m, column[m]] = LOCAL
            if m == rep:
                continue

            for v in neighbours:
                group_of[v, column[m]] = gid(_relabel(run.nexthops[v], rep, m, fabric, pair_arcs))
            group_of[rep, column[m]] = gid(_relabel(run.nexthops[m], rep, m, fabric, pair_arcs))
        for d in dead_set:
            group_of[d, :] = NO_ROUTE
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if len(groups) else np.zeros(0, dtype=np.int64)
    flat = np.fromiter((a for g in groups for a in g), dtype=np.int64, count=int(sizes.sum()))
    return Routes(fabric, dests, column, group_of, groups, offsets.astype(np.int64), sizes, flat, runs, rep_of,
                  failed, dead_set)
