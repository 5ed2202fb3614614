"""Issue 10 knobs: canonical defaults, per-tier speeds and ratios, rails per leaf, ToR budget, single-tier planes."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricgen.cli import main
from fabricgen.intent.model import MAX_CHASSIS_PORTS, Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.plan.topology import split_ports
from fabricgen.render.summary import cabling_csv, summary
from tests.conftest import override, small_intent, write_intent
from tests.plan.test_topology import _fingerprint


def plan_of(data: dict[str, Any]):  # type: ignore[no-untyped-def]
    return build_plan(Intent.model_validate(data))


def big(**over: Any) -> dict[str, Any]:
    """64-port leaves and spines, 8 NICs per server, no explicit spine count."""
    data = small_intent(**over)
    data["switch_models"] = {"leaf": {"ports": 64, "port_speed": "400G"}, "spine": {"ports": 64, "port_speed": "400G"}}
    data["servers"].update(nics_per_server=8, gpus_per_server=8)
    data["topology"].pop("spines", None)
    data["topology"].pop("scalable_unit", None)
    data["addressing"].update(loopbacks="198.18.0.0/22", p2p="198.18.128.0/17", gpu="198.19.0.0/17",
                              management="198.19.128.0/20")
    return override(data, **over)


# ------------------------------------------------------------------ canonical defaults


def test_oversubscription_target_is_met_exactly_when_the_radix_allows() -> None:
    """2:1 on a 64-port leaf: 42 down / 21 up (one port spare), not 42/22 = 1.91:1."""
    plan = plan_of(big(servers__count=42, topology__oversubscription="2:1"))
    d = plan.envelope
    assert (d.leaf_down, d.leaf_up) == (42, 21)
    s = summary(plan)
    assert s["oversubscription"] == {"leaf": "2.00:1"}
    assert any(c["name"] == "leaf ports" and "1 cages spare" in c["value"] and "2.00:1" in c["why"]
               for c in s["choices"])


def test_plan_prints_the_derived_choices_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write_intent(tmp_path, big(servers__count=42, topology__oversubscription="2:1"))
    assert main(["plan", "-i", str(f), "--format", "json"]) == 0
    choices = {c["name"]: c for c in json.loads(capsys.readouterr().out)["summary"]["choices"]}
    assert set(choices) == {"leaf ports", "scalable unit", "spines"}
    assert choices["leaf ports"]["value"] == "42 x 400G down, 21 x 400G up, 1 cages spare"
    assert choices["scalable unit"]["value"] == "42 servers"
    assert choices["spines"]["value"].startswith("3 per plane, 7 parallel link(s)")  # 8 leaves x 21 on 64 ports
    assert "fewest" in choices["spines"]["why"] and "2.00:1" in choices["leaf ports"]["why"]
    assert main(["plan", "-i", str(f)]) == 0
    table = capsys.readouterr().out
    assert "derived choices" in table and "oversubscription leaf" in table and "2.00:1" in table


@pytest.mark.parametrize(("ports", "target", "down", "up"), [
    (64, 1.0, 32, 32), (64, 2.0, 42, 21), (64, 3.0, 48, 16), (10, 3.0, 6, 2), (64, 1.5, 36, 24),
])
def test_split_ports_never_exceeds_the_target(ports: int, target: float, down: int, up: int) -> None:
    d, u = split_ports(ports, (400, 1), (400, 1), target)
    assert (d.ports, u.ports) == (down, up)
    assert d.bandwidth / u.bandwidth <= target + 1e-9


def test_leaf_uplinks_still_overrides() -> None:
    d = plan_of(big(servers__count=32, topology__leaf_uplinks=16, topology__oversubscription="3:1")).envelope
    assert (d.leaf_down, d.leaf_up) == (48, 16)


def test_super_spines_follow_planned_pods_and_max_pods() -> None:
    data = big(servers__count=64, topology__tiers=3)
    data["switch_models"]["super_spine"] = {"ports": 64, "port_speed": "400G"}
    data["platforms"]["super_spine"] = "nxos"
    # 64 servers = 2 SUs of 32 = 16 leaves in one pod of 32 spines (32 leaves max).
    one_pod = summary(plan_of(data))
    assert (one_pod["pods"], one_pod["spines"], one_pod["super_spines"]) == (1, 32, 32)
    data["topology"]["max_pods"] = 4
    grown = plan_of(data)
    s = summary(grown)
    assert (s["pods"], s["super_spines"]) == (1, 64)
    assert any("topology.max_pods" in c["why"] for c in s["choices"])


def test_max_servers_sizes_the_spines_for_growth() -> None:
    now = plan_of(big(servers__count=32))
    assert summary(now)["spines"] == 4  # 1 SU: 8 leaves x 32 uplinks on 64-port spines
    roomy = plan_of(big(servers__count=32, topology__max_servers=128))
    assert summary(roomy)["spines"] == 16
    grown = plan_of(big(servers__count=128, topology__max_servers=128))
    before, after = _fingerprint(roomy), _fingerprint(grown)
    assert {k: v for k, v in before.items() if after.get(k) != v} == {}


# ------------------------------------------------------------------ per-tier speeds and ratios


def test_mixed_speeds_use_bandwidth_not_port_counts() -> None:
    """200G NICs on 400G cages split 2 x 200G, 400G uplinks (Alibaba HPN style)."""
    data = big(servers__count=64, servers__nic_speed="200G")
    data["switch_models"]["leaf"] = {"ports": 64, "port_speed": "400G", "downlink": {"speed": "200G"}}
    plan = plan_of(data)
    d = plan.envelope
    assert (d.leaf_down, d.leaf_up, d.leaf_sides[0].cages, d.leaf_sides[1].cages) == (64, 32, 32, 32)
    leaf = plan.by_role("leaf")[0]
    speeds = Counter((i.tier, i.speed) for i in leaf.interfaces)
    assert speeds == {("gpu_leaf", 200): 64, ("leaf_spine", 400): 32}
    assert summary(plan)["oversubscription"] == {"leaf": "1.00:1"}  # 64 x 200G = 32 x 400G
    # Headroom and ECN follow each port's own speed.
    profiles = {plan.qos_profiles[i.qos_profile].speed for i in leaf.interfaces}
    assert profiles == {200, 400}
    # Twin sub-ports of one cage: Ethernet0 and Ethernet4 on SONiC (4 lanes each of an 8-lane cage).
    assert [i.name for i in leaf.interfaces[:2]] == ["Ethernet0", "Ethernet4"]
    assert leaf.interfaces[-1].cage == 63 and leaf.interfaces[-1].breakout == 1


def test_per_tier_oversubscription_aggregates_above_the_spines() -> None:
    data = big(servers__count=32, topology__tiers=3, topology__oversubscription={"leaf": "1:1", "spine": "7:1"})
    data["switch_models"]["super_spine"] = {"ports": 64, "port_speed": "400G"}
    data["platforms"]["super_spine"] = "nxos"
    plan = plan_of(data)
    d = plan.envelope
    assert (d.spine_down, d.spine_up) == (56, 8)
    assert dict(d.ratios)["spine"] == 7.0
    assert summary(plan)["spines"] == 32 and all(
        sum(i.direction == "up" for i in sp.interfaces) == 8 for sp in plan.by_role("spine"))


# ------------------------------------------------------------------ rails per leaf, ToR


def test_rails_per_leaf_puts_a_small_cluster_on_four_leaves() -> None:
    """32 nodes x 8 rails on 4 leaves (2 rails each): rejected before as 'needs 8 rail leaves'."""
    wide = {"ports": 64, "port_speed": "800G", "breakout": 2}  # 128 x 400G: 64 down per leaf at 1:1
    plan = plan_of(big(servers__count=32, topology__rails_per_leaf=2, switch_models__leaf=wide))
    leaves = plan.by_role("leaf")
    assert len(leaves) == 4 and [leaf.rail for leaf in leaves] == [0, 2, 4, 6]
    for srv in plan.servers:
        assert [n.leaf for n in srv.nics] == [leaves[k // 2].hostname for k in range(8)]
    assert all(sum(i.tier == "gpu_leaf" for i in leaf.interfaces) == 64 for leaf in leaves)
    small = _fingerprint(plan_of(big(servers__count=20, topology__rails_per_leaf=2, switch_models__leaf=wide)))
    grown = _fingerprint(plan_of(big(servers__count=32, topology__rails_per_leaf=2, switch_models__leaf=wide)))
    assert {k: v for k, v in small.items() if grown.get(k) != v} == {}


def test_tor_mode_uses_the_real_port_budget() -> None:
    """2:1 on a 64-port ToR leaf: 5 eight-NIC servers with 20 uplinks (40:20), not 5 on 42/22."""
    d = plan_of(big(servers__count=10, topology__rail_optimized=False, topology__oversubscription="2:1")).envelope
    assert (d.servers_per_leaf, d.leaf_down, d.leaf_up) == (5, 40, 20)


# ------------------------------------------------------------------ single-tier planes and radix


def test_single_tier_planes() -> None:
    data = small_intent(servers__count=16, topology__tiers=1, topology__planes=4, servers__nics_per_server=1,
                        servers__ports_per_nic=4)
    data["switch_models"] = {"leaf": {"ports": 512, "port_speed": "100G", "lanes_per_port": 1}}
    data["servers"]["nic_speed"] = "100G"
    data["topology"].pop("spines")
    data["topology"].pop("scalable_unit")
    data["addressing"]["gpu"] = "198.18.32.0/20"
    plan = plan_of(data)
    assert Counter(s.role for s in plan.switches.values()) == {"leaf": 4}
    assert {link.tier for link in plan.links} == {"gpu_leaf"}
    assert all(len(srv.nics) == 4 and len({n.plane for n in srv.nics}) == 4 for srv in plan.servers)
    assert summary(plan)["oversubscription"] == {}
    leaf = plan.by_role("leaf")[0]
    assert leaf.bgp is not None and leaf.bgp.neighbors == []


def test_radix_cap_is_the_largest_chassis() -> None:
    data = big(servers__count=32)
    data["switch_models"]["spine"] = {"ports": MAX_CHASSIS_PORTS, "port_speed": "400G"}
    assert summary(plan_of(data))["spines"] >= 1


# ------------------------------------------------------------------ growth renumbers nothing, knob by knob


def _three_tier_big(count: int, **topology: Any) -> dict[str, Any]:
    data = big(servers__count=count, topology__tiers=3)
    data["topology"].update(topology)
    data["switch_models"]["super_spine"] = {"ports": 64, "port_speed": "400G"}
    data["platforms"]["super_spine"] = "nxos"
    return data


def _mixed_speeds(count: int) -> dict[str, Any]:
    data = big(servers__count=count, servers__nic_speed="200G", topology__max_servers=64)
    data["switch_models"]["leaf"] = {"ports": 64, "port_speed": "400G", "downlink": {"speed": "200G"}}
    return data


def _single_tier_planes(count: int) -> dict[str, Any]:
    data = small_intent(servers__count=count, topology__tiers=1, topology__planes=4, servers__nics_per_server=1,
                        servers__ports_per_nic=4, servers__nic_speed="100G")
    data["switch_models"] = {"leaf": {"ports": 512, "port_speed": "100G", "lanes_per_port": 1}}
    for knob in ("spines", "scalable_unit"):
        data["topology"].pop(knob)
    data["addressing"]["gpu"] = "198.18.32.0/20"
    return data


def _ipv6(count: int) -> dict[str, Any]:
    data = small_intent(servers__count=count)
    data["addressing"].update(loopbacks_v6="2001:db8:0:1::/64", p2p_v6="2001:db8:1::/56")
    return data


def _growth_fingerprint(plan: Plan) -> dict[str, Any]:
    """_fingerprint plus the IPv6 side and the physical cables (cabling.csv rows by cable name)."""
    out = _fingerprint(plan)
    for sw in plan.switches.values():
        out[f"{sw.hostname}/v6"] = sw.loopback_v6
        for itf in sw.interfaces:
            out[f"{sw.hostname}/{itf.name}/v6"] = (itf.ipv6, itf.peer_ipv6)
    for row in csv.DictReader(io.StringIO(cabling_csv(plan))):
        out[f"cable {row['cable']}"] = tuple(row.values())
    return out


@pytest.mark.parametrize(("small", "grown"), [
    # the leaf split closest to 2:1 (one cage spare), growing into a second SU within max_servers
    (big(servers__count=42, topology__oversubscription="2:1", topology__max_servers=84),
     big(servers__count=84, topology__oversubscription="2:1", topology__max_servers=84)),
    # 200G down / 400G up, a second SU within max_servers
    (_mixed_speeds(32), _mixed_speeds(64)),
    # default super-spines sized by max_pods: a second pod
    (_three_tier_big(128, max_pods=4), _three_tier_big(256, max_pods=4)),
    # 7:1 above the spines, default spines and super-spines: a second pod
    (_three_tier_big(224, max_pods=2, oversubscription={"leaf": "1:1", "spine": "7:1"}),
     _three_tier_big(448, max_pods=2, oversubscription={"leaf": "1:1", "spine": "7:1"})),
    # ToR leaves on the real 2:1 port budget (5 servers a leaf)
    (big(servers__count=5, topology__rail_optimized=False, topology__oversubscription="2:1",
         topology__max_servers=20),
     big(servers__count=20, topology__rail_optimized=False, topology__oversubscription="2:1",
         topology__max_servers=20)),
    # single-tier planes: more servers on the same leaves
    (_single_tier_planes(8), _single_tier_planes(16)),
    # the IPv6 underlay: v6 loopbacks and /127s stay where they were
    (_ipv6(4), _ipv6(8)),
], ids=["oversubscription", "per-direction-speeds", "max_pods", "spine-oversubscription", "tor-port-budget",
        "single-tier-planes", "ipv6"])
def test_growth_renumbers_nothing_for_each_knob(small: dict[str, Any], grown: dict[str, Any]) -> None:
    before_plan, after_plan = plan_of(small), plan_of(grown)
    assert len(after_plan.switches) + len(after_plan.servers) > len(before_plan.switches) + len(before_plan.servers)
    before, after = _growth_fingerprint(before_plan), _growth_fingerprint(after_plan)
    assert {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v} == {}


# ------------------------------------------------------------------ bad input: exit 2, path and fix


def _chassis_too_big(d: dict[str, Any]) -> None:
    d["switch_models"]["spine"]["ports"] = MAX_CHASSIS_PORTS + 1


def _no_spine(d: dict[str, Any]) -> None:
    del d["switch_models"]["spine"]


def _bad_downlink(d: dict[str, Any]) -> None:
    d["switch_models"]["leaf"]["downlink"] = {"speed": "300G"}


def _wrong_downlink_speed(d: dict[str, Any]) -> None:
    d["switch_models"]["leaf"]["downlink"] = {"speed": "200G"}


def _spine_speed_mismatch(d: dict[str, Any]) -> None:
    d["switch_models"]["leaf"]["uplink"] = {"speed": "400G"}
    d["switch_models"]["spine"] = {"ports": 16, "port_speed": "800G"}


def _three_tier(super_port_speed: str = "400G", **topology: Any) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d["topology"].update({"tiers": 3, "super_spines_per_group": 2, **topology})
        d["switch_models"]["super_spine"] = {"ports": 16, "port_speed": super_port_speed}
        d["platforms"]["super_spine"] = "nxos"
    return mutate


def _single_tier(count: int = 4, **topology: Any) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d["topology"].update(tiers=1, **topology)
        d["topology"].pop("spines")
        d["servers"]["count"] = count
    return mutate


def _tor(**topology: Any) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d["topology"].update({"rail_optimized": False, **topology})
        d["topology"].pop("scalable_unit")
    return mutate


def _leaf(**fields: Any) -> Any:
    def mutate(d: dict[str, Any]) -> None:
        d["switch_models"]["leaf"].update(fields)
    return mutate


@pytest.mark.parametrize(("mutate", "path", "text"), [
    ({"topology__rails_per_leaf": 3}, "topology.rails_per_leaf", "use one of 1, 2, 4 or 8"),
    ({"topology__rails_per_leaf": 8}, "topology.rails_per_leaf", "cannot be split evenly"),
    (_single_tier(leaf_uplinks=4), "topology.leaf_uplinks", "no uplinks"),
    (_single_tier(count=40), "servers.count", "single-tier plane holds"),
    ({"topology__oversubscription": {"leaf": "1:1", "spine": "1:2"}}, "topology.oversubscription.spine",
     "below 1:1"),
    ({"topology__max_servers": 0}, "topology.max_servers", "greater than or equal to 1"),
    (_chassis_too_big, "switch_models.spine.ports", f"less than or equal to {MAX_CHASSIS_PORTS}"),
    (_no_spine, "switch_models.spine", "there is no spine model"),
    (_bad_downlink, "switch_models.leaf.downlink.speed", "is not a port speed"),
    (_wrong_downlink_speed, "switch_models.leaf.downlink.speed", "GPU NICs at 400G"),
    (_spine_speed_mismatch, "switch_models.spine.port_speed", "leaf uplinks at 400G"),
    # oversubscription: malformed, zero, per tier, and a spine target without super-spines
    ({"topology__oversubscription": "2-1"}, "topology.oversubscription", "is not a down:up ratio"),
    ({"topology__oversubscription": "0:1"}, "topology.oversubscription", "has a zero side"),
    ({"topology__oversubscription": {"leaf": "x", "spine": "1:1"}}, "topology.oversubscription.leaf",
     "is not a down:up ratio"),
    ({"topology__oversubscription": {"leaf": "1:1", "spine": "7:1"}}, "topology.oversubscription.spine",
     "a 2-tier fabric does not have"),
    # knobs the chosen tiers never read are refused, not ignored
    ({"topology__super_spines_per_group": 2}, "topology.super_spines_per_group", "a 2-tier fabric does not have"),
    ({"topology__max_pods": 2}, "topology.max_pods", "a 2-tier fabric does not have"),
    ({"topology__tiers": 1}, "topology.spines", "a single-tier plane has no spines"),
    ({"topology__rail_optimized": False}, "topology.scalable_unit", "rail_optimized is false"),
    (_tor(rails_per_leaf=2), "topology.rails_per_leaf", "rail_optimized is false"),
    ({"topology__tiers": 4}, "topology.tiers", "Input should be 1, 2 or 3"),
    ({"topology__leaf_uplinks": 16}, "topology.leaf_uplinks", "leave no server port"),
    # super-spine layer
    (_three_tier(super_spines_per_group=3), "topology.super_spines_per_group", "cannot be spread evenly"),
    (_three_tier(max_pods=99), "topology.max_pods", "super-spines can hold 4 pods, not 99"),
    (_three_tier(super_port_speed="800G"), "switch_models.super_spine.port_speed", "spine uplinks at 400G"),
    # per-direction ports, breakouts and cages
    (_leaf(uplink={"speed": "400G", "breakout": 2}), "switch_models.leaf.uplink", "2 x 400G exceeds the 400G cage"),
    (_leaf(downlink={"speed": "100G", "breakout": 3}), "switch_models.leaf.downlink.breakout",
     "Input should be 1, 2, 4 or 8"),
    (_leaf(port_speed="800G", lanes_per_port=4, breakout=8), "switch_models.leaf.breakout",
     "does not divide the 4 lanes"),
    (_leaf(cage="sfp"), "switch_models.leaf.cage", "Input should be 'osfp'"),
    # IPv6 pools
    ({"addressing__loopbacks_v6": "198.18.0.0/24"}, "addressing.loopbacks_v6", "not a valid IPv6 network"),
    ({"addressing__p2p_v6": "2001:db8::1/64"}, "addressing.p2p_v6", "not a valid IPv6 network"),
])
def test_bad_knobs_exit_2_with_path_and_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str], mutate: Any,
                                            path: str, text: str) -> None:
    if callable(mutate):
        data = small_intent()
        mutate(data)
    else:
        data = small_intent(**mutate)
    f = write_intent(tmp_path, data)
    assert main(["plan", "-i", str(f)]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert re.search(rf"{re.escape(str(f))}:\d+: {re.escape(path)}: ", err), err  # file, line and field
    assert text in err, err
    assert "(fix:" in err and "Traceback" not in err, "every error says how to fix it"


@pytest.mark.parametrize("platform", ["frr", "sonic", "nxos", "eos"])
def test_single_tier_planes_render_a_valid_maximum_paths(platform: str, tmp_path: Path) -> None:
    """A tier-1 leaf has no uplinks: it rendered `maximum-paths 0`, which FRR's parser, NX-OS and EOS reject.
    It renders 1 on every platform and passes every check (FRR's parser too, where vtysh is installed)."""
    import shutil

    from fabricgen.check.run import run_checks
    from fabricgen.render.build import render_all

    data = small_intent(servers__count=16, topology__tiers=1, topology__planes=4, servers__nics_per_server=1,
                        servers__ports_per_nic=4, platforms={"leaf": platform})
    data["switch_models"] = {"leaf": {"ports": 32, "port_speed": "400G"}}
    data["topology"].pop("spines")
    data["topology"].pop("scalable_unit")
    data["qos"] = {"mtu": 9214}
    plan = plan_of(data)
    render_all(plan, tmp_path / "b")
    for sw in plan.switches.values():
        assert sw.bgp is not None and sw.bgp.maximum_paths == sw.bgp.equal_cost_paths == 1
        text = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "b" / "configs" / sw.hostname).iterdir())
        assert re.findall(r"maximum-paths (\d+)", text) and "maximum-paths 0" not in text
    skip = frozenset({"sonic-yang"}) | (frozenset({"frr-parse"}) if shutil.which("vtysh") is None else frozenset())
    assert run_checks(plan, tmp_path / "b" / "configs", tmp_path / "b" / "hosts", full=True, cache=False,
                      skip=skip) == []


def test_plan_names_spines_by_their_port_count() -> None:
    """A 3-tier spine of 64 ports uses 32 down and 32 up: `plan` called it a "32-port spine"."""
    from tests.plan.test_reference_designs import QM9700, intent

    plan = plan_of(intent("sp16", 512, QM9700, QM9700, QM9700, tiers=3))
    why = {c.name: c.why for c in plan.envelope.choices}
    assert "64-port spines (32 ports down)" in why["spines"]
    assert "32-port spines" not in why["spines"].replace("(32 ports down)", "")
    two_tier = plan_of(intent("h4", 128, QM9700, QM9700))
    assert "the fewest 64-port spines that give" in {c.name: c.why for c in two_tier.envelope.choices}["spines"]
