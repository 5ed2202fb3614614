"""QoS: SONiC headroom maths, ECN table, fabric policy, profiles and invariants (NIC script: test_host_script)."""

from __future__ import annotations

import copy
from typing import Any, Literal

import pytest

from fabricgen.errors import FabricError
from fabricgen.intent.model import EcnThreshold, Headroom, Intent
from fabricgen.plan.build import fabric_settings
from fabricgen.plan.model import Interface, Plan, Switch, Tier
from fabricgen.plan.qos import (
    PAUSE_QUANTA,
    assign_profiles,
    build_policy,
    build_profiles,
    check_invariants,
    ecn_setting,
    ecn_warnings,
    headroom,
    make_profile,
    pfc_mask,
    profile_name,
    roce_tos,
)

BASE: dict[str, Any] = {
    "fabric": {"name": "lab"},
    "servers": {"count": 4},
    "switch_models": {
        "leaf": {"ports": 64, "port_speed": "400G"},
        "spine": {"ports": 64, "port_speed": "400G"},
    },
    "addressing": {
        "loopbacks": "198.18.0.0/24",
        "p2p": "198.18.16.0/20",
        "gpu": "198.19.0.0/20",
        "management": "198.18.1.0/24",
    },
}
SPEEDS = (100, 200, 400, 800)
HR = Headroom()  # Spectrum-4 defaults


def make_intent(**sections: Any) -> Intent:
    """BASE with whole top-level sections replaced or added (qos=..., cabling=...)."""
    data = copy.deepcopy(BASE)
    data.update(sections)
    return Intent.model_validate(data)


def port(
    speed: int = 400,
    cable_m: float = 3.0,
    tier: Tier = "gpu_leaf",
    mtu: int = 9216,
    name: str = "Ethernet0",
    direction: Literal["down", "up"] = "down",
) -> Interface:
    return Interface(
        name=name,
        index=0,
        speed=speed,
        tier=tier,
        direction=direction,
        peer_device="peer",
        peer_interface="eth0",
        mtu=mtu,
        cable_m=cable_m,
    )


def plan_with(intent: Intent, ports: list[Interface]) -> Plan:
    sw = Switch(
        hostname="lab-leaf-01",
        role="leaf",
        platform="sonic",
        model="generic",
        plane=0,
        pod=0,
        index=0,
        slot=0,
        interfaces=ports,
    )
    return Plan(settings=fabric_settings(intent), switches={sw.hostname: sw})


def paths(problems: list[Any]) -> list[str]:
    return [p.path for p in problems]


# --------------------------------------------------------------------------- headroom


def test_reference_worked_example_400g_100m() -> None:
    # Reference §5.2 (400G, 100 m, MTU 9216, Spectrum-4): xon 19 456 = plain 19 KiB pipeline latency and
    # size = xon + xoff, i.e. the example did NOT apply the plugin's 8-lane adjustment.  That matches
    # Spectrum-4 hardware, where 400G runs on 4 x 100G SerDes lanes (buffermgrd treats 800G as its 8-lane
    # speed), so the example is reproduced as a 4-lane port.  fabricgen's default (no lanes given) treats
    # 400G as 8-lane, see test_eight_lane_adjustment.
    assert headroom(400, 100, 9216, HR, lanes=4) == (19_456, 236_544, 256_000)


@pytest.mark.parametrize(
    ("change", "cable", "xoff"),
    [
        ({"lossless_mtu": 9216}, 100, 244_736),
        ({"small_packet_percentage": 100}, 100, 353_280),
        ({}, 5, 142_336),
    ],
)
def test_reference_sensitivity(change: dict[str, int], cable: float, xoff: int) -> None:
    hr = HR.model_copy(update=change)
    assert headroom(400, cable, 9216, hr, lanes=4)[1] == xoff


def test_eight_lane_adjustment() -> None:
    # sonic-swss buffer_headroom_mellanox.lua: 8-lane ports get 2 x pipeline latency - 1 KiB as xon and one
    # port MTU on top of size (the plugin's speed_overhead); xoff does not depend on lanes.
    xon, xoff, size = headroom(400, 100, 9216, HR, lanes=8)
    assert (xon, xoff) == (2 * 19_456 - 1024, 236_544)
    assert size == xon + xoff + 9216 == 283_648
    assert headroom(400, 100, 9216, HR) == (xon, xoff, size)  # default: >= 400G is 8-lane
    assert headroom(800, 5, 9216, HR)[0] == 37_888
    for speed in (100, 200):
        xon, xoff, size = headroom(speed, 30, 9216, HR)
        assert xon == 19_456 and size == xon + xoff


def test_size_rounds_mtu_overhead_up_to_kib() -> None:
    xon, xoff, size = headroom(800, 3, 9100, HR)
    assert size == xon + xoff + 9216  # 9100 B rounded up to whole KiB


@pytest.mark.parametrize("speed", SPEEDS)
def test_xoff_grows_with_cable_length(speed: int) -> None:
    xoffs = [headroom(speed, m, 9216, HR)[1] for m in range(1, 301)]
    assert xoffs == sorted(xoffs)
    assert xoffs[-1] > xoffs[0]
    assert all(x % 1024 == 0 for x in xoffs)


@pytest.mark.parametrize("cable", [1, 3, 30, 150])
def test_xoff_grows_with_speed(cable: float) -> None:
    xoffs = [headroom(s, cable, 9216, HR)[1] for s in (25, 50, *SPEEDS)]
    assert xoffs == sorted(xoffs)


def test_headroom_table_at_tier_lengths() -> None:
    # the values quoted in the hand-over; any change to the formula shows up here
    expected = {
        (100, 3): (19_456, 72_704, 92_160),
        (100, 30): (19_456, 79_872, 99_328),
        (100, 150): (19_456, 108_544, 128_000),
        (200, 3): (19_456, 80_896, 100_352),
        (200, 30): (19_456, 94_208, 113_664),
        (200, 150): (19_456, 153_600, 173_056),
        (400, 3): (37_888, 140_288, 187_392),
        (400, 30): (37_888, 166_912, 214_016),
        (400, 150): (37_888, 285_696, 332_800),
        (800, 3): (37_888, 143_360, 190_464),
        (800, 30): (37_888, 196_608, 243_712),
        (800, 150): (37_888, 433_152, 480_256),
    }
    assert {k: headroom(*k, 9216, HR) for k in expected} == expected


def test_low_speeds_use_ieee_quanta() -> None:
    assert PAUSE_QUANTA[25] == 80 and PAUSE_QUANTA[50] == 147
    assert headroom(25, 3, 9216, HR)[1] < headroom(100, 3, 9216, HR)[1]


@pytest.mark.parametrize(
    ("speed", "cable", "mtu", "words"),
    [(1600, 3, 9216, "1600G"), (400, 0, 9216, "cable"), (400, 3, 0, "MTU")],
)
def test_headroom_rejects_unknown_inputs(speed: int, cable: float, mtu: int, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        headroom(speed, cable, mtu, HR)


# --------------------------------------------------------------------------- ECN table


SONIC_DEFAULT = (1_048_576, 2_097_152, 5)  # SONiC qos_config.j2 AZURE_LOSSLESS (vendor reference §0.1)
CISCO_DEFAULT = (950 * 1024, 3000 * 1024, 7)  # Cisco Nexus Dashboard AI/ML QoS
CUMULUS_DEFAULT = (150_000, 1_501_500, 100)  # NVIDIA Cumulus nv set qos roce


def ecn_intent(speed: int, values: tuple[int, int, int]) -> Intent:
    lo, hi, prob = values
    return make_intent(qos={"ecn": {speed: {"min_bytes": lo, "max_bytes": hi, "probability": prob}}})


def test_ecn_explicit_else_the_platforms_vendor_default() -> None:
    intent = make_intent()
    assert intent.qos.ecn == {}  # nothing is invented: each platform runs its vendor's default
    sonic = ecn_setting(intent, 400, "sonic")
    assert (sonic.min_bytes, sonic.max_bytes, sonic.probability, sonic.tag) == (*SONIC_DEFAULT, "")
    nxos = ecn_setting(intent, 400, "nxos")
    assert (nxos.min_bytes, nxos.max_bytes, nxos.probability, nxos.tag) == (*CISCO_DEFAULT, "nxos")
    assert (ecn_setting(intent, 25, "frr").min_bytes, ecn_setting(intent, 25, "frr").tag) == (SONIC_DEFAULT[0], "")
    explicit = ecn_setting(ecn_intent(400, CUMULUS_DEFAULT), 400, "nxos")
    assert (explicit.min_bytes, explicit.max_bytes, explicit.probability, explicit.tag) == (*CUMULUS_DEFAULT, "")
    assert ecn_setting(ecn_intent(400, CUMULUS_DEFAULT), 800, "nxos").max_bytes == CISCO_DEFAULT[1]


@pytest.mark.parametrize("values", [SONIC_DEFAULT, CISCO_DEFAULT, CUMULUS_DEFAULT])
@pytest.mark.parametrize("speed", [100, 400])
def test_vendor_defaults_are_accepted(values: tuple[int, int, int], speed: int) -> None:
    # Reference §5.4: each vendor's default is far above the PG xoff headroom, and that is right.
    intent = ecn_intent(speed, values)
    assert check_invariants(intent) == [] and ecn_warnings(intent) == []
    plan = plan_with(intent, [port(speed, m) for m in (1, 3, 30, 150)])
    assign_profiles(plan, intent)
    assert check_invariants(intent, plan) == []
    assert all(p.ecn_max > p.xoff for p in plan.qos_profiles.values())


def test_ecn_outside_the_vendor_range_is_a_warning_naming_it() -> None:
    intent = ecn_intent(400, (65_536, 131_072, 5))  # what fabricgen used to default to: 10-20x too low
    assert check_invariants(intent) == []  # not an error
    (w,) = ecn_warnings(intent)
    assert w.path == "qos.ecn.400" and w.hint
    assert "min 65536 B is outside 150000..1048576 B" in w.message
    assert "max 131072 B is outside 1501500..3072000 B" in w.message
    assert "Cisco" in w.message and "SONiC" in w.message and "Cumulus" in w.message
    # Cisco publishes its default for 100-400G only: at 800G the range is SONiC's and Cumulus's
    (w800,) = ecn_warnings(ecn_intent(800, CISCO_DEFAULT))
    assert "max 3072000 B is outside 1501500..2097152 B" in w800.message


# --------------------------------------------------------------------------- policy


def test_policy_maps() -> None:
    pol = build_policy(make_intent())
    assert sorted(pol.dscp_to_tc) == list(range(64))
    assert pol.dscp_to_tc[26] == 3 and pol.dscp_to_tc[48] == 6
    assert {tc for d, tc in pol.dscp_to_tc.items() if d not in (26, 48)} == {0}
    assert pol.tc_to_queue == {tc: tc for tc in range(8)} == pol.pfc_priority_to_queue
    assert pol.tc_to_pg == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 0, 7: 0}
    assert pol.lossless_tcs == (3,)
    assert pol.cnp_tc not in pol.lossless_tcs
    assert pol.bandwidth == {"roce": 50, "default": 50}
    assert (
        pol.watchdog_enabled,
        pol.watchdog_detection_ms,
        pol.watchdog_restoration_ms,
        pol.watchdog_poll_ms,
        pol.watchdog_action,
    ) == (True, 200, 200, 200, "drop")
    assert (pol.nic_trust, pol.nic_cnp_dscp, pol.nic_roce_tos, pol.nic_ecn) == ("dscp", 48, 106, True)
    assert pol.mtu == 9216


def test_policy_several_roce_dscps_and_lossless_tcs() -> None:
    pol = build_policy(
        make_intent(qos={"roce_dscp": [24, 26], "lossless_tcs": [3, 4], "nic": {"cnp_dscp": 46}})
    )
    assert pol.dscp_to_tc[24] == pol.dscp_to_tc[26] == 3
    assert pol.tc_to_pg[4] == 4 and pol.tc_to_pg[3] == 3
    assert pol.nic_roce_tos == 24 << 2 | 2  # first RoCE DSCP
    assert pol.nic_cnp_dscp == 46


def test_roce_tos() -> None:
    assert roce_tos(26) == 106
    assert roce_tos(24) == 98
    assert roce_tos(26, ecn=False) == 104
    assert build_policy(make_intent(qos={"nic": {"ecn_capable": False}})).nic_roce_tos == 104


def test_pfc_mask() -> None:
    assert pfc_mask((3,)) == "0,0,0,1,0,0,0,0"
    assert pfc_mask((4, 3)) == "0,0,0,1,1,0,0,0"


# --------------------------------------------------------------------------- profiles


def test_profile_naming() -> None:
    assert profile_name(400, 3, 9216, 9216) == "pg_lossless_400000_3m_profile"
    assert profile_name(100, 150, 9100, 9216) == "pg_lossless_100000_150m_mtu9100_profile"


def test_profiles_dedup_round_up_and_tier_default() -> None:
    intent = make_intent()
    ports = [
        port(400, 3.0),
        port(400, 2.2),
        port(400, 3.0),  # one 3 m profile
        port(400, 0.0),  # no measured length: gpu_leaf tier default, 3 m
        port(400, 0.4),  # rounded up to at least 1 m
        port(400, 29.5, "leaf_spine", direction="up"),
        port(800, 150, "spine_super_spine"),
        port(400, 3.0, mtu=9100),
    ]
    profiles = build_profiles(intent, ports)
    assert list(profiles) == [
        "pg_lossless_400000_1m_profile",
        "pg_lossless_400000_3m_mtu9100_profile",
        "pg_lossless_400000_3m_profile",
        "pg_lossless_400000_30m_profile",
        "pg_lossless_800000_150m_profile",
    ]
    p = profiles["pg_lossless_400000_3m_profile"]
    assert (p.speed, p.cable_m, p.mtu) == (400, 3.0, 9216)
    assert (p.xon, p.xoff, p.size) == headroom(400, 3, 9216, intent.qos.headroom)
    assert (p.ecn_min, p.ecn_max, p.ecn_probability) == SONIC_DEFAULT


def test_make_profile_unknown_speed() -> None:
    with pytest.raises(FabricError) as err:
        make_profile(make_intent(), 1600, 3, 9216)
    assert err.value.problems[0].path == "qos.headroom"


def test_assign_profiles_sets_every_port() -> None:
    intent = make_intent()
    ports = [
        port(400, 3, name="Ethernet0"),
        port(400, 30, "leaf_spine", name="Ethernet8", direction="up"),
        port(400, 2.5, name="Ethernet16"),
    ]
    plan = plan_with(intent, ports)
    assign_profiles(plan, intent)
    assert plan.qos is not None and plan.qos.roce_tc == 3
    assert set(plan.qos_profiles) == {"pg_lossless_400000_3m_profile", "pg_lossless_400000_30m_profile"}
    assert [i.qos_profile for i in ports] == [
        "pg_lossless_400000_3m_profile",
        "pg_lossless_400000_30m_profile",
        "pg_lossless_400000_3m_profile",
    ]
    assert all(i.qos_profile in plan.qos_profiles for i in ports)


# --------------------------------------------------------------------------- invariants


def test_default_intent_is_clean_two_and_three_tier() -> None:
    assert check_invariants(make_intent()) == []
    three = make_intent(
        topology={"tiers": 3},
        switch_models={**BASE["switch_models"], "super_spine": {"ports": 64, "port_speed": "800G"}},
    )
    assert check_invariants(three) == []


def test_rule_ecn_min_below_max() -> None:
    """One rule, one place: the intent model refuses it (qos.py does not check it again)."""
    with pytest.raises(ValueError, match="ECN min 100000 must be below max 90000"):
        EcnThreshold.model_validate({"min_bytes": 100_000, "max_bytes": 90_000, "probability": 5})


def test_profiles_per_platform_default_both_ends_of_a_link() -> None:
    intent = make_intent()
    leaf = port(400, 30, "leaf_spine", name="Ethernet0", direction="up")
    spine = port(400, 30, "leaf_spine", name="Ethernet1/1")
    plan = plan_with(intent, [leaf])
    plan.switches["lab-spine-01"] = Switch(hostname="lab-spine-01", role="spine", platform="nxos", model="generic",
                                           plane=0, pod=0, index=0, slot=0, interfaces=[spine])
    assign_profiles(plan, intent)
    assert leaf.qos_profile == "pg_lossless_400000_30m_profile"
    assert spine.qos_profile == "pg_lossless_400000_30m_nxos_profile"
    a, b = plan.qos_profiles[leaf.qos_profile], plan.qos_profiles[spine.qos_profile]
    assert (a.ecn_min, a.ecn_max) == SONIC_DEFAULT[:2] and (b.ecn_min, b.ecn_max) == CISCO_DEFAULT[:2]
    assert (a.xon, a.xoff, a.size) == (b.xon, b.xoff, b.size)


def test_rule_speed_without_pause_quanta() -> None:
    sm = {"leaf": {"ports": 64, "port_speed": "1600G"}, "spine": {"ports": 64, "port_speed": "1600G"}}
    assert paths(check_invariants(make_intent(switch_models=sm))) == ["qos.headroom"]


@pytest.mark.parametrize(
    ("qos", "path"),
    [
        ({"bandwidth": {"roce": 60, "default": 50}}, "qos.bandwidth"),
        ({"lossless_tcs": [3, 6]}, "qos.lossless_tcs"),  # CNP class lossless
        ({"roce_dscp": [26, 48]}, "qos.cnp_dscp"),  # RoCE and CNP DSCP overlap
        ({"lossless_tcs": [4]}, "qos.lossless_tcs"),  # RoCE class lossy
        ({"cnp_tc": 3}, "qos.cnp_tc"),  # CNP and RoCE share a class
        ({"lossless_tcs": [0, 3]}, "qos.lossless_tcs"),  # default class lossless
        ({"lossless_tcs": [3, 9]}, "qos.lossless_tcs"),  # no such class
        (
            {
                "mtu": 1500,
                "headroom": {"lossless_mtu": 4096},
                "ecn": {400: {"min_bytes": 20480, "max_bytes": 40960, "probability": 5}},
            },
            "qos.mtu",
        ),
        ({"pfc_watchdog": {"poll_ms": 500, "detection_ms": 300}}, "qos.pfc_watchdog.poll_ms"),
        ({"nic": {"cnp_dscp": 46}}, "qos.nic.cnp_dscp"),
        ({"nic": {"trust": "pcp"}}, "qos.nic.trust"),
    ],
)
def test_each_rule_breaks_alone(qos: dict[str, Any], path: str) -> None:
    problems = check_invariants(make_intent(qos=qos))
    assert paths(problems) == [path], problems
    assert problems[0].message and problems[0].hint


@pytest.mark.parametrize(
    ("field", "value"), [("detection_ms", 6000), ("restoration_ms", 70_000), ("poll_ms", 50)]
)
def test_rule_watchdog_ranges(field: str, value: int) -> None:
    """SONiC's timer ranges are the intent model's field bounds, checked there once (not again in qos.py)."""
    from fabricgen.intent.model import PfcWatchdog

    with pytest.raises(ValueError, match=field):
        PfcWatchdog.model_validate({field: value})


def test_rule_nic_cnp_dscp_roce_optimized_trap() -> None:
    problems = check_invariants(make_intent(qos={"nic": {"cnp_dscp": 4}}))
    assert paths(problems) == ["qos.nic.cnp_dscp"]
    assert "roceOptimized" in problems[0].hint and "CNP_DSCP_P1=48" in problems[0].hint


def test_rule_port_mtu_below_lossless_mtu_in_plan() -> None:
    intent = make_intent(qos={"ecn": {400: {"min_bytes": 20480, "max_bytes": 40960, "probability": 5}}})
    assert check_invariants(intent, plan_with(intent, [port(400, 3)])) == []
    assert paths(check_invariants(intent, plan_with(intent, [port(400, 3, mtu=1000)]))) == ["qos.mtu"]


def test_plan_warns_about_ecn_outside_the_vendor_range() -> None:
    from fabricgen.plan.build import build_plan, warning_lines

    plan = build_plan(ecn_intent(400, (65_536, 131_072, 5)), "fabric.yaml", {("qos", "ecn", 400): 12})
    (line,) = [w for w in warning_lines(plan) if "qos.ecn.400" in w]
    assert line.startswith("warning: fabric.yaml:12: qos.ecn.400:") and "150000..1048576 B" in line
    assert not [w for w in warning_lines(build_plan(make_intent())) if "qos.ecn" in w]
