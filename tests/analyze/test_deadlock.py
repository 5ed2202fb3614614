"""analyze deadlock: eBGP routes, bounce paths and buffer-dependency cycles."""

from __future__ import annotations

import numpy as np
import pytest

from fabricgen.analyze.deadlock import deadlock_report, dependency_edges, find_cycle, queue_name, verdict
from fabricgen.analyze.fabric import Fabric, from_plan
from fabricgen.analyze.failures import parse_failures
from fabricgen.analyze.routing import RouteBase, compute_routes, static_routes
from fabricgen.cli import main
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from tests.analyze.conftest import fabric_of, two_su
from tests.conftest import EXAMPLE, small_intent
from tests.plan.test_topology import three_tier


@pytest.mark.parametrize("data", [two_su(), three_tier()], ids=["2-tier", "3-tier"])
def test_multi_as_clos_is_acyclic_under_any_single_failure(data) -> None:  # type: ignore[no-untyped-def]
    fabric = fabric_of(data)
    report = deadlock_report(fabric, 1, "multi-as")
    assert report["acyclic"] and report["with_bounces"] == 0
    assert report["scenarios"] == 1 + fabric.switch_arcs // 2 + len(fabric.nodes)


def _same_tier_unique_spines() -> Fabric:
    """Leaves share one ASN with allowas-in; each spine has its own ASN (spines sharing one would block bounces)."""
    plan = build_plan(Intent.model_validate(small_intent(bgp__asn_scheme="same-tier", topology__spines=8)))
    for i, spine in enumerate(plan.by_role("spine")):
        spine.asn = 4_200_100_000 + i
    return from_plan(plan)


def test_same_tier_allowas_in_failure_bounces_and_cycles() -> None:
    fabric = _same_tier_unique_spines()
    base = RouteBase(fabric)
    intact = compute_routes(fabric, base=base)
    assert verdict(intact, "intact").acyclic and not verdict(intact, "intact").bounces
    # one cable down: spine01 reaches leaf02 only by bouncing through another leaf (allowas-in accepts the path)
    one = parse_failures(fabric, "t-leaf02:Ethernet64")
    routes = compute_routes(fabric, one.arcs, one.nodes, base=base)
    v = verdict(routes, one.name)
    assert v.acyclic and ["t-spine01", "t-leaf01", "t-spine02", "t-leaf02"] in v.bounces
    # two cables down: spine01 bounces towards leaf02 and spine02 towards leaf03 through leaf01; while the fabric
    # converges (leaf01 still sends leaf03's traffic to spine02 and leaf02's to spine01) the four queues wait in a ring
    two = parse_failures(fabric, "t-leaf02:Ethernet64,t-leaf03:Ethernet72")
    routes = compute_routes(fabric, two.arcs, two.nodes, base=base)
    converging = verdict(routes, two.name, previous=intact)
    assert converging.cycle == [
        "t-spine01[in:Ethernet1/1 from t-leaf01]", "t-leaf01[in:Ethernet64 from t-spine01]",
        "t-spine02[in:Ethernet1/1 from t-leaf01]", "t-leaf01[in:Ethernet72 from t-spine02]"]
    report = deadlock_report(fabric, 0, "same-tier", [two])
    # spines ECMP over the envelope's 8 uplinks (underlay.equal_cost_paths), so once converged they spread the
    # bounced traffic over several leaves and the queues wait in a ring even in the steady state
    failures = [c["failure"] for c in report["cycles"]]
    assert not report["acyclic"] and failures == [two.name, f"{two.name} (converging)"]


def test_planned_same_tier_scheme_cannot_bounce() -> None:
    """The plan's same-tier scheme keeps one spine ASN per pod: a spine rejects every path through another spine."""
    fabric = fabric_of(small_intent(bgp__asn_scheme="same-tier", topology__spines=8))
    assert deadlock_report(fabric, 1, "same-tier")["with_bounces"] == 0


def test_hand_built_three_switch_ring_gives_the_classic_cycle() -> None:
    """A, B, C in a ring; each sends to the switch two hops clockwise through its clockwise neighbour."""
    names = ["a", "b", "c"]
    # arcs: 2k is i -> i+1 (clockwise), 2k+1 the reverse
    src = np.array([0, 1, 1, 2, 2, 0], dtype=np.int32)
    dst = np.array([1, 0, 2, 1, 0, 2], dtype=np.int32)
    n_arcs = len(src)
    fabric = Fabric(
        name="ring", nodes=names, role=["leaf"] * 3, rank=np.zeros(3, np.int8), plane=np.zeros(3, np.int16),
        pod=np.zeros(3, np.int16), platform=["frr"] * 3, model=["x"] * 3, asn=np.arange(3, dtype=np.int64) + 65001,
        max_paths=np.ones(3, np.int32), arc_src=src, arc_dst=dst, arc_port=[f"e{a}" for a in range(n_arcs)],
        arc_peer_port=[f"e{a ^ 1}" for a in range(n_arcs)], arc_speed=np.full(n_arcs, 400.0),
        arc_tier=["ring"] * n_arcs, arc_allowas=np.zeros(n_arcs, np.int8), arc_peer_check=np.ones(n_arcs, bool),
        ep_server=np.zeros(0, np.int32), ep_server_name=[], ep_nic=np.zeros(0, np.int16),
        ep_rail=np.zeros(0, np.int16), ep_plane=np.zeros(0, np.int16), ep_leaf=np.zeros(0, np.int32), ep_port=[],
        ep_ip=np.zeros(0, np.uint32), ep_speed=np.zeros(0), servers=[], hash_fields=("src-ip",),
        adaptive_routing=False, index={n: i for i, n in enumerate(names)})
    cw = {0: 0, 1: 2, 2: 4}  # clockwise arc out of each switch
    routes = static_routes(fabric, {
        (0, 1): (cw[0],), (1, 2): (cw[1],), (2, 0): (cw[2],),  # one hop
        (0, 2): (cw[0],), (1, 0): (cw[1],), (2, 1): (cw[2],),  # two hops, clockwise
    })
    cycle = find_cycle(dependency_edges(routes), n_arcs)
    assert sorted(queue_name(fabric, q) for q in cycle) == ["a[in:e5 from c]", "b[in:e1 from a]", "c[in:e3 from b]"]
    assert not verdict(routes, "static").acyclic


def test_cli_deadlock_both_schemes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "deadlock", "-i", str(EXAMPLE), "--asn-scheme", "both", "--any", "0"]) == 0
    out = capsys.readouterr().out
    assert "(multi-as)" in out and "(same-tier)" in out and "acyclic" in out
