"""Arista EOS from the same plan: routed /31s, eBGP, the lossless RoCE chain -- and the fabric-wide RoCE
rules catch a broken EOS config through its fact extractor."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from fabricgen.catalog.registry import platform
from fabricgen.check.roce import check_fabric
from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import render_all, render_switch
from tests.conftest import small_intent

EOS_ONLY = {"platforms": {"leaf": "eos", "spine": "eos"}, "qos": {"mtu": 9214}}


def plan_of(**overrides: object) -> Plan:
    return build_plan(Intent.model_validate(small_intent(**{**EOS_ONLY, **overrides})))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_of()


@pytest.fixture(scope="module")
def build(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eos") / "build"
    render_all(plan, out)
    return out


def text_of(plan: Plan, host: str) -> str:
    return render_switch(plan.switches[host], plan)["eos.cfg"]


def test_interfaces_bgp_and_addresses_follow_the_plan(plan: Plan) -> None:
    for sw in plan.switches.values():
        text = text_of(plan, sw.hostname)
        assert f"hostname {sw.hostname}\n" in text
        for itf in sw.interfaces:
            block = re.search(rf"^interface {re.escape(itf.name)}\n((?:   .*\n)+)", text, re.M)
            assert block, itf.name
            assert f"   mtu {itf.mtu}\n   no switchport\n   ip address {itf.ipv4}\n" in block.group(1)
        assert sw.bgp is not None
        assert f"router bgp {sw.asn}\n   router-id {sw.loopback}\n" in text
        assert f"   maximum-paths {sw.bgp.maximum_paths} ecmp {sw.bgp.maximum_paths}\n" in text
        for n in sw.bgp.neighbors:
            assert f"   neighbor {n.ip} remote-as {n.remote_asn}\n" in text
            assert (f"   neighbor {n.ip} bfd\n" in text) == n.bfd
        assert "router bfd\n   interval 300 min-rx 300 multiplier 3 default\n" in text


def test_lossless_chain_in_eos_terms(plan: Plan) -> None:
    q = plan.qos
    assert q is not None
    text = text_of(plan, "t-leaf01")
    mapped = {int(d): int(tc) for line in re.findall(r"^qos map dscp ([\d ]+ to traffic-class \d)$", text, re.M)
              for tc in [line.rsplit(" ", 1)[1]] for d in line.split(" to ")[0].split()}
    assert mapped == q.dscp_to_tc  # all 64 DSCPs, nothing left to EOS's default map
    for name in {itf.qos_profile for itf in plan.switches["t-leaf01"].interfaces}:
        prof = plan.qos_profiles[name]
        block = text.split(f"qos profile ROCE_{prof.speed}G_{prof.cable_m:g}M\n", 1)[1].split("\n!\n", 1)[0]
        assert "   qos trust dscp\n" in block
        assert f"   priority-flow-control on\n   priority-flow-control priority {q.roce_tc} no-drop\n" in block
        assert "   priority-flow-control pause watchdog" in block
        assert f"   uc-tx-queue {q.cnp_tc}\n      priority strict" in block
    assert ("port-channel load-balance trident fields ip source-ip destination-ip source-port destination-port\n"
            in text)


def test_ecn_is_arista_style_weight_0_probability_20_and_counted(plan: Plan) -> None:
    """Arista's DCQCN samples: `... max-mark-probability 20 weight 0` and `random-detect ecn count` (without
    it validate --health sees no ECN marks on EOS); not SONiC's 5 % without a weight."""
    q = plan.qos
    assert q is not None
    text = text_of(plan, "t-leaf01")
    for name in {itf.qos_profile for itf in plan.switches["t-leaf01"].interfaces}:
        prof = plan.qos_profiles[name]
        assert prof.ecn_probability == 20
        assert (f"   uc-tx-queue {q.roce_tc}\n      no priority\n      bandwidth percent 50\n"
                f"      random-detect ecn minimum-threshold {prof.ecn_min // 1024} kbytes maximum-threshold "
                f"{prof.ecn_max // 1024} kbytes max-mark-probability 20 weight 0\n"
                "      random-detect ecn count\n") in text


def test_routing_model_is_multi_agent(plan: Plan) -> None:
    for sw in plan.switches.values():
        assert "\nservice routing protocols model multi-agent\n" in text_of(plan, sw.hostname)


def test_watchdog_polls_at_most_every_half_timeout(plan: Plan) -> None:
    """The intent polls every 200 ms with a 200 ms timeout; EOS wants polling <= timeout / 2 and would
    substitute its own value, so the render polls every 100 ms."""
    q = plan.qos
    assert q is not None and q.watchdog_poll_ms == q.watchdog_detection_ms == 200
    text = text_of(plan, "t-leaf01")
    assert "priority-flow-control pause watchdog default timeout 0.2\n" in text
    assert "priority-flow-control pause watchdog default polling-interval 0.1\n" in text
    assert "priority-flow-control pause watchdog default recovery-time 0.2\n" in text
    assert "priority-flow-control pause watchdog action drop\n" in text


SPLIT_800G = {"switch_models": {"leaf": {"model": "DCS-7060X6-64PE", "ports": 16, "port_speed": "800G",
                                         "breakout": 2},
                                "spine": {"model": "DCS-7060X6-64PE", "ports": 16, "port_speed": "800G",
                                          "breakout": 2}}}


def test_split_800g_cages_get_lane_speeds() -> None:
    """2x400G on an 8-lane 800G cage: `speed 400g-4` on /1 and /5, or the GPU ports and uplinks never link."""
    p = plan_of(**SPLIT_800G)
    for sw in p.switches.values():
        text = text_of(p, sw.hostname)
        assert sw.interfaces and {itf.breakout for itf in sw.interfaces} == {2}
        for itf in sw.interfaces:
            assert itf.name.endswith(("/1", "/5")), itf.name
            block = re.search(rf"^interface {re.escape(itf.name)}\n((?:   .*\n)+)", text, re.M)
            assert block and "   speed 400g-4\n" in block.group(1), itf.name


@pytest.mark.parametrize(("model", "keyword"), [("DCS-7060X6-64PE", "uc-tx-queue"), ("7388X5", "uc-tx-queue"),
                                                ("DCS-7050CX3-32S", "uc-tx-queue"), ("DCS-7280R3-32D4", "tx-queue"),
                                                ("7800R3-36P", "tx-queue")])
def test_queue_keyword_follows_the_chip_family(model: str, keyword: str) -> None:
    """Strata (7050X / 7060X / 7388X) takes `uc-tx-queue`, Sand (7280R / 7800R) `tx-queue`: the other
    keyword aborts the config session."""
    p = plan_of(switch_models={"leaf": {"model": model, "ports": 16, "port_speed": "400G"},
                               "spine": {"model": model, "ports": 16, "port_speed": "400G"}})
    text = text_of(p, "t-leaf01")
    queues = set(re.findall(r"^   ((?:uc-)?tx-queue) \d$", text, re.M))
    assert queues == {keyword}


def test_watchdog_action_eos_lacks_is_refused_by_capability() -> None:
    """EOS has drop, errdisable and notify-only (aristanetworks/avd#6399): `forward` is refused, naming the
    capability; `alert` is EOS's notify-only."""
    with pytest.raises(FabricError) as exc:
        plan_of(qos={"mtu": 9214, "pfc_watchdog": {"action": "forward"}})
    (p,) = exc.value.problems
    assert p.path == "qos.pfc_watchdog.action"
    assert "lacks the capability `pfc-watchdog action forward`" in p.message
    alert = plan_of(qos={"mtu": 9214, "pfc_watchdog": {"action": "alert"}})
    assert "priority-flow-control pause watchdog action notify-only\n" in text_of(alert, "t-leaf01")


def test_every_eos_config_passes_arista_schema(plan: Plan) -> None:
    """An all-EOS fabric and an EOS-leaf fabric: each switch's structured config passes pyavd's
    eos_cli_config_gen validation, and eos.cfg is what Arista's templates print from it."""
    from pyavd import get_device_config, validate_structured_config

    from fabricgen.platforms.eos.render import structured_config

    leaves_only = build_plan(Intent.model_validate(small_intent(platforms={"leaf": "eos", "spine": "nxos"},
                                                                qos={"mtu": 9214})))
    split = plan_of(**SPLIT_800G)
    for p in (plan, leaves_only, split):
        eos = [sw for sw in p.switches.values() if sw.platform == "eos"]
        assert eos
        for sw in eos:
            result = validate_structured_config(structured_config(sw, p))
            assert list(result.validation_result.violations) == []
            assert result.validated_data is not None
            assert get_device_config(result.validated_data) == text_of(p, sw.hostname)


def test_free_front_panel_ports_are_shut_and_described(plan: Plan) -> None:
    from fabricgen.plan.frontpanel import front_panel

    for sw in plan.switches.values():
        text = text_of(plan, sw.hostname)
        free = front_panel(plan, sw).unused
        assert free  # the small fabric leaves ports free on every switch
        shut = re.findall(r"^interface (\S+)\n   description unused: not in the fabric plan\n   shutdown\n", text, re.M)
        assert shut == list(free)
        for itf in sw.interfaces:  # no planned port is shut
            block = re.search(rf"^interface {re.escape(itf.name)}\n((?:   .*\n)+)", text, re.M)
            assert block and "   shutdown\n" not in block.group(1)


def test_same_tier_asns_need_allowas_in_on_leaves_only(tmp_path: Path) -> None:
    """Leaves share an AS: they accept their own AS (allowas-in); EOS spines send the leaves' routes to
    the other leaves without a command (no sender-side AS-path check, see platforms/eos.py)."""
    p = plan_of(bgp={"asn_scheme": "same-tier", "allowas_in": 2})
    leaf_asns = {sw.asn for sw in p.switches.values() if sw.role == "leaf"}
    assert len(leaf_asns) == 1
    for sw in p.switches.values():
        text = text_of(p, sw.hostname)
        assert sw.bgp is not None
        for n in sw.bgp.neighbors:
            assert (f"   neighbor {n.ip} allowas-in 2\n" in text) == (sw.role == "leaf")
            assert n.disable_peer_as_check == (sw.role == "spine")  # what the plan asks of the spines
        assert "as-path" not in text.replace("bgp bestpath as-path multipath-relax", "")
    render_all(p, tmp_path / "b")
    assert check_fabric(p, tmp_path / "b" / "configs") == []


def test_watchdog_seconds_round_up_to_eos_steps() -> None:
    p = plan_of(qos={"mtu": 9214, "pfc_watchdog": {"detection_ms": 305, "restoration_ms": 1000, "poll_ms": 150}})
    text = text_of(p, "t-leaf01")
    assert "default timeout 0.31\n" in text and "default recovery-time 1\n" in text
    assert "default polling-interval 0.15\n" in text and "watchdog action drop\n" in text


def test_eos_limits_are_plan_errors() -> None:
    with pytest.raises(FabricError) as exc:
        build_plan(Intent.model_validate(small_intent(platforms={"leaf": "eos", "spine": "nxos"})))
    (p,) = exc.value.problems
    assert p.path == "qos.mtu" and "eos (leaves) takes interface MTUs up to 9214" in p.message
    with pytest.raises(FabricError, match="CNP class 2 is below the lossless class 3"):
        plan_of(qos={"mtu": 9214, "cnp_tc": 2})


def test_rendered_eos_passes_every_check(plan: Plan, build: Path) -> None:
    from fabricgen.check.run import run_checks

    assert run_checks(plan, build / "configs", full=True) == []
    assert sorted(p.name for p in (build / "configs" / "t-spine01").iterdir()) == list(platform("eos").files)


def test_mixed_fabric_sonic_leaves_eos_spines(tmp_path: Path) -> None:
    p = build_plan(Intent.model_validate(small_intent(platforms={"leaf": "sonic", "spine": "eos"},
                                                      qos={"mtu": 9214})))
    render_all(p, tmp_path / "b")
    assert check_fabric(p, tmp_path / "b" / "configs") == []


BREAKS = [
    # (what is broken, edit of t-leaf01's eos.cfg, the rule that must fire)
    ("no ECN on the RoCE queue", lambda t: re.sub(r"      random-detect ecn .*\n", "", t), "roce-lossless-chain"),
    ("CNP queue round-robin", lambda t: t.replace("      priority strict\n", "      no priority\n"), "roce-cnp"),
    ("PFC on the CNP priority", lambda t: t.replace("   priority-flow-control priority 3 no-drop\n",
                                                    "   priority-flow-control priority 3 no-drop\n"
                                                    "   priority-flow-control priority 6 no-drop\n"), "roce-cnp"),
    ("RoCE DSCP unmapped", lambda t: t.replace("qos map dscp 26 to traffic-class 3\n", ""), "roce-lossless-chain"),
    ("shares off 100", lambda t: t.replace("bandwidth percent 50\n      random", "bandwidth percent 70\n      random"),
     "roce-bandwidth"),
    # a warning, not an error: ECN is never compared with the PG xoff (vendor reference §5.4)
    ("ECN outside the vendors' range",
     lambda t: re.sub(r"maximum-threshold \d+ kbytes", "maximum-threshold 99999 kbytes", t), "roce-ecn-range"),
    ("one end's MTU", lambda t: re.sub(r"(interface Ethernet9/1\n.*\n)   mtu 9214", r"\1   mtu 9000", t),
     "roce-mtu-both-ends"),
    ("wrong remote-as", lambda t: t.replace("remote-as 4200100000", "remote-as 65000", 1), "roce-p2p-pair"),
    ("few paths", lambda t: re.sub(r"maximum-paths \d+ ecmp \d+", "maximum-paths 1 ecmp 1", t),
     "roce-maximum-paths"),
    ("no watchdog", lambda t: t.replace("   priority-flow-control pause watchdog\n", ""), "roce-pfc-both-ends"),
    ("maximum-paths 0", lambda t: re.sub(r"maximum-paths \d+ ecmp \d+", "maximum-paths 0 ecmp 0", t),
     "roce-maximum-paths"),
]


def broken_copy(build: Path, tmp_path: Path, what: str, edit: object) -> tuple[Path, Path]:
    """A copy of the build's configs with t-leaf01's eos.cfg edited: (configs dir, the edited file)."""
    configs = tmp_path / "configs"
    shutil.copytree(build / "configs", configs)
    path = configs / "t-leaf01" / "eos.cfg"
    before = path.read_text(encoding="utf-8")
    after = edit(before)  # type: ignore[operator]
    assert after != before, what
    path.write_text(after, encoding="utf-8")
    return configs, path


@pytest.mark.parametrize(("what", "edit", "rule"), BREAKS, ids=[b[0] for b in BREAKS])
def test_roce_rules_catch_a_broken_eos_config(plan: Plan, build: Path, tmp_path: Path, what: str, edit: object,
                                              rule: str) -> None:
    configs, path = broken_copy(build, tmp_path, what, edit)
    found = check_fabric(plan, configs)
    assert {f.rule for f in found} == {rule}, [str(f) for f in found]
    assert all(f.device == "t-leaf01" and f.file == str(path) for f in found)
    assert all(re.fullmatch(r"L\d+", f.location) for f in found)


def test_inventory_and_containerlab_read_the_record(plan: Plan) -> None:
    from fabricgen.lab.from_plan import containerlab
    from fabricgen.render.inventory import hosts

    assert {h["platform"] for h in hosts(plan).values()} == {"eos_fabricgen"}
    clab = containerlab(plan, Path("/cfg"))
    assert "kind: arista_ceos" in clab and "startup-config: /cfg/t-leaf01/eos.cfg" in clab


EOS_BREAKS = [
    # (what is broken, edit of t-leaf01's eos.cfg, the eos-* rule that must fire besides eos-avd)
    ("ribd model", lambda t: t.replace("service routing protocols model multi-agent", "service routing protocols "
                                       "model ribd"), "eos-routing-model"),
    ("Sand queue keyword on Strata", lambda t: t.replace("   uc-tx-queue 3\n", "   tx-queue 3\n"), "eos-queue-keyword"),
    ("ECN without weight 0", lambda t: t.replace(" weight 0\n", "\n"), "eos-ecn"),
    ("ECN not counted", lambda t: t.replace("      random-detect ecn count\n", ""), "eos-ecn"),
    ("polling = timeout", lambda t: t.replace("default polling-interval 0.1", "default polling-interval 0.2"),
     "eos-watchdog"),
    ("watchdog action no-drop", lambda t: t.replace("watchdog action drop", "watchdog action no-drop"),
     "eos-watchdog"),
    ("free port up", lambda t: re.sub(r"(interface Ethernet5/1\n   description unused: not in the fabric plan\n)"
                                      r"   shutdown\n", r"\1", t), "eos-unused-port"),
]


@pytest.mark.parametrize(("what", "edit", "rule"), EOS_BREAKS, ids=[b[0] for b in EOS_BREAKS])
def test_eos_structural_rules_catch_a_broken_config(plan: Plan, build: Path, tmp_path: Path, what: str,
                                                   edit: object, rule: str) -> None:
    """EOS has structural checks of its own: Arista's pyavd (eos-avd: the file is not what Arista's templates
    print from the schema-valid structured config) and a line rule that names what the edit breaks."""
    from fabricgen.check.run import run_checks

    configs, path = broken_copy(build, tmp_path, what, edit)
    found = [f for f in run_checks(plan, configs, build / "hosts", full=True, cache=False)
             if f.rule.startswith("eos-")]
    assert {f.rule for f in found} == {"eos-avd", rule}, [str(f) for f in found]
    assert all(f.device == "t-leaf01" and re.fullmatch(r"L\d+", f.location) for f in found)


def test_split_cage_without_lane_speed_is_found(tmp_path: Path) -> None:
    from fabricgen.check.run import run_checks

    p = plan_of(**SPLIT_800G)
    render_all(p, tmp_path / "b")
    path = tmp_path / "b" / "configs" / "t-leaf01" / "eos.cfg"
    path.write_text(path.read_text(encoding="utf-8").replace("   speed 400g-4\n", ""), encoding="utf-8")
    found = run_checks(p, tmp_path / "b" / "configs", tmp_path / "b" / "hosts", full=True, cache=False)
    lanes = [f for f in found if f.rule == "eos-lane-speed"]
    assert lanes and all("needs `speed 400g-4`" in f.message for f in lanes)
    assert {f.rule for f in found} == {"eos-avd", "eos-lane-speed"}


def test_eos_record_names_its_structural_checks() -> None:
    rec = platform("eos")
    assert rec.analyzer and set(rec.rule_ids()) >= {"eos-avd", "eos-routing-model", "eos-queue-keyword",
                                                    "eos-lane-speed", "eos-watchdog", "eos-ecn"}


@pytest.mark.parametrize(("model", "line"), [("DCS-7060X6-64PE", "trident udf eth-type IPv4 header outer l4 offset 13"),
                                             ("DCS-7280R3-32D4", "load-balance sand profile default")])
def test_qp_hashing_configs_pass_every_check(model: str, line: str, tmp_path: Path) -> None:
    """The QP hashing lines (Tomahawk UDF, Jericho Sand profile) pass Arista's schema and every EOS and RoCE rule."""
    from fabricgen.check.run import run_checks

    p = plan_of(ecmp={"qp_hashing": True}, switch_models={"leaf": {"model": model, "ports": 16, "port_speed": "400G"},
                                                          "spine": {"model": model, "ports": 16, "port_speed": "400G"}})
    render_all(p, tmp_path / "build")
    assert run_checks(p, tmp_path / "build" / "configs", full=True) == []
    assert line in (tmp_path / "build" / "configs" / "t-leaf01" / "eos.cfg").read_text()
