"""A failure scenario, and what the intact fabric gives: shared by `failures`, `singles` and `deadlock`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fabricgen.analyze.ecmp import job_slowdowns, loads_hashed, route_hashed
from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import Flows, Job, generate
from fabricgen.analyze.hashing import HashModel, hash_model
from fabricgen.analyze.routing import RouteBase, Routes, compute_routes


@dataclass(frozen=True)
class Failure:
    """Cables (by arc pair) and switches that are down together."""

    name: str
    arcs: frozenset[int] = frozenset()  # both arcs of each failed cable
    nodes: frozenset[int] = frozenset()

    def __add__(self, other: Failure) -> Failure:
        return Failure(f"{self.name} + {other.name}", self.arcs | other.arcs, self.nodes | other.nodes)


@dataclass
class Baseline:
    """What the intact fabric gives, computed once and compared with every scenario."""

    fabric: Fabric
    routes: Routes
    route_base: RouteBase
    flows: Flows
    model: HashModel
    slowdown: list[float]
    uplink_capacity: np.ndarray  # per node
    group_size: np.ndarray  # [node, dest] intact ECMP group sizes
    leaf_rail: dict[int, np.ndarray] = field(default_factory=dict)


def uplink_capacity(fabric: Fabric, failure: Failure | None = None) -> np.ndarray:
    """Working upward capacity (Gb/s) of every switch."""
    ok = fabric.rank[fabric.arc_dst] > fabric.rank[fabric.arc_src]
    if failure is not None:
        down = np.zeros(fabric.switch_arcs, dtype=bool)
        down[list(failure.arcs)] = True
        dead = np.isin(fabric.arc_src, list(failure.nodes)) | np.isin(fabric.arc_dst, list(failure.nodes))
        ok &= ~down & ~dead
    return np.bincount(fabric.arc_src[ok], weights=fabric.arc_speed[ok], minlength=len(fabric.nodes))


def baseline(fabric: Fabric, jobs: list[Job], hash_kind: str, seeds: str, salt: int = 0) -> Baseline:
    route_base = RouteBase(fabric)
    routes = compute_routes(fabric, base=route_base)
    flows = generate(fabric, jobs, salt)
    model = hash_model(hash_kind, fabric.rank, seeds, salt, (fabric.hash_seed, fabric.hash_rotate), fabric.qp_hash)
    slow = job_slowdowns(fabric, flows, loads_hashed(fabric, flows, route_hashed(routes, flows, model)))
    return Baseline(fabric, routes, route_base, flows, model, slow, uplink_capacity(fabric), group_sizes(routes))


def group_sizes(routes: Routes) -> np.ndarray:
    g = routes.group_of
    return np.where(g >= 0, routes.g_size[np.maximum(g, 0)], 0)
