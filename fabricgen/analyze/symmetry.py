"""The planned fabric's symmetry: which single failures are images of each other.

A Clos fabric is full of automorphisms (swap two leaves of a pod, two
super-spines of a group, two pods, spine *i* of every pod with spine *j* and
their super-spine groups).  A failure and its image under an automorphism have
the same routes up to relabelling, so a per-route verdict (the deadlock
analysis) needs one representative per orbit.

How the orbits are found and why they can be trusted:

* The fabric becomes a vertex-coloured simple graph: a vertex per switch,
  coloured by what the analyses read of it (tier, role, maximum-paths, plane,
  and for a leaf the rail, plane and speed of every GPU port); a vertex per
  shared ASN joined to its switches, so automorphisms keep which switches share
  an AS; cable bundles (the cables between two switches) as plain edges, or as
  a coloured vertex when their count or session settings differ from the
  others between the same two colours.
* BLISS (through igraph) gives generators of that graph's automorphism group.
* **Certificate**: every generator is checked here, not trusted: it must keep
  every colour, map every bundle onto a bundle with the same cable count and
  the same per-direction settings (speed, tier, allowas-in, peer-AS check), and
  map ASNs one-to-one.  A generator that fails is dropped, which only makes the
  orbits finer.
* The orbits of the group the checked generators generate are the connected
  components of "x ~ g(x)" (igraph's components): switches, and bundles acted
  on as pairs.  A cable's orbit is its bundle's when the bundle's cables are
  alike (they can be swapped), else the cable is alone.

Why an automorphism maps one failure's routes onto the other's: the BGP
simulation (routing.py) decides by path lengths, AS membership tests and the
sessions' settings, all kept by the automorphism, except for two tie-breaks
by switch index: which of the equally short offers gives the AS path, and
which members `maximum-paths` keeps.  `tie_free` checks on the computed routes
that neither tie-break mattered (every ECMP member's neighbour advertises the
same AS path; the equally short offers never exceed `maximum-paths`), so the
outcome is a function of the labelled structure alone and the image of one
failure's routes is the other's.  Failures whose representative is not tie-free
are analysed one by one.  Tests compare every member's own result with its
representative's on the examples and at 2,048 GPUs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import igraph
import numpy as np

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.routing import Routes
from fabricgen.analyze.scenarios import Failure


@dataclass
class Symmetry:
    """Orbits of switches and cables under the fabric's checked automorphisms."""

    generators: int  # checked automorphisms used
    rejected: int  # generators BLISS gave that failed the check (0 unless the colouring misses something)
    node_orbit: np.ndarray  # per switch: orbit id
    cable_orbit: np.ndarray  # per cable (arcs 2k, 2k+1): orbit id (a cable alone gets its own)
    gens: np.ndarray  # [generators, switches] the checked automorphisms, as switch permutations
    pairs: np.ndarray  # [bundles, 2] the switch pairs joined by cables, (lo, hi)
    cable_bundle: np.ndarray  # per cable its bundle
    bundle_start: np.ndarray  # CSR: bundle b's cables, by cable id, are bundle_cables[start[b]:start[b + 1]]
    bundle_cables: np.ndarray

    def bundle_of(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The bundle joining switches x and y (elementwise; they must be joined)."""
        n = len(self.node_orbit)
        key = np.minimum(x, y).astype(np.int64) * n + np.maximum(x, y)
        out: np.ndarray = np.searchsorted(self.pair_key, key)
        return out

    @cached_property
    def moves(self) -> np.ndarray:
        """[generators, switches]: whether each generator moves each switch."""
        out: np.ndarray = self.gens != np.arange(self.gens.shape[1])
        return out

    @cached_property
    def pair_key(self) -> np.ndarray:
        """lo * switches + hi of every bundle, sorted (the bundles are in that order)."""
        out: np.ndarray = self.pairs[:, 0] * len(self.node_orbit) + self.pairs[:, 1]
        return out

    @cached_property
    def cable_rank(self) -> np.ndarray:
        """Per cable, its index among its bundle's cables."""
        rank = np.empty(len(self.cable_bundle), dtype=np.int64)
        rank[self.bundle_cables] = np.arange(len(self.bundle_cables)) - self.bundle_start[
            self.cable_bundle[self.bundle_cables]]
        return rank

    def images(self, failures: Sequence[Failure], rep: int, members: list[int], chunk: int = 1024
               ) -> list[tuple[list[int], np.ndarray]]:
        """Switch permutations mapping failure `rep` onto each member: [(members, [len(members), switches])].

        A Schreier tree of the orbit: breadth first from the representative's
        switch or bundle through the generators, each member's map the product
        of the generators on its path (a product of automorphisms is one).
        """
        gens = self.gens
        n = gens.shape[1]
        is_node = not failures[rep].arcs

        def element(i: int) -> int:
            f = failures[i]
            return next(iter(f.nodes)) if is_node else int(self.cable_bundle[min(f.arcs) // 2])

        def act(g: np.ndarray, x: np.ndarray) -> np.ndarray:
            if is_node:
                out: np.ndarray = g[x]
                return out
            return self.bundle_of(g[self.pairs[x, 0]], g[self.pairs[x, 1]])

        root = element(rep)
        size = n if is_node else len(self.pairs)
        want = np.array([element(i) for i in members], dtype=np.int64)
        parent = np.full(size, -1, dtype=np.int64)
        via = np.full(size, -1, dtype=np.int64)  # the generator that reached it
        seen = np.zeros(size, dtype=bool)
        seen[root] = True
        frontier = np.array([root], dtype=np.int64)
        while len(frontier) and not seen[want].all():
            reached = []
            ends = frontier if is_node else self.pairs[frontier].ravel()
            for k in np.flatnonzero(self.moves[:, ends].any(axis=1)).tolist():  # generators that move any of them
                g = gens[k]
                img = act(g, frontier)
                new = ~seen[img]
                if new.any():
                    y = img[new]
                    seen[y], parent[y], via[y] = True, frontier[new], k
                    reached.append(y)
            frontier = np.concatenate(reached) if reached else np.zeros(0, dtype=np.int64)
        if not seen[want].all():
            raise ValueError("a member is not in the representative's orbit")
        perm: dict[int, np.ndarray] = {root: np.arange(n, dtype=np.int64)}

        def resolve(x: int) -> np.ndarray:
            path = []
            while x not in perm:
                path.append(x)
                x = int(parent[x])
            p = perm[x]
            for y in reversed(path):
                p = perm[y] = gens[via[y]][p]
            return p

        out: list[tuple[list[int], np.ndarray]] = []
        for start in range(0, len(members), chunk):
            part = members[start:start + chunk]
            out.append((part, np.stack([resolve(element(i)) for i in part])))
        return out

    def classes(self, failures: Sequence[Failure]) -> list[int]:
        """Per failure, the index of the first failure in the same orbit (itself when none is earlier).

        Single cables and single switches share orbits; any other failure is its own class.
        """
        first: dict[tuple[str, int], int] = {}
        out = []
        for i, f in enumerate(failures):
            key: tuple[str, int] | None = None
            if not f.arcs and len(f.nodes) == 1:
                key = ("switch", int(self.node_orbit[next(iter(f.nodes))]))
            elif not f.nodes and len(f.arcs) == 2:
                a = min(f.arcs)
                if a % 2 == 0 and a + 1 in f.arcs:
                    key = ("cable", int(self.cable_orbit[a // 2]))
            out.append(first.setdefault(key, i) if key is not None else i)
        return out


def _node_colours(fabric: Fabric) -> np.ndarray:
    """Colour id per switch: what the analyses read of a switch besides its cables and ASN."""
    n = len(fabric.nodes)
    eps: list[list[tuple[int, int, float]]] = [[] for _ in range(n)]
    for leaf, rail, plane, speed in zip(fabric.ep_leaf.tolist(), fabric.ep_rail.tolist(), fabric.ep_plane.tolist(),
                                        fabric.ep_speed.tolist(), strict=True):
        eps[leaf].append((rail, plane, speed))
    keys = [(int(fabric.rank[v]), fabric.role[v], int(fabric.max_paths[v]), int(fabric.plane[v]), tuple(sorted(eps[v])))
            for v in range(n)]
    ids: dict[object, int] = {}
    return np.array([ids.setdefault(k, len(ids)) for k in keys], dtype=np.int64)


def _bundles(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Switch pairs joined by cables: (lo, hi) sorted, label of lo->hi, label of hi->lo, per cable its bundle,
    per bundle whether its cables are alike."""
    n = len(fabric.nodes)
    a = fabric.arc_src[0::2].astype(np.int64)
    z = fabric.arc_dst[0::2].astype(np.int64)
    flip = a > z
    lo, hi = np.where(flip, z, a), np.where(flip, a, z)
    fwd = np.arange(0, fabric.switch_arcs, 2) + flip  # the arc lo -> hi of each cable
    speed, allow, check = fabric.arc_speed.tolist(), fabric.arc_allowas.tolist(), fabric.arc_peer_check.tolist()
    tier = fabric.arc_tier

    def attrs(arc: int) -> tuple[object, ...]:  # the arc's own settings, then its reverse's
        return (speed[arc], tier[arc], allow[arc], check[arc], allow[arc ^ 1], check[arc ^ 1])

    keys, bundle = np.unique(lo * n + hi, return_inverse=True)
    per: list[list[tuple[object, ...]]] = [[] for _ in keys]
    per_rev: list[list[tuple[object, ...]]] = [[] for _ in keys]
    for b, arc in zip(bundle.tolist(), fwd.tolist(), strict=True):
        per[b].append(attrs(arc))
        per_rev[b].append(attrs(arc ^ 1))
    ids: dict[object, int] = {}
    label = np.array([ids.setdefault(tuple(sorted(x)), len(ids)) for x in per], dtype=np.int64)
    label_rev = np.array([ids.setdefault(tuple(sorted(x)), len(ids)) for x in per_rev], dtype=np.int64)
    alike = np.array([len(set(x)) == 1 for x in per], dtype=bool)
    return np.stack([keys // n, keys % n], axis=1), label, label_rev, bundle, alike


def _graph(fabric: Fabric, colour: np.ndarray, pairs: np.ndarray, label: np.ndarray, label_rev: np.ndarray
           ) -> tuple[igraph.Graph, list[int]]:
    """The coloured simple graph BLISS searches: switches, shared-ASN vertices, bundles that need a colour."""
    n = len(fabric.nodes)
    colours = colour.tolist()
    base = max(colours, default=0) + 1
    edges: list[tuple[int, int]] = []
    _u, inv, cnt = np.unique(fabric.asn, return_inverse=True, return_counts=True)
    shared = np.flatnonzero(cnt > 1)
    asn_vertex = {int(s): n + i for i, s in enumerate(shared.tolist())}
    for v in range(n):
        w = asn_vertex.get(int(inv[v]))
        if w is not None:
            edges.append((v, w))
    colours += [base] * len(shared)
    base += 1
    # a bundle is a plain edge when it is the only kind between its two end colours, else a coloured vertex
    # (two when the ends share a colour and the two directions differ)
    lo, hi = pairs[:, 0], pairs[:, 1]
    kinds: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for b, (x, y) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
        cx, cy = colours[x], colours[y]
        key = (cx, cy) if cx <= cy else (cy, cx)
        kinds.setdefault(key, set()).add((int(label[b]), int(label_rev[b])) if cx <= cy
                                          else (int(label_rev[b]), int(label[b])))
    extra: dict[tuple[object, ...], int] = {}
    for b, (x, y) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
        cx, cy = colours[x], colours[y]
        if cx > cy:
            x, y, cx, cy = y, x, cy, cx
            lab = (int(label_rev[b]), int(label[b]))
        else:
            lab = (int(label[b]), int(label_rev[b]))
        if len(kinds[cx, cy]) == 1:
            edges.append((x, y))
            continue
        if cx == cy and lab[0] != lab[1]:
            if lab[0] > lab[1]:  # orient by label so the two half vertices are told apart
                x, y, lab = y, x, (lab[1], lab[0])
            h1, h2 = len(colours), len(colours) + 1
            colours += [base + extra.setdefault(("half", lab[0], lab[1], 0), len(extra)),
                        base + extra.setdefault(("half", lab[0], lab[1], 1), len(extra))]
            edges += [(x, h1), (h1, h2), (h2, y)]
        else:
            h = len(colours)
            colours.append(base + extra.setdefault(("bundle", *sorted(lab)), len(extra)))
            edges += [(x, h), (h, y)]
    return igraph.Graph(n=len(colours), edges=edges), colours


def _check(g: np.ndarray, fabric: Fabric, colour: np.ndarray, asn_ids: np.ndarray, pairs: np.ndarray,
           pair_key: np.ndarray, label: np.ndarray, label_rev: np.ndarray, incident: list[np.ndarray]
           ) -> np.ndarray | None:
    """The bundle permutation of switch permutation `g`, or None if `g` is not an automorphism of the fabric.

    `asn_ids`: each switch's ASN as a small integer (np.unique's inverse).
    """
    n = len(fabric.nodes)
    if (np.bincount(g, minlength=n) != 1).any() or not np.array_equal(colour[g], colour):
        return None
    image = np.full(len(asn_ids), -1, dtype=np.int64)
    image[asn_ids] = asn_ids[g]
    if not np.array_equal(image[asn_ids], asn_ids[g]) or np.bincount(image[image >= 0]).max(initial=0) > 1:
        return None  # not a one-to-one map of ASNs
    perm = np.arange(len(pairs))
    moved = np.flatnonzero(g != np.arange(n))
    if not len(moved):
        return perm
    touched = np.unique(np.concatenate([incident[v] for v in moved.tolist()]))
    x, y = g[pairs[touched, 0]], g[pairs[touched, 1]]
    flipped = x > y
    key = np.minimum(x, y) * n + np.maximum(x, y)
    pos = np.searchsorted(pair_key, key)
    if (pos >= len(pair_key)).any() or not np.array_equal(pair_key[pos], key):
        return None  # a cable's image is not a cable
    image_label = np.where(flipped, label_rev[pos], label[pos])
    if not np.array_equal(image_label, label[touched]):
        return None  # the image bundle has other cables or settings
    perm[touched] = pos
    return perm


def _components(n: int, links: list[np.ndarray]) -> np.ndarray:
    """Connected components of n points joined by [k, 2] links: the orbits."""
    edges = np.concatenate(links) if links else np.zeros((0, 2), dtype=np.int64)
    return np.array(igraph.Graph(n=n, edges=edges.tolist()).connected_components().membership, dtype=np.int64)


def symmetry(fabric: Fabric) -> Symmetry:
    """The fabric's checked automorphisms, as orbits of switches and of cables."""
    n = len(fabric.nodes)
    colour = _node_colours(fabric)
    asn_ids = np.unique(fabric.asn, return_inverse=True)[1].astype(np.int64)
    pairs, label, label_rev, bundle, alike = _bundles(fabric)
    graph, colours = _graph(fabric, colour, pairs, label, label_rev)
    pair_key = pairs[:, 0] * n + pairs[:, 1]
    order = np.argsort(np.concatenate([pairs[:, 0], pairs[:, 1]]), kind="stable")
    ends = np.concatenate([pairs[:, 0], pairs[:, 1]])[order]
    starts = np.searchsorted(ends, np.arange(n + 1))
    ids = np.concatenate([np.arange(len(pairs)), np.arange(len(pairs))])[order]
    incident = [ids[starts[v]:starts[v + 1]] for v in range(n)]
    node_links: list[np.ndarray] = []
    pair_links: list[np.ndarray] = []
    used = rejected = 0
    kept: list[np.ndarray] = []
    for gen in graph.automorphism_group(color=colours):
        g = np.asarray(gen[:n], dtype=np.int64)
        if (g >= n).any():  # BLISS never maps a switch onto a helper vertex (other colours); be sure
            rejected += 1
            continue
        perm = _check(g, fabric, colour, asn_ids, pairs, pair_key, label, label_rev, incident)
        if perm is None:
            rejected += 1
            continue
        used += 1
        kept.append(g)
        moved = np.flatnonzero(g != np.arange(n))
        node_links.append(np.stack([moved, g[moved]], axis=1))
        pm = np.flatnonzero(perm != np.arange(len(pairs)))
        pair_links.append(np.stack([pm, perm[pm]], axis=1))
    node_orbit = _components(n, node_links)
    pair_orbit = _components(len(pairs), pair_links)
    cables = len(bundle)
    cable_orbit = np.where(alike[bundle], pair_orbit[bundle], len(pairs) + np.arange(cables))
    by_bundle = np.argsort(bundle, kind="stable")
    start = np.searchsorted(bundle[by_bundle], np.arange(len(pairs) + 1))
    gens = np.stack(kept) if kept else np.zeros((0, n), dtype=np.int64)
    return Symmetry(used, rejected, node_orbit, cable_orbit, gens, pairs, bundle, start, by_bundle)


def tie_free(routes: Routes) -> bool:
    """No BGP tie-break by switch index decided anything: the routes are a function of the fabric's structure.

    For every BGP run behind the routes and every switch with a route: the
    neighbours its ECMP members lead to advertise one and the same AS path, and
    the arcs to neighbours one hop nearer the origin number at most its
    maximum-paths (so none was cut off by neighbour order).  A run that
    `bgp_update` derived from the intact one is checked at the switches it
    re-evaluated: any other switch kept its members and its neighbours kept
    their paths (a changed path re-evaluates every neighbour), so it is as the
    intact run was, which the caller checks once.
    """
    f = routes.fabric
    src = f.arc_src.astype(np.int64)
    dst = f.arc_dst.astype(np.int64)
    alive = np.ones(f.switch_arcs, dtype=bool)
    if routes.failed_arcs:
        alive[list(routes.failed_arcs)] = False
    if routes.dead:
        dead = list(routes.dead)
        alive &= ~np.isin(src, dead) & ~np.isin(dst, dead)
    n = len(f.nodes)
    for run in routes.runs.values():
        if run.evaluated is not None:
            where = np.fromiter(run.evaluated, dtype=np.int64, count=len(run.evaluated))
        else:
            where = np.arange(n)
        if not len(where):
            continue
        length = np.array([len(p) if p is not None else -1 for p in run.paths], dtype=np.int64)
        mine = np.zeros(n, dtype=bool)
        mine[where] = True
        nearer = alive & mine[src] & (length[src] > 0) & (length[dst] == length[src] - 1)
        if (np.bincount(src[nearer], minlength=n) > f.max_paths).any():
            return False
        for v in where.tolist():
            if len({run.paths[int(dst[a])] for a in run.nexthops[v]}) > 1:
                return False
    return True
