"""The fabric's symmetry: checked automorphisms, orbits of failures, per-orbit verdicts equal to each member's."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from fabricgen.analyze import deadlock
from fabricgen.analyze import symmetry as sym
from fabricgen.analyze.deadlock import deadlock_report, scenario_verdicts, verdict
from fabricgen.analyze.fabric import Fabric, from_plan
from fabricgen.analyze.failures import single_failures
from fabricgen.analyze.routing import RouteBase, compute_routes
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from tests.analyze.conftest import fabric_of, two_su
from tests.analyze.test_deadlock import _same_tier_unique_spines
from tests.conftest import EXAMPLE, EXAMPLES
from tests.plan.test_topology import three_tier


def _bench(gpus: int) -> Fabric:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_render import intent_for

    return from_plan(build_plan(Intent.model_validate(intent_for(gpus))))


def _fabric(case: str) -> Fabric:
    if case == "2-tier":
        return fabric_of(two_su())
    if case == "3-tier":
        return fabric_of(three_tier())
    if case == "same-tier bounces":
        return _same_tier_unique_spines()
    if case == "2k":
        return _bench(2048)
    return from_plan(load_plan(case))


CASES = ["2-tier", "3-tier", "same-tier bounces", str(EXAMPLE),
         *(pytest.param(str(p), marks=pytest.mark.slow) for p in EXAMPLES), pytest.param("2k", marks=pytest.mark.slow)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: Path(c).stem)
def test_every_member_s_own_verdict_equals_its_orbit_s(case: str) -> None:
    """Brute force: each single failure's converged and converging verdict computed on its own routes."""
    fabric = _fabric(case)
    base = RouteBase(fabric)
    intact = compute_routes(fabric, base=base)
    scenarios = single_failures(fabric)
    fast = scenario_verdicts(fabric, base, intact, scenarios)
    for failure, row in zip(scenarios, fast, strict=True):
        routes = compute_routes(fabric, failure.arcs, failure.nodes, base=base)
        a, b = verdict(routes, failure.name), verdict(routes, failure.name, previous=intact)
        assert row == (a.acyclic, bool(a.bounces), b.acyclic, bool(b.bounces)), failure.name
    orbits = len(set(sym.symmetry(fabric).classes(scenarios)))
    if case != "same-tier bounces":  # symmetric designs: the orbits are what saves the time
        assert sym.tie_free(intact) and orbits < len(scenarios) / 4, (orbits, len(scenarios))


@pytest.mark.parametrize("case", ["2-tier", "same-tier bounces", str(EXAMPLE)], ids=lambda c: Path(c).stem)
def test_deadlock_report_equals_the_one_by_one_report(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = _fabric(case)
    fast = deadlock_report(fabric, 1, "multi-as")
    monkeypatch.setattr(deadlock, "tie_free", lambda _routes: False)  # no orbit is trusted: every scenario alone
    assert deadlock_report(fabric, 1, "multi-as") == fast


def test_a_fabric_whose_ties_decide_routes_is_not_tie_free() -> None:
    """Spines with their own ASNs offer a leaf different AS paths of one length: the index tie-break picks one."""
    fabric = _same_tier_unique_spines()
    assert not sym.tie_free(compute_routes(fabric))
    assert sym.tie_free(compute_routes(fabric_of(two_su())))


def test_every_generator_is_checked_and_the_orbits_follow_the_design() -> None:
    fabric = fabric_of(three_tier())
    s = sym.symmetry(fabric)
    assert s.generators > 0 and s.rejected == 0
    leaves = fabric.leaves()
    rails = {int(fabric.ep_rail[fabric.ep_leaf == leaf][0]) for leaf in leaves.tolist()}
    # a leaf's orbit is its rail's leaves (rail-optimized: a leaf's GPU ports are one rail), every pod alike
    assert len({int(s.node_orbit[leaf]) for leaf in leaves.tolist()}) == len(rails)
    assert {int(s.node_orbit[v]) for v in np.flatnonzero(fabric.rank == 0)}.isdisjoint(
        {int(s.node_orbit[v]) for v in np.flatnonzero(fabric.rank > 0)})


def _certificate(fabric: Fabric) -> tuple[object, ...]:
    colour = sym._node_colours(fabric)
    asn_ids = np.unique(fabric.asn, return_inverse=True)[1].astype(np.int64)
    pairs, label, label_rev, _bundle, _alike = sym._bundles(fabric)
    n = len(fabric.nodes)
    key = pairs[:, 0] * n + pairs[:, 1]
    incident = [np.flatnonzero((pairs[:, 0] == v) | (pairs[:, 1] == v)) for v in range(n)]
    return colour, asn_ids, pairs, key, label, label_rev, incident


def test_the_check_accepts_automorphisms_and_refuses_the_rest() -> None:
    fabric = fabric_of(two_su())
    colour, asn_ids, pairs, key, label, label_rev, incident = _certificate(fabric)
    n = len(fabric.nodes)

    def check(g: np.ndarray) -> bool:
        perm = sym._check(g, fabric, colour, asn_ids, pairs, key, label, label_rev, incident)  # type: ignore[arg-type]
        return perm is not None

    spines = np.flatnonzero(fabric.rank == 1)
    leaves = fabric.leaves()
    rail = {int(leaf): int(fabric.ep_rail[fabric.ep_leaf == leaf][0]) for leaf in leaves.tolist()}
    same = [leaf for leaf in leaves.tolist() if rail[leaf] == rail[int(leaves[0])]]
    other = next(leaf for leaf in leaves.tolist() if rail[leaf] != rail[int(leaves[0])])

    def swap(x: int, y: int) -> np.ndarray:
        g = np.arange(n)
        g[x], g[y] = y, x
        return g

    assert check(np.arange(n))
    assert check(swap(int(spines[0]), int(spines[1])))  # spines of a 2-tier fabric are alike
    assert check(swap(same[0], same[1]))  # two leaves of one rail in different scalable units
    assert not check(swap(same[0], other))  # their GPU ports are other rails
    assert not check(swap(int(leaves[0]), int(spines[0])))  # a leaf is no spine
    # the same swap once a cable differs: its image is another speed
    a = int(np.flatnonzero((fabric.arc_src == same[0]) & (fabric.arc_dst == spines[0]))[0])
    speed = fabric.arc_speed.copy()
    speed[a], speed[a ^ 1] = 100.0, 100.0
    slow = replace(fabric, arc_speed=speed, lists={})
    colour, asn_ids, pairs, key, label, label_rev, incident = _certificate(slow)
    assert sym._check(swap(same[0], same[1]), slow, colour, asn_ids, pairs, key, label, label_rev, incident) is None
    # ... and the orbits split: that cable is alone, the leaf too
    s = sym.symmetry(slow)
    cable_orbit = s.cable_orbit[a // 2]
    assert (s.cable_orbit == cable_orbit).sum() == 1 and (s.node_orbit == s.node_orbit[same[0]]).sum() == 1


def test_asns_must_map_one_to_one() -> None:
    """Two leaves of one rail swapped while one of them shares its AS with a third leaf: not an automorphism."""
    fabric = fabric_of(two_su())
    leaves = fabric.leaves().tolist()
    rail = {leaf: int(fabric.ep_rail[fabric.ep_leaf == leaf][0]) for leaf in leaves}
    x, y = [leaf for leaf in leaves if rail[leaf] == rail[leaves[0]]][:2]
    third = next(leaf for leaf in leaves if leaf not in (x, y))
    asn = fabric.asn.copy()
    asn[x] = asn[third]
    shared = replace(fabric, asn=asn, lists={})
    g = np.arange(len(fabric.nodes))
    g[x], g[y] = y, x
    assert sym._check(g, shared, *_certificate(shared)) is None  # type: ignore[arg-type]
    assert sym._check(g, fabric, *_certificate(fabric)) is not None  # type: ignore[arg-type]
    s = sym.symmetry(shared)
    assert s.rejected == 0 and s.node_orbit[x] != s.node_orbit[y]


def test_failure_rows_come_per_orbit_on_symmetric_fabrics(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batches really run: one BGP simulation per orbit, not per failure (rows compared in test_singles)."""
    from fabricgen.analyze import members
    from fabricgen.analyze.flows import whole_fabric_job
    from fabricgen.analyze.scenarios import baseline
    from fabricgen.analyze.singles import SingleFailures

    fabric = fabric_of(three_tier())
    engine = SingleFailures(baseline(fabric, [whole_fabric_job(fabric, "alltoall", 2)], "crc32", "same"))
    calls = []
    changed = engine._changed
    monkeypatch.setattr(engine, "_changed", lambda f: calls.append(f.name) or changed(f))
    failures = single_failures(fabric)
    rows = members.every_row(engine, failures)
    assert [r["failure"] for r in rows] == [f.name for f in failures]
    assert len(calls) == len(set(sym.symmetry(fabric).classes(failures))) < len(failures) / 4
