"""Topology and underlay: port/link counts, rail placement, addressing, ASNs, stability under growth."""

from __future__ import annotations

import ipaddress
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.physical import media_for
from fabricgen.plan.topology import port_name
from fabricgen.render.summary import summary
from tests.conftest import small_intent, write_intent


def plan_of(data: dict[str, Any]):  # type: ignore[no-untyped-def]
    return build_plan(Intent.model_validate(data))


def tor(**over: Any) -> dict[str, Any]:
    """The small intent with every NIC of a server on one leaf (no scalable units)."""
    data = small_intent(topology__rail_optimized=False, **over)
    del data["topology"]["scalable_unit"]
    return data


def three_tier(servers: int = 16, **over: Any) -> dict[str, Any]:
    data = small_intent(servers__count=servers, topology__tiers=3, topology__spines=4,
                        topology__super_spines_per_group=2, **over)
    data["switch_models"]["super_spine"] = {"ports": 16, "port_speed": "400G"}
    data["platforms"]["super_spine"] = "nxos"
    return data


def test_example_counts(example_plan) -> None:  # type: ignore[no-untyped-def]
    s = summary(example_plan)
    assert (s["gpus"], s["servers"], s["leaves"], s["spines"], s["super_spines"]) == (256, 32, 8, 8, 0)
    assert s["links"] == {"gpu_leaf": 256, "leaf_spine": 256, "spine_super_spine": 0}
    assert s["oversubscription"] == {"leaf": "1.00:1"}
    # Every leaf: 32 GPU ports + 32 uplinks, 4 parallel links to each of the 8 spines.
    for leaf in example_plan.by_role("leaf"):
        assert Counter(i.tier for i in leaf.interfaces) == {"gpu_leaf": 32, "leaf_spine": 32}
        assert Counter(i.peer_device for i in leaf.interfaces if i.tier == "leaf_spine") == {
            f"ai256-spine{j:02d}": 4 for j in range(1, 9)}
    for spine in example_plan.by_role("spine"):
        assert len(spine.interfaces) == 32 and spine.interfaces[0].name == "Ethernet1/1"


def test_rail_optimized_placement(example_plan) -> None:  # type: ignore[no-untyped-def]
    """NIC k of every server lands on rail leaf k, at the server's position in the SU."""
    for srv in example_plan.servers:
        assert [n.leaf for n in srv.nics] == [f"ai256-leaf{k + 1:02d}" for k in range(8)]
        # the SN5600 O128's own names: two 400G ports per cage, Ethernet0, Ethernet4, ...
        assert {n.leaf_port for n in srv.nics} == {f"Ethernet{srv.index * 4}"}


def test_not_rail_optimized_keeps_server_on_one_leaf() -> None:
    plan = plan_of(tor(servers__count=6))
    leaves = plan.by_role("leaf")
    assert len(leaves) == 3  # 8 server ports per leaf, 4 NICs per server -> 2 servers per leaf
    for srv in plan.servers:
        assert len({n.leaf for n in srv.nics}) == 1


def test_port_names() -> None:
    from fabricgen.intent.model import SwitchModel

    m = SwitchModel(ports=64, port_speed=800, breakout=2)
    assert port_name("nxos", m, 0) == "Ethernet1/1/1" and port_name("nxos", m, 3) == "Ethernet1/2/2"
    assert port_name("sonic", m, 0) == "Ethernet0" and port_name("sonic", m, 1) == "Ethernet4"
    assert port_name("sonic", m, 2) == "Ethernet8"
    assert port_name("nxos", SwitchModel(ports=64), 63) == "Ethernet1/64"


@pytest.mark.parametrize(("speed", "length", "media"), [
    (400, 2, "400G-DAC"), (400, 5, "400G-ACC"), (400, 20, "400G-AOC"), (400, 80, "400G-SR8"),
    (400, 300, "400G-DR4"), (400, 1500, "400G-FR4"), (800, 1.5, "800G-DAC"), (800, 70, "800G-DR8"),
])
def test_optics_by_reach(speed: int, length: float, media: str) -> None:
    assert media_for(speed, length) == media


def test_addresses_are_unique_and_in_pools(example_plan) -> None:  # type: ignore[no-untyped-def]
    pools = example_plan.settings.pools
    los = [ipaddress.ip_address(s.loopback) for s in example_plan.switches.values()]
    assert len(set(los)) == len(los) and all(a in pools.loopbacks for a in los)
    seen: set[str] = set()
    for sw in example_plan.switches.values():
        for itf in sw.interfaces:
            net = ipaddress.ip_interface(itf.ipv4)
            assert net.network.prefixlen == 31 and itf.ipv4 not in seen
            seen.add(itf.ipv4)
            assert ipaddress.ip_address(itf.peer_ipv4) in net.network
            pool = pools.gpu if itf.tier == "gpu_leaf" else pools.p2p
            assert net.ip in pool


def test_bgp_sessions_match_links(example_plan) -> None:  # type: ignore[no-untyped-def]
    sw = example_plan.switches
    for link in example_plan.links:
        if link.tier == "gpu_leaf":
            continue
        a, z = sw[link.a_device], sw[link.z_device]
        na = {n.ip: n for n in a.bgp.neighbors}
        nz = {n.ip: n for n in z.bgp.neighbors}
        assert na[link.z_ip].remote_asn == z.asn and nz[link.a_ip].remote_asn == a.asn
    leaf = sw["ai256-leaf01"]
    assert leaf.bgp.maximum_paths == 32 and len(leaf.bgp.neighbors) == 32


def test_asn_schemes() -> None:
    plan = plan_of(small_intent())
    leaves, spines = plan.by_role("leaf"), plan.by_role("spine")
    assert len({s.asn for s in leaves}) == len(leaves)
    assert len({s.asn for s in spines}) == 1
    assert all(n.allowas_in == 0 for s in leaves for n in s.bgp.neighbors)
    same = plan_of(small_intent(bgp__asn_scheme="same-tier"))
    assert len({s.asn for s in same.by_role("leaf")}) == 1
    assert all(n.allowas_in == 1 for s in same.by_role("leaf") for n in s.bgp.neighbors)
    assert all(n.disable_peer_as_check for s in same.by_role("spine") for n in s.bgp.neighbors)


def test_two_byte_asns() -> None:
    plan = plan_of(small_intent(bgp__leaf_asn_base=64600, bgp__spine_asn_base=65000, bgp__super_spine_asn=65100))
    assert {s.asn for s in plan.by_role("spine")} == {65000}
    assert all(64600 <= s.asn < 65000 for s in plan.by_role("leaf"))


def test_three_tier_counts_and_asns() -> None:
    plan = plan_of(three_tier(servers=16))
    s = summary(plan)
    # 16-port switches: leaves 8 down / 8 up, 4 spines per pod (2 links each), spines 8 down / 8 up.
    # Pod = 4 leaves = 1 SU of 4 servers; 16 servers -> 4 pods.
    assert (s["pods"], s["leaves"], s["spines"], s["super_spines"]) == (4, 16, 16, 8)
    assert s["links"] == {"gpu_leaf": 64, "leaf_spine": 128, "spine_super_spine": 128}
    spine_asns = {(sw.pod, sw.asn) for sw in plan.by_role("spine")}
    assert len({a for _, a in spine_asns}) == 4  # one ASN per pod
    assert len({sw.asn for sw in plan.by_role("super_spine")}) == 1
    for ss in plan.by_role("super_spine"):
        assert Counter(i.peer_device.split("-")[1] for i in ss.interfaces) == {f"p{p:02d}": 4 for p in range(1, 5)}


def _fingerprint(plan) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    out: dict[str, Any] = {}
    for sw in plan.switches.values():
        out[sw.hostname] = (sw.asn, sw.loopback, sw.mgmt_ip)
        for itf in sw.interfaces:
            out[f"{sw.hostname}/{itf.name}"] = (itf.peer_device, itf.peer_interface, itf.ipv4, itf.peer_ipv4)
        for n in sw.bgp.neighbors:
            out[f"{sw.hostname}>{n.ip}"] = n.remote_asn
    for srv in plan.servers:
        out[srv.name] = srv.mgmt_ip
        for nic in srv.nics:
            out[f"{srv.name}/{nic.ifname}"] = (nic.leaf, nic.leaf_port, nic.ip)
    return out


@pytest.mark.parametrize(("small", "grown"), [
    (small_intent(servers__count=4), small_intent(servers__count=8)),             # a second SU: more leaves
    (small_intent(servers__count=3), small_intent(servers__count=4)),             # a partial SU filling up
    (three_tier(servers=8), three_tier(servers=16)),                              # more pods
    (tor(servers__count=4), tor(servers__count=7)),
])
def test_growth_renumbers_nothing(small: dict[str, Any], grown: dict[str, Any]) -> None:
    before, after = _fingerprint(plan_of(small)), _fingerprint(plan_of(grown))
    assert len(after) > len(before)
    changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
    assert changed == {}


@pytest.mark.parametrize(("override", "path", "text"), [
    ({"servers__count": 12}, "servers.count", "2-tier fabric with these spines holds"),
    ({"topology__scalable_unit": 12}, "topology.scalable_unit", "server ports"),
    ({"topology__spines": 3}, "topology.spines", "cannot be spread evenly"),
    ({"addressing__loopbacks": "198.18.0.0/30"}, "addressing.loopbacks", "pool 198.18.0.0/30"),
    ({"addressing__gpu": "198.18.32.0/28"}, "addressing.gpu", "growth envelope"),
    ({"topology__leaf_uplinks": 4, "topology__scalable_unit": 8, "servers__count": 8},
     "topology.leaf_uplinks", "oversubscription is 2.00:1"),
    ({"bgp__maximum_paths": 2}, "bgp.maximum_paths", "below the 8 equal-cost paths a"),
    ({"bgp__leaf_asn_base": 65530, "bgp__spine_asn_base": 65000}, "bgp.leaf_asn_base", "private range end"),
    ({"bgp__leaf_asn_base": 4200100000}, "bgp.leaf_asn_base", "overlaps"),
    ({"bgp__leaf_asn_base": 100}, "bgp.leaf_asn_base", "not a private ASN"),
    ({"servers__nic_speed": "200G"}, "switch_models.leaf.port_speed", "GPU NICs at 200G"),
])
def test_cross_field_errors(tmp_path: Path, override: dict[str, Any], path: str, text: str) -> None:
    intent_file = write_intent(tmp_path, small_intent(**override))
    with pytest.raises(FabricError) as info:
        load_plan(intent_file)
    probs = info.value.problems
    assert any(p.path == path and text in p.message for p in probs), probs
    hit = next(p for p in probs if p.path == path)
    assert hit.hint, "every cross-field error says how to fix it"
    assert hit.line is not None, "errors point at the YAML line"


def test_dual_plane_fabric_keeps_planes_apart() -> None:
    """planes: 2 gives every NIC one port per plane (Alibaba HPN style); the planes share nothing."""
    plan = plan_of(small_intent(topology__planes=2, servers__count=4, servers__ports_per_nic=2))
    by_plane = Counter((s.role, s.plane) for s in plan.switches.values())
    assert by_plane == {("leaf", 0): 4, ("leaf", 1): 4, ("spine", 0): 4, ("spine", 1): 4}
    assert all("-pl1-" in h or "-pl2-" in h for h in plan.switches)
    for srv in plan.servers:
        assert len(srv.nics) == 8 and len({n.ifname for n in srv.nics}) == 8
        for nic in srv.nics:
            assert plan.switches[nic.leaf].plane == nic.plane
    for link in plan.links:
        if link.tier == "leaf_spine":
            assert plan.switches[link.a_device].plane == plan.switches[link.z_device].plane
    asns = {s.asn for s in plan.by_role("leaf")}
    assert len(asns) == 8, "leaf ASNs stay unique across planes"
