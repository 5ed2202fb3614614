"""Change-impact labels (issue 12 §2): one test per label on each platform that can produce it.

Each case diffs a rendered config against a changed copy exactly as the platform's driver
normalises its two sides (FRR: FRR's stanza order; SONiC: sorted 4-space ConfigDB JSON; NX-OS:
fabricgen-owned sections through hier_config), then labels the hunks.  SONiC's ``refused-live``
comes from GCU's field rules fabricgen ships (checked against ../shared's sonic-utilities, the oracle).

Which labels a platform cannot produce, and why: ``frr`` (Linux + FRR) has no port, buffer or
hardware settings in frr.conf, so no ``port-flap``, ``buffer-recarve``, ``reload-required`` or
``refused-live``; NX-OS has no GCU, so no ``refused-live``; fabricgen's EOS sections hold no
daemon, reload-only or GCU setting, so EOS gives hitless, bgp-reset, port-flap and buffer-recarve.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricgen.deploy import impact as I
from fabricgen.platforms import change as C
from fabricgen.platforms.sonic import change as S
from napalm_frr.config import canonical_lines
from napalm_nxos_fabricgen.nxos import plan_change
from napalm_sonic.parsers import pretty_json
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
SN5600 = "Mellanox-SN5600-O128"


def frr_text(name: str = "ai256-leaf01") -> str:
    return (GOLDEN / name / "frr.conf").read_text()


def label_frr(platform: str, old: str, new: str) -> I.DeviceImpact:
    sides = [("candidate/frr.conf", canonical_lines(old), canonical_lines(new))]
    return I.device_impact("sw", platform, sides, "")


def label_db(old: dict[str, Any], new: dict[str, Any], hwsku: str = SN5600,
             branch: str | None = None) -> I.DeviceImpact:
    sides = [("candidate/config_db.json", pretty_json(old).splitlines(), pretty_json(new).splitlines())]
    return I.device_impact("sw", "sonic", sides, "", hwsku=hwsku, branch=branch)


def label_nxos(old: str, new: str) -> I.DeviceImpact:
    change = plan_change(old, new)
    return I.device_impact("sw", "nxos", [("candidate", change.running, change.rendered)], change.diff)


def only(impact: I.DeviceImpact) -> C.Impact:
    assert len(impact.hunks) == 1, [h.header for h in impact.hunks]
    return impact.hunks[0].impact


# --------------------------------------------------------------------------- FRR (platforms frr and sonic)


@pytest.mark.parametrize("platform", ["frr", "sonic"])
@pytest.mark.parametrize(("label", "edit"), [
    (C.HITLESS, lambda t: t.replace("description ai256-spine01:", "description moved:", 1)),
    (C.HITLESS, lambda t: t.replace("seq 10 permit", "seq 10 deny", 1)),  # policy: route refresh
    (C.HITLESS, lambda t: t.replace("maximum-paths 32", "maximum-paths 16")),
    (C.BGP_RESET, lambda t: t.replace(" multipath-relax\n", " multipath-relax\n timers bgp 1 3\n")),
    (C.BGP_RESET, lambda t: t.replace(" bgp router-id 198.18.0.9", " bgp router-id 198.18.0.99")),
    (C.DAEMON_RESTART, lambda t: t.replace("frr defaults datacenter", "frr defaults traditional")),
])
def test_frr_labels(platform: str, label: str, edit: Callable[[str], str]) -> None:
    old = frr_text()
    new = edit(old)
    assert new != old, "the edit must change the config"
    got = only(label_frr(platform, old, new))
    assert got.label == label, got


def test_frr_a_new_session_is_hitless_a_removed_one_resets() -> None:
    old = frr_text()
    lines = old.splitlines()
    first = next(ln for ln in lines if ln.startswith(" neighbor ") and "remote-as" in ln)
    ip = first.split()[1]
    without = "\n".join(ln for ln in lines if f"neighbor {ip} " not in ln) + "\n"
    assert label_frr("frr", without, old).worst == C.Impact(C.HITLESS, "a new session (a changed peer AS shows "
                                                                       "its removal too)")
    removed = label_frr("frr", old, without)
    assert removed.worst is not None and removed.worst.label == C.BGP_RESET


def test_frr_every_line_knows_its_stanza_even_far_below_the_header() -> None:
    old = frr_text()
    new = old.replace("maximum-paths 32", "maximum-paths 16")
    hunk = label_frr("frr", old, new).hunks[0]
    assert [c.path for c in hunk.changes] == [("router bgp 4200000000", "address-family ipv4 unicast")] * 2


# --------------------------------------------------------------------------- SONiC ConfigDB


@pytest.fixture(scope="module")
def db() -> dict[str, Any]:
    """The example leaf's ConfigDB plus the buffer pool and profile the SN5600 SKU itself creates
    (fabricgen leaves those to the SKU; a device diff still shows them when they change)."""
    data: dict[str, Any] = json.loads((GOLDEN / "ai256-leaf01" / "config_db.json").read_text())
    data.setdefault("BUFFER_POOL", {"ingress_lossless_pool": {"mode": "dynamic", "type": "ingress"}})
    data.setdefault("BUFFER_PROFILE", {"ingress_lossless_profile": {"dynamic_th": "7", "pool": "ingress_lossless_pool",
                                                                    "size": "0"}})
    data["BUFFER_POOL"]["ingress_lossless_pool"]["size"] = "60817392"
    return data


def edited(db: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``db`` with TABLE/key/field set to value (None removes the field; key ``*``: the table's first entry)."""
    new = copy.deepcopy(db)
    table, key, fld = path.split("/")
    key = next(iter(new[table])) if key == "*" else key
    if value is None:
        del new[table][key][fld]
    else:
        new[table][key][fld] = value
    return new


@pytest.mark.parametrize(("label", "path", "value"), [
    (C.HITLESS, "PORT/Ethernet0/description", "moved"),
    (C.HITLESS, "WRED_PROFILE/*/green_max_threshold", "262144"),
    (C.PORT_FLAP, "PORT/Ethernet0/mtu", "9100"),
    (C.PORT_FLAP, "PORT/Ethernet0/fec", "none"),
    (C.BUFFER_RECARVE, "PORT_QOS_MAP/Ethernet0/pfc_enable", "3,4"),
    (C.BUFFER_RECARVE, "BUFFER_PG/Ethernet0|3/profile", "ingress_lossy_profile"),
    (C.DAEMON_RESTART, "DEVICE_METADATA/localhost/docker_routing_config_mode", "unified"),
    (C.DAEMON_RESTART, "DEVICE_METADATA/localhost/frr_mgmt_framework_config", None),  # bfdd would stop
    (C.RELOAD_REQUIRED, "DEVICE_METADATA/localhost/buffer_model", "the other model"),
])
def test_config_db_labels(db: dict[str, Any], label: str, path: str, value: Any) -> None:
    if value == "the other model":
        value = "traditional" if db["DEVICE_METADATA"]["localhost"].get("buffer_model") == "dynamic" else "dynamic"
    got = only(label_db(db, edited(db, path, value)))
    assert got.label == label, got


def test_config_db_a_removed_address_resets_the_sessions_over_it(db: dict[str, Any]) -> None:
    key = next(k for k in db["INTERFACE"] if "|" in k)
    without = copy.deepcopy(db)
    del without["INTERFACE"][key]
    got = only(label_db(db, without))
    assert got.label == C.BGP_RESET and "sessions over it drop" in got.why
    assert only(label_db(without, db)).label == C.HITLESS  # adding it back


def test_config_db_bgp_neighbor_timers_reset_the_session(db: dict[str, Any]) -> None:
    """fabricgen leaves BGP to frr.conf, but a device's own BGP_NEIGHBOR table is still labelled."""
    with_neighbor = copy.deepcopy(db)
    with_neighbor["BGP_NEIGHBOR"] = {"198.18.16.0": {"asn": "4200100000", "holdtime": "9", "name": "spine01"}}
    changed = copy.deepcopy(with_neighbor)
    changed["BGP_NEIGHBOR"]["198.18.16.0"]["holdtime"] = "180"
    assert only(label_db(with_neighbor, changed)).label == C.BGP_RESET


def test_gcu_refuses_buffer_pool_changes_live(db: dict[str, Any]) -> None:
    pool = next(iter(db["BUFFER_POOL"]))
    got = only(label_db(db, edited(db, f"BUFFER_POOL/{pool}/size", "12345678")))
    assert got.label == C.REFUSED_LIVE and "BUFFER_POOL" in got.why


def test_gcu_buffer_profile_fields_by_asic_and_release(db: dict[str, Any]) -> None:
    profile = next(k for k, v in db["BUFFER_PROFILE"].items() if "dynamic_th" in v or "static_th" in v)
    field = "dynamic_th" if "dynamic_th" in db["BUFFER_PROFILE"][profile] else "static_th"
    tuned = edited(db, f"BUFFER_PROFILE/{profile}/{field}", "3")
    if field == "dynamic_th":  # GCU's "Dynamic threshold tuning": replace, spc4 since 20221100
        assert only(label_db(db, tuned)).label == C.BUFFER_RECARVE
        assert only(label_db(db, tuned, branch="20220500")).label == C.REFUSED_LIVE
        assert only(label_db(db, tuned, hwsku="Arista-7060DX5-64S")).label == C.REFUSED_LIVE  # ASIC unknown to GCU
    else:  # a static threshold has no GCU rule at all
        assert only(label_db(db, tuned)).label == C.REFUSED_LIVE
    size = only(label_db(db, edited(db, f"BUFFER_PROFILE/{profile}/size", "1")))
    assert size.label == C.REFUSED_LIVE and "no field rule allows it" in size.why
    # a whole profile may be added or removed
    added = copy.deepcopy(db)
    added["BUFFER_PROFILE"]["pg_lossless_test_profile"] = {"dynamic_th": "0", "pool": "ingress_lossless_pool",
                                                           "size": "0"}
    assert only(label_db(db, added)).label == C.BUFFER_RECARVE


def test_gcu_pfc_watchdog_by_asic(db: dict[str, Any]) -> None:
    port = next(k for k in db["PFC_WD"] if k != "GLOBAL")
    changed = edited(db, f"PFC_WD/{port}/detection_time", "400")
    assert only(label_db(db, changed)).label == C.HITLESS  # spc4: allowed since 20221100
    refused = only(label_db(db, changed, hwsku="Arista-7060DX5-64S"))
    assert refused.label == C.REFUSED_LIVE and "ASIC unknown" in refused.why


def test_gcu_rules_are_sonics_own(sonic_platform: Path) -> None:
    """The shipped rules are GCU's own file, regenerated (a drift fails here); its SKU lists decide the ASIC."""
    from tools import sonic_facts, sonic_fetch

    theirs = json.loads((sonic_platform / "sonic-utilities" / sonic_fetch.GCU_RULES).read_text(encoding="utf-8"))
    assert S.gcu_conf() == sonic_facts.gcu_rules(theirs)
    assert S.GCU_RULES.read_text(encoding="utf-8") == sonic_facts.dumps(sonic_facts.gcu_rules(theirs))


def test_gcu_rules_ship_with_fabricgen() -> None:
    conf = S.gcu_conf()
    assert S.gcu_asic(SN5600, conf) == "spc4" and S.gcu_asic("ACS-MSN2700", conf) == "spc1"
    assert S.gcu_asic("Arista-7060X6-64PE-O128", conf) == "th5"  # Broadcom's lists match a part of the name
    assert S.gcu_asic("Dell-Z9864f-O64", conf) == "unknown"
    ok, why = S.gcu_allows(S.GcuOp("BUFFER_POOL", ("ingress_lossless_pool", "size"), "replace"), SN5600, conf=conf)
    assert not ok
    ok, _ = S.gcu_allows(S.GcuOp("PFC_WD", ("GLOBAL", "POLL_INTERVAL"), "replace"), SN5600, conf=conf)
    assert ok


def test_every_rendered_config_db_table_has_a_rule(db: dict[str, Any]) -> None:
    for table in db:
        impact = S.config_db_rule(S.DbChange(table, ("x", "y"), "replace"), SN5600)
        assert "no impact rule" not in impact.why, table


def test_a_moved_trailing_comma_is_no_change(db: dict[str, Any]) -> None:
    """Adding the last field of an entry re-commas the one before it: only the new field is a change."""
    port = copy.deepcopy(db)
    port["PORT"]["Ethernet0"]["tpid"] = "0x8100"  # sorts last, after "speed"
    impact = label_db(db, port)
    changes = [(d.table, d.parts, d.op) for h in impact.hunks for d, _ in S.config_db_changes(h.changes)]
    assert changes == [("PORT", ("Ethernet0", "tpid"), "add")]
    assert only(impact).label == C.PORT_FLAP


# --------------------------------------------------------------------------- NX-OS


@pytest.fixture(scope="module")
def nxos() -> str:
    return (GOLDEN / "ai256-spine01" / "nxos.cfg").read_text()


@pytest.mark.parametrize(("label", "old", "new"), [
    (C.HITLESS, "  description leaf_spine:ai256-leaf01:Ethernet384", "  description moved"),
    (C.HITLESS, "ip load-sharing address source-destination port source-destination",
     "ip load-sharing address source-destination"),
    (C.BGP_RESET, "  router-id 198.18.0.1", "  router-id 198.18.0.99"),
    (C.PORT_FLAP, "  mtu 9216\n  priority-flow-control mode on\n  priority-flow-control watch-dog-interval on\n"
                  "  service-policy type qos input QOS_CLASSIFICATION\n  no bfd echo\n  no ip redirects\n"
                  "  ip address 198.18.16.0/31",
     "  mtu 9100\n  priority-flow-control mode on\n  priority-flow-control watch-dog-interval on\n"
     "  service-policy type qos input QOS_CLASSIFICATION\n  no bfd echo\n  no ip redirects\n"
     "  ip address 198.18.16.0/31"),
    (C.BUFFER_RECARVE, "  mtu 9216\n  priority-flow-control mode on\n  priority-flow-control watch-dog-interval on\n"
                       "  service-policy type qos input QOS_CLASSIFICATION\n  no bfd echo\n  no ip redirects\n"
                       "  ip address 198.18.16.0/31",
     "  mtu 9216\n  priority-flow-control mode auto\n  priority-flow-control watch-dog-interval on\n"
     "  service-policy type qos input QOS_CLASSIFICATION\n  no bfd echo\n  no ip redirects\n"
     "  ip address 198.18.16.0/31"),
])
def test_nxos_labels(nxos: str, label: str, old: str, new: str) -> None:
    assert old in nxos
    got = only(label_nxos(nxos, nxos.replace(old, new, 1)))
    assert got.label == label, got


def test_nxos_dlb_needs_a_reload(nxos: str) -> None:
    with_dlb = nxos + "hardware profile dlb\n  dlb-interface Eth1/1\n  mode flowlet\n"
    got = label_nxos(nxos, with_dlb)
    assert got.worst is not None and got.worst.label == C.RELOAD_REQUIRED


def test_nxos_network_qos_recarves_buffers(nxos: str) -> None:
    old = "  class type network-qos c-8q-nq3\n    mtu 9216\n"
    assert old in nxos
    got = label_nxos(nxos, nxos.replace(old, old.replace("9216", "9100"), 1))
    assert got.worst is not None and got.worst.label == C.BUFFER_RECARVE


def test_nxos_a_disabled_feature_restarts_its_process() -> None:
    """fabricgen only adds features (it never owns their removal); the rule covers a diff that removes one."""
    diff = "--- running\n+++ candidate\n@@ -1,2 +1 @@\n feature bgp\n-feature bfd\n"
    got = I.device_impact("sw", "nxos", None, diff)
    assert got.worst is not None and got.worst.label == C.DAEMON_RESTART


# --------------------------------------------------------------------------- summary, text diffs, --max-impact


def test_device_summary_worst_first_and_labelled_diff() -> None:
    old = frr_text()
    new = old.replace(" multipath-relax\n", " multipath-relax\n timers bgp 1 3\n").replace("seq 10 permit",
                                                                                        "seq 10 deny", 1)
    impact = label_frr("frr", old, new)
    assert list(impact.counts()) == [C.BGP_RESET, C.HITLESS]
    text = I.labelled_diff(impact)
    assert "[bgp-reset] keepalive/hold apply only when a session re-establishes" in text
    assert "[hitless] routing policy" in text
    assert C.exceeds(impact.worst, C.HITLESS) and not C.exceeds(impact.worst, C.BGP_RESET)
    # issue 23: the labelled diff keeps the device side's name, running or saved
    header = f"--- saved (/etc/frr/frr.conf)\n+++ {impact.hunks[0].file}\n"
    assert I.labelled_diff(impact, header + "@@ -1 +1 @@\n").startswith(header), I.labelled_diff(impact, header)


def test_text_diffs_label_like_sides() -> None:
    """A driver without sides: the hunk's own lines give the path (FRR's frr-reload listing)."""
    from napalm_frr.frr import listing_hunk

    diff = ("--- running\n+++ candidate\n" + listing_hunk(["router bgp 65001", " no timers bgp 1 3"], "-")
            + listing_hunk(["router bgp 65001", " timers bgp 3 9", "bfd", " profile FABRIC",
                            "  transmit-interval 150"], "+"))
    impact = I.device_impact("sw", "frr", None, diff)
    assert [h.impact.label for h in impact.hunks] == [C.BGP_RESET, C.BGP_RESET]
    assert [c.text for c in impact.hunks[1].changes] == ["timers bgp 3 9", "transmit-interval 150"]


# --------------------------------------------------------------------------- Arista EOS


@pytest.fixture(scope="module")
def eos() -> str:
    from tests.platforms.test_render_eos import plan_of, text_of

    plan = plan_of()
    return text_of(plan, plan.by_role("leaf")[0].hostname)


def label_eos(old: str, new: str) -> I.DeviceImpact:
    from napalm_eos_fabricgen.eos import plan_change as eos_change

    change = eos_change(old, new)
    return I.device_impact("sw", "eos", [("build", change.running, change.rendered)], change.diff)


@pytest.mark.parametrize(("label", "old", "new"), [
    (C.HITLESS, "description gpu_leaf:gpu0001:eth0", "description moved"),
    (C.HITLESS, "max-mark-probability 20", "max-mark-probability 7"),
    (C.RELOAD_REQUIRED, "service routing protocols model multi-agent", "service routing protocols model ribd"),
    (C.BGP_RESET, "   timers bgp 3 9\n", "   timers bgp 1 3\n"),
    (C.PORT_FLAP, "   mtu 9214\n   no switchport\n   ip address 198.18.32.0/31",
     "   mtu 9000\n   no switchport\n   ip address 198.18.32.0/31"),
    (C.BUFFER_RECARVE, "qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 4"),
    (C.BUFFER_RECARVE, "   service-profile ROCE_400G_3M\n!\ninterface Ethernet2/1",
     "   service-profile ROCE_400G_30M\n!\ninterface Ethernet2/1"),
])
def test_eos_labels(eos: str, label: str, old: str, new: str) -> None:
    assert old in eos
    got = label_eos(eos, eos.replace(old, new, 1))
    assert got.worst is not None and got.worst.label == label, [h.impact for h in got.hunks]


def test_eos_lane_speed_change_flaps_the_port_like_a_breakout() -> None:
    from tests.platforms.test_render_eos import SPLIT_800G, plan_of, text_of

    plan = plan_of(**SPLIT_800G)
    text = text_of(plan, plan.by_role("leaf")[0].hostname)
    assert "   speed 400g-4\n" in text
    got = label_eos(text, text.replace("   speed 400g-4\n", "   speed 200g-2\n", 1))
    assert got.worst is not None and got.worst.label == C.PORT_FLAP
    assert any("lane speed" in h.impact.why for h in got.hunks)


def test_each_sku_says_whether_gcu_applies_the_lossless_config_live() -> None:
    """SN5600 (spc4): GCU applies PFC_WD and the PG headroom live.  Dell Z9864F (TH5), unknown to GCU: both are
    refused live, so day 0 needs `config load` + `config reload`, and the statement says so."""
    live, why = S.lossless_apply(SN5600)
    assert live and "spc4" in why
    live, why = S.lossless_apply("Dell-Z9864f-O64")
    assert not live and "GCU does not know this HWSKU" in why
    assert "`config load`" in why and "`config reload`" in why and "deploy --day0" in why


def test_plan_states_the_day0_path_of_the_th5_sku(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import yaml

    from fabricgen.cli import main
    from tests.conftest import small_intent

    data = small_intent(switch_models={"leaf": {"sku": "Dell-Z9864f-O64"}, "spine": {"sku": "Dell-Z9864f-O64"}},
                        platforms={"leaf": "sonic", "spine": "sonic"},
                        servers={"count": 4, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": "800G"},
                        cabling={"gpu_leaf_m": 5, "leaf_spine_m": 30})
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["plan", "-i", str(path)]) == 0
    out = capsys.readouterr().out
    assert "leaf Dell-Z9864f-O64 lossless config: GCU does not know this HWSKU" in out.replace("\n", " ")
    assert main(["plan", "-i", "inventory/fabric.yaml"]) == 0
    assert "Mellanox-SN5600-O128 lossless config: GCU applies the lossless config live" in capsys.readouterr().out


def test_day0_labels_every_config_db_change_reload_required(db: dict[str, Any]) -> None:
    port = next(k for k in db["PFC_WD"] if k != "GLOBAL")
    changed = edited(db, f"PFC_WD/{port}/detection_time", "400")
    sides = [("candidate/config_db.json", pretty_json(db).splitlines(), pretty_json(changed).splitlines())]
    assert only(I.device_impact("sw", "sonic", sides, "", hwsku="Dell-Z9864f-O64")).label == C.REFUSED_LIVE
    got = I.device_impact("sw", "sonic", sides, "", hwsku="Dell-Z9864f-O64", day0=True)
    assert got.worst is not None and got.worst.label == C.RELOAD_REQUIRED and "config reload" in got.worst.why


def test_the_intents_sonic_release_dates_gcus_rules(db: dict[str, Any]) -> None:
    """platforms.sonic_release 202205 on an SN5600: GCU's dynamic-threshold tuning (spc4 since 20221100) is not
    in that release, so the change is refused live; unnamed, GCU's rule applies."""
    from fabricgen.deploy.phases import Diff, impact
    from fabricgen.plan.model import Switch

    profile = next(k for k, v in db["BUFFER_PROFILE"].items() if "dynamic_th" in v)
    tuned = edited(db, f"BUFFER_PROFILE/{profile}/dynamic_th", "3")
    d = Diff("x", "", [("config_db.json", "candidate/config_db.json", pretty_json(db).splitlines(),
                        pretty_json(tuned).splitlines())])
    sw = Switch("leaf01", "leaf", "sonic", "SN5600", 0, 0, 0, 0, sku=SN5600)
    assert only(impact(sw, d)).label == C.BUFFER_RECARVE
    assert only(impact(sw, d, sonic_release="202205")).label == C.REFUSED_LIVE


def test_sonic_diff_shows_and_labels_only_what_frr_reload_changes() -> None:
    """Issue 23 D11: a SONiC leaf's running FRR config carries lines its own scripts manage (docker_init.sh's
    FPM lines in another order, `segment-routing`, `service integrated-vtysh-config`).  Diffed whole against
    a timers change, they labelled it daemon-restart and `--max-impact bgp-reset` refused it; frr-reload
    only changes the timers."""
    from napalm_frr.config import touched_stanzas

    build = frr_text()
    running = build.replace("no fpm use-next-hop-groups\nfpm address 127.0.0.1\n",
                            "fpm address 127.0.0.1\nno fpm use-next-hop-groups\nservice integrated-vtysh-config\n")
    running += "segment-routing\n traffic-eng\n exit\nexit\n"
    candidate = build.replace(" bgp router-id", " timers bgp 1 3\n bgp router-id", 1)
    assert candidate != build
    whole = label_frr("sonic", running, candidate)
    assert whole.worst is not None and whole.worst.label == C.DAEMON_RESTART  # the defect
    asn = next(ln for ln in build.splitlines() if ln.startswith("router bgp "))
    listing = [asn, " timers bgp 1 3"]  # frr-reload.py --test: lines to add (with their context)
    old = touched_stanzas(canonical_lines(running), listing)
    new = touched_stanzas(canonical_lines(candidate), listing)
    assert old[0] == new[0] == asn and [ln for ln in new if ln not in old] == [" timers bgp 1 3"]
    impact = I.device_impact("sw", "sonic", [("candidate/frr.conf", old, new)], "")
    assert list(impact.counts()) == [C.BGP_RESET]
    assert not C.exceeds(impact.worst, C.BGP_RESET)
