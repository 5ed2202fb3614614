"""ECMP hash per platform: the seed, rotation and algorithm each platform renders (golden lines), and the named
warning or refusal where a platform lacks the capability (issue 24)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import environment, render_switch
from tests.conftest import small_intent

NXOS_LINE = "ip load-sharing address source-destination port source-destination"


def plan_of(**over: Any) -> Plan:
    return build_plan(Intent.model_validate(small_intent(**over)))


def text(plan: Plan, host: str, name: str) -> str:
    return render_switch(plan.switches[host], plan, environment())[name]


def lines(config: str, prefix: str) -> list[str]:
    return [ln for ln in config.splitlines() if ln.startswith(prefix)]


def warned(plan: Plan, capability: str) -> list[str]:
    return [f"{w.path}: {w.message}" for w in plan.warnings if f"`{capability}`" in w.message]


def test_nxos_renders_each_tiers_seed_and_rotation() -> None:
    plan = plan_of(platforms={"leaf": "nxos", "spine": "nxos"})
    assert lines(text(plan, "t-leaf01", "nxos.cfg"), "ip load-sharing") == [f"{NXOS_LINE} rotate 10 universal-id 10"]
    assert lines(text(plan, "t-spine01", "nxos.cfg"), "ip load-sharing") == [f"{NXOS_LINE} rotate 0 universal-id 25"]
    assert not warned(plan, "hash-seed")


def test_nxos_takes_the_intents_seeds() -> None:
    plan = plan_of(platforms={"leaf": "nxos", "spine": "nxos"},
                   ecmp={"seeds": {"leaf": {"seed": 7, "rotate": 3}, "spine": {"seed": 11}}})
    assert lines(text(plan, "t-leaf01", "nxos.cfg"), "ip load-sharing") == [f"{NXOS_LINE} rotate 3 universal-id 7"]
    assert lines(text(plan, "t-spine01", "nxos.cfg"), "ip load-sharing") == [f"{NXOS_LINE} rotate 0 universal-id 11"]


def test_nxos_third_tier_seed() -> None:
    plan = plan_of(platforms={"leaf": "nxos", "spine": "nxos", "super_spine": "nxos"},
                   switch_models={"leaf": {"ports": 16, "port_speed": "400G"},
                                  "spine": {"ports": 16, "port_speed": "400G"},
                                  "super_spine": {"ports": 16, "port_speed": "400G"}},
                   topology={"tiers": 3, "rail_optimized": True, "scalable_unit": 4, "spines": 4})
    sup = next(sw for sw in plan.switches.values() if sw.role == "super_spine")
    assert lines(text(plan, sup.hostname, "nxos.cfg"), "ip load-sharing") == [f"{NXOS_LINE} rotate 5 universal-id 50"]


def test_nxos_cannot_select_a_hash_algorithm() -> None:
    plan = plan_of(platforms={"leaf": "nxos", "spine": "nxos"}, ecmp={"algorithm": "crc16"})
    assert warned(plan, "hash-algorithm crc16")
    assert lines(text(plan, "t-spine01", "nxos.cfg"), "ip load-sharing") == [f"{NXOS_LINE} rotate 0 universal-id 25"]


def test_sonic_seed_comes_from_the_device_type() -> None:
    """orchagent's switch.json.j2: a *LeafRouter gets seed 10 and offset 10, a *SpineRouter 25 (also the
    UpperSpineRouter, whose type contains SpineRouter); ConfigDB has no seed to render."""
    plan = plan_of(platforms={"leaf": "sonic", "spine": "sonic"})
    assert (plan.hashing["leaf"].seed, plan.hashing["leaf"].rotate) == (10, 10)
    assert (plan.hashing["spine"].seed, plan.hashing["spine"].rotate) == (25, 0)
    assert "BackEndLeafRouter" in plan.hashing["leaf"].how
    db = json.loads(text(plan, "t-leaf01", "config_db.json"))
    assert db["SWITCH_HASH"] == {"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP", "L4_SRC_PORT", "L4_DST_PORT",
                                                         "IP_PROTOCOL"]}}
    assert db["DEVICE_METADATA"]["localhost"]["type"] == "BackEndLeafRouter"
    assert not warned(plan, "hash-seed")  # the defaults are SONiC's own values


def test_sonic_warns_when_asked_for_another_seed() -> None:
    plan = plan_of(platforms={"leaf": "sonic", "spine": "sonic"}, ecmp={"seeds": {"leaf": {"seed": 3}}})
    got = warned(plan, "hash-seed")
    assert len(got) == 1 and got[0].startswith("ecmp.seeds.leaf:") and "seed 10, offset 10" in got[0]
    assert plan.hashing["leaf"].seed == 10  # the analysis models what the switch does, not what was asked


@pytest.mark.parametrize(("algorithm", "keyword"), [("crc32", "CRC_32LO"), ("crc16", "CRC_CCITT"), ("xor", "XOR")])
def test_sonic_renders_the_algorithm_when_asked(algorithm: str, keyword: str) -> None:
    plan = plan_of(ecmp={"algorithm": algorithm})
    db = json.loads(text(plan, "t-leaf01", "config_db.json"))
    assert db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_algorithm"] == keyword
    assert warned(plan, f"hash-algorithm {algorithm}") == [  # the NX-OS spines cannot
        next(f"{w.path}: {w.message}" for w in plan.warnings if w.path == "ecmp.algorithm")]


def test_sonic_algorithm_is_valid_for_sonics_yang(sonic_yang_models: Any) -> None:
    """ecmp_hash_algorithm is a leaf of sonic-hash.yang's SWITCH_HASH|GLOBAL (stypes:hash-algorithm)."""
    from fabricgen.check.sonic_yang import SonicYangValidator
    from fabricgen.platforms.sonic.buffers import device_base
    from fabricgen.platforms.sonic.configdb import merge_owned

    plan = plan_of(ecmp={"algorithm": "crc16"})
    sw = plan.switches["t-leaf01"]
    db = merge_owned(device_base(plan, sw), json.loads(text(plan, sw.hostname, "config_db.json")))
    assert SonicYangValidator(sonic_yang_models).validate(db, sw.hostname, "config_db.json") == []


def test_eos_lacks_a_seed_and_says_so() -> None:
    plan = plan_of(platforms={"leaf": "eos", "spine": "eos"}, qos={"mtu": 9214})
    got = warned(plan, "hash-seed")
    assert [g.split(":")[0] for g in got] == ["ecmp.seeds.leaf", "ecmp.seeds.spine"]
    assert "polarization" in got[0]
    assert plan.hashing["leaf"].seed == plan.hashing["spine"].seed == 0  # modelled as one seed everywhere
    assert lines(text(plan, "t-leaf01", "eos.cfg"), "port-channel load-balance") == [
        "port-channel load-balance trident fields ip source-ip destination-ip source-port destination-port"]


def test_frr_switches_hash_with_their_own_keys() -> None:
    plan = plan_of(platforms={"leaf": "frr", "spine": "frr"})
    assert plan.hashing["leaf"].per_switch and plan.hashing["spine"].per_switch
    assert not warned(plan, "hash-seed")
    asked = plan_of(platforms={"leaf": "frr", "spine": "frr"}, ecmp={"seeds": {"spine": {"seed": 9}}})
    assert [g.split(":")[0] for g in warned(asked, "hash-seed")] == ["ecmp.seeds.spine"]


def test_qp_hashing_is_refused_by_name() -> None:
    with pytest.raises(FabricError) as exc:
        plan_of(ecmp={"qp_hashing": True})
    problems = [p for p in exc.value.problems if p.path == "ecmp.qp_hashing"]
    assert {p.message for p in problems} == {"platform sonic (leaves) lacks the capability `qp-hashing`",
                                             "platform nxos (spines) lacks the capability `qp-hashing`"}


def test_seed_out_of_range_names_the_field() -> None:
    with pytest.raises(Exception) as exc:
        Intent.model_validate(small_intent(ecmp={"seeds": {"leaf": {"seed": 10, "rotate": 64}}}))
    assert "rotate" in str(exc.value)


def eos_plan(model: str, **over: Any) -> Plan:
    return plan_of(platforms={"leaf": "eos", "spine": "eos"}, qos={"mtu": 9214},
                   switch_models={"leaf": {"model": model, "ports": 16, "port_speed": "400G"},
                                  "spine": {"model": model, "ports": 16, "port_speed": "400G"}}, **over)


def test_eos_tomahawk_hashes_on_the_roce_qp_through_udf() -> None:
    """Tomahawk: three UDF bytes 13-15 after the outer L4 header, the BTH destination QP (aristanetworks/avd#5386),
    through pyavd's port_channel.load_balance_trident_udf; nothing of it without ecmp.qp_hashing."""
    plan = eos_plan("DCS-7060X6-64PE", ecmp={"qp_hashing": True})
    assert plan.hashing["leaf"].qp_hashing and plan.hashing["spine"].qp_hashing
    for host in ("t-leaf01", "t-spine01"):
        assert lines(text(plan, host, "eos.cfg"), "port-channel load-balance trident udf") == [  # pyavd's "IPv4"
            f"port-channel load-balance trident udf eth-type IPv4 header outer l4 offset {n} mask 0xff"
            for n in (13, 14, 15)]
    off = eos_plan("DCS-7060X6-64PE")
    assert not lines(text(off, "t-leaf01", "eos.cfg"), "port-channel load-balance trident udf")


def test_eos_jericho_hashes_on_the_roce_qp_through_a_sand_profile() -> None:
    """Jericho: the default Sand load-balance profile adds UDP payload bytes 5-7 of port 4791 (aristanetworks/avd
    #4925, Arista TOI EOS-4.33.1F), through pyavd's load_balance.policies.sand_profiles."""
    config = text(eos_plan("DCS-7280R3-32D4", ecmp={"qp_hashing": True}), "t-leaf01", "eos.cfg")
    block = config[config.index("load-balance policies"):].split("\n!")[0].splitlines()
    assert [ln.strip() for ln in block] == ["load-balance policies", "load-balance sand profile default",
                                            "fields udp dst-port 4791", "payload bytes 5-7"]
    assert "trident udf" not in config


def test_eos_model_without_a_confirmed_way_is_refused_by_name() -> None:
    """Trident (7050X) has no confirmed QP hashing: refused, naming the model and the capability."""
    with pytest.raises(FabricError) as exc:
        eos_plan("DCS-7050CX3-32S", ecmp={"qp_hashing": True})
    (problem,) = [p for p in exc.value.problems if p.path == "ecmp.qp_hashing"]
    assert "EOS model DCS-7050CX3-32S" in problem.message and "Trident" in problem.message
    assert "`qp-hashing`" in problem.message
