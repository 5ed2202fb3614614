"""analyze ecmp with tenants: the VXLAN outer header is what the fabric hashes (issue 25 item 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from fabricgen.analyze.cli import _plain
from fabricgen.analyze.ecmp import ecmp_report, loads_hashed, route_hashed
from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import DEFAULT_VRF, Flows, Job, default_jobs, generate
from fabricgen.analyze.hashing import KEY_BYTES, hash_model
from fabricgen.analyze.overlay import OUTER_SPORT, VXLAN_UDP_PORT, headers
from fabricgen.analyze.routing import compute_routes
from fabricgen.cli import main
from tests.analyze.conftest import fabric_of, two_su

QPS = 16
ALL = ["gpu0001-gpu0008"]


def tenanted(mechanism: str | None, tenants: list[dict[str, Any]] | None = None) -> Fabric:
    """The 8-server, 2-SU fabric; with `mechanism`, one tenant owning every server unless `tenants` says."""
    if mechanism is None:
        return fabric_of(two_su())
    return fabric_of(two_su(tenancy={"scope": "server", "mechanism": mechanism},
                            tenants=tenants or [{"name": "red", "id": 1, "servers": ALL}]))


def run(fabric: Fabric, qp_hashing: bool, sport: str = "connection") -> tuple[Flows, np.ndarray, np.ndarray]:
    """All-to-all per rail, QPS QPs per connection, hashed with QP hashing on every switch or on none:
    the flows, their arcs hop by hop, and the bytes on every arc."""
    [job] = default_jobs(fabric, "alltoall", QPS)
    flows = generate(fabric, [job], 0, sport)
    model = hash_model("crc32", fabric.rank, "tier", 0, None, np.full(len(fabric.nodes), qp_hashing))
    tr = route_hashed(compute_routes(fabric), flows, model)
    assert tr.delivered.all()
    return flows, tr.arcs, loads_hashed(fabric, flows, tr).bytes


def leaf_spine_max(fabric: Fabric, load: np.ndarray) -> float:
    spine_links = np.array([t == "leaf_spine" for t in fabric.arc_tier])
    return float(load[: fabric.switch_arcs][spine_links].max())


def paths_per_connection(flows: Flows, arcs: np.ndarray) -> float:
    """Mean number of distinct paths the QPs of one connection take (over connections that leave their leaf)."""
    fabric_hops = arcs[1:-1]  # the NIC's up arc and the last hop are the connection's own
    _, path_id = np.unique(fabric_hops.T, axis=0, return_inverse=True)
    crossing = (fabric_hops >= 0).sum(axis=0) > 1
    pairs = np.unique(np.stack([flows.conn[crossing], path_id.ravel()[crossing]]), axis=1)
    return pairs.shape[1] / len(np.unique(flows.conn[crossing]))


def test_qp_hashing_helps_plain_traffic_but_is_blind_inside_vxlan() -> None:
    """NICs giving a connection's QPs one UDP source port: QP hashing spreads them on a plain (or vrf-lite) fabric;
    inside an evpn-vxlan tenant the outer source port is the same for all of them and the bytes a QP-hashing switch
    reads are the VNI's, so every connection stays on one path and the QP numbers change nothing."""
    plain = tenanted(None)
    flows, arcs_off, load_off = run(plain, qp_hashing=False)
    _, arcs_on, load_on = run(plain, qp_hashing=True)
    assert paths_per_connection(flows, arcs_off) == 1.0
    assert paths_per_connection(flows, arcs_on) > 4.0  # 16 QPs over 8 leaf uplinks, then 2 cables
    assert leaf_spine_max(plain, load_on) < 0.8 * leaf_spine_max(plain, load_off)

    evpn = tenanted("evpn-vxlan")
    flows_v, arcs_voff, load_voff = run(evpn, qp_hashing=False)
    _, arcs_von, load_von = run(evpn, qp_hashing=True)
    assert headers(evpn, flows_v).encap.sum() == (arcs_von[2] >= 0).sum() > 0  # every QP through a spine is VXLAN
    assert paths_per_connection(flows_v, arcs_voff) == 1.0
    assert paths_per_connection(flows_v, arcs_von) == 1.0  # QP hashing gains nothing inside the tunnel
    assert leaf_spine_max(evpn, load_von) > leaf_spine_max(plain, load_on)
    # the QP numbers are invisible: other destination QPs, identical loads
    model = hash_model("crc32", evpn.rank, "tier", 0, None, np.ones(len(evpn.nodes), dtype=bool))
    other = flows_v.take(np.arange(len(flows_v)))
    other.dqpn = (flows_v.dqpn ^ np.uint32(0x5A5A5A)) & np.uint32(0xFFFFFF)
    routes = compute_routes(evpn)
    assert np.array_equal(loads_hashed(evpn, other, route_hashed(routes, other, model)).bytes, load_von)
    # ... which on the plain fabric move the QPs
    plain_other = flows.take(np.arange(len(flows)))
    plain_other.dqpn = (flows.dqpn ^ np.uint32(0x5A5A5A)) & np.uint32(0xFFFFFF)
    assert not np.array_equal(loads_hashed(plain, plain_other, route_hashed(compute_routes(plain), plain_other,
                                                                            model)).bytes, load_on)


def test_vrf_lite_is_not_encapsulated_and_keeps_the_gain() -> None:
    """vrf-lite adds no header: the same loads as the fabric without tenants, QP hashing on or off."""
    plain, lite = tenanted(None), tenanted("vrf-lite")
    for qp in (False, True):
        flows_p, arcs_p, load_p = run(plain, qp)
        flows_l, arcs_l, load_l = run(lite, qp)
        assert not headers(lite, flows_l).encap.any()
        assert np.array_equal(arcs_p, arcs_l) and np.array_equal(load_p, load_l)
    planned = [ecmp_report(f, "alltoall", sport="connection") for f in (plain, lite)]
    for a, b in zip(planned[0]["columns"], planned[1]["columns"], strict=True):
        assert a["tiers"] == b["tiers"] and a["slowdown"] == b["slowdown"]


def test_per_qp_entropy_survives_in_the_outer_source_port() -> None:
    """ConnectX's per-QP source ports: the outer header of each QP of a connection gets its own source port (a hash
    of the inner 5-tuple into 49152-65535), outer IPs the two leaves' loopbacks, destination port 4789."""
    evpn = tenanted("evpn-vxlan")
    [job] = default_jobs(evpn, "alltoall", QPS)
    flows = generate(evpn, [job], 0, "qp")
    hd = headers(evpn, flows)
    enc = np.flatnonzero(hd.encap)
    key = hd.key[enc].astype(np.int64)
    src = key[:, 0:4] @ np.array([1 << 24, 1 << 16, 1 << 8, 1])
    dst = key[:, 4:8] @ np.array([1 << 24, 1 << 16, 1 << 8, 1])
    assert np.array_equal(src, evpn.vtep_ip[evpn.ep_leaf[flows.src[enc]]])
    assert np.array_equal(dst, evpn.vtep_ip[evpn.ep_leaf[flows.dst[enc]]])
    sport = key[:, 8] * 256 + key[:, 9]
    assert ((sport >= OUTER_SPORT[0]) & (sport < OUTER_SPORT[1])).all()
    assert (key[:, 10] * 256 + key[:, 11] == VXLAN_UDP_PORT).all()
    assert (key[:, KEY_BYTES:KEY_BYTES + 2] @ np.array([256, 1]) == 10001 & 0xFFFF).all()  # the VNI, not the QP
    per_conn = [len(np.unique(sport[flows.conn[enc] == c])) for c in np.unique(flows.conn[enc])]
    assert np.mean(per_conn) > QPS - 0.5
    # a same-leaf pair stays on its leaf, routed in the VRF without a tunnel
    same_leaf = evpn.ep_leaf[flows.src] == evpn.ep_leaf[flows.dst]
    assert same_leaf.any() and not hd.encap[same_leaf].any()


def test_per_tenant_jobs_and_isolation(tmp_path: Path) -> None:
    """With tenants the default jobs are one per tenant plus the default VRF's servers; a job placed across
    isolated tenants loses the cross-tenant QPs (stalled), unless the tenants are leaked."""
    tenants = [{"name": "red", "id": 1, "servers": ["gpu0001-gpu0002", "gpu0005-gpu0006"]},
               {"name": "blue", "id": 2, "servers": ["gpu0003", "gpu0007"]}]
    fabric = tenanted("evpn-vxlan", tenants)
    jobs = default_jobs(fabric, "ring", 2)
    assert [(j.name, j.servers, j.vrf) for j in jobs] == [("red", (0, 1, 4, 5), 0), ("blue", (2, 6), 1),
                                                          (DEFAULT_VRF, (3, 7), -1)]
    result = ecmp_report(fabric, "ring", qps=2)
    rows = {j["name"]: j for j in result["columns"][0]["jobs"]}
    assert rows["red"]["vxlan_flows"] == 4 * 2 * 2  # per rail: gpu0002 -> gpu0005 and gpu0006 -> gpu0001
    assert rows["blue"]["vxlan_flows"] == 4 * 2 * 2 and rows[DEFAULT_VRF]["vxlan_flows"] == 0
    assert all(r["isolated_flows"] == 0 and r["slowdown"] < float("inf") for r in rows.values())
    assert rows["red"]["max_link_ms"] == pytest.approx(rows["red"]["slowdown"] * rows["red"]["ideal_ms"])
    across = [Job("mixed", (0, 2), "ring", 2)]  # red and blue, not leaked
    flows = generate(fabric, across)
    assert not headers(fabric, flows).reach.any()
    jobs_file = tmp_path / "jobs.yaml"
    jobs_file.write_text(yaml.safe_dump({"jobs": [{"name": "mixed", "servers": ["gpu0001", "gpu0007"]}]}))  # red, blue
    [mixed] = ecmp_report(fabric, "ring", qps=2, jobs_file=str(jobs_file))["columns"][0]["jobs"]
    assert mixed["slowdown"] == float("inf") and mixed["isolated_flows"] == mixed["flows"] > 0
    tenants[1]["reach"] = ["red"]
    leaked = tenanted("evpn-vxlan", tenants)
    [ok] = ecmp_report(leaked, "ring", qps=2, jobs_file=str(jobs_file))["columns"][0]["jobs"]
    assert ok["slowdown"] < float("inf") and ok["isolated_flows"] == 0 and ok["vxlan_flows"] == ok["flows"]


def test_gpu_scope_tenant_jobs_use_only_their_nics() -> None:
    """GPU isolation: a tenant owning NICs 0-1 of a server runs its collective on those rails only."""
    data = two_su(tenancy={"scope": "gpu", "mechanism": "evpn-vxlan"},
                  tenants=[{"name": "red", "id": 1, "servers": ["gpu0001-gpu0008:0-1"]},
                           {"name": "blue", "id": 2, "servers": ["gpu0001-gpu0008:2-3"]}])
    fabric = fabric_of(data)
    jobs = default_jobs(fabric, "ring", 1)
    assert [j.name for j in jobs] == ["red", "blue"]
    flows = generate(fabric, jobs)
    for j, name in enumerate(("red", "blue")):
        mine = flows.job == j
        t = fabric.tenants.index(name)
        assert (fabric.ep_tenant[flows.src[mine]] == t).all() and (fabric.ep_tenant[flows.dst[mine]] == t).all()
        assert mine.sum() == 2 * 8  # two rails, a ring of 8 servers each


def test_report_is_deterministic_and_shows_the_qp_what_if(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Same intent, same report, byte for byte; the CLI's per-tenant table and JSON."""
    fabric = tenanted("evpn-vxlan")
    a, b = (json.dumps(_plain(ecmp_report(fabric, "alltoall", sport="connection")), sort_keys=True) for _ in "ab")
    assert a == b
    result = json.loads(a)
    assert result["tenancy"]["mechanism"] == "evpn-vxlan"
    qp = result["columns"][-1]
    assert qp["setting"] == "QP hashing" and qp["qp_hashing"] is True
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(two_su(tenancy={"scope": "server", "mechanism": "evpn-vxlan"},
                                          tenants=[{"name": "red", "id": 1, "servers": ALL}])))
    assert main(["analyze", "ecmp", "-i", str(path), "--pattern", "alltoall", "--udp-sport", "connection"]) == 0
    out = capsys.readouterr().out
    assert "UDP dst 4789" in out and "red" in out and "QP hashing" in out
