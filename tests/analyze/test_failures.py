"""analyze failures: incremental routes, capacity, rules, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.analyze.fabric import from_plan
from fabricgen.analyze.failures import baseline, every_failure, impact, parse_failures, single_failures
from fabricgen.analyze.flows import whole_fabric_job
from fabricgen.analyze.routing import RouteBase, compute_routes
from fabricgen.cli import main
from fabricgen.errors import FabricError
from tests.analyze.conftest import fabric_of, two_su
from tests.conftest import EXAMPLE, small_intent, write_intent
from tests.plan.test_topology import three_tier


def _groups(routes):  # type: ignore[no-untyped-def]
    return [[routes.groups[g] if g >= 0 else g for g in row] for row in routes.group_of.tolist()]


@pytest.mark.parametrize("data", [two_su(), three_tier()], ids=["2-tier", "3-tier"])
def test_incremental_routes_equal_a_full_recompute(data) -> None:  # type: ignore[no-untyped-def]
    fabric = fabric_of(data)
    base = RouteBase(fabric)
    for failure in every_failure(fabric, 1):
        full = compute_routes(fabric, failure.arcs, failure.nodes)
        inc = compute_routes(fabric, failure.arcs, failure.nodes, base=base)
        assert _groups(inc) == _groups(full), failure.name


def test_incremental_routes_equal_a_full_recompute_for_double_failures() -> None:
    fabric = fabric_of(two_su())
    base = RouteBase(fabric)
    for failure in every_failure(fabric, 2)[::7]:
        full = compute_routes(fabric, failure.arcs, failure.nodes)
        inc = compute_routes(fabric, failure.arcs, failure.nodes, base=base)
        assert _groups(inc) == _groups(full), failure.name


def test_spine_failure_shrinks_groups_and_capacity() -> None:
    fabric = fabric_of(two_su())
    base = baseline(fabric, [whole_fabric_job(fabric, "alltoall", 2)], "crc32", "same")
    row = impact(base, parse_failures(fabric, "t-spine01"))
    assert row["min_leaf_capacity"] == pytest.approx(0.75)  # 4 spines, one gone
    assert row["worst_oversubscription"] == pytest.approx(4 / 6)  # 4 GPUs (one SU) over 6 working uplinks
    assert row["gpus_cut_off"] == 0 and row["gpus_degraded"] == 32
    # every leaf's group towards the 7 other leaves loses the spine's 2 cables; the other 3 spines' groups stay
    assert row["ecmp_groups_shrunk"] == 8 * 7
    assert row["routes_withdrawn"] == 0
    assert row["slowdown"] >= base.slowdown[0]
    assert row["planes"] == {0: pytest.approx(0.75)}


def test_last_cable_between_leaf_and_spine_withdraws_the_route() -> None:
    data = two_su()
    data["topology"]["spines"] = 8  # one cable per leaf-spine pair
    fabric = fabric_of(data)
    base = baseline(fabric, [whole_fabric_job(fabric, "ring", 1)], "crc32", "same")
    leaf = fabric.nodes[int(fabric.leaves()[0])]
    port = next(p for a, p in enumerate(fabric.arc_port) if fabric.nodes[fabric.arc_src[a]] == leaf)
    row = impact(base, parse_failures(fabric, f"{leaf}:{port}"))
    # the spine loses its only route to that leaf; the other 7 leaves drop that spine from their group to it
    assert row["routes_withdrawn"] == 1
    assert row["ecmp_groups_shrunk"] == 7 + 7  # the leaf's uplink group towards 7 leaves, 7 leaves towards it
    assert row["min_leaf_capacity"] == pytest.approx(7 / 8)


def test_double_failures_are_every_pair() -> None:
    fabric = fabric_of(two_su())
    n = len(single_failures(fabric))
    assert len(every_failure(fabric, 2)) == n * (n - 1) // 2


def test_bad_failure_name() -> None:
    fabric = fabric_of(two_su())
    with pytest.raises(FabricError, match="no switch 'nope'"):
        parse_failures(fabric, "nope")
    with pytest.raises(FabricError, match="no fabric port"):
        parse_failures(fabric, "t-leaf01:Ethernet999")


def test_min_spines_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_intent(tmp_path, small_intent(topology__spines=2), "f.yaml")
    assert main(["analyze", "failures", "-i", str(path), "--fail", "t-spine01", "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert any(r["rule"] == "min-spines" and "2 spine" in r["message"] for r in out["rules"])


def test_example_every_single_failure(example_plan) -> None:  # type: ignore[no-untyped-def]
    from fabricgen.analyze.failures import failures_report

    fabric = from_plan(example_plan)
    res = failures_report(fabric, [whole_fabric_job(fabric, "ring", 4)], "crc32", "same", None, 1)
    assert res["scenarios"] == 256 + 16  # 256 leaf-spine cables + 16 switches
    worst = res["worst"][0]
    # one SU: a rail is one leaf, so losing a leaf cuts its 32 GPUs off and stalls the job
    assert worst["failure"].startswith("ai256-leaf") and worst["gpus_cut_off"] == 32
    assert worst["slowdown"] == float("inf")
    assert any(r["rule"] == "rail-capacity" for r in res["rules"])


def test_cli_failures_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "failures", "-i", str(EXAMPLE), "--fail", "ai256-spine01,ai256-spine02"]) == 0
    out = capsys.readouterr().out
    assert "ai256-spine01, ai256-spine02" in out and "75%" in out


@pytest.mark.parametrize("data", [two_su(), three_tier()], ids=["2-tier", "3-tier"])
def test_a_twin_leafs_relabelled_run_is_its_own_bgp_run(data) -> None:  # type: ignore[no-untyped-def]
    from fabricgen.analyze.routing import bgp_run

    fabric = fabric_of(data)
    base = RouteBase(fabric)
    relabelled = 0
    for leaf in fabric.leaves().tolist():
        run = base.run(leaf)
        full = bgp_run(fabric, base.adj, leaf)
        assert (run.paths, run.nexthops) == (full.paths, full.nexthops), fabric.nodes[leaf]
        relabelled += base.intact.rep_of[leaf] != leaf
    assert relabelled
