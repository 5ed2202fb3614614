"""NX-OS renderer: the rendered running-config carries the plan's BGP, addressing and RoCEv2 QoS."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.model import Plan, QosProfile, Switch
from fabricgen.platforms.nxos import render as nxos
from fabricgen.render.build import environment
from tests.conftest import EXAMPLE, ROOT


def render(sw: Switch, plan: Plan) -> str:
    return nxos.render(sw, plan, environment())["nxos.cfg"]


def blocks(text: str) -> dict[str, list[str]]:
    """Top-level line -> its indented child lines (stripped, nested ones included)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if not line or line.startswith("!"):
            continue
        if line[0] != " ":
            assert line not in out, f"duplicate top-level line {line!r}"
            current = out[line] = []
        else:
            assert current is not None, f"indented line without a parent: {line!r}"
            current.append(line.strip())
    return out


def sub_blocks(raw: str, header: str, prefix: str) -> dict[str, list[str]]:
    """Children of `prefix ...` lines one indent level below `header` in the raw text."""
    out: dict[str, list[str]] = {}
    inside = False
    current: list[str] | None = None
    for line in raw.splitlines():
        if line == header:
            inside = True
            continue
        if inside and line and line[0] != " ":
            break
        if not inside:
            continue
        if line.startswith("  " + prefix) and not line.startswith("   "):
            current = out[line.strip()[len(prefix):].strip()] = []
        elif line.startswith("   ") and current is not None:
            current.append(line.strip())
        else:
            current = None
    return out


def example_nxos_leaf_plan(tmp_path: Path, **changes: Any) -> Plan:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["switch_models"]["leaf"] = {"model": "N9364D-GX2A", "ports": 64, "port_speed": "400G"}  # not the SONiC SKU
    data["topology"].pop("leaf_uplinks")
    data["platforms"]["leaf"] = "nxos"
    # NX-OS at both ends of every fabric link: what the example leaves out for its SONiC leaves
    data["ecmp"]["adaptive_routing"] = {"enabled": True, "mode": "flowlet", "flowlet_aging_us": 500}
    for dotted, value in changes.items():
        node = data
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return build_plan(Intent.model_validate(data))


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def spine_texts(plan: Plan) -> dict[str, str]:
    return {sw.hostname: render(sw, plan) for sw in plan.by_role("spine")}


@pytest.fixture(scope="module")
def leaf_plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    return example_nxos_leaf_plan(tmp_path_factory.mktemp("leaf"))


def test_header_and_globals(plan: Plan, spine_texts: dict[str, str]) -> None:
    sw = plan.switches["ai256-spine01"]
    b = blocks(spine_texts[sw.hostname])
    assert f"hostname {sw.hostname}" in b
    for feature in ("feature bgp", "feature bfd", "feature lldp"):
        assert feature in b
    assert "feature interface-vlan" not in b
    assert "priority-flow-control watch-dog-interval on" in b
    # the intent's timers (200 ms detection, restoration and poll): NX-OS polls every 200 ms,
    # declares a queue stuck after 1 interval and restores it after 1 quiet interval
    assert "priority-flow-control watch-dog interval 200" in b
    assert "priority-flow-control watch-dog shutdown-multiplier 1" in b
    assert "priority-flow-control auto-restore multiplier 1" in b
    # the spine tier's seed (ecmp.seeds.spine: 25, rotate 0 = the default, left out)
    assert "ip load-sharing address source-destination port source-destination rotate 0 universal-id 25" in b
    assert "bfd interval 300 min_rx 300 multiplier 3" in b
    assert b["interface mgmt0"] == ["vrf member management", f"ip address {sw.mgmt_ip}/24"]
    assert f"ip address {sw.loopback}/32" in b["interface loopback0"]
    assert b["system qos"] == ["service-policy type queuing output QOS_EGRESS_PORT",
                               "service-policy type network-qos qos_network"]


def test_every_neighbor_with_remote_as(plan: Plan, spine_texts: dict[str, str]) -> None:
    for sw in plan.by_role("spine"):
        assert sw.bgp is not None
        text = spine_texts[sw.hostname]
        header = f"router bgp {sw.asn}"
        assert header in blocks(text)
        neighbors = sub_blocks(text, header, "neighbor")
        assert len(neighbors) == len(sw.bgp.neighbors) == 32
        for n in sw.bgp.neighbors:
            lines = neighbors[n.ip]
            assert f"remote-as {n.remote_asn}" in lines
            assert f"description {n.description}" in lines
            assert "bfd" in lines
            assert "timers 3 9" in lines
            assert "address-family ipv4 unicast" in lines
            peer = plan.switches[n.peer_device]
            assert n.remote_asn == peer.asn
        bgp = blocks(text)[header]
        assert bgp[:3] == [f"router-id {sw.loopback}", "bestpath as-path multipath-relax",
                           "address-family ipv4 unicast"]
        assert f"maximum-paths {sw.bgp.maximum_paths}" in bgp
        assert "redistribute direct route-map RM-REDIST-DIRECT" in bgp


def test_every_fabric_interface(plan: Plan, spine_texts: dict[str, str]) -> None:
    for sw in plan.by_role("spine"):
        b = blocks(spine_texts[sw.hostname])
        eth = [k for k in b if k.startswith("interface Ethernet")]
        assert len(eth) == 64  # every front-panel port of the 64-port model: 32 planned, 32 unused
        for itf in sw.interfaces:
            lines = b[f"interface {itf.name}"]
            assert lines[0] == f"description {itf.description}"
            for want in ("no switchport", f"mtu {itf.mtu}", f"ip address {itf.ipv4}",
                         "priority-flow-control mode on", "priority-flow-control watch-dog-interval on",
                         "service-policy type qos input QOS_CLASSIFICATION", "no shutdown"):
                assert want in lines, (sw.hostname, itf.name, want)
            assert itf.ipv4.endswith("/31")


def test_qos_numbers_agree(plan: Plan, spine_texts: dict[str, str]) -> None:
    assert plan.qos is not None
    roce, cnp = plan.qos.roce_tc, 7  # CNPs in q7, where Cisco's RoCE reference puts them (the plan's class is 6)
    assert plan.qos.cnp_tc == 6
    for sw in plan.by_role("spine"):
        text = spine_texts[sw.hostname]
        b = blocks(text)
        roce_dscp = nxos.dscp_list(plan.qos.roce_dscp)
        assert b["class-map type qos match-any ROCEv2"] == [f"match dscp {roce_dscp}"]
        assert b["class-map type qos match-any CNP"] == [f"match dscp {plan.qos.cnp_dscp}"]
        assert b["policy-map type qos QOS_CLASSIFICATION"] == [
            "class ROCEv2", f"set qos-group {roce}", "class CNP", f"set qos-group {cnp}",
            "class class-default", "set qos-group 0"]
        nq = sub_blocks(text, "policy-map type network-qos qos_network", "class type network-qos")
        assert nq == {f"c-8q-nq{roce}": ["mtu 9216", f"pause pfc-cos {roce}"],
                      f"c-8q-nq{cnp}": ["mtu 9216"],  # CNPs keep no 1500-byte default MTU
                      "c-8q-nq-default": ["mtu 9216"]}
        assert f"pause pfc-cos {cnp}" not in text
        queues = sub_blocks(text, "policy-map type queuing QOS_EGRESS_PORT", "class type queuing")
        assert set(queues) == {f"c-out-8q-q{n}" for n in range(1, 8)} | {"c-out-8q-q-default"}
        assert queues[f"c-out-8q-q{cnp}"] == ["priority level 1"]  # the strict queue is the CNP one: nothing
        # that uses q7 (CNPs, and the CPU's own control traffic) sits in a queue left at 0 %
        profile = plan.qos_profiles[sw.interfaces[0].qos_profile]
        assert queues[f"c-out-8q-q{roce}"] == [
            f"bandwidth remaining percent {plan.qos.bandwidth['roce']}",
            f"random-detect minimum-threshold {profile.ecn_min // 1024} kbytes maximum-threshold "
            f"{profile.ecn_max // 1024} kbytes drop-probability {profile.ecn_probability} weight 0 ecn"]
        default_share = plan.qos.bandwidth["default"]
        assert queues["c-out-8q-q-default"] == [f"bandwidth remaining percent {default_share}"]
        shares = [int(m) for m in re.findall(r"bandwidth remaining percent (\d+)", text)]
        assert sum(shares) == 100
        assert sum(1 for q in queues.values() if q == ["bandwidth remaining percent 0"]) == 5
        assert text.count("random-detect") == 1


def test_unplanned_ports_are_shut_and_described_unused(tmp_path: Path) -> None:
    """A 48-server NX-OS leaf fabric: each rail leaf uses 16 of its 32 server ports and all its uplinks."""
    p = example_nxos_leaf_plan(tmp_path, servers__count=16)
    leaf = p.switches["ai256-leaf01"]
    b = blocks(render(leaf, p))
    used = {i.index for i in leaf.interfaces}
    assert len(used) == 16 + 32
    unused = [i for i in range(64) if i not in used]
    assert unused == list(range(16, 32))
    for i in unused:
        assert b[f"interface Ethernet1/{i + 1}"] == ["description unused: not in the fabric plan", "shutdown"]
    for itf in leaf.interfaces:
        assert "no shutdown" in b[f"interface {itf.name}"]
        assert "shutdown" not in b[f"interface {itf.name}"]


def test_breakout_names_of_unused_ports(tmp_path: Path) -> None:
    p = example_nxos_leaf_plan(tmp_path, switch_models__spine={"model": "N9364D-GX2A", "ports": 32,
                                                               "port_speed": "1600G", "breakout": 4})
    sw = p.switches["ai256-spine01"]
    b = blocks(render(sw, p))
    assert b["interface Ethernet1/9/1"] == ["description unused: not in the fabric plan", "shutdown"]
    assert sum(1 for k in b if k.startswith("interface Ethernet1/")) == 128


def test_maximum_paths_covers_the_envelope() -> None:
    """nxos-1024: one link per leaf-spine pair gave spines `maximum-paths 1`; the envelope's 32 uplinks rule."""
    p = load_plan(ROOT / "inventory" / "examples" / "nxos-1024.yaml")
    for sw in p.switches.values():
        assert sw.bgp is not None and sw.bgp.maximum_paths == 32, sw.hostname
    text = render(p.switches["ai1k-spine01"], p)
    assert blocks(text)["router bgp 4200100000"].count("maximum-paths 32") == 1


def test_watchdog_timers_follow_the_intent(tmp_path: Path) -> None:
    p = example_nxos_leaf_plan(tmp_path, qos__pfc_watchdog={"detection_ms": 450, "restoration_ms": 2000,
                                                            "poll_ms": 150})
    b = blocks(render(p.switches["ai256-spine01"], p))
    assert "priority-flow-control watch-dog interval 150" in b
    assert "priority-flow-control watch-dog shutdown-multiplier 3" in b  # 3 x 150 = 450 ms
    assert "priority-flow-control auto-restore multiplier 14" in b  # 2000 ms rounded up to 14 x 150 = 2100 ms


def test_watchdog_off_renders_no_watchdog(tmp_path: Path) -> None:
    p = example_nxos_leaf_plan(tmp_path, qos__pfc_watchdog={"enabled": False})
    text = render(p.switches["ai256-spine01"], p)
    assert "watch-dog" not in text and "auto-restore" not in text


@pytest.mark.parametrize(("watchdog", "field", "text"), [
    ({"detection_ms": 2000, "poll_ms": 100}, "qos.pfc_watchdog.detection_ms", "20 x the 100 ms poll interval"),
    ({"action": "forward"}, "qos.pfc_watchdog.action", "'forward' is not a storm action"),
])
def test_watchdog_nxos_cannot_express_is_an_error(watchdog: dict[str, Any], field: str, text: str) -> None:
    from fabricgen.errors import FabricError

    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["qos"]["pfc_watchdog"].update(watchdog)
    with pytest.raises(FabricError) as info:
        build_plan(Intent.model_validate(data))
    (problem,) = info.value.problems
    assert problem.path == field and text in problem.message and "nxos (spines)" in problem.message


def test_no_dlb_towards_sonic_leaves(plan: Plan, spine_texts: dict[str, str]) -> None:
    """Issue 9: DLB steers to a DLB MAC that SONiC leaves do not own, so the example's spines run none."""
    for sw in plan.by_role("spine"):
        assert not any(i.adaptive_routing for i in sw.interfaces)
        assert "hardware profile dlb" not in spine_texts[sw.hostname]
        assert "dlb-interface" not in spine_texts[sw.hostname]


def test_dlb_block_between_nxos_switches(leaf_plan: Plan) -> None:
    sw = leaf_plan.switches["ai256-spine03"]
    b = blocks(render(sw, leaf_plan))
    dlb = b["hardware profile dlb"]
    assert dlb[0] == "mode flowlet"
    members = [i.name for i in sw.interfaces if i.adaptive_routing]
    assert members == [i.name for i in sw.interfaces]  # every spine port faces an NX-OS leaf
    assert dlb[1] == "dlb-interface " + " , ".join(members)
    assert "mac-address 00:cc:cc:cc:cc:cc" in dlb
    assert "flowlet-aging 500" in dlb


def test_no_dlb_without_adaptive_routing(tmp_path: Path) -> None:
    p = example_nxos_leaf_plan(tmp_path, ecmp__adaptive_routing={"enabled": False})
    text = render(p.switches["ai256-spine01"], p)
    assert "hardware profile dlb" not in text
    assert "dlb-interface" not in text


def test_per_packet_dlb_has_no_flowlet_aging(tmp_path: Path) -> None:
    p = example_nxos_leaf_plan(tmp_path, ecmp__adaptive_routing={"enabled": True, "mode": "per-packet"})
    dlb = blocks(render(p.switches["ai256-spine01"], p))["hardware profile dlb"]
    assert dlb[0] == "mode per-packet"
    assert not any(line.startswith("flowlet-aging") for line in dlb)


def test_nxos_leaf_has_gpu_ports(leaf_plan: Plan) -> None:
    leaf = leaf_plan.switches["ai256-leaf01"]
    assert leaf.platform == "nxos"
    text = render(leaf, leaf_plan)
    b = blocks(text)
    gpu = [i for i in leaf.interfaces if i.tier == "gpu_leaf"]
    assert len(gpu) == 32
    for itf in gpu:
        lines = b[f"interface {itf.name}"]
        assert lines[0].startswith("description gpu_leaf:gpu")
        for want in (f"ip address {itf.ipv4}", "priority-flow-control mode on",
                     "service-policy type qos input QOS_CLASSIFICATION", f"mtu {itf.mtu}"):
            assert want in lines
    # GPU ports are not DLB members; the uplinks are.
    dlb = b["hardware profile dlb"][1]
    assert all(i.name not in dlb.split(" , ") for i in gpu)
    assert len(dlb.split(" , ")) == 32
    gpu_pool = leaf_plan.settings.pools.gpu
    assert b["ip prefix-list PL-REDIST-DIRECT seq 10 permit " + f"{leaf.loopback}/32"] == []
    assert f"ip prefix-list PL-REDIST-DIRECT seq 20 permit {gpu_pool} le 31" in b
    assert leaf.bgp is not None
    neighbors = sub_blocks(text, f"router bgp {leaf.asn}", "neighbor")
    assert {n.ip for n in leaf.bgp.neighbors} == set(neighbors)
    for n in leaf.bgp.neighbors:
        assert f"remote-as {n.remote_asn}" in neighbors[n.ip]


def test_spine_does_not_announce_gpu_pool(spine_texts: dict[str, str]) -> None:
    assert "le 31" not in spine_texts["ai256-spine01"]


def test_same_tier_asn_knobs(tmp_path: Path) -> None:
    p = example_nxos_leaf_plan(tmp_path, bgp__asn_scheme="same-tier")
    leaf_text = render(p.switches["ai256-leaf02"], p)
    spine_text = render(p.switches["ai256-spine02"], p)
    leaf_nb = sub_blocks(leaf_text, f"router bgp {p.switches['ai256-leaf02'].asn}", "neighbor")
    spine_nb = sub_blocks(spine_text, f"router bgp {p.switches['ai256-spine02'].asn}", "neighbor")
    assert all("allowas-in 1" in lines for lines in leaf_nb.values())
    assert all("disable-peer-as-check" in lines for lines in spine_nb.values())
    assert "disable-peer-as-check" not in leaf_text and "allowas-in" not in spine_text


def test_deterministic(plan: Plan, spine_texts: dict[str, str], tmp_path: Path) -> None:
    again = load_plan(EXAMPLE)
    for sw in plan.by_role("spine"):
        assert render(again.switches[sw.hostname], again) == spine_texts[sw.hostname]
        assert render(sw, plan) == spine_texts[sw.hostname]


# --------------------------------------------------------------------------- helpers


def test_dscp_list() -> None:
    assert nxos.dscp_list([26]) == "26"
    assert nxos.dscp_list(range(24, 32)) == "24-31"
    assert nxos.dscp_list([14, 10, 12, 13]) == "10,12-14"


def test_class_names() -> None:
    assert (nxos.nq_class(3), nxos.nq_class(0)) == ("c-8q-nq3", "c-8q-nq-default")
    assert (nxos.queue_class(6), nxos.queue_class(0)) == ("c-out-8q-q6", "c-out-8q-q-default")


def test_ecn_profile_picks_tightest(plan: Plan) -> None:
    sw = plan.switches["ai256-spine01"]
    base = plan.qos_profiles[sw.interfaces[0].qos_profile]
    tight = QosProfile("zz_tight", base.speed, 150.0, base.mtu, base.xon, base.xoff, base.size,
                       base.ecn_min - 4096, base.ecn_max - 8192, 9)
    profiles = dict(plan.qos_profiles, zz_tight=tight)
    fake = Plan(settings=plan.settings, switches=plan.switches, qos=plan.qos, qos_profiles=profiles)
    saved = sw.interfaces[-1].qos_profile
    sw.interfaces[-1].qos_profile = "zz_tight"
    try:
        assert nxos.ecn_profile(sw, fake) is tight
        wred = nxos.wred_for(tight)
        assert (wred.min_kb, wred.max_kb, wred.probability) == (
            (base.ecn_min - 4096) // 1024, (base.ecn_max - 8192) // 1024, 9)
    finally:
        sw.interfaces[-1].qos_profile = saved
    assert nxos.ecn_profile(sw, plan) is base


def test_wred_rounding_keeps_min_below_max() -> None:
    p = QosProfile("p", 100, 3.0, 9216, 1, 2, 3, ecn_min=1500, ecn_max=2000, ecn_probability=5)
    w = nxos.wred_for(p)
    assert (w.min_kb, w.max_kb) == (1, 2)


def test_watchdog_limits_apply_only_to_platforms_in_use() -> None:
    """A single-tier SONiC fabric has no NX-OS switch: NX-OS's drop-only watchdog does not constrain it."""
    from tests.conftest import small_intent

    data = small_intent(servers__count=16, topology__tiers=1, topology__planes=4, servers__nics_per_server=1,
                        servers__ports_per_nic=4, qos__pfc_watchdog={"action": "forward"})
    data["switch_models"] = {"leaf": {"ports": 512, "port_speed": "100G", "lanes_per_port": 1}}
    data["servers"]["nic_speed"] = "100G"
    data["topology"].pop("spines")
    data["topology"].pop("scalable_unit")
    data["addressing"]["gpu"] = "198.18.32.0/20"
    assert data["platforms"]["spine"] == "nxos"
    p = build_plan(Intent.model_validate(data))
    assert {sw.platform for sw in p.switches.values()} == {"sonic"}
