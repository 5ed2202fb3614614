"""Every single failure, incrementally: the same rows as `impact`'s full re-route, scenario by scenario."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fabricgen.analyze.fabric import Fabric, from_plan
from fabricgen.analyze.failures import every_failure, failures_report, impact, pair_count, single_failures
from fabricgen.analyze.flows import Job, default_jobs, whole_fabric_job
from fabricgen.analyze.members import every_row
from fabricgen.analyze.scenarios import baseline
from fabricgen.analyze.singles import SingleFailures
from fabricgen.cli import main
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from tests.analyze.conftest import fabric_of, two_su
from tests.analyze.test_deadlock import _same_tier_unique_spines
from tests.conftest import EXAMPLE, EXAMPLES, small_intent
from tests.plan.test_topology import three_tier


def _assert_rows_equal(fabric: Fabric, jobs: list[Job], hash_kind: str = "crc32", seeds: str = "same") -> int:
    """Each failure's incremental row and its orbit batch's row (members.py, in one process and in two) equal
    the full re-route's."""
    base = baseline(fabric, jobs, hash_kind, seeds)
    engine = SingleFailures(base)
    failures = single_failures(fabric)
    batched = every_row(engine, failures, workers=1)
    # the orbits in two forked workers, the large ones in slices of whole batches: the same rows, in order
    assert every_row(engine, failures, workers=2) == batched
    n = 0
    for failure, row in zip(failures, batched, strict=True):
        full = impact(base, failure)
        assert engine.row(failure) == full, failure.name
        assert row == full, failure.name
        n += 1
    return n


@pytest.mark.parametrize("path", [EXAMPLE, *(pytest.param(p, marks=pytest.mark.slow) for p in EXAMPLES)],
                         ids=lambda p: Path(p).stem)
def test_every_single_failure_of_the_examples_equals_the_full_reroute(path: Path) -> None:
    fabric = from_plan(load_plan(path))
    assert _assert_rows_equal(fabric, [whole_fabric_job(fabric, "ring", 4)]) == len(single_failures(fabric))


@pytest.mark.parametrize("case", ["3-tier alltoall", "two jobs, tree, seeds per switch", "same-tier bounces",
                                  "evpn-vxlan tenants, QP hashing"])
def test_every_single_failure_equals_the_full_reroute(case: str) -> None:
    if case == "3-tier alltoall":
        fabric = fabric_of(three_tier())
        jobs = [whole_fabric_job(fabric, "alltoall", 2)]
        _assert_rows_equal(fabric, jobs, "crc16", "tier")
    elif case == "two jobs, tree, seeds per switch":
        fabric = fabric_of(two_su())
        jobs = [Job("a", (0, 1, 2), "tree", 3), Job("b", (4, 5, 6, 7), "ring", 2)]
        _assert_rows_equal(fabric, jobs, "xor", "switch")
    elif case == "evpn-vxlan tenants, QP hashing":  # outer headers, VNI bytes, and a job across isolated tenants
        fabric = fabric_of(two_su(tenancy={"scope": "gpu", "mechanism": "evpn-vxlan"},
                                  tenants=[{"name": "red", "id": 1, "servers": ["gpu0001-gpu0008:0-1"]},
                                           {"name": "blue", "id": 2, "servers": ["gpu0002-gpu0007:2-3"]}]))
        fabric.qp_hash = np.ones(len(fabric.nodes), dtype=bool)
        jobs = [*default_jobs(fabric, "alltoall", 2), Job("across", (0, 3), "ring", 2)]
        _assert_rows_equal(fabric, jobs, "crc32", "tier")
    else:  # allowas-in routes that bounce through a leaf after a failure
        fabric = _same_tier_unique_spines()
        _assert_rows_equal(fabric, [whole_fabric_job(fabric, "alltoall", 1)])


@pytest.mark.slow
def test_every_single_failure_at_2k_gpus_equals_the_full_reroute() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from bench_render import intent_for

    fabric = from_plan(build_plan(Intent.model_validate(intent_for(2048))))
    assert _assert_rows_equal(fabric, [whole_fabric_job(fabric, "ring", 4)]) == 2144


def test_double_failures_are_sampled_above_the_limit_and_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    fabric = fabric_of(two_su())
    n = len(single_failures(fabric))
    every = every_failure(fabric, 2)
    sample = every_failure(fabric, 2, 50)
    assert len(sample) == 50 and {f.name for f in sample} <= {f.name for f in every}
    assert sample[0].name == every[0].name and sample[-1].name == every[-1].name
    assert every_failure(fabric, 2, pair_count(n)) == every  # at the limit: every pair
    jobs = [whole_fabric_job(fabric, "ring", 1)]
    report: dict[str, Any] = failures_report(fabric, jobs, "crc32", "same", None, 1)
    assert report["sampled"] is None and report["scenarios"] == n


def test_cli_says_when_double_failures_are_sampled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from fabricgen.analyze import failures

    path = tmp_path / "f.yaml"
    path.write_text(json.dumps(small_intent(servers__count=8)), encoding="utf-8")
    monkeypatch.setattr(failures, "DOUBLE_EXACT_LIMIT", 30)
    main(["analyze", "failures", "-i", str(path), "--any", "2", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert out["scenarios"] == 30 and out["sampled"]["analysed"] == 30 and out["sampled"]["of"] > 30
    main(["analyze", "failures", "-i", str(path), "--any", "2"])
    assert "sampled: 30 of" in capsys.readouterr().out


def test_orbits_in_slices_of_batches_give_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """An orbit split over several worker tasks (one member a batch, many slices an orbit) gives every row as the
    single process does, each once."""
    from fabricgen.analyze import members

    fabric = from_plan(load_plan(EXAMPLE))
    engine = SingleFailures(baseline(fabric, [whole_fabric_job(fabric, "ring", 4)], "crc32", "same"))
    failures = single_failures(fabric)
    whole = every_row(engine, failures, workers=1)
    monkeypatch.setattr(members, "CHUNK_ENTRIES", 1)
    monkeypatch.setattr(members, "TASKS_PER_WORKER", 64)
    reps = members.symmetry(fabric).classes(failures)
    orbit = {r: reps.count(r) - 1 for r in set(reps)}
    tasks = members._tasks(sorted(orbit), {r: [0] * n for r, n in orbit.items() if n}, 2)
    assert max(k for _, k, _ in tasks) > 1 and members.tie_free(engine.base.routes)  # sliced, batched
    assert every_row(engine, failures, workers=2) == whole
