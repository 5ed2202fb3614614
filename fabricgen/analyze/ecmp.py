"""`analyze ecmp`: route every QP hop by hop through the planned ECMP groups and weigh the links.

Hashed routing follows each QP along one path: at every switch the modelled
hash of its 5-tuple picks a member of the switch's ECMP group towards the
destination leaf.  Adaptive routing is modelled as ideal spreading at flowlet
granularity: every switch splits each flow's bytes evenly over its group.

The collective's completion time is set by its most loaded link: a link busy
for bytes/capacity seconds delays every flow crossing it.  The slowdown of a
job is that time over the time its NICs alone would need (a non-blocking
fabric), and its predicted bus bandwidth is line rate divided by the slowdown.

Each switch hashes the header the link carries (overlay.py): a QP's own, or
with evpn-vxlan tenants the VXLAN outer header between the two leaves' VTEPs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import DEFAULT_VRF, Flows, Job, generate
from fabricgen.analyze.hashing import HashModel, hash_model
from fabricgen.analyze.overlay import VXLAN_UDP_PORT, Headers, headers
from fabricgen.analyze.routing import LOCAL, NO_ROUTE, Routes

MAX_HOPS = 16
TIER_NAMES = {0: "leaf", 1: "spine", 2: "super-spine"}


@dataclass
class Traversal:
    """Where every flow went: the arc, switch and group of each hop."""

    arcs: np.ndarray  # int64 [hops, flows], -1 where the flow made no hop
    nodes: np.ndarray  # int64 [hops, flows]: the switch that chose the arc (-1: the NIC or none)
    groups: np.ndarray  # int64 [hops, flows]: the ECMP group it chose from (-1: none)
    delivered: np.ndarray  # bool per flow


def route_hashed(routes: Routes, flows: Flows, model: HashModel, hd: Headers | None = None) -> Traversal:
    """Every flow hop by hop; a flow its VRF has no route for (isolated tenants) stops at its leaf, undelivered."""
    f = routes.fabric
    n = len(flows)
    hd = headers(f, flows) if hd is None else hd
    key = hd.key
    arcs = [f.ep_up_arc(flows.src).astype(np.int64)]
    nodes = [np.full(n, -1, dtype=np.int64)]
    groups = [np.full(n, -1, dtype=np.int64)]
    cur = f.ep_leaf[flows.src].astype(np.int64)
    dcol = routes.column[f.ep_leaf[flows.dst]]
    down = f.ep_down_arc(flows.dst).astype(np.int64)
    delivered = np.zeros(n, dtype=bool)
    active = np.flatnonzero(hd.reach)
    if f.switch_arcs and routes.fabric.arc_dst.size:
        arc_dst = f.arc_dst.astype(np.int64)
    else:
        arc_dst = np.zeros(0, dtype=np.int64)
    for _ in range(MAX_HOPS):
        if not len(active):
            break
        step_arc = np.full(n, -1, dtype=np.int64)
        step_node = np.full(n, -1, dtype=np.int64)
        step_group = np.full(n, -1, dtype=np.int64)
        here = cur[active]
        g = routes.group_of[here, dcol[active]].astype(np.int64)
        step_node[active] = here
        local = g == LOCAL
        done = active[local]
        step_arc[done] = down[done]
        delivered[done] = True
        fwd = g >= 0
        idx = active[fwd]
        gf = g[fwd]
        if len(idx):
            member = model.member(key[idx], here[fwd], routes.g_size[gf])
            arc = routes.g_members[routes.g_offset[gf] + member]
            step_arc[idx] = arc
            step_group[idx] = gf
            cur[idx] = arc_dst[arc]
        arcs.append(step_arc)
        nodes.append(step_node)
        groups.append(step_group)
        active = idx  # flows with NO_ROUTE stop here, undelivered
    return Traversal(np.vstack(arcs), np.vstack(nodes), np.vstack(groups), delivered)


@dataclass
class Loads:
    bytes: np.ndarray  # per arc
    flows: np.ndarray  # per arc (fractional under ideal spreading)
    job_arcs: list[np.ndarray]  # arcs each job puts bytes on
    undelivered: np.ndarray  # flows per job that found no route or looped


def loads_hashed(fabric: Fabric, flows: Flows, tr: Traversal) -> Loads:
    n_arcs = fabric.n_arcs
    hop_arcs = tr.arcs
    used = hop_arcs >= 0
    flat_arcs = hop_arcs[used]
    flat_bytes = np.broadcast_to(flows.nbytes, hop_arcs.shape)[used]
    by = np.bincount(flat_arcs, weights=flat_bytes, minlength=n_arcs)
    fl = np.bincount(flat_arcs, minlength=n_arcs).astype(np.float64)
    jobs = np.broadcast_to(flows.job, hop_arcs.shape)[used].astype(np.int64)
    pairs = np.unique(jobs * n_arcs + flat_arcs)  # sorted: each job's arcs are one slice
    bounds = np.searchsorted(pairs, np.arange(len(flows.jobs) + 1, dtype=np.int64) * n_arcs).tolist()
    job_arcs = [pairs[lo:hi] % n_arcs for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
    undelivered = np.bincount(flows.job[~tr.delivered], minlength=len(flows.jobs))
    return Loads(by, fl, job_arcs, undelivered)


def loads_spread(routes: Routes, flows: Flows, reach: np.ndarray | None = None) -> Loads:
    """Ideal spreading: each switch splits every flow's bytes evenly over its ECMP group (`reach`: the flows
    routed at all; the others stop at their leaf, lost)."""
    f = routes.fabric
    n_jobs = len(flows.jobs)
    if reach is None:
        reach = np.ones(len(flows), dtype=bool)
    dropped = flows.take(np.flatnonzero(~reach))
    if len(dropped):
        flows = flows.take(np.flatnonzero(reach))
    n_arcs = f.n_arcs
    by = np.zeros(n_arcs)
    fl = np.zeros(n_arcs)
    job_used = np.zeros((n_jobs, n_arcs), dtype=bool)
    for sent in (flows, dropped):
        up = f.ep_up_arc(sent.src)
        np.add.at(by, up, sent.nbytes)
        np.add.at(fl, up, 1.0)
        job_used[sent.job, up] = True
    down = f.ep_down_arc(flows.dst)
    # states: (job, node, destination column) with bytes and flow weight, merged at every hop
    node = f.ep_leaf[flows.src].astype(np.int64)
    dcol = routes.column[f.ep_leaf[flows.dst]].astype(np.int64)
    job = flows.job.astype(np.int64)
    w = flows.nbytes.astype(np.float64)
    c = np.ones(len(flows))
    # final NIC arcs are deterministic: add them once for delivered traffic
    dleaf_arcs = down
    undelivered = np.bincount(dropped.job, minlength=n_jobs).astype(np.int64)  # sent to the leaf, never routed
    # track per original flow whether it can be delivered (routes are loop-free in practice)
    n_dests = len(routes.dests)
    for _ in range(MAX_HOPS):
        if not len(node):
            break
        g = routes.group_of[node, dcol].astype(np.int64)
        fwd = g >= 0
        lost = g == NO_ROUTE
        if lost.any():
            undelivered += np.bincount(job[lost], minlength=n_jobs)
        node, dcol, job, w, c, g = node[fwd], dcol[fwd], job[fwd], w[fwd], c[fwd], g[fwd]
        if not len(node):
            break
        size = routes.g_size[g]
        rep = np.repeat(np.arange(len(g)), size)
        offs = np.arange(len(rep)) - np.repeat(np.cumsum(size) - size, size)
        arc = routes.g_members[routes.g_offset[g][rep] + offs]
        share_w = w[rep] / size[rep]
        share_c = c[rep] / size[rep]
        np.add.at(by, arc, share_w)
        np.add.at(fl, arc, share_c)
        job_used[job[rep], arc] = True
        nxt = f.arc_dst[arc].astype(np.int64)
        # merge states that meet at the same (job, node, destination)
        key = (job[rep] * len(f.nodes) + nxt) * n_dests + dcol[rep]
        uniq, inv = np.unique(key, return_inverse=True)
        w = np.bincount(inv, weights=share_w).astype(np.float64)
        c = np.bincount(inv, weights=share_c).astype(np.float64)
        dcol = uniq % n_dests
        rest = uniq // n_dests
        node = rest % len(f.nodes)
        job = rest // len(f.nodes)
        at_dest = routes.group_of[node, dcol] == LOCAL
        node, dcol, job, w, c = node[~at_dest], dcol[~at_dest], job[~at_dest], w[~at_dest], c[~at_dest]
    # the leaf -> NIC arcs: every flow whose destination leaf is reachable from its source
    src_g = routes.group_of[f.ep_leaf[flows.src], routes.column[f.ep_leaf[flows.dst]]]
    delivered_mask = src_g != NO_ROUTE
    np.add.at(by, dleaf_arcs[delivered_mask], flows.nbytes[delivered_mask])
    np.add.at(fl, dleaf_arcs[delivered_mask], 1.0)
    job_used[flows.job[delivered_mask], dleaf_arcs[delivered_mask]] = True
    return Loads(by, fl, [np.flatnonzero(job_used[j]) for j in range(n_jobs)], undelivered)


def busy_seconds(fabric: Fabric, nbytes: np.ndarray, arcs: np.ndarray | None = None) -> np.ndarray:
    """Seconds each arc (all, or `arcs`) is busy carrying `nbytes` (0 on arcs without capacity)."""
    cap = fabric.arc_capacity() * 1e9 / 8  # bytes/s
    if arcs is not None:
        cap = cap[arcs]
    out: np.ndarray = np.divide(nbytes, cap, out=np.zeros_like(nbytes), where=cap > 0)
    return out


def job_ideals(fabric: Fabric, flows: Flows) -> list[float | None]:
    """Per job: the busy time of its most loaded NIC arc (a non-blocking fabric), None for a job without flows."""
    n_arcs, n_jobs = fabric.n_arcs, len(flows.jobs)
    job = flows.job.astype(np.int64)
    nic_arcs = np.concatenate([fabric.ep_up_arc(flows.src), fabric.ep_down_arc(flows.dst)]).astype(np.int64)
    pair, inv = np.unique(np.concatenate([job, job]) * n_arcs + nic_arcs, return_inverse=True)  # (job, NIC arc)
    busy = busy_seconds(fabric, np.bincount(inv, weights=np.concatenate([flows.nbytes] * 2), minlength=len(pair)),
                        pair % n_arcs)
    most = np.zeros(n_jobs)
    np.maximum.at(most, pair // n_arcs, busy)
    has = np.bincount(job, minlength=n_jobs) > 0
    return [float(m) if h else None for m, h in zip(most.tolist(), has.tolist(), strict=True)]


def slowdown_of(actual: float, ideal: float | None, undelivered: int) -> float:
    """One job's slowdown from its most loaded link's busy time (inf when traffic is lost)."""
    if undelivered:
        return float("inf")
    if ideal is None:
        return 1.0
    return actual / ideal if ideal > 0 else 1.0


def job_slowdowns(fabric: Fabric, flows: Flows, loads: Loads, ideals: list[float | None] | None = None
                  ) -> list[float]:
    """Per job: time of its most loaded link / time its NICs alone need (inf when traffic is lost)."""
    ideals = job_ideals(fabric, flows) if ideals is None else ideals
    return [slowdown_of(actual, ideal, int(und))
            for actual, ideal, und in zip(job_busy(fabric, loads), ideals, loads.undelivered.tolist(), strict=True)]


def job_busy(fabric: Fabric, loads: Loads) -> list[float]:
    """Per job: the busy seconds of the most loaded link it uses."""
    busy = busy_seconds(fabric, loads.bytes)
    return [float(busy[arcs].max()) if len(arcs) else 0.0 for arcs in loads.job_arcs]


def tier_stats(fabric: Fabric, loads: Loads) -> dict[str, dict[str, float]]:
    tiers = fabric.arc_tiers()
    stats: dict[str, dict[str, float]] = {}
    for tier in ("gpu_leaf", "leaf_spine", "spine_super_spine"):
        mask = tiers == tier
        if not mask.any():
            continue
        b = loads.bytes[mask]
        fl = loads.flows[mask]
        mean = float(b.mean())
        stats[tier] = {
            "links": int(mask.sum()),
            "used": int((b > 0).sum()),
            "max_flows": float(fl.max()),
            "mean_flows": float(fl.mean()),
            "max_gbytes": float(b.max()) / 1e9,
            "mean_gbytes": mean / 1e9,
            "max_over_mean": float(b.max()) / mean if mean > 0 else 0.0,
        }
    return stats


def hottest(fabric: Fabric, loads: Loads, top: int = 10) -> list[dict[str, Any]]:
    cap = fabric.arc_capacity() * 1e9 / 8
    busy = np.divide(loads.bytes, cap, out=np.zeros_like(loads.bytes), where=cap > 0)
    fabric_arcs = np.arange(fabric.switch_arcs)
    if not len(fabric_arcs):
        return []
    order = fabric_arcs[np.lexsort((fabric_arcs, -busy[fabric_arcs]))][:top]
    tiers = fabric.arc_tiers()
    return [{"link": fabric.arc_label(int(a)), "tier": str(tiers[a]), "flows": float(loads.flows[a]),
             "gbytes": float(loads.bytes[a]) / 1e9, "busy_ms": float(busy[a]) * 1e3}
            for a in order if loads.bytes[a] > 0]


def polarization(fabric: Fabric, routes: Routes, tr: Traversal) -> dict[str, float]:
    """Between consecutive hashed hops: 0 = independent choices, 1 = flows that shared a link always share again.

    For flows that took the same link at one hop and meet the same ECMP group at
    the next, independent hashing makes them collide again with probability
    1/group size; the index is how far the observed rate sits above that.
    """
    out: dict[str, float] = {}
    rank = fabric.rank.astype(np.int64)
    a1s, a2s, gs, labels = [], [], [], []
    for k in range(1, tr.arcs.shape[0] - 1):
        g1, g2 = tr.groups[k], tr.groups[k + 1]
        ok = (g1 >= 0) & (g2 >= 0)
        ok &= (routes.g_size[np.maximum(g1, 0)] > 1) & (routes.g_size[np.maximum(g2, 0)] > 1)
        if ok.any():
            a1s.append(tr.arcs[k][ok])
            a2s.append(tr.arcs[k + 1][ok])
            gs.append(g2[ok])
            labels.append(rank[tr.nodes[k][ok]] * 3 + rank[tr.nodes[k + 1][ok]])
    if not a1s:
        return out
    a1, a2, gg, lab = (np.concatenate(x) for x in (a1s, a2s, gs, labels))
    for code in np.unique(lab).tolist():
        m = lab == code
        _, c_full = np.unique(np.stack([a1[m], gg[m], a2[m]]), axis=1, return_counts=True)
        groups_key, c_grp = np.unique(np.stack([a1[m], gg[m]]), axis=1, return_counts=True)
        same = float((c_full * (c_full - 1) / 2).sum())
        pairs = c_grp * (c_grp - 1) / 2
        total = float(pairs.sum())
        expected = float((pairs / routes.g_size[groups_key[1]]).sum())
        if total - expected <= 0:
            continue
        label = f"{TIER_NAMES.get(code // 3, '?')}->{TIER_NAMES.get(code % 3, '?')}"
        out[label] = round(max(0.0, min(1.0, (same - expected) / (total - expected))), 3)
    return out


@dataclass(frozen=True)
class Setting:
    """One column of the report: how traffic is hashed or spread."""

    label: str
    qps: int
    hash: str
    seeds: str
    adaptive: bool = False
    qp_hashing: bool | None = None  # hash the BTH destination QP: None = where the plan renders it, else everywhere


def evaluate(fabric: Fabric, routes: Routes, jobs: list[Job], setting: Setting, salt: int = 0,
             want_traversal: bool = False, sport: str = "qp") -> dict[str, Any]:
    jobs_q = [replace(j, qps=setting.qps) for j in jobs]
    flows = generate(fabric, jobs_q, salt, sport)
    hd = headers(fabric, flows)
    pol: dict[str, float] = {}
    if setting.adaptive:
        loads = loads_spread(routes, flows, hd.reach)
    else:
        qp = fabric.qp_hash if setting.qp_hashing is None else np.full(len(fabric.nodes), setting.qp_hashing)
        model = hash_model(setting.hash, fabric.rank, setting.seeds, salt, (fabric.hash_seed, fabric.hash_rotate), qp)
        tr = route_hashed(routes, flows, model, hd)
        loads = loads_hashed(fabric, flows, tr)
        pol = polarization(fabric, routes, tr)
    ideals = job_ideals(fabric, flows)
    actual = job_busy(fabric, loads)
    slow = job_slowdowns(fabric, flows, loads, ideals)
    n_jobs = len(jobs_q)
    per_job = np.bincount(flows.job, minlength=n_jobs)
    encap = np.bincount(flows.job[hd.encap], minlength=n_jobs)
    lost = np.bincount(flows.job[~hd.reach], minlength=n_jobs)
    qp_on = bool(fabric.qp_hash.any()) if setting.qp_hashing is None else setting.qp_hashing
    return {
        "setting": setting.label,
        "qps_per_conn": setting.qps,
        "hash": "adaptive (ideal flowlet spreading)" if setting.adaptive else setting.hash,
        "seeds": "-" if setting.adaptive else setting.seeds,
        "qp_hashing": "-" if setting.adaptive else ("as planned" if setting.qp_hashing is None else qp_on),
        "flows": len(flows),
        "connections": int(len(np.unique(flows.conn))) if len(flows) else 0,
        "vxlan_flows": int(hd.encap.sum()),
        "tiers": tier_stats(fabric, loads),
        "hottest": hottest(fabric, loads),
        "polarization": pol,
        "jobs": [{"name": j.name, "servers": len(j.servers), "pattern": j.pattern, "vrf": _vrf_name(fabric, j),
                  "flows": int(per_job[k]), "vxlan_flows": int(encap[k]), "isolated_flows": int(lost[k]),
                  "max_link_ms": actual[k] * 1e3, "ideal_ms": (ideals[k] or 0.0) * 1e3,
                  "slowdown": s, "busbw_fraction": (1.0 / s) if s and s != float("inf") else 0.0}
                 for k, (j, s) in enumerate(zip(jobs_q, slow, strict=True))],
        "slowdown": max(slow) if slow else 1.0,
        "link_load": {"bytes": loads.bytes, "flows": loads.flows},
    }


def _vrf_name(fabric: Fabric, job: Job) -> str:
    """The VRF a job runs in: its tenant, the default VRF, or '-' for a job placed across VRFs."""
    if job.vrf is None:
        return "-"
    return DEFAULT_VRF if job.vrf < 0 else fabric.tenants[job.vrf]


SEED_LABEL = {"plan": "seeds as planned", "same": "one seed everywhere", "tier": "per-tier seeds",
              "switch": "per-switch seeds"}


def settings_for(qps: int, hash_kind: str, seeds: str, adaptive: bool = False, planned: bool = True,
                 qp_what_if: bool | None = None) -> list[Setting]:
    """The fabric as configured (the plan's, or what the flags override) plus the what-if columns: more QPs,
    the other seed scheme (one seed everywhere against the plan's), adaptive routing on or off, and with
    `qp_what_if` QP hashing on every switch (True) or on none (False)."""
    more = max(4 * qps, 8)
    other_seeds = "same" if seeds in ("plan", "tier", "switch") else "plan"
    first = "as planned" if planned else "as asked"
    base = Setting(f"{first}: {qps} QP{'s' if qps > 1 else ''}, {hash_kind}, {SEED_LABEL[seeds]}"
                   + (", adaptive routing" if adaptive else ""), qps, hash_kind, seeds, adaptive)
    out = [
        base,
        Setting(f"{more} QPs", more, hash_kind, seeds, adaptive),
        Setting(SEED_LABEL[other_seeds], qps, hash_kind, other_seeds),
        Setting("no adaptive routing", qps, hash_kind, seeds) if adaptive
        else Setting("adaptive routing", qps, hash_kind, seeds, adaptive=True),
    ]
    if qp_what_if is not None:
        out.append(Setting("QP hashing" if qp_what_if else "no QP hashing", qps, hash_kind, seeds,
                           qp_hashing=qp_what_if))
    return out


def ecmp_report(fabric: Fabric, pattern: str, qps: int | None = None, hash_kind: str | None = None,
                seeds: str | None = None, jobs_file: str | None = None, cross_rail: bool = False,
                salt: int = 0, sport: str = "qp") -> dict[str, Any]:
    """The whole `analyze ecmp` result: one column per setting, link loads of the first for heat maps.

    QPs, hash and seeds left None are the plan's (qos.nic.qps_per_connection, ecmp.algorithm, each switch's
    seed as its platform renders it), and so are adaptive routing and QP hashing: the first column is the
    fabric as configured unless a flag overrides it.  Without `jobs_file` the jobs are the whole fabric, or
    with tenants one per tenant and one over the default VRF.  The QP-hashing what-if column is there when it
    can change something: the plan hashes QPs, the NICs give a connection one source port (`sport`), or
    tenants ride VXLAN (where QP hashing is blind).
    """
    planned = qp_planned = qps is None and hash_kind is None and seeds is None
    qps = fabric.qps if qps is None else qps
    hash_kind = fabric.hash_kind if hash_kind is None else hash_kind
    seeds = "plan" if seeds is None else seeds
    from fabricgen.analyze.flows import default_jobs
    from fabricgen.analyze.jobs import load_jobs
    from fabricgen.analyze.routing import compute_routes

    if qps < 1:
        from fabricgen.errors import FabricError

        raise FabricError.single("--qps-per-conn", "", f"{qps} QPs per connection", "use 1 or more")
    jobs = (load_jobs(jobs_file, fabric, pattern, qps, cross_rail) if jobs_file
            else default_jobs(fabric, pattern, qps, cross_rail))
    routes = compute_routes(fabric)
    adaptive = fabric.adaptive_routing and planned
    qp_any = bool(fabric.qp_hash.any()) and qp_planned
    vxlan = fabric.tenant_mechanism == "evpn-vxlan"
    what_if = (not qp_any) if (qp_any or sport == "connection" or vxlan) else None
    columns = [evaluate(fabric, routes, jobs, s, salt, sport=sport)
               for s in settings_for(qps, hash_kind, seeds, adaptive, planned, what_if)]
    link_load = columns[0].pop("link_load")
    for c in columns[1:]:
        c.pop("link_load")
    return {
        "kind": "ecmp",
        "fabric": fabric.name,
        "pattern": pattern + (" (cross-rail)" if cross_rail else ""),
        "hash": hash_kind,
        "hash_fields": list(fabric.hash_fields),
        "seeds_from": dict(fabric.hash_how) if seeds == "plan" else {},
        "adaptive_routing_planned": fabric.adaptive_routing,
        "qp_hashing_planned": [fabric.nodes[i] for i in np.flatnonzero(fabric.qp_hash)][:3],
        "udp_sport": sport,
        "tenancy": ({"mechanism": fabric.tenant_mechanism, "tenants": len(fabric.tenants),
                     "outer": f"VXLAN: outer IPs the leaves' loopbacks (VTEPs), UDP dst {VXLAN_UDP_PORT}, "
                              f"src a hash of the inner 5-tuple" if vxlan else "none (vrf-lite: no encapsulation)"}
                    if fabric.tenants else None),
        "columns": columns,
        "link_load": {"arcs": [fabric.arc_label(a) for a in range(fabric.switch_arcs)],
                      "bytes": link_load["bytes"][: fabric.switch_arcs],
                      "capacity_gbps": fabric.arc_speed},
    }
