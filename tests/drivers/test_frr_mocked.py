"""FrrDriver against recorded device outputs: getters, compare/commit/rollback command sequences,
napalm driver-name resolution and nornir-napalm integration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import CommandErrorException, MergeConfigException, ReplaceConfigException

from fabricgen.base.ssh import ConfigUndetermined
from napalm_frr import FrrDriver
from napalm_sonic import SonicDriver
from tests.drivers.fake_transport import FakeTransport, UnexpectedCommand

DATA = Path(__file__).resolve().parent / "mocked_data" / "frr"
TOKEN = "0123456789ab"
CAND = f"/etc/frr/.fabricgen/fabricgen-{TOKEN}-frr.conf"


class MockFrrDriver(FrrDriver):
    """FrrDriver whose transport replays a recorded case directory."""

    case = "getters"
    extra: dict[str, list[dict[str, Any]]] | None = None

    def _new_token(self) -> str:
        return TOKEN

    def _open_transport(self) -> FakeTransport:
        return FakeTransport(DATA / self.case, self.extra)


def driver(case: str, extra: dict[str, list[dict[str, Any]]] | None = None, **optional: Any) -> MockFrrDriver:
    d = MockFrrDriver("198.18.253.11", "root", "", optional_args=optional)
    d.case = case
    d.extra = extra
    d.open()
    return d


def sent(d: FrrDriver) -> list[str]:
    assert isinstance(d.transport, FakeTransport)
    return d.transport.commands


def sequence(case: str) -> list[str]:
    return list(json.loads((DATA / case / "sequence.json").read_text()))


def candidate(case: str) -> str:
    return (DATA / case / "candidate.conf").read_text()


# --------------------------------------------------------------------------- resolution


def test_napalm_resolves_platform_names_to_our_drivers() -> None:
    assert get_network_driver("frr") is FrrDriver
    assert get_network_driver("sonic") is SonicDriver  # not FrrDriver, which sorts first
    assert get_network_driver("FRR") is FrrDriver


def test_optional_args_defaults_and_sudo() -> None:
    d = FrrDriver("198.18.253.11", "root", "", optional_args={"key_file": "/k", "port": 2222})
    assert d.netmiko_optional_args == {"key_file": "/k", "port": 2222, "use_keys": True}
    assert not d.sudo and d.frr_config_path == "/etc/frr/frr.conf" and d.verify_reload  # saved = running
    assert d._vtysh("show version") == "vtysh -c 'show version'"
    admin = FrrDriver("198.18.253.11", "admin", "pw")
    assert admin.sudo and admin.netmiko_optional_args == {"use_keys": False}
    assert admin._vtysh("show version") == "sudo -n sh -c 'vtysh -c '\"'\"'show version'\"'\"''"


# --------------------------------------------------------------------------- getters


def test_getters_replay_live_outputs() -> None:
    d = driver("getters")
    facts = d.get_facts()
    assert facts["hostname"] == "sw1" and facts["fqdn"] == "sw1"
    assert facts["vendor"] == "FRRouting" and facts["os_version"] == "8.4.4"
    assert facts["uptime"] > 0
    assert facts["interface_list"][:2] == ["Ethernet0", "Ethernet8"]
    assert d.get_interfaces()["Ethernet0"]["mtu"] == 9216
    assert d.get_interfaces_counters()["Ethernet0"]["rx_octets"] > 0
    assert d.get_interfaces_ip()["lo"]["ipv4"]["198.19.250.1"] == {"prefix_length": 32}
    assert d.get_lldp_neighbors()["Ethernet8"] == [{"hostname": "sw2", "port": "Ethernet8"}]
    assert d.get_lldp_neighbors_detail()["Ethernet0"][0]["remote_system_name"] == "sw2"
    assert len(d.get_bgp_neighbors()["global"]["peers"]) == 2
    assert len(d.get_bgp_neighbors_detail()["global"][65002]) == 2
    assert len(d.get_route_to("198.19.250.2/32")["198.19.250.2/32"]) == 2
    config = d.get_config()
    assert "router bgp 65001" in config["running"] and "router bgp 65001" in config["startup"]
    assert config["candidate"] == ""
    assert sent(d) == sequence("getters")


def test_get_ecmp_paths_and_config_retrieve() -> None:
    d = driver("getters")
    assert d.get_ecmp_paths("198.19.250.2/32") == 2
    assert d.get_config(retrieve="startup")["running"] == ""
    assert sent(d)[-1] == "cat /etc/frr/frr.conf"


def test_compliance_report_uses_the_getters() -> None:
    d = driver("getters")
    report = d.compliance_report(validation_source=[
        {"get_facts": {"hostname": "sw1", "vendor": "FRRouting"}},
        {"get_lldp_neighbors": {"Ethernet0": [{"hostname": "sw2", "port": "Ethernet0"}]}},
        {"get_bgp_neighbors": {"global": {"peers": {"198.19.10.1": {"is_up": True, "remote_as": 65002},
                                                    "198.19.10.3": {"is_up": True}}}}},
        {"get_route_to": {"_name": "ecmp_to_sw2", "_kwargs": {"destination": "198.19.250.2/32"},
                          "198.19.250.2/32": {"_mode": "strict", "list": [
                              {"next_hop": "198.19.10.1", "selected_next_hop": True},
                              {"next_hop": "198.19.10.3", "selected_next_hop": True}]}}},
    ])
    assert report["complies"], json.dumps(report, indent=1)
    bad = d.compliance_report(validation_source=[{"get_facts": {"hostname": "sw9"}}])
    assert not bad["complies"]


def test_unknown_command_is_a_test_failure() -> None:
    d = driver("getters")
    with pytest.raises(UnexpectedCommand):
        d.cli(["rm -rf /"])


def test_is_alive_and_close() -> None:
    d = driver("getters")
    assert d.is_alive() == {"is_alive": True}
    d.close()
    assert d.is_alive() == {"is_alive": False}


# --------------------------------------------------------------------------- config replace


def test_first_commit_sequence_and_diff() -> None:
    d = driver("commit_initial", verify_reload=True)
    d.load_replace_candidate(config=candidate("commit_initial"))
    diff = d.compare_config()
    assert diff.startswith("--- running\n+++ candidate\n")
    assert "+router bgp 65001\n" in diff and "+ neighbor 198.19.10.1 remote-as 65002\n" in diff
    assert "+interface Ethernet0\n" in diff
    assert not any(line.startswith("+frr version") for line in diff.splitlines())
    d.commit_config()
    assert sent(d) == sequence("commit_initial")
    commands = sent(d)
    # order of the device-changing steps: rollback point, install, reload, saved = running, the routing
    # daemon's own policy, cleanup
    steps = [commands.index(c) for c in commands if "frr.conf.rollback.new" in c or "fabricgen-new" in c
             or "--reload" in c]
    assert steps == sorted(steps) and len(steps) == 3
    assert commands[-3:] == ["/usr/lib/frr/frr-reload.py --test /etc/frr/frr.conf",
                             "vtysh -d bgpd -c 'show running-config'", f"rm -f {CAND}"]
    assert d.get_config(retrieve="candidate")["candidate"] == ""


def test_upload_sends_the_exact_candidate_on_stdin() -> None:
    d = driver("commit_initial")
    text = candidate("commit_initial")
    d.load_replace_candidate(config=text)
    assert isinstance(d.transport, FakeTransport)
    assert d.transport.stdins[0] == text
    assert d.get_config(retrieve="candidate")["candidate"] == text


def test_upload_corruption_is_detected() -> None:
    d = driver("commit_initial")
    with pytest.raises(ReplaceConfigException, match="corrupted"):
        d.load_replace_candidate(config=candidate("commit_initial") + "! other text\n")


def test_compare_is_empty_when_frr_has_nothing_to_do() -> None:
    d = driver("compare_noop")
    d.load_replace_candidate(config=candidate("commit_initial"))
    assert d.compare_config() == ""
    d.discard_config()
    assert sent(d) == sequence("compare_noop")
    assert "vtysh -c 'show running-config'" not in sent(d)


def test_a_read_only_driver_writes_nothing_that_stays() -> None:
    """Issue 23: a dry run created /etc/frr/.fabricgen on every switch.  Read-only (dry runs, validate), the
    candidate is fed on stdin to a private temp file that exists only while each check runs, and a commit
    is refused."""
    temp = "f=$(mktemp) || exit 1; trap 'rm -f \"$f\"' EXIT; cat > \"$f\"; "
    noop = json.loads((DATA / "compare_noop" / "commands.json").read_text())
    extra = {temp + 'vtysh --dryrun -f "$f"': noop[f"vtysh --dryrun -f {CAND}"],
             temp + '/usr/lib/frr/frr-reload.py --test "$f"': noop[f"/usr/lib/frr/frr-reload.py --test {CAND}"]}
    d = driver("compare_noop", extra, read_only=True)
    text = candidate("commit_initial")
    d.load_replace_candidate(config=text)
    assert d.compare_config() == ""
    with pytest.raises(ReplaceConfigException, match="a read-only connection .dry run, validate. never commits"):
        d.commit_config()
    d.discard_config()
    transport = d.transport
    assert isinstance(transport, FakeTransport)
    d.close()
    assert transport.commands == [*extra, "cat /etc/frr/frr.conf"]  # no mkdir, upload or rm under /etc/frr
    assert transport.stdins == [text, text, None]  # the candidate travels on stdin only


def test_commit_then_rollback_sequence() -> None:
    d = driver("commit_rollback", verify_reload=True)
    d.load_replace_candidate(config=candidate("commit_rollback"))
    diff = d.compare_config()
    assert "+ip router-id 198.19.250.1\n" in diff
    assert len([line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]) == 1
    d.commit_config()
    d.rollback()
    assert sent(d) == sequence("commit_rollback")
    tail = sent(d)[-5:]
    assert tail[0] == "test -s /etc/frr/frr.conf.rollback"
    assert "cp /etc/frr/frr.conf.rollback /etc/frr/frr.conf.fabricgen-new" in tail[1]
    assert tail[2] == "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
    assert "cp -p /etc/frr/frr.conf.fabricgen-prev /etc/frr/frr.conf" in tail[3]
    assert tail[4] == "/usr/lib/frr/frr-reload.py --test /etc/frr/frr.conf"  # saved = running after a rollback


def test_rejected_commit_restores_previous_config() -> None:
    d = driver("commit_rejected")
    d.load_replace_candidate(config=candidate("commit_rejected"))
    assert "+ neighbor 198.19.10.9 peer-group NOPE\n" in d.compare_config()
    with pytest.raises(ReplaceConfigException, match="previous config restored") as err:
        d.commit_config()
    assert "peer-group" in str(err.value)
    d.discard_config()
    assert sent(d) == sequence("commit_rejected")
    commands = sent(d)
    reloads = [i for i, c in enumerate(commands) if c == "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"]
    assert len(reloads) == 2  # the candidate (failed), then the rollback point
    assert "cp /etc/frr/frr.conf.rollback" in commands[reloads[1] - 1]
    assert "frr.conf.fabricgen-prev /etc/frr/frr.conf" in commands[reloads[1] + 1]


def test_restore_failure_is_reported_as_undetermined() -> None:
    reload = "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
    extra = {reload: [{"exit_status": 1, "stdout_text": "% Configure the peer-group first\n"},
                      {"exit_status": 1, "stdout_text": "% vtysh: bgpd is not running\n"}]}
    d = driver("commit_rejected", extra)
    d.load_replace_candidate(config=candidate("commit_rejected"))
    with pytest.raises(ConfigUndetermined, match="undetermined"):  # deploy journals it for --resume
        d.commit_config()


def test_syntax_error_is_rejected_at_load() -> None:
    d = driver("load_rejected")
    with pytest.raises(ReplaceConfigException, match="no-such-keyword"):
        d.load_replace_candidate(config=candidate("load_rejected"))
    assert sent(d) == sequence("load_rejected")
    assert d.compare_config() == ""
    with pytest.raises(ReplaceConfigException, match="no candidate"):
        d.commit_config()


def test_failed_precheck_changes_nothing() -> None:
    test_cmd = f"/usr/lib/frr/frr-reload.py --test {CAND}"
    extra = {test_cmd: [{"exit_status": 1, "stderr_text": "2025 ERROR: vtysh failed to process new configuration"}]}
    d = driver("commit_initial", extra)
    d.load_replace_candidate(config=candidate("commit_initial"))
    with pytest.raises(ReplaceConfigException, match="frr-reload --test failed"):
        d.compare_config()
    with pytest.raises(ReplaceConfigException):
        d.commit_config()
    assert not any("rollback" in c or "--reload" in c for c in sent(d))


def test_secrets_never_reach_exception_text() -> None:
    dry = f"vtysh --dryrun -f {CAND}"
    error = "line 9: % Unknown command: neighbor 198.18.0.1 password s3cr3t x\n"
    extra: dict[str, list[dict[str, Any]]] = {dry: [{"exit_status": 2, "stderr_text": error}],
             f"rm -f {CAND}": [{"exit_status": 0}]}
    d = driver("commit_initial", extra)
    with pytest.raises(ReplaceConfigException) as err:
        d.load_replace_candidate(config=candidate("commit_initial"))
    assert "s3cr3t" not in str(err.value) and "password <removed>" in str(err.value)


def test_unsupported_operations() -> None:
    d = driver("getters")
    with pytest.raises(MergeConfigException, match="full replace"):
        d.load_merge_candidate(config="hostname x\n")
    with pytest.raises(NotImplementedError):
        d.commit_config(revert_in=60)
    with pytest.raises(ReplaceConfigException, match="filename or a config"):
        d.load_replace_candidate()
    with pytest.raises(ReplaceConfigException, match="empty"):
        d.load_replace_candidate(config="\n")
    assert d.has_pending_commit() is False


def test_rollback_without_rollback_point() -> None:
    d = driver("getters", {"test -s /etc/frr/frr.conf.rollback": [{"exit_status": 1}]})
    with pytest.raises(CommandErrorException, match="no rollback point"):
        d.rollback()


def test_load_from_file(tmp_path: Path) -> None:
    path = tmp_path / "frr.conf"
    path.write_text(candidate("commit_initial"))
    d = driver("commit_initial")
    d.load_replace_candidate(filename=str(path))
    assert "router bgp 65001" in d.get_config(retrieve="candidate")["candidate"]


# --------------------------------------------------------------------------- nornir


def test_nornir_napalm_finds_the_driver_by_platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nornir import InitNornir
    from nornir_napalm.plugins.tasks import napalm_configure, napalm_get

    monkeypatch.setattr(FrrDriver, "_open_transport", MockFrrDriver._open_transport)
    monkeypatch.setattr(FrrDriver, "_new_token", MockFrrDriver._new_token)
    monkeypatch.setattr(FrrDriver, "case", "getters", raising=False)
    monkeypatch.setattr(FrrDriver, "extra", None, raising=False)
    (tmp_path / "hosts.yaml").write_text(
        "sw1:\n  hostname: 198.18.253.11\n  platform: frr\n  username: root\n"
        "  connection_options:\n    napalm:\n      extras:\n        optional_args:\n          key_file: /nonexistent\n")
    (tmp_path / "groups.yaml").write_text("{}\n")
    (tmp_path / "defaults.yaml").write_text("{}\n")
    nr = InitNornir(runner={"plugin": "serial"}, logging={"enabled": False}, inventory={
        "plugin": "SimpleInventory", "options": {
            "host_file": str(tmp_path / "hosts.yaml"), "group_file": str(tmp_path / "groups.yaml"),
            "defaults_file": str(tmp_path / "defaults.yaml")}})
    result = nr.run(task=napalm_get, getters=["facts", "lldp_neighbors"])
    assert not result.failed, result["sw1"].exception
    assert result["sw1"].result["facts"]["hostname"] == "sw1"
    conn = nr.inventory.hosts["sw1"].get_connection("napalm", nr.config)
    assert isinstance(conn, FrrDriver) and conn.netmiko_optional_args["key_file"] == "/nonexistent"
    nr.close_connections()

    monkeypatch.setattr(FrrDriver, "case", "commit_initial", raising=False)
    nr = InitNornir(runner={"plugin": "serial"}, logging={"enabled": False}, inventory={
        "plugin": "SimpleInventory", "options": {
            "host_file": str(tmp_path / "hosts.yaml"), "group_file": str(tmp_path / "groups.yaml"),
            "defaults_file": str(tmp_path / "defaults.yaml")}})
    result = nr.run(task=napalm_configure, configuration=candidate("commit_initial"), replace=True, dry_run=True)
    assert not result.failed, result["sw1"].exception
    assert "+router bgp 65001" in result["sw1"].diff
    nr.close_connections()


# --------------------------------------------------------------------------- setup script (tenants.sh)

SETUP = f"/etc/frr/.fabricgen/fabricgen-{TOKEN}-setup.sh"
UNDO = "/etc/frr/.fabricgen/setup-undo.sh"
RUN_SETUP = f": > {UNDO} && FABRICGEN_UNDO={UNDO} sh {SETUP}"
RUN_UNDO = f"if [ -s {UNDO} ]; then tac {UNDO} | sh -e; fi"
SAVE = ("set -e; vtysh -c 'show running-config no-header' > /etc/frr/frr.conf.rollback.new; test -s "
        "/etc/frr/frr.conf.rollback.new; mv -f /etc/frr/frr.conf.rollback.new /etc/frr/frr.conf.rollback; "
        "if [ -e /etc/frr/frr.conf ]; then cp -p /etc/frr/frr.conf /etc/frr/frr.conf.fabricgen-prev; else rm -f "
        "/etc/frr/frr.conf.fabricgen-prev; fi")
RED_VNI = "vtysh -c 'show evpn vni 10011 json'"
BIND_RED = ("vtysh -c 'configure terminal' -c 'router bgp 65001 vrf red' -c 'bgp router-id 198.18.0.3' "
            "-c 'no bgp default ipv4-unicast' -c 'address-family l2vpn evpn' -c exit-address-family -c exit "
            "-c 'interface Ethernet0 vrf red' -c 'ip address 198.18.32.0/31' -c exit -c 'vrf red' -c 'vni 10011' "
            "-c exit-vrf")
NETNS_VRFS = ("vrf red\n vni 10011\n netns /run/netns/red\nexit-vrf\n!\nvrf blue\n vni 10013\nexit-vrf\n!\n"
              "interface Ethernet0 vrf red\n ip address 198.18.32.0/31\nexit\n!\n"
              "router bgp 65001 vrf red\n bgp router-id 198.18.0.3\n no bgp default ipv4-unicast\n !\n"
              " address-family l2vpn evpn\n  route-target import 65000:10011\n exit-address-family\nexit\n")
RUNNING = "vtysh -c 'show running-config'"
POINT = "cat /etc/frr/frr.conf.rollback"
# zebra's `show evpn vni 10011 json` (zebra_vxlan.c zl3vni_print; FRR 8.4 as the lab runs it)
L3VNI = {"vni": 10011, "type": "L3", "vrf": "red", "tenantVrf": "red", "localVtepIp": "198.18.0.3",
         "vxlanIntf": "vx11", "sviIntf": "br11", "state": "Up", "sysMac": "ca:4e:9b:0e:cc:ed",
         "routerMac": "ca:4e:9b:0e:cc:ed", "vniFilter": "none", "l2Vnis": []}


def _setup_driver(script_status: int, show_vrf: list[str], case: str = "getters",
                  red_vni: tuple[str, ...] = (json.dumps(L3VNI),),
                  extra: dict[str, list[dict[str, Any]]] | None = None) -> MockFrrDriver:
    replies: dict[str, list[dict[str, Any]]] = {
        SAVE: [{}],
        f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {SETUP} && sha256sum {SETUP}":
            [{"stdout_sha256_of_stdin": SETUP}],
        RUN_SETUP: [{"stderr_text": "RTNETLINK answers: File exists\n" if script_status else "",
                     "exit_status": script_status}],
        f"rm -f {SETUP}": [{}],
        "vtysh -c 'show vrf'": [{"stdout_text": text} for text in show_vrf],
        RED_VNI: [{"stdout_text": text} for text in red_vni],
        BIND_RED: [{}], RUN_UNDO: [{}], f": > {UNDO}": [{}], POINT: [{"stdout_text": "frr version 8.4.4\n"}],
        RUNNING: [{"stdout_text": "frr version 8.4.4\nrouter bgp 65001\n bgp router-id 198.18.0.3\nexit\n"}],
        **(extra or {})}
    d = driver(case, replies)
    d.SETUP_WAIT = 2.0
    d._candidate = NETNS_VRFS
    return d


def test_setup_script_runs_then_waits_for_zebra_to_bind_the_namespaces() -> None:
    """Deploy's step before an FRR reload (Linux + FRR tenants.sh): save the rollback point, upload, run with
    its undo journal, remove, then wait until zebra lists every netns VRF of the candidate as active
    (`show vrf`: `vrf X id N netns <path>`); FRR's running config says which netns VRFs the build drops (none
    here); an L3VNI zebra already has up is left alone."""
    d = _setup_driver(0, ["vrf red inactive\n", "vrf blue id 4 table 1004\nvrf red id 3 netns /run/netns/red\n"])
    assert d.fabricgen_setup("#!/bin/sh\nip netns add red\n") == ["setup script run; zebra bound VRF red"]
    assert sent(d) == [SAVE, f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {SETUP} && sha256sum {SETUP}",
                       RUN_SETUP, f"rm -f {SETUP}", "vtysh -c 'show vrf'", "vtysh -c 'show vrf'", RUNNING, RED_VNI]


def test_setup_binds_a_new_l3vni_and_waits_until_zebra_has_it_up() -> None:
    """A new tenant: its BGP instance but its import route targets first, then its ports' addresses (FRR
    re-imports a VRF's EVPN routes when its VRF changes under them, and zebra then loses the router MACs),
    then `vrf red / vni 10011`, and the reload waits until zebra lists the L3VNI up; the route targets that
    import the other leaves' routes come only with the reload."""
    down = json.dumps({**L3VNI, "state": "Down", "sviIntf": "None"})
    d = _setup_driver(0, ["vrf red id 3 netns /run/netns/red\n"], red_vni=("% VNI 10011 does not exist\n", down,
                                                                            json.dumps(L3VNI)))
    assert d.fabricgen_setup("#!/bin/sh\n") == ["setup script run; zebra bound VRF red",
                                                "L3VNI 10011 (VRF red) up in zebra before the reload"]
    assert sent(d)[-5:] == [RUNNING, RED_VNI, BIND_RED, RED_VNI, RED_VNI]


def test_setup_failures_undo_what_the_script_created() -> None:
    """The script fails, zebra never binds a namespace, or an L3VNI never comes up: the journal of what this
    run created runs newest first (and FRR's rollback point comes back once FRR was touched); FRR's config is
    as before."""
    d = _setup_driver(2, ["vrf red inactive\n"])
    with pytest.raises(ReplaceConfigException, match="the setup script exited 2; what the setup script created "
                                                     "is removed again, FRR left as it was:\nRTNETLINK"):
        d.fabricgen_setup("#!/bin/sh\nfalse\n")
    assert sent(d)[-3:] == [f"rm -f {SETUP}", RUN_UNDO, f": > {UNDO}"] and "vtysh -c 'show vrf'" not in sent(d)
    d = _setup_driver(0, ["vrf red inactive\n"])
    with pytest.raises(ReplaceConfigException, match="zebra has not bound the namespace of VRF red within 2s"):
        d.fabricgen_setup("#!/bin/sh\n")
    assert sent(d)[-2:] == [RUN_UNDO, f": > {UNDO}"]
    restore = "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
    d = _setup_driver(0, ["vrf red id 3 netns /run/netns/red\n"], case="commit_rejected", red_vni=("",))
    with pytest.raises(ReplaceConfigException, match=r"zebra has not brought L3VNI 10011 \(VRF red\) up within 2s"):
        d.fabricgen_setup("#!/bin/sh\n")
    commands = sent(d)
    assert commands.index(BIND_RED) < commands.index(RUN_UNDO) < commands.index(restore)
    ro = driver("getters", read_only=True)
    with pytest.raises(ReplaceConfigException, match="never runs the setup script"):
        ro.fabricgen_setup("#!/bin/sh\n")
    assert sent(ro) == []


def _failed_after_setup(extra: dict[str, list[dict[str, Any]]]) -> tuple[MockFrrDriver, list[str]]:
    """The setup script run for red's candidate, then its commit, rejected at the reload (previous config
    restored); the driver and what it sent."""
    d = _setup_driver(0, ["vrf red id 3 netns /run/netns/red\n"], case="commit_rejected", extra=extra)
    d.load_replace_candidate(config=candidate("commit_rejected"))
    assert d.compare_config()
    d._candidate = candidate("commit_rejected") + NETNS_VRFS
    d.fabricgen_setup("#!/bin/sh\n")
    with pytest.raises(ReplaceConfigException, match="previous config restored"):
        d.commit_config()
    return d, sent(d)

def test_a_failed_commit_after_the_setup_undoes_the_script_then_restores_frr() -> None:
    """Issue 25: a commit that fails after tenants.sh ran removes what the script created (its journal,
    newest first) before FRR's rollback point is reloaded; the rollback point is the one saved before the
    script, never one taken after it."""
    d, commands = _failed_after_setup({})
    reloads = [i for i, c in enumerate(commands) if c == "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"]
    assert len(reloads) == 2 and commands.count(SAVE) == 1  # saved once, before the script
    assert commands.index(SAVE) < commands.index(RUN_SETUP) < reloads[0] < commands.index(RUN_UNDO) < reloads[1]
    assert d._setup_journal is None  # the journal ran once: a later rollback() has nothing of the script left


def test_after_the_reload_a_vtep_without_its_router_mac_gets_the_l3vni_bound_again() -> None:
    """FRR 8.4 can lose a remote VTEP's router MAC when bgpd re-imports a new VRF's routes during the reload:
    the kernel route stays (`via 198.18.0.4 dev br11 onlink`) but its neighbour is gone.  The driver binds the
    L3VNI again (`no vni`, wait until the VRF's routes are withdrawn, `vni`), waits until every VTEP has its
    neighbour, and says so; once a rebind brought every neighbour it stops; a VRF still without one after
    REBINDS rebinds is named in the report (the commit stands)."""
    routes = json.dumps([{"dst": "198.18.32.8/31", "gateway": "198.18.0.4", "dev": "br11", "protocol": "bgp",
                          "flags": ["onlink"]}])
    neigh = json.dumps([{"dst": "198.18.0.4", "dev": "br11", "lladdr": "0a:f9:12:cc:dc:91", "state": ["NOARP"]}])
    unbind = "vtysh -c 'configure terminal' -c 'vrf red' -c 'no vni 10011' -c exit-vrf"
    rebind = "vtysh -c 'configure terminal' -c 'vrf red' -c 'vni 10011' -c exit-vrf"
    extra = {"ip -n red -j route show proto bgp": [{"stdout_text": routes}, {"stdout_text": "[]"},
                                                   {"stdout_text": routes}],
             "ip -n red -j neigh show": [{"stdout_text": "[]"}, {"stdout_text": neigh}],
             unbind: [{}], rebind: [{}]}
    d = _setup_driver(0, ["vrf red id 3 netns /run/netns/red\n"], extra=extra)
    d.SETTLE = 0.0
    d._new_l3vnis = {"red": 10011}
    assert d._settle_l3vnis() == ""
    assert d.reload_notes == ["L3VNI 10011 (VRF red) bound again after the reload: zebra had lost the router MAC "
                              "of VTEP 198.18.0.4"]
    commands = sent(d)
    assert commands.index(unbind) < commands.index(rebind) and commands.count(unbind) == 1  # once was enough
    assert commands[commands.index(unbind) + 1] == "ip -n red -j route show proto bgp"  # withdrawn first
    d = _setup_driver(0, ["vrf red id 3 netns /run/netns/red\n"], extra={
        **extra, "ip -n red -j neigh show": [{"stdout_text": "[]"}], "ip -n red -j route show proto bgp": [
            {"stdout_text": routes}, {"stdout_text": "[]"}, {"stdout_text": routes}]})
    d.SETTLE = d.SETUP_WAIT = 0.0
    d._new_l3vnis = {"red": 10011}
    assert d._settle_l3vnis() == ""
    assert d.reload_notes[-1] == ("VRF red: still no router MAC for VTEP 198.18.0.4 after binding its L3VNI again: "
                                  "its traffic to that VTEP is dropped")
    assert sent(d).count(unbind) == sent(d).count(rebind) == d.REBINDS  # bound again REBINDS times, then a note


# --------------------------------------------------------------------------- removing a tenant (tenants.sh remove)

AMBER_RUNNING = ("frr version 8.4.4\nvrf amber\n vni 10014\n netns /run/netns/amber\nexit-vrf\n!\n"
                 "vrf red\n vni 10011\n netns /run/netns/red\nexit-vrf\n!\n"
                 "interface Ethernet24 vrf amber\n ip address 198.18.32.6/31\nexit\n!\n"
                 "router bgp 65001 vrf amber\n bgp router-id 198.18.0.3\nexit\n")
AMBER_GONE = "tenant amber no longer in the build: fabricgen created it here and removes it once FRR has let go of it\n"
UNBIND_AMBER = "vtysh -c 'configure terminal' -c 'vrf amber' -c 'no vni 10014' -c exit-vrf"
AMBER_VNI = "vtysh -c 'show evpn vni 10014 json'"
INTERIM = f"/etc/frr/.fabricgen/fabricgen-{TOKEN}-interim.conf"
RUN_REMOVE = f"FABRICGEN_UNDO={UNDO} sh {SETUP} remove"
RELOAD = "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
TEST_SAVED = "/usr/lib/frr/frr-reload.py --test /etc/frr/frr.conf"
AMBER_ROUTES = "ip -n amber -j route show proto bgp"
AMBER_NEIGH = "ip -n amber -j neigh show"
AMBER_ROUTE = json.dumps([{"dst": "198.18.32.14/31", "gateway": "198.18.0.4", "dev": "br14", "protocol": "bgp",
                           "flags": ["onlink"]}])
AMBER_RMAC = json.dumps([{"dst": "198.18.0.4", "dev": "br14", "lladdr": "0a:f9:12:cc:dc:91", "state": ["NOARP"]}])
RUNNING_NO_HEADER = "vtysh -c 'show running-config no-header'"
# FRR's running config after the candidate's reload failed: Ethernet24 back in the default VRF, with its address
RETURNED = ("frr version 8.4.4\nvrf red\n vni 10011\n netns /run/netns/red\nexit-vrf\n!\n"
            "interface Ethernet24\n description gpu_leaf:gpu0008:eth1\n ip address 198.18.32.6/31\nexit\n!\n"
            "router bgp 65001\n bgp router-id 198.18.0.3\nexit\n")
AMBER_ITFS = "vtysh -c 'show interface vrf amber json'"
DEFAULT_ITFS = "vtysh -c 'show interface vrf default json'"


def zebra_port(vrf: str, device: bool) -> str:
    """zebra's `show interface vrf <vrf> json` of Ethernet24 (FRR 8.4, as the lab shows it): a kernel device
    (its ifindex) or only the config zebra keeps once the device left the VRF (a pseudo interface)."""
    itf: dict[str, Any] = {"administrativeStatus": "up" if device else "down", "vrfName": vrf,
                           "pseudoInterface": not device}
    return json.dumps({"Ethernet24": {**itf, "index": 10} if device else itf})


def install(src: str) -> str:
    """The driver's install of ``src`` as frr.conf (napalm_frr FrrDriver._install)."""
    return (f"set -e; cp {src} /etc/frr/frr.conf.fabricgen-new; chown --reference=/etc/frr/frr.conf "
            "/etc/frr/frr.conf.fabricgen-new 2>/dev/null || true; chmod --reference=/etc/frr/frr.conf "
            "/etc/frr/frr.conf.fabricgen-new 2>/dev/null || true; mv -f /etc/frr/frr.conf.fabricgen-new "
            "/etc/frr/frr.conf")


def _removal_driver(case: str, script_out: str = AMBER_GONE, interim_test: str = "",
                    final_reload: int = 0, zebra_late: int = 0) -> MockFrrDriver:
    """A switch running tenants red and amber (AMBER_RUNNING) and a candidate with red alone, Ethernet24 back in
    the default VRF; its tenants.sh names amber as no longer in the build (``script_out``); FRR's reloads: the
    interim one succeeds, the candidate's exits ``final_reload``, the undo's (without Ethernet24's default-VRF
    stanza, then the rollback point) succeed; ``frr-reload --test`` of frr.conf finds ``interim_test`` after
    the interim, then nothing.  After an undo's journal, zebra answers ``zebra_late`` polls without amber bound
    and Ethernet24 in it, then has both."""
    extra: dict[str, list[dict[str, Any]]] = {
        RUN_SETUP: [{"stdout_text": script_out}],
        # compare_config's and the setup's; then, once the namespace is gone, without amber
        RUNNING: [{"stdout_text": AMBER_RUNNING}, {"stdout_text": AMBER_RUNNING},
                  {"stdout_text": "frr version 8.4.4\nvrf red\n vni 10011\n netns /run/netns/red\nexit-vrf\n"}],
        # the setup's, once the namespace is gone; after an undo's journal: zebra_late polls without amber, then it
        "vtysh -c 'show vrf'": [{"stdout_text": "vrf amber id 4 netns /run/netns/amber\nvrf red id 3 netns "
                                                "/run/netns/red\n"},
                                *[{"stdout_text": "vrf amber inactive\nvrf red id 3 netns /run/netns/red\n"}] * (
                                    1 + zebra_late),
                                {"stdout_text": "vrf amber id 5 netns /run/netns/amber\nvrf red id 3 netns "
                                                "/run/netns/red\n"}],
        AMBER_ITFS: [*[{"stdout_text": zebra_port("amber", False)}] * zebra_late,
                     {"stdout_text": zebra_port("amber", True)}],
        DEFAULT_ITFS: [*[{"stdout_text": zebra_port("default", True)}] * zebra_late,
                       {"stdout_text": zebra_port("default", False)}],
        RUNNING_NO_HEADER: [{"stdout_text": RETURNED}],
        UNBIND_AMBER: [{}], AMBER_VNI: [{"stdout_text": "% VNI 10014 does not exist\n"}],
        f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {INTERIM} && sha256sum {INTERIM}":
            [{"stdout_sha256_of_stdin": INTERIM}],
        install(INTERIM): [{}],
        RELOAD: [{}, {"exit_status": final_reload, "stderr_text": "line 2: Failure to communicate[13] to bgpd, "
                                                                  "line:  neighbor 198.19.10.9 peer-group NOPE\n"
                      if final_reload else ""}, {}],
        TEST_SAVED: [{"stdout_text": interim_test}, {}],
        f"rm -f {INTERIM}": [{}], RUN_REMOVE: [{"stdout_text": "tenant amber removed: what fabricgen created for "
                                                               "it, newest first\n"}],
        POINT: [{"stdout_text": AMBER_RUNNING}], AMBER_ROUTES: [{"stdout_text": AMBER_ROUTE}],
        AMBER_NEIGH: [{"stdout_text": AMBER_RMAC}]}
    d = _setup_driver(0, [], case=case, extra=extra)
    d.load_replace_candidate(config=candidate(case))
    assert d.compare_config()
    d._candidate = candidate(case) + NETNS_VRFS + "interface Ethernet24\n ip address 198.18.32.6/31\nexit\n"
    return d


def test_removing_a_tenant_unbinds_reloads_without_it_then_removes_its_namespace() -> None:
    """Issue 25: a tenant the switch's record lists and the build no longer has.  Inside the commit, before the
    candidate's reload: `no vni` (bgpd refuses to delete a VRF's BGP instance while its L3VNI is configured)
    until zebra has dropped it; FRR reloads the candidate without Ethernet24's default-VRF stanza and with amber
    kept as its `netns` line, while the namespace exists, and must then run exactly that; `tenants.sh remove`
    removes what the record lists (journalled); zebra no longer binds amber; only then the candidate's reload
    (Ethernet24's planned address in the default VRF) and saved = running."""
    d = _removal_driver("commit_initial")
    assert "tenant amber no longer in the build" in " ".join(d.fabricgen_setup("#!/bin/sh\n"))
    d.commit_config()
    commands = sent(d)
    # the interim config installed as frr.conf and reloaded (frr-reload writes the running config over frr.conf
    # after reloading any other file), then the candidate installed again and reloaded
    steps = [UNBIND_AMBER, AMBER_VNI, install(INTERIM), RELOAD, TEST_SAVED, RUN_REMOVE, install(CAND), RELOAD,
             TEST_SAVED]
    at, found = 0, []
    for step in steps:
        at = commands.index(step, at) + 1
        found.append(step)
    assert found == steps and commands.count(RELOAD) == 2 and commands.count(install(CAND)) == 2
    assert commands.index(RUN_SETUP) < commands.index(UNBIND_AMBER) and RUN_UNDO not in commands
    assert commands.count(SAVE) == 1 and commands.index(SAVE) < commands.index(RUN_SETUP)
    after = commands[commands.index(RUN_REMOVE):len(commands) - commands[::-1].index(install(CAND))]
    assert "vtysh -c 'show vrf'" in after and RUNNING in after  # zebra no longer ties amber to its namespace
    assert isinstance(d.transport, FakeTransport)
    interim = d.transport.stdins[commands.index(f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {INTERIM} && "
                                                f"sha256sum {INTERIM}")]
    assert interim is not None and interim.endswith("vrf amber\n netns /run/netns/amber\nexit-vrf\n")
    assert "interface Ethernet24\n" not in interim and "interface Ethernet0 vrf red\n" in interim
    assert d.reload_notes[-1].startswith("tenant amber removed: L3VNI unbound, FRR reloaded without it while its "
                                         "namespace existed") and "port Ethernet24 returned" in d.reload_notes[-1]
    assert d._setup_journal == UNDO  # kept: a rollback() later in this session makes amber again first


def test_a_failed_removal_makes_the_tenant_again_then_restores_frr() -> None:
    """The candidate's reload fails after `tenants.sh remove` ran: the journal runs newest first (it holds each
    removed object's redo, so amber's namespace, port, VXLAN device and bridge come back) before FRR's rollback
    point, saved before anything changed, is reloaded.  FRR still finding work after the first reload fails the
    commit before anything of amber's kernel side is touched."""
    d = _removal_driver("commit_rejected", final_reload=1)
    d.fabricgen_setup("#!/bin/sh\n")
    with pytest.raises(ReplaceConfigException, match="previous config restored: frr-reload --reload exited 1"):
        d.commit_config()
    commands = sent(d)
    # the interim's, the candidate's, the undo's without Ethernet24's default-VRF stanza, the rollback point's
    reloads = [i for i, c in enumerate(commands) if c == RELOAD]
    assert len(reloads) == 4 and commands.count(SAVE) == 1
    assert reloads[0] < commands.index(RUN_REMOVE) < reloads[1] < reloads[2] < commands.index(RUN_UNDO) < reloads[3]
    assert commands[reloads[3] - 1] == install("/etc/frr/frr.conf.rollback")
    # amber made again: its routes from before the removal back, each VTEP with its router MAC
    assert commands.index(AMBER_ROUTES) < commands.index(UNBIND_AMBER)  # what amber routed, read first
    assert AMBER_ROUTES in commands[reloads[3]:] and AMBER_NEIGH in commands[reloads[3]:]
    assert UNBIND_AMBER not in commands[reloads[3]:]  # every VTEP had its router MAC: nothing bound again
    # a VTEP without its router MAC after the undo: the L3VNI bound again, and the failure says so
    d = _removal_driver("commit_rejected", final_reload=1)
    assert isinstance(d.transport, FakeTransport)
    d.transport.responses.update({AMBER_NEIGH: [{"stdout_text": "[]"}],
                                  "vtysh -c 'configure terminal' -c 'vrf amber' -c 'vni 10014' -c exit-vrf": [{}]})
    d.fabricgen_setup("#!/bin/sh\n")
    d.SETTLE = d.SETUP_WAIT = 0.0
    with pytest.raises(ReplaceConfigException) as err:
        d.commit_config()
    assert "tenant amber removed" not in str(err.value)  # the undone commit's own note no longer holds
    assert str(err.value).endswith(
        "\nafter the undo: L3VNI 10014 (VRF amber) bound again after the reload: zebra had lost the router MAC of "
        "VTEP 198.18.0.4\nafter the undo: VRF amber: still no router MAC for VTEP 198.18.0.4 after binding its "
        "L3VNI again: its traffic to that VTEP is dropped")
    assert sent(d).count(UNBIND_AMBER) == 1 + d.REBINDS  # the removal's, then each rebind's
    d = _removal_driver("commit_rejected", interim_test="Lines To Delete\n===============\nno router bgp 65001 "
                                                        "vrf amber\n\nLines To Add\n============\n")
    d.fabricgen_setup("#!/bin/sh\n")
    with pytest.raises(ReplaceConfigException, match="after the reload without the removed tenants FRR still has "
                                                     "to do:\n-no router bgp 65001 vrf amber"):
        d.commit_config()
    commands = sent(d)
    reloads = [i for i, c in enumerate(commands) if c == RELOAD]  # the interim's, the restore's
    assert RUN_REMOVE not in commands and len(reloads) == 2
    assert reloads[0] < commands.index(RUN_UNDO) < reloads[1]


def test_an_undone_removal_hands_the_port_back_to_frr_only_once_zebra_has_it() -> None:
    """Measured live under load: the rollback point's reload, right after the journal made amber again, read
    FRR's running config before zebra had bound amber's new namespace, sent `netns /run/netns/amber` itself
    ("Can not associate NS", or "VRF N already configured with NETNS") and still had to delete Ethernet24's
    default-VRF stanza after the port had left ("we failed to remove this command"): the leaf was left
    undetermined.  So, before the journal, FRR's running config is reloaded without that stanza (the port
    still in the default VRF); after it, the driver polls zebra until amber is bound again and holds
    Ethernet24 as a device, gone from the default VRF; only then the rollback point.  zebra never getting
    there: the rollback point is still reloaded, and the device is undetermined, naming what zebra lacks."""
    upload = f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {INTERIM} && sha256sum {INTERIM}"
    d = _removal_driver("commit_rejected", final_reload=1, zebra_late=2)
    d.fabricgen_setup("#!/bin/sh\n")
    with pytest.raises(ReplaceConfigException, match="previous config restored: frr-reload --reload exited 1"):
        d.commit_config()
    commands = sent(d)
    reloads = [i for i, c in enumerate(commands) if c == RELOAD]
    journal = commands.index(RUN_UNDO)
    drop = reloads[2]  # the interim's, the candidate's, this, the rollback point's
    assert len(reloads) == 4 and reloads[1] < commands.index(RUNNING_NO_HEADER) < drop < journal < reloads[3]
    assert commands[drop - 2:drop + 2] == [upload, install(INTERIM), RELOAD, TEST_SAVED]  # running = it, checked
    assert isinstance(d.transport, FakeTransport)
    dropped = d.transport.stdins[drop - 2]
    assert dropped is not None and "interface Ethernet24" not in dropped
    assert dropped == RETURNED.replace("interface Ethernet24\n description gpu_leaf:gpu0008:eth1\n ip address "
                                       "198.18.32.6/31\nexit\n", "")  # nothing else of FRR's touched
    polls = [i for i, c in enumerate(commands) if c == AMBER_ITFS]
    assert len(polls) == 3 and commands.count(DEFAULT_ITFS) == 3  # two polls found amber not back yet
    assert journal < polls[0] and polls[-1] < reloads[3]
    assert commands[polls[-1] + 1:reloads[3] - 1] == [DEFAULT_ITFS]  # the last poll, then the rollback point
    # zebra never has amber back within SETUP_WAIT: the rollback point all the same, and undetermined
    d = _removal_driver("commit_rejected", final_reload=1, zebra_late=1000)
    d.fabricgen_setup("#!/bin/sh\n")
    d.SETUP_WAIT = 0.0
    with pytest.raises(ConfigUndetermined, match=r"AND restoring the previous config failed \(zebra still lacks "
                                                 r"VRF amber bound to its namespace, Ethernet24 in VRF amber, "
                                                 r"Ethernet24 gone from the default VRF 0s after the undo's journal "
                                                 r"made tenant amber again\); the device config is undetermined"):
        d.commit_config()
    commands = sent(d)
    assert commands.index(RUN_UNDO) < commands.index(AMBER_ITFS) < len(commands) - commands[::-1].index(RELOAD) - 1
    assert commands.count(RELOAD) == 4


def test_a_failed_add_lets_frr_go_of_the_tenant_before_its_namespace_is_removed() -> None:
    """The candidate adding amber fails at its reload after tenants.sh made amber's namespace and moved
    Ethernet24 in.  Measured live: with the namespace removed first, the rollback point's reload could not
    delete `interface Ethernet24 vrf amber` and the leaf was left undetermined.  So the undo goes the way a
    removal does: amber's L3VNI unbound, the rollback point reloaded with amber kept as its `netns` line and
    without Ethernet24's default-VRF stanza, while the namespace exists; then the journal; once zebra no longer
    binds amber, the rollback point itself."""
    point = ("frr version 8.4.4\nvrf red\n vni 10011\n netns /run/netns/red\nexit-vrf\n!\n"
             "interface Ethernet24\n ip address 198.18.32.6/31\nexit\n")
    extra: dict[str, list[dict[str, Any]]] = {
        POINT: [{"stdout_text": point}],
        # compare_config's and the setup's; the undo's (amber added); once amber's namespace is gone
        RUNNING: [{"stdout_text": "frr version 8.4.4\n"}, {"stdout_text": "frr version 8.4.4\n"},
                  {"stdout_text": AMBER_RUNNING}, {"stdout_text": "frr version 8.4.4\n"}],
        "vtysh -c 'show vrf'": [{"stdout_text": "vrf red id 3 netns /run/netns/red\n"},
                                {"stdout_text": "vrf amber inactive\nvrf red id 3 netns /run/netns/red\n"}],
        UNBIND_AMBER: [{}], AMBER_VNI: [{"stdout_text": "% VNI 10014 does not exist\n"}],
        f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {INTERIM} && sha256sum {INTERIM}":
            [{"stdout_sha256_of_stdin": INTERIM}],
        install(INTERIM): [{}], f"rm -f {INTERIM}": [{}], TEST_SAVED: [{}],
        RELOAD: [{"exit_status": 1, "stderr_text": "line 2: Failure to communicate[13] to zebra, line:  ip address "
                                                   "127.0.0.2/32\n% Invalid address\n"}, {}, {}]}
    d, commands = _failed_after_setup(extra)
    steps = [RELOAD, POINT, RUNNING, UNBIND_AMBER, AMBER_VNI, install(INTERIM), RELOAD, TEST_SAVED, RUN_UNDO,
             "vtysh -c 'show vrf'", install("/etc/frr/frr.conf.rollback"), RELOAD]
    at = 0
    for step in steps:
        at = commands.index(step, at) + 1
    assert commands.count(RELOAD) == 3 and commands.count(RUN_UNDO) == 1
    assert isinstance(d.transport, FakeTransport)
    interim = d.transport.stdins[commands.index(f"umask 077; mkdir -p /etc/frr/.fabricgen && cat > {INTERIM} && "
                                                f"sha256sum {INTERIM}")]
    assert interim is not None and interim.endswith("!\nvrf amber\n netns /run/netns/amber\nexit-vrf\n")
    assert "interface Ethernet24\n" not in interim and "vrf red\n vni 10011\n" in interim  # red left as it runs
    assert "vrf red' -c 'no vni" not in " ".join(commands)
    base = {"stdout_text": "frr version 8.4.4\n"}
    _, commands = _failed_after_setup({**extra, RUNNING: [base, base, {"stdout_text": point}]})
    assert UNBIND_AMBER not in commands and INTERIM not in " ".join(commands)  # nothing added: journal, then restore


def test_a_dropped_vrf_without_a_record_is_refused_before_anything_changes() -> None:
    """FRR runs netns VRF amber, the build drops it, and tenants.sh has no record of making it (it names no
    tenant): fabricgen cannot prove what to remove nor give the ports back, so the setup undoes what it made and
    refuses; FRR is never reloaded."""
    d = _removal_driver("commit_initial", script_out="")
    with pytest.raises(ReplaceConfigException, match="the build drops VRF amber, whose network namespace "
                                                     "fabricgen has no record of making here"):
        d.fabricgen_setup("#!/bin/sh\n")
    assert RUN_UNDO in sent(d) and RELOAD not in sent(d) and UNBIND_AMBER not in sent(d)
