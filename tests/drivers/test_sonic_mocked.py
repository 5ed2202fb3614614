"""SonicDriver against recorded SONiC command outputs: exact command sequences of
checkpoint -> config replace -> FRR reload -> config save, and the rollbacks on failure."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from napalm.base.exceptions import CommandErrorException, ReplaceConfigException

from napalm_sonic import SonicDriver
from napalm_sonic.sonic import make_bundle, parse_bundle
from tests.drivers.fake_transport import FakeTransport

DATA = Path(__file__).resolve().parent / "mocked_data" / "sonic"
CANDIDATE = DATA / "candidate"
TOKEN = "0123456789ab"
DB = f"/tmp/fabricgen-{TOKEN}-config_db.json"
FC = f"/tmp/fabricgen-{TOKEN}-frr.conf"
CHECKPOINT = "fabricgen-20250102T030405Z"


def bgp(cmd: str) -> str:
    return f"sudo -n docker exec -i bgp sh -c {shlex.quote(cmd)}"


LOAD = [
    "show runningconfiguration all",  # the device-owned part of ConfigDB joins the candidate
    f"umask 077; mkdir -p /tmp && cat > {DB} && sha256sum {DB}",
    bgp(f"umask 077; mkdir -p /tmp && cat > {FC} && sha256sum {FC}"),
    bgp(f"vtysh --dryrun -f {FC}"),
]
FRR_TEST = bgp(f"/usr/lib/frr/frr-reload.py --test {FC}")
COMPARE = ["show runningconfiguration all", FRR_TEST, "sudo -n docker exec -i bgp vtysh -c 'show running-config'"]
PRECHECK = [bgp(f"vtysh --dryrun -f {FC}"), FRR_TEST]
SAVE_ROLLBACK_POINT = bgp(
    "set -e; vtysh -c 'show running-config no-header' > /etc/frr/frr.conf.rollback.new; "
    "test -s /etc/frr/frr.conf.rollback.new; mv -f /etc/frr/frr.conf.rollback.new /etc/frr/frr.conf.rollback; "
    "if [ -e /etc/frr/frr.conf ]; then cp -p /etc/frr/frr.conf /etc/frr/frr.conf.fabricgen-prev; "
    "else rm -f /etc/frr/frr.conf.fabricgen-prev; fi")


def install(src: str) -> str:
    return bgp(f"set -e; cp {src} /etc/frr/frr.conf.fabricgen-new; "
               "chown --reference=/etc/frr/frr.conf /etc/frr/frr.conf.fabricgen-new 2>/dev/null || true; "
               "chmod --reference=/etc/frr/frr.conf /etc/frr/frr.conf.fabricgen-new 2>/dev/null || true; "
               "mv -f /etc/frr/frr.conf.fabricgen-new /etc/frr/frr.conf")


RELOAD = bgp("/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf")
RESTORE_STARTUP = bgp("if [ -e /etc/frr/frr.conf.fabricgen-prev ]; then "
                      "cp -p /etc/frr/frr.conf.fabricgen-prev /etc/frr/frr.conf; fi")
FRR_RESTORE = [install("/etc/frr/frr.conf.rollback"), RELOAD, RESTORE_STARTUP]
CLEANUP = [f"rm -f {DB}", bgp(f"rm -f {FC}")]


class MockSonicDriver(SonicDriver):
    case = "getters"

    def _new_token(self) -> str:
        return TOKEN

    def _now(self) -> datetime:
        return datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

    def _open_transport(self) -> FakeTransport:
        return FakeTransport(DATA / self.case)


def driver(case: str, **optional: Any) -> MockSonicDriver:
    d = MockSonicDriver("198.18.253.21", "admin", "", optional_args={"key_file": "/k", **optional})
    d.case = case
    d.open()
    return d


def sent(d: SonicDriver) -> list[str]:
    assert isinstance(d.transport, FakeTransport)
    return d.transport.commands


def loaded(case: str) -> MockSonicDriver:
    d = driver(case)
    d.load_replace_candidate(filename=str(CANDIDATE))
    assert sent(d) == LOAD
    return d


# --------------------------------------------------------------------------- getters


def test_getters_go_through_the_containers() -> None:
    d = driver("getters")
    facts = d.get_facts()
    assert facts["os_version"] == "SONiC.202311.1-8c08d87"
    assert facts["model"] == "Accton-AS7326-56X" and facts["serial_number"] == "732656X2147C001"
    assert facts["hostname"] == "leaf1" and facts["vendor"] == "SONiC"
    assert d.get_lldp_neighbors()["Ethernet0"] == [{"hostname": "sw2", "port": "Ethernet0"}]
    assert len(d.get_bgp_neighbors()["global"]["peers"]) == 2
    assert d.get_interfaces()["Ethernet0"]["is_up"]
    assert sent(d)[:2] == ["show version", SonicDriver._FACTS_PROBE]
    assert "sudo -n docker exec -i lldp lldpcli show neighbors -f json" in sent(d)
    assert "sudo -n docker exec -i bgp vtysh -c 'show bgp vrf all summary json'" in sent(d)


def test_get_config_returns_bundles() -> None:
    d = driver("getters")
    config = d.get_config()
    running_db, running_frr = parse_bundle(config["running"])
    assert "bgpraw" not in running_db and running_db["PORT"]["Ethernet8"]["mtu"] == "9100"
    assert "router bgp 65001" in running_frr
    startup_db, _ = parse_bundle(config["startup"])
    assert startup_db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
    assert config["candidate"] == ""


# --------------------------------------------------------------------------- candidate formats


def test_candidate_formats_are_equivalent() -> None:
    db_text = (CANDIDATE / "config_db.json").read_text()
    frr = (CANDIDATE / "frr.conf").read_text()
    from_dir = SonicDriver._read_candidate(str(CANDIDATE), None)
    assert from_dir == (json.loads(db_text), frr)
    assert SonicDriver._read_candidate(None, {"config_db.json": db_text, "frr.conf": frr}) == from_dir
    assert SonicDriver._read_candidate(None, {"config_db.json": json.loads(db_text), "frr.conf": frr}) == from_dir
    assert SonicDriver._read_candidate(None, make_bundle(json.loads(db_text), frr)) == from_dir


def test_bundle_file(tmp_path: Path) -> None:
    bundle = tmp_path / "leaf1.json"
    bundle.write_text(make_bundle(json.loads((CANDIDATE / "config_db.json").read_text()), "hostname x\n"))
    db, frr = SonicDriver._read_candidate(str(bundle), None)
    assert frr == "hostname x\n" and "PORT" in db


@pytest.mark.parametrize("bad", [
    "not json", '{"config_db.json": {}}', '{"config_db.json": {"A": {}}, "frr.conf": 3}',
    '{"config_db.json": "[1]", "frr.conf": ""}', '{"config_db.json": {}, "frr.conf": "", "x": 1}', "[]",
])
def test_bad_bundles_are_refused(bad: str) -> None:
    with pytest.raises(ReplaceConfigException):
        parse_bundle(bad)


def test_directory_must_hold_both_files(tmp_path: Path) -> None:
    (tmp_path / "config_db.json").write_text("{}")
    with pytest.raises(ReplaceConfigException, match=r"lacks frr\.conf"):
        SonicDriver._read_candidate(str(tmp_path), None)


# --------------------------------------------------------------------------- compare


def test_compare_diffs_config_db_and_frr() -> None:
    d = loaded("compare")
    diff = d.compare_config()
    assert sent(d) == LOAD + COMPARE
    db_part, _, frr_part = diff.partition("--- running/frr.conf")
    assert db_part.startswith("--- running/config_db.json\n+++ candidate/config_db.json\n")
    assert '-            "mtu": "9100",\n' in db_part and '+            "mtu": "9216",\n' in db_part
    assert '+        "Ethernet8|198.19.10.2/31": {}\n' in db_part
    assert "bgpraw" not in diff
    assert "+router bgp 65001\n" in frr_part


def test_candidate_keeps_device_identity_and_unrendered_tables() -> None:
    """`config replace` drops what the target lacks: the box's identity and foreign tables must survive."""
    candidate = json.loads((CANDIDATE / "config_db.json").read_text())
    for key in ("hwsku", "mac", "platform"):
        candidate["DEVICE_METADATA"]["localhost"].pop(key, None)
    del candidate["LOOPBACK_INTERFACE"]  # stands for a table fabricgen does not render
    bundle = {"config_db.json": candidate, "frr.conf": (CANDIDATE / "frr.conf").read_text()}
    d = driver("compare")
    d.load_replace_candidate(config=bundle)
    running = d._running_config_db()
    uploaded = json.loads(d.transport.stdins[1] or "{}")  # type: ignore[union-attr]
    meta = uploaded["DEVICE_METADATA"]["localhost"]
    for key in ("hwsku", "mac", "platform"):
        assert meta[key] == running["DEVICE_METADATA"]["localhost"][key]
    assert meta["hostname"] == candidate["DEVICE_METADATA"]["localhost"]["hostname"]
    assert uploaded["LOOPBACK_INTERFACE"] == running["LOOPBACK_INTERFACE"]
    # PORT: fabricgen's fields over the device's; lanes and alias stay the device's (its SKU's)
    assert uploaded["PORT"] == {name: {**running["PORT"][name], **entry} for name, entry in candidate["PORT"].items()}
    assert uploaded["PORT"]["Ethernet0"]["lanes"] == running["PORT"]["Ethernet0"]["lanes"]
    whole = driver("compare", replace_scope="all")
    whole.load_replace_candidate(config=bundle)
    assert json.loads(whole.transport.stdins[0] or "{}") == candidate  # type: ignore[union-attr]


@pytest.mark.parametrize(("edit", "why"), [
    (lambda db: db["PORT"].__setitem__("Ethernet64", {"mtu": "9216"}), "the device has no port Ethernet64"),
    (lambda db: db["PORT"]["Ethernet0"].__setitem__("lanes", "9,10,11,12"), "lanes belong to the device"),
    (lambda db: db.__setitem__("BUFFER_POOL", {"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"}}),
     "tables fabricgen does not own: BUFFER_POOL"),
    (lambda db: db.__setitem__("BUFFER_QUEUE", {"Ethernet0|3": {"profile": "egress_lossless_profile"}}),
     "dangling references: BUFFER_QUEUE|Ethernet0|3.profile -> BUFFER_PROFILE|egress_lossless_profile"),
], ids=["unknown-port", "lanes", "sku-pool", "dangling"])
def test_a_candidate_that_does_not_fit_the_device_is_refused_before_upload(edit: Any, why: str) -> None:
    candidate = json.loads((CANDIDATE / "config_db.json").read_text())
    edit(candidate)
    d = driver("compare")
    with pytest.raises(ReplaceConfigException, match="nothing was changed") as err:
        d.load_replace_candidate(config={"config_db.json": candidate, "frr.conf": (CANDIDATE / "frr.conf").read_text()})
    assert why in str(err.value)
    assert sent(d) == ["show runningconfiguration all"]  # nothing uploaded


def test_compare_in_sync_is_empty() -> None:
    d = loaded("compare_in_sync")
    assert d.compare_config() == ""
    # FRR had nothing to do, so its running config was not even fetched; the saved frr.conf was,
    # since a saved file that differs from the candidate would be a change (the next reboot loads it)
    assert sent(d) == LOAD + ["show runningconfiguration all", FRR_TEST, bgp("cat /etc/frr/frr.conf")]


# --------------------------------------------------------------------------- commit


REPLACED = [f"sudo -n config checkpoint {CHECKPOINT}", f"sudo -n config replace {DB}"]
APPLIED = [SAVE_ROLLBACK_POINT, install(FC), RELOAD, "sudo -n config save -y"]
COMMITTED = REPLACED + APPLIED  # checkpoint, ConfigDB, FRR, save: a whole commit


def test_commit_sequence_checkpoint_replace_frr_save() -> None:
    d = loaded("commit_ok")
    d.commit_config()
    assert sent(d) == LOAD + PRECHECK + COMMITTED + CLEANUP
    assert d._last_checkpoint == CHECKPOINT


def test_replace_failure_rolls_back_to_the_checkpoint_and_leaves_frr_alone() -> None:
    d = loaded("commit_replace_fails")
    with pytest.raises(ReplaceConfigException, match="rolled back to checkpoint") as err:
        d.commit_config()
    assert "does not satisfy the constraint" in str(err.value)
    assert sent(d) == LOAD + PRECHECK + [
        f"sudo -n config checkpoint {CHECKPOINT}",
        f"sudo -n config replace {DB}",
        f"sudo -n config rollback {CHECKPOINT}",
    ]


def test_frr_failure_restores_frr_then_rolls_back_config_db() -> None:
    d = loaded("commit_frr_fails")
    with pytest.raises(ReplaceConfigException, match="rolled back to checkpoint") as err:
        d.commit_config()
    assert "peer-group" in str(err.value)
    assert sent(d) == LOAD + PRECHECK + [
        f"sudo -n config checkpoint {CHECKPOINT}",
        f"sudo -n config replace {DB}",
        SAVE_ROLLBACK_POINT, install(FC), RELOAD,
        *FRR_RESTORE,
        f"sudo -n config rollback {CHECKPOINT}",
    ]


def test_save_failure_undoes_both_parts() -> None:
    d = loaded("commit_save_fails")
    with pytest.raises(ReplaceConfigException, match="config save exited 1"):
        d.commit_config()
    tail = sent(d)[sent(d).index("sudo -n config save -y"):]
    assert tail == ["sudo -n config save -y", bgp("test -s /etc/frr/frr.conf.rollback"), *FRR_RESTORE,
                    f"sudo -n config rollback {CHECKPOINT}"]


def test_failed_precheck_takes_no_checkpoint() -> None:
    d = loaded("commit_ok")
    assert isinstance(d.transport, FakeTransport)
    d.transport.responses[FRR_TEST] = [{"exit_status": 1, "stderr_text": "ERROR: vtysh failed"}]
    with pytest.raises(ReplaceConfigException, match="frr-reload --test failed"):
        d.commit_config()
    assert not any(c.startswith("sudo -n config") for c in sent(d))


def test_checkpoint_failure_changes_nothing() -> None:
    d = loaded("commit_ok")
    assert isinstance(d.transport, FakeTransport)
    d.transport.responses[f"sudo -n config checkpoint {CHECKPOINT}"] = [
        {"exit_status": 2, "stderr_text": "Failed to create a config checkpoint\n"}]
    with pytest.raises(ReplaceConfigException, match="nothing changed"):
        d.commit_config()
    assert sent(d)[-1] == f"sudo -n config checkpoint {CHECKPOINT}"


def test_save_can_be_turned_off() -> None:
    d = driver("commit_ok", save_config=False)
    d.load_replace_candidate(filename=str(CANDIDATE))
    d.commit_config()
    assert "sudo -n config save -y" not in sent(d)


# --------------------------------------------------------------------------- rollback


def test_rollback_uses_the_latest_fabricgen_checkpoint() -> None:
    d = driver("rollback")
    d.rollback()
    assert sent(d) == [
        "sudo -n config list-checkpoints",
        "show runningconfiguration all",  # the bgp container's boot fields before ...
        f"sudo -n config rollback {CHECKPOINT}",
        "show runningconfiguration all",  # ... and after: unchanged, so no container restart
        bgp("test -s /etc/frr/frr.conf.rollback"), *FRR_RESTORE,
        "sudo -n config save -y",
    ]


def test_rollback_after_commit_in_the_same_session_needs_no_listing() -> None:
    d = loaded("commit_ok")
    d.commit_config()
    d.transport.responses.update(FakeTransport(DATA / "rollback").responses)  # type: ignore[union-attr]
    d.rollback()
    tail = sent(d)[sent(d).index(f"rm -f {DB}") + 2:]
    assert tail[0] == f"sudo -n config rollback {CHECKPOINT}"
    assert "sudo -n config list-checkpoints" not in sent(d)


def test_rollback_without_checkpoint() -> None:
    d = driver("rollback")
    assert isinstance(d.transport, FakeTransport)
    d.transport.responses["sudo -n config list-checkpoints"] = [{"stdout_text": '[\n    "pre-upgrade"\n]\n'}]
    with pytest.raises(CommandErrorException, match="no fabricgen-\\* checkpoint"):
        d.rollback()


# --------------------------------------------------------------------------- an SN5600 O128 as SONiC builds it


def test_sn5600_takes_the_rendered_leaf_and_a_leafref_refusal_rolls_back() -> None:
    """The example leaf (HWSKU Mellanox-SN5600-O128) against an SN5600's own ConfigDB (sonic-factory-config's
    PORT, buffers and QoS, plus a booted box's identity, management and FEATURE tables)."""
    from fabricgen.platforms.sonic.configdb import dangling_references

    leaf = Path(__file__).resolve().parents[1] / "golden" / "ai256-leaf01"
    d = driver("sn5600")
    d.load_replace_candidate(filename=str(leaf))
    assert sent(d) == LOAD
    uploaded = json.loads(d.transport.stdins[1] or "{}")  # type: ignore[union-attr]
    running = d._running_config_db()
    rendered = json.loads((leaf / "config_db.json").read_text())
    assert len(running["PORT"]) == 129 and running["PORT"]["Ethernet0"]["alias"] == "etp1a"
    assert set(uploaded["PORT"]) == set(running["PORT"])  # every port of the box survives the replace
    for port, entry in rendered["PORT"].items():
        assert uploaded["PORT"][port] == {**running["PORT"][port], **entry}
    for table in ("BUFFER_POOL", "MGMT_INTERFACE", "MGMT_PORT", "FEATURE"):
        assert uploaded[table] == running[table]
    assert uploaded["DEVICE_METADATA"]["localhost"] == {**running["DEVICE_METADATA"]["localhost"],
                                                        **rendered["DEVICE_METADATA"]["localhost"]}
    assert dangling_references(uploaded) == []
    with pytest.raises(ReplaceConfigException, match="rolled back to checkpoint") as err:
        d.commit_config()
    assert 'of value "pg_lossless_400000_5m_profile" points to a non-existing leaf' in str(err.value)
    assert sent(d)[-2:] == [f"sudo -n config replace {DB}", f"sudo -n config rollback {CHECKPOINT}"]


# --------------------------------------------------------------------------- bgp container restart


RESTART = "sudo -n systemctl restart bgp"
DAEMONS = "sudo -n docker exec -i bgp vtysh -c 'show daemons'"


def with_bfd(case: str, daemons: list[str], restart_exit: int = 0, **optional: Any) -> MockSonicDriver:
    """A box that runs without frr_mgmt_framework_config, loaded with a candidate that sets it "true"
    (bfdd starts only when the bgp container restarts); `show daemons` answers `daemons` in turn."""
    db = json.loads((CANDIDATE / "config_db.json").read_text())
    db["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] = "true"
    d = driver(case, **optional)
    d._sleep = lambda seconds: None  # type: ignore[method-assign]
    assert isinstance(d.transport, FakeTransport)
    assert "frr_mgmt_framework_config" not in d._running_config_db()["DEVICE_METADATA"]["localhost"]
    d.transport.commands.clear()
    d.transport.stdins.clear()
    d.transport.responses[RESTART] = [{"exit_status": restart_exit,
                                       "stderr_text": "" if restart_exit == 0 else "Job for bgp.service failed.\n"}]
    d.transport.responses[DAEMONS] = [{"stdout_text": line} for line in daemons]
    d.load_replace_candidate(config={"config_db.json": db, "frr.conf": (CANDIDATE / "frr.conf").read_text()})
    assert sent(d) == LOAD
    return d


def test_a_commit_that_turns_bfd_on_restarts_the_bgp_container_and_waits_for_bfdd() -> None:
    d = with_bfd("commit_ok", [" zebra bgpd staticd\n", " zebra bgpd staticd bfdd\n"])
    d.commit_config()
    # the restart comes before FRR's part: frr.conf's bfd block needs the bfdd it starts (seen on the second look)
    assert sent(d) == LOAD + PRECHECK + REPLACED + [RESTART, DAEMONS, DAEMONS] + APPLIED + CLEANUP


def test_a_commit_that_keeps_the_container_fields_restarts_nothing() -> None:
    d = loaded("commit_ok")
    d.commit_config()
    assert RESTART not in sent(d)


def test_bfdd_that_never_answers_after_the_restart_rolls_the_commit_back() -> None:
    d = with_bfd("commit_ok", [" zebra bgpd staticd\n"], restart_timeout=0)
    d.transport.responses.update(FakeTransport(DATA / "rollback").responses)  # type: ignore[union-attr]
    with pytest.raises(ReplaceConfigException, match="rolled back to checkpoint") as err:
        d.commit_config()
    assert "bfdd did not answer within 0 s" in str(err.value)
    tail = sent(d)[sent(d).index(RESTART):]
    # FRR untouched; ConfigDB back; the container restarted again on the old fields (zebra and bgpd answer)
    assert tail == [RESTART, DAEMONS, f"sudo -n config rollback {CHECKPOINT}", RESTART, DAEMONS]


def test_a_failed_container_restart_rolls_the_commit_back() -> None:
    d = with_bfd("commit_ok", [" zebra bgpd staticd bfdd\n"], restart_exit=1)
    d.transport.responses.update(FakeTransport(DATA / "rollback").responses)  # type: ignore[union-attr]
    with pytest.raises(ReplaceConfigException, match="systemctl restart bgp` exited 1: Job for bgp.service failed") \
            as err:
        d.commit_config()
    assert DAEMONS not in sent(d) and SAVE_ROLLBACK_POINT not in sent(d)
    assert sent(d)[-2:] == [f"sudo -n config rollback {CHECKPOINT}", RESTART]  # the second restart fails too
    assert "AND undoing it failed" in str(err.value)


def test_a_rollback_to_other_boot_fields_restarts_the_container_before_frr() -> None:
    """The checkpoint was taken before a commit turned BFD on: rolling back restarts the container
    without bfdd first, then restores FRR (as a commit restarts it before applying FRR)."""
    d = with_bfd("commit_ok", [" zebra bgpd staticd\n", " zebra bgpd staticd bfdd\n"])
    d.commit_config()
    d.transport.responses.update(FakeTransport(DATA / "rollback").responses)  # type: ignore[union-attr]
    d.transport.responses[RESTART] = [{"exit_status": 0}]
    d.transport.commands.clear()  # type: ignore[union-attr]
    d.rollback()
    assert sent(d) == [f"sudo -n config rollback {CHECKPOINT}", "show runningconfiguration all", RESTART, DAEMONS,
                       bgp("test -s /etc/frr/frr.conf.rollback"), *FRR_RESTORE, "sudo -n config save -y"]


# --------------------------------------------------------------------------- the day-0 path


def test_day0_path_loads_saves_and_reloads_instead_of_gcu() -> None:
    """apply="day0" (deploy --day0): for a HWSKU whose lossless config GCU refuses live, FRR's part first,
    then `config load` of the merged ConfigDB, `config save`, `config reload`, and the bgp container's daemons."""
    d = driver("commit_ok", apply="day0")
    d._sleep = lambda seconds: None  # type: ignore[method-assign]
    assert isinstance(d.transport, FakeTransport)
    d.transport.responses.update({f"sudo -n config load -y {DB}": [{"exit_status": 0}],
                                  "sudo -n config reload -y": [{"exit_status": 0}],
                                  DAEMONS: [{"stdout_text": " zebra bgpd staticd bfdd\n"}]})
    d.load_replace_candidate(filename=str(CANDIDATE))
    d.commit_config()
    assert sent(d) == LOAD + PRECHECK + [
        f"sudo -n config checkpoint {CHECKPOINT}", SAVE_ROLLBACK_POINT, install(FC), RELOAD,
        f"sudo -n config load -y {DB}", "sudo -n config save -y", "sudo -n config reload -y", DAEMONS] + CLEANUP
    assert f"sudo -n config replace {DB}" not in sent(d)
    with pytest.raises(ValueError, match="apply must be"):
        driver("commit_ok", apply="bogus")
