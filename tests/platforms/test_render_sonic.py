"""SONiC renderer: config_db.json carries the plan (ports, addresses, BGP, RoCEv2 QoS) and passes SONiC's YANG."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.base.templating import to_json
from fabricgen.intent.model import Intent, load_intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Plan, QosProfile, Switch
from fabricgen.platforms.sonic import render as sonic
from fabricgen.platforms.sonic.buffers import device_base
from fabricgen.platforms.sonic.configdb import OWNED_PORT_FIELDS, OWNERSHIP, merge_owned, port_of
from fabricgen.render.build import environment, render_switch
from tests.conftest import EXAMPLE, EXAMPLES, ROOT, small_intent, without_skus


@pytest.fixture(scope="module")
def validator(sonic_yang_models: Path) -> Any:
    from fabricgen.check.sonic_yang import SonicYangValidator

    return SonicYangValidator(sonic_yang_models)


@pytest.fixture(scope="module")
def example() -> Plan:
    return load_plan(EXAMPLE)


def sonic_switches(plan: Plan) -> list[Switch]:
    return [s for s in plan.switches.values() if s.platform == "sonic"]


def rendered_db(sw: Switch, plan: Plan) -> dict[str, Any]:
    text = render_switch(sw, plan, environment())["config_db.json"]
    db: dict[str, Any] = json.loads(text)
    return db


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


def on_device(sw: Switch, plan: Plan, db: dict[str, Any] | None = None) -> dict[str, Any]:
    """fabricgen's part merged into the device-owned part its SKU data gives, as the SONiC driver pushes it."""
    return merge_owned(device_base(plan, sw), db if db is not None else sonic.config_db(sw, plan))


# --------------------------------------------------------------------------- YANG


def test_every_example_config_db_passes_sonic_yang(example: Plan, validator: Any) -> None:
    switches = sonic_switches(example)
    assert len(switches) == len(example.by_role("leaf"))
    for sw in switches:
        db = rendered_db(sw, example)
        assert set(db) <= set(OWNERSHIP)  # only what fabricgen owns
        assert validator.validate(on_device(sw, example, db), sw.hostname, "config_db.json") == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_other_examples_pass_sonic_yang_on_every_role(path: Path, validator: Any) -> None:
    data = without_skus(yaml.safe_load(path.read_text(encoding="utf-8")))  # an NX-OS model names no SONiC ports
    data["platforms"] = {role: "sonic" for role in ("leaf", "spine", "super_spine")}
    data.get("ecmp", {}).pop("adaptive_routing", None)  # SONiC renders none: plan would refuse it
    plan = plan_of(data)
    for sw in plan.switches.values():
        assert validator.validate(on_device(sw, plan), sw.hostname, "config_db.json") == []


def test_breakout_ports_pass_sonic_yang(validator: Any) -> None:
    models = {"leaf": {"ports": 8, "port_speed": "800G", "breakout": 2},
              "spine": {"ports": 8, "port_speed": "800G", "breakout": 2}}
    plan = plan_of(small_intent(switch_models=models, platforms={"leaf": "sonic", "spine": "sonic"}))
    for sw in plan.switches.values():
        db = on_device(sw, plan)
        assert validator.validate(db, sw.hostname, "config_db.json") == []
        for itf in sw.interfaces:
            port = db["PORT"][itf.name]  # generic lanes/alias/index: the device side of a SKU-less role
            phys, sub = divmod(itf.index, 2)
            assert port["alias"] == f"etp{phys + 1}{'ab'[sub]}"
            assert port["subport"] == str(sub + 1)
            assert port["index"] == str(phys + 1)
            assert len(port["lanes"].split(",")) == 4
            assert port["speed"] == "400000"


@pytest.mark.slow
def test_validator_is_not_blind(example: Plan, validator: Any) -> None:
    sw = sonic_switches(example)[0]
    db = on_device(sw, example)
    db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] = "5000"  # above 1000 and above detection_time
    assert validator.validate(db, sw.hostname, "config_db.json")
    alone = sonic.config_db(sw, example)  # fabricgen's part alone names the SKU's profiles: not a whole ConfigDB
    assert any("ingress_lossy_profile" in f.message for f in validator.validate(alone, sw.hostname, "config_db.json"))


# --------------------------------------------------------------------------- layout


def test_rendered_text_is_the_sorted_dict_with_trailing_newline(example: Plan) -> None:
    sw = sonic_switches(example)[0]
    out = sonic.render(sw, example, environment())
    assert set(out) == {"config_db.json", "frr.conf"}
    text = out["config_db.json"]
    assert text == to_json(sonic.config_db(sw, example)) + "\n"
    assert text.endswith("}\n") and not text.endswith("\n\n")


@pytest.mark.parametrize("intent", [EXAMPLE, *EXAMPLES, ROOT / "inventory" / "lab" / "sonic.yaml"],
                         ids=lambda p: p.stem)
def test_class_tables_serialised_once_give_the_same_text(intent: Path) -> None:
    """config_db.json splices the tables of a switch's port classes, serialised once per class key, between
    its own: byte for byte `to_json` of the whole ConfigDB, for every SONiC switch of every shipped intent
    (tenants, traditional and dynamic buffers, generic ports), and the shared texts are few."""
    plan = load_plan(intent)
    switches = sonic_switches(plan)
    if not switches:
        pytest.skip(f"{intent.name} has no SONiC switch")
    for sw in switches:
        assert sonic.config_db_text(sw, plan) == to_json(sonic.config_db(sw, plan)), sw.hostname
    keys = {sonic._class_key(sw) for sw in switches}
    assert len(keys) < len(switches) or len(switches) <= 2
    again = load_plan(intent)  # a new plan of another intent must not reuse this one's texts
    assert sonic.config_db_text(sonic_switches(again)[0], again) == to_json(sonic.config_db(switches[0], plan))


def test_class_key_holds_each_ports_qos_profile() -> None:
    """Two leaves alike but for one port's QoS profile (another cable length) get their own class tables."""
    plan = load_plan(EXAMPLE)
    a, b = sonic_switches(plan)[:2]
    assert a.role == b.role and sonic._class_key(a)[1] == sonic._class_key(b)[1]
    other = next(name for name in plan.qos_profiles if name != b.interfaces[0].qos_profile)
    b.interfaces[0].qos_profile = other
    for sw in (a, b):
        assert sonic.config_db_text(sw, plan) == to_json(sonic.config_db(sw, plan)), sw.hostname


def test_class_texts_follow_the_plan(example: Plan) -> None:
    """The shared texts belong to one plan: a plan with other QoS renders its own tables, not the cached ones."""
    sw = sonic_switches(example)[0]
    first = sonic.config_db_text(sw, example)
    data = yaml.safe_load(EXAMPLE.read_text())
    data.setdefault("qos", {})["pfc_watchdog"] = {"enabled": False}
    other = plan_of(data)
    text = sonic.config_db_text(other.switches[sw.hostname], other)
    assert "PFC_WD" in first and "PFC_WD" not in text
    assert text == to_json(sonic.config_db(other.switches[sw.hostname], other))


def test_rerender_is_byte_identical(example: Plan) -> None:
    again = load_plan(EXAMPLE)
    for sw in sonic_switches(example):
        first = render_switch(sw, example, environment())
        assert first == render_switch(sw, example, environment())
        assert first == render_switch(again.switches[sw.hostname], again, environment())


# --------------------------------------------------------------------------- content


def test_device_metadata(example: Plan) -> None:
    for sw in sonic_switches(example):
        md = rendered_db(sw, example)["DEVICE_METADATA"]["localhost"]
        assert md == {
            "hostname": sw.hostname, "bgp_asn": str(sw.asn), "bgp_router_id": sw.loopback,
            "type": "BackEndLeafRouter", "docker_routing_config_mode": "split-unified",
            "frr_mgmt_framework_config": "true",
            "buffer_model": "dynamic", "default_pfcwd_status": "disable",  # the SN5600 SKU's model
        }


def test_ports_interfaces_and_neighbors(example: Plan) -> None:
    model = example.settings.models["leaf"]
    for sw in sonic_switches(example):
        db = rendered_db(sw, example)
        free = set(front_panel(example, sw).unused)
        assert set(db["PORT"]) == {i.name for i in sw.interfaces} | free and not free & {i.name for i in sw.interfaces}
        device = device_base(example, sw)["PORT"]
        lanes_seen: set[str] = set()
        for itf in sw.interfaces:
            port = db["PORT"][itf.name]
            assert set(port) == OWNED_PORT_FIELDS  # never lanes, alias or index: the SKU's
            lanes = device[itf.name]["lanes"].split(",")
            assert len(lanes) == model.lanes_per_port // model.breakout
            assert lanes[0] == itf.name.removeprefix("Ethernet")
            assert not lanes_seen & set(lanes)
            lanes_seen |= set(lanes)
            assert port["speed"] == str(itf.speed * 1000) == "400000"
            assert port["mtu"] == str(itf.mtu) == "9216"
            assert port["admin_status"] == "up" and port["fec"] == "rs"
            assert port["description"] == itf.description
            assert db["INTERFACE"][itf.name] == {} and db["INTERFACE"][f"{itf.name}|{itf.ipv4}"] == {}
            assert db["DEVICE_NEIGHBOR"][itf.name] == {"name": itf.peer_device, "port": itf.peer_interface}
        assert len(db["INTERFACE"]) == 2 * len(sw.interfaces)
        assert db["LOOPBACK_INTERFACE"] == {"Loopback0": {}, f"Loopback0|{sw.loopback}/32": {}}


def test_no_table_a_routing_daemon_would_act_on(example: Plan) -> None:
    # frr.conf is FRR's one writer: BGP lives there, not in BGP_NEIGHBOR (tests/platforms/test_sonic_bgp_container.py)
    for sw in sonic_switches(example):
        db = rendered_db(sw, example)
        assert "BGP_NEIGHBOR" not in db
        meta = db["DEVICE_METADATA"]["localhost"]
        assert (meta["docker_routing_config_mode"], meta["frr_mgmt_framework_config"]) == ("split-unified", "true")


def test_qos_maps_and_port_binding(example: Plan) -> None:
    q = example.qos
    assert q is not None
    db = rendered_db(sonic_switches(example)[0], example)
    dscp = db["DSCP_TO_TC_MAP"]["AI"]
    assert len(dscp) == 64 and dscp["26"] == "3" and dscp["48"] == "6" and dscp["0"] == "0"
    assert dscp == {str(k): str(v) for k, v in q.dscp_to_tc.items()}
    assert db["TC_TO_QUEUE_MAP"] == {"AI": {str(k): str(v) for k, v in q.tc_to_queue.items()}}
    assert db["TC_TO_PRIORITY_GROUP_MAP"] == {"AI": {str(k): str(v) for k, v in q.tc_to_pg.items()}}
    assert db["MAP_PFC_PRIORITY_TO_QUEUE"] == {"AI": {str(k): str(v) for k, v in q.pfc_priority_to_queue.items()}}
    pqm = db["PORT_QOS_MAP"]
    assert pqm.pop("global") == {"dscp_to_tc_map": "AI"}
    assert set(pqm) == {itf.name for itf in sonic_switches(example)[0].interfaces}  # free ports carry no QoS
    for entry in pqm.values():
        assert entry == {"dscp_to_tc_map": "AI", "tc_to_queue_map": "AI", "tc_to_pg_map": "AI",
                         "pfc_to_queue_map": "AI", "pfc_enable": "3", "pfcwd_sw_enable": "3",
                         "pfc_to_pg_map": "AI"}  # as the SN5600 SKU's QoS template (Spectrum) does
    assert db["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] == {"AI": {"3": "3"}}


def test_scheduling_and_ecn(example: Plan) -> None:
    sw = sonic_switches(example)[0]
    db = rendered_db(sw, example)
    assert db["SCHEDULER"] == {
        sonic.SCHED_CNP: {"type": "STRICT"},
        sonic.SCHED_CONTROL: {"type": "STRICT"},
        sonic.SCHED_ROCE: {"type": "DWRR", "weight": "50"},
        sonic.SCHED_DEFAULT: {"type": "DWRR", "weight": "50"},
    }
    used = {i.qos_profile for i in sw.interfaces}
    assert set(db["WRED_PROFILE"]) == {sonic.wred_name(example.qos_profiles[p]) for p in used}
    for itf in sw.interfaces:
        prof = example.qos_profiles[itf.qos_profile]
        roce = db["QUEUE"][f"{itf.name}|3"]
        assert roce["scheduler"] == sonic.SCHED_ROCE
        wred = db["WRED_PROFILE"][roce["wred_profile"]]
        assert len(roce["wred_profile"]) <= 32
        assert wred["ecn"] == "ecn_all"
        for color in ("green", "yellow", "red"):
            assert wred[f"{color}_min_threshold"] == str(prof.ecn_min)
            assert wred[f"{color}_max_threshold"] == str(prof.ecn_max)
            assert wred[f"{color}_drop_probability"] == str(prof.ecn_probability)
            assert wred[f"wred_{color}_enable"] == "true"
        # the SKU's own QoS template default (SN5600 O128: 1 / 2 MiB), not bounded by the PG xoff (§5.4)
        assert (wred["green_min_threshold"], wred["green_max_threshold"]) == ("1048576", "2097152")
        assert db["QUEUE"][f"{itf.name}|6"] == {"scheduler": sonic.SCHED_CNP}
        assert db["QUEUE"][f"{itf.name}|0"] == {"scheduler": sonic.SCHED_DEFAULT}
    assert len(db["QUEUE"]) == 4 * len(sw.interfaces)  # default, RoCE, CNP and the CPU's queue 7


def test_bandwidth_weights_follow_the_intent() -> None:
    plan = plan_of(small_intent(qos={"bandwidth": {"roce": 70, "default": 30}}))
    db = sonic.config_db(plan.by_role("leaf")[0], plan)
    assert db["SCHEDULER"][sonic.SCHED_ROCE]["weight"] == "70"
    assert db["SCHEDULER"][sonic.SCHED_DEFAULT]["weight"] == "30"


def test_buffers_dynamic_model_the_skus_way(example: Plan) -> None:
    for sw in sonic_switches(example):
        db = rendered_db(sw, example)
        assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
        assert "BUFFER_POOL" not in db and "BUFFER_PROFILE" not in db  # the SKU's own
        for itf in sw.interfaces:
            assert db["BUFFER_PG"][f"{itf.name}|3"] == {"profile": "NULL"}  # SONiC computes the headroom
            assert db["BUFFER_PG"][f"{itf.name}|0"] == {"profile": "ingress_lossy_profile"}
            assert db["BUFFER_QUEUE"][f"{itf.name}|3"] == {"profile": "egress_lossless_profile"}
            assert db["BUFFER_QUEUE"][f"{itf.name}|0-2"] == {"profile": "q_lossy_profile"}
            assert db["BUFFER_QUEUE"][f"{itf.name}|4-7"] == {"profile": "q_lossy_profile"}
            length = int(example.qos_profiles[itf.qos_profile].cable_m)
            assert db["CABLE_LENGTH"]["AZURE"][itf.name] == f"{length}m"
        assert len(db["BUFFER_PG"]) == len(db["CABLE_LENGTH"]["AZURE"]) * 2 == 2 * len(sw.interfaces)


def test_buffers_traditional_model_from_the_skus_lookup_table() -> None:
    data = small_intent(switch_models={"leaf": {"sku": "Dell-Z9864f-O64"}, "spine": {"sku": "Dell-Z9864f-O64"}},
                        platforms={"leaf": "sonic", "spine": "sonic"},
                        servers={"count": 4, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": "800G"},
                        cabling={"gpu_leaf_m": 5, "leaf_spine_m": 30})
    plan = plan_of(data)
    sw = plan.by_role("leaf")[0]
    db = sonic.config_db(sw, plan)
    assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
    # 800G 5 m is listed: exactly the profile buffermgrd would create (name, values, xon_offset, pool mode)
    # pg_profile_lookup.ini: 800000 5m 18796 0 729488 0 3556 (size xon xoff threshold xon_offset)
    assert db["BUFFER_PROFILE"]["pg_lossless_800000_5m_profile"] == {
        "pool": "ingress_lossless_pool", "xon": "0", "xon_offset": "3556", "xoff": "729488", "size": "18796",
        "dynamic_th": "0"}
    # 30 m is not listed: the next listed length up, 40 m (xoff 835406), as buffermgrd would look it up: the
    # port's CABLE_LENGTH says 40m and its PG takes the 40 m profile; nothing interpolated, nothing flagged
    # (before: linear between the 5 m and 40 m rows, 805144, less headroom than any listed row that covers 30 m)
    assert db["BUFFER_PROFILE"]["pg_lossless_800000_40m_profile"]["xoff"] == "835406"
    assert "pg_lossless_800000_30m_profile" not in db["BUFFER_PROFILE"]
    down = next(i for i in sw.interfaces if i.tier == "gpu_leaf")
    up = next(i for i in sw.interfaces if i.tier == "leaf_spine")
    assert up.cable_m == 30 and db["CABLE_LENGTH"]["AZURE"][up.name] == "40m"
    assert db["BUFFER_PG"][f"{down.name}|3"] == {"profile": "pg_lossless_800000_5m_profile"}
    assert db["BUFFER_PG"][f"{up.name}|3"] == {"profile": "pg_lossless_800000_40m_profile"}  # rounded up
    assert db["BUFFER_QUEUE"][f"{down.name}|0-2"] == {"profile": "egress_lossy_profile"}  # the Dell SKU's name
    assert not any("extrapolated" in w.message for w in plan.warnings)


def test_pfc_watchdog(example: Plan) -> None:
    sw = sonic_switches(example)[0]
    db = rendered_db(sw, example)
    wd = load_intent(EXAMPLE)[0].qos.pfc_watchdog
    assert db["PFC_WD"].pop("GLOBAL") == {"POLL_INTERVAL": str(wd.poll_ms)}
    assert set(db["PFC_WD"]) == {i.name for i in sw.interfaces}
    assert all(v == {"action": wd.action, "detection_time": str(wd.detection_ms),
                     "restoration_time": str(wd.restoration_ms)} for v in db["PFC_WD"].values())


def test_pfc_watchdog_off() -> None:
    plan = plan_of(small_intent(qos={"pfc_watchdog": {"enabled": False}}))
    db = sonic.config_db(plan.by_role("leaf")[0], plan)
    assert "PFC_WD" not in db
    assert db["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "disable"
    assert all("pfcwd_sw_enable" not in v for v in db["PORT_QOS_MAP"].values())


def test_hash_and_counters(example: Plan) -> None:
    db = rendered_db(sonic_switches(example)[0], example)
    assert db["SWITCH_HASH"] == {"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP", "L4_SRC_PORT", "L4_DST_PORT",
                                                          "IP_PROTOCOL"]}}
    for group in ("PFCWD", "QUEUE", "WRED_ECN_QUEUE", "WRED_ECN_PORT"):
        assert db["FLEX_COUNTER_TABLE"][group]["FLEX_COUNTER_STATUS"] == "enable"


def test_hash_fields_follow_the_intent() -> None:
    plan = plan_of(small_intent(ecmp={"hash_fields": ["dst-ip", "l4-src-port"]}))
    db = sonic.config_db(plan.by_role("leaf")[0], plan)
    assert db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] == ["DST_IP", "L4_SRC_PORT"]


def test_spine_and_super_spine_types() -> None:
    data = yaml.safe_load((ROOT / "inventory" / "examples" / "three-tier.yaml").read_text(encoding="utf-8"))
    data["platforms"] = {role: "sonic" for role in ("leaf", "spine", "super_spine")}
    data.get("ecmp", {}).pop("adaptive_routing", None)  # SONiC renders none: plan would refuse it
    plan = plan_of(data)
    types = {sw.role: sonic.config_db(sw, plan)["DEVICE_METADATA"]["localhost"]["type"]
             for sw in plan.switches.values()}
    assert types == {"leaf": "BackEndLeafRouter", "spine": "BackEndSpineRouter",
                     "super_spine": "UpperSpineRouter"}


def test_wred_name_stays_within_yang_length() -> None:
    p = QosProfile("x", 800, 3.0, 9216, 1, 1, 1, 123_456_789_012, 987_654_321_098, 100)
    name = sonic.wred_name(p)
    assert len(name) <= 32 and name.startswith("AI_ECN_")
    assert sonic.wred_name(p) == name


# --------------------------------------------------------------------------- speed


def test_render_time_per_switch(example: Plan) -> None:
    """A 32K-GPU fabric has ~2,500 switches; each must render in a few ms (see module docstring)."""
    env = environment()
    sw = sonic_switches(example)[0]
    sonic.render(sw, example, env)
    n = 30
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for _ in range(n):
            sonic.render(sw, example, env)
        best = min(best, (time.process_time() - start) / n)
    assert best < 0.02, f"{best * 1e3:.2f} ms per switch"


def test_free_ports_are_shut_described_unused_and_lose_the_factory_addresses(example: Plan,
                                                                            sonic_platform: Path) -> None:
    """SONiC's factory config (sonic-config-engine config_samples.py, the t1 preset) puts every port admin up
    at MTU 9100 with a 10.0.x.y/31; the 64 ports of the SN5600-O128 the plan leaves free stayed so.  Now they
    are shut, described unused and keep no address after the merge; the planned ports keep fabricgen's."""
    import sys

    paths = [str(sonic_platform / d) for d in ("stub", "src/sonic-config-engine", "src/sonic-py-common")]
    sys.path[:0] = paths  # as sonic-factory-config runs sonic-cfggen
    try:
        import config_samples  # SONiC's own generator of the factory presets
    finally:
        del sys.path[:len(paths)]
    sw = sonic_switches(example)[0]
    factory = device_base(example, sw)
    factory["DEVICE_METADATA"] = {"localhost": {"hostname": "sonic", "hwsku": "Mellanox-SN5600-O128"}}
    factory = config_samples.generate_t1_sample_config(factory)
    free = front_panel(example, sw).unused
    assert len(free) >= 64 and all(factory["PORT"][p]["admin_status"] == "up" for p in free)
    assert all(any(k.startswith(f"{p}|10.0.") for k in factory["INTERFACE"]) for p in free)
    merged = merge_owned(factory, rendered_db(sw, example), check_references=False)
    for p in free:
        assert merged["PORT"][p]["admin_status"] == "down"
        assert merged["PORT"][p]["description"] == "unused: not in the fabric plan"
        assert not [k for k in merged["INTERFACE"] if port_of(k) == p], p
    for itf in sw.interfaces:
        assert merged["PORT"][itf.name]["admin_status"] == "up"
        assert {k for k in merged["INTERFACE"] if port_of(k) == itf.name} == {itf.name, f"{itf.name}|{itf.ipv4}"}


def test_queue_7_the_cpus_queue_is_strict(example: Plan) -> None:
    """sonic-swss portsorch sends what the CPU generates (BGP, BFD) on DEFAULT_HOSTIF_TX_QUEUE 7: it gets a
    strict scheduler on every port, never a DWRR share or none."""
    for sw in sonic_switches(example):
        db = rendered_db(sw, example)
        assert db["SCHEDULER"]["AI_CONTROL_STRICT"] == {"type": "STRICT"}
        for itf in sw.interfaces:
            assert db["QUEUE"][f"{itf.name}|7"] == {"scheduler": "AI_CONTROL_STRICT"}
