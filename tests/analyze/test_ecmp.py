"""analyze ecmp: the model against closed forms and constructed cases."""

from __future__ import annotations

import binascii
import json
import math
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from fabricgen.analyze.ecmp import Setting, ecmp_report, evaluate, loads_hashed, route_hashed
from fabricgen.analyze.fabric import from_plan
from fabricgen.analyze.flows import Job, generate, udp_sport, whole_fabric_job
from fabricgen.analyze.hashing import hash_keys, hash_model
from fabricgen.analyze.routing import compute_routes
from fabricgen.cli import main
from tests.analyze.conftest import fabric_of, two_su
from tests.conftest import EXAMPLE


def expected_max_load(n: int, m: int) -> float:
    """E[max bin] of n balls thrown uniformly into m bins, exactly: P(max <= k) = n!/m^n [x^n] (sum_{i<=k} x^i/i!)^m."""
    total = Fraction(0)
    for k in range(n):  # E[max] = sum_{k>=0} P(max > k)
        poly = [Fraction(1)]
        term = [Fraction(1, math.factorial(i)) for i in range(k + 1)]
        for _ in range(m):
            nxt = [Fraction(0)] * min(len(poly) + k, n + 1)
            for i, a in enumerate(poly):
                for j, b in enumerate(term):
                    if i + j <= n:
                        nxt[i + j] += a * b
            poly = nxt
        p_le = poly[n] * math.factorial(n) / Fraction(m) ** n if len(poly) > n else Fraction(0)
        total += 1 - p_le
        if p_le == 1:
            break
    return float(total)


def test_balls_into_bins_closed_form_itself() -> None:
    assert expected_max_load(1, 8) == pytest.approx(1.0)
    assert expected_max_load(2, 2) == pytest.approx(1.5)  # same bin with probability 1/2
    assert expected_max_load(3, 3) == pytest.approx(17 / 9)  # max 1: 6/27, max 3: 3/27, else 2


def test_leaf_uplink_load_matches_balls_into_bins() -> None:
    """n QPs leaving a leaf over m uplinks, hashed by crc32: the mean max load is E[max] of n balls in m bins."""
    fabric = fabric_of(two_su())
    routes = compute_routes(fabric)
    leaves = fabric.leaves()
    up_arcs = {int(leaf): np.flatnonzero((fabric.arc_src == leaf) & (fabric.rank[fabric.arc_dst] == 1))
               for leaf in leaves}
    assert all(len(a) == 8 for a in up_arcs.values())
    job = Job("x", tuple(range(8)), "alltoall", qps=4)
    samples = []
    for salt in range(120):
        flows = generate(fabric, [job], salt)
        tr = route_hashed(routes, flows, hash_model("crc32", fabric.rank, "same", salt))
        load = loads_hashed(fabric, flows, tr).flows
        samples += [float(load[a].max()) for a in up_arcs.values()]
    # every leaf sends 4 servers x 4 servers x 4 QPs = 64 QPs to the other SU's rail leaf over 8 uplinks
    n_up = float(sum(load[a].sum() for a in up_arcs.values())) / len(up_arcs)
    assert n_up == 64
    assert np.mean(samples) == pytest.approx(expected_max_load(64, 8), abs=0.2)


def test_rail_optimized_ring_inside_one_leaf_crosses_no_spine(example_plan) -> None:  # type: ignore[no-untyped-def]
    fabric = from_plan(example_plan)
    routes = compute_routes(fabric)
    result = evaluate(fabric, routes, [whole_fabric_job(fabric, "ring", 4)], Setting("x", 4, "crc32", "same"))
    assert result["tiers"]["leaf_spine"]["used"] == 0
    assert result["tiers"]["gpu_leaf"]["max_flows"] == 4  # every NIC sends and receives one connection
    assert result["slowdown"] == pytest.approx(1.0)


def test_ring_across_scalable_units_crosses_spines() -> None:
    fabric = fabric_of(two_su())
    routes = compute_routes(fabric)
    result = evaluate(fabric, routes, [whole_fabric_job(fabric, "ring", 1)], Setting("x", 1, "crc32", "same"))
    # per rail, the ring crosses between the two SUs twice: 4 rails x 2 connections, each up and down a spine
    assert sum(result["link_load"]["flows"][: fabric.switch_arcs]) == 4 * 2 * 2


def test_same_seed_polarizes_and_tier_seeds_do_not() -> None:
    fabric = fabric_of(two_su())
    routes = compute_routes(fabric)
    job = [Job("x", tuple(range(8)), "alltoall", qps=4)]
    same = evaluate(fabric, routes, job, Setting("s", 4, "crc32", "same"))
    tier = evaluate(fabric, routes, job, Setting("t", 4, "crc32", "tier"))
    assert same["polarization"]["leaf->spine"] == 1.0
    assert tier["polarization"]["leaf->spine"] < 0.3


def test_adaptive_routing_spreads_evenly() -> None:
    fabric = fabric_of(two_su())
    routes = compute_routes(fabric)
    res = evaluate(fabric, routes, [Job("x", tuple(range(8)), "alltoall", qps=1)], Setting("a", 1, "crc32", "same",
                                                                                          adaptive=True))
    assert res["tiers"]["leaf_spine"]["max_over_mean"] == pytest.approx(1.0)
    assert res["slowdown"] == pytest.approx(1.0)


def test_hash_models_match_reference_crcs() -> None:
    data = b"fabricgen-roce"
    key = np.frombuffer(data, dtype=np.uint8)[None, :]
    crc32 = int(hash_keys("crc32", key, np.array([0xFFFFFFFF]))[0]) ^ 0xFFFFFFFF
    assert crc32 == zlib.crc32(data)
    assert int(hash_keys("crc16", key, np.array([0]))[0]) == binascii.crc_hqx(data, 0)


def test_udp_source_port_from_qp_numbers() -> None:
    # fl = 0x100 * 0x200 = 0x20000; sport = 0xC000 | (0 ^ (0x20000 >> 14))
    assert int(udp_sport(np.array([0x100]), np.array([0x200]))[0]) == 0xC008
    ports = udp_sport(np.arange(1000, 1100), np.arange(5000, 5100))
    assert ports.min() >= 0xC000


def test_tree_edges_carry_both_directions() -> None:
    fabric = fabric_of(two_su())
    flows = generate(fabric, [Job("t", tuple(range(8)), "tree", 1)])
    pairs = set(zip(fabric.ep_server[flows.src].tolist(), fabric.ep_server[flows.dst].tolist(), strict=True))
    assert all((b, a) in pairs for a, b in pairs)
    # two trees over 8 ranks: 7 edges each, both directions, on 4 rails
    assert len(flows) == 2 * 7 * 2 * 4


def test_cli_ecmp_json_and_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("jobs:\n  - name: a\n    servers: [gpu0001..gpu0016]\n  - name: b\n"
                    "    servers: [gpu0017, gpu0018]\n    pattern: alltoall\n", encoding="utf-8")
    out = tmp_path / "ecmp.json"
    assert main(["analyze", "ecmp", "-i", str(EXAMPLE), "--jobs", str(jobs), "--qps-per-conn", "2",
                 "--format", "json", "-o", str(out)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [j["name"] for j in shown["columns"][0]["jobs"]] == ["a", "b"]
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert len(saved["link_load"]["bytes"]) == 2 * 256  # every leaf-spine cable, both directions


def test_cli_jobs_bad_server_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("jobs:\n  - name: a\n    servers:\n      - gpu0001\n      - gpu9999\n", encoding="utf-8")
    assert main(["analyze", "ecmp", "-i", str(EXAMPLE), "--jobs", str(jobs)]) == 2
    err = capsys.readouterr().err
    assert f"{jobs}:5" in err and "jobs.0.servers.1" in err and "gpu9999" in err


def test_analyze_defaults_to_the_fabric_as_planned(example_plan) -> None:  # type: ignore[no-untyped-def]
    """Issue 24: with no flags the first column is what the example renders (SONiC leaves seeded by their device
    type, NX-OS spines by universal-id 25, 4 QPs from qos.nic): no polarization; one seed everywhere is the what-if
    beside it and polarizes completely."""
    fabric = from_plan(example_plan)
    assert fabric.qps == 4 and fabric.hash_kind == "crc32"
    leaf, spine = fabric.index["ai256-leaf01"], fabric.index["ai256-spine01"]
    assert (int(fabric.hash_seed[leaf]), int(fabric.hash_rotate[leaf])) == (10, 10)
    assert (int(fabric.hash_seed[spine]), int(fabric.hash_rotate[spine])) == (25, 0)
    result = ecmp_report(fabric, "alltoall", cross_rail=True)
    planned, more, same, adaptive = result["columns"]
    assert planned["setting"] == "as planned: 4 QPs, crc32, seeds as planned"
    assert planned["qps_per_conn"] == 4 and planned["seeds"] == "plan"
    assert planned["polarization"]["leaf->spine"] < 0.05
    assert same["setting"] == "one seed everywhere" and same["polarization"]["leaf->spine"] > 0.9
    assert planned["slowdown"] < 1.2 < 2.0 < same["slowdown"]
    assert adaptive["setting"] == "adaptive routing" and adaptive["slowdown"] == pytest.approx(1.0)
    assert "DEVICE_METADATA.type" in result["seeds_from"]["leaf"]
    assert result["seeds_from"]["spine"] == "nxos config, from ecmp.seeds.spine"


def test_flags_override_the_plan() -> None:
    fabric = fabric_of(two_su())
    result = ecmp_report(fabric, "alltoall", qps=1, seeds="same")
    assert result["columns"][0]["setting"] == "as asked: 1 QP, crc32, one seed everywhere"
    assert result["columns"][2]["setting"] == "seeds as planned"
    assert result["seeds_from"] == {}
