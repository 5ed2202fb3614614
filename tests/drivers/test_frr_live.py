"""FrrDriver over real SSH against a 2-switch lab built by the shared engine (fabricgen.lab).

Every getter, and load/compare/commit/rollback, including a candidate FRR's parser
rejects (refused at load) and one bgpd rejects at reload (device must end on its
previous config, byte for byte).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import ReplaceConfigException

from fabricgen.lab import LabState, lab_down, lab_up, prune_stale_labs
from fabricgen.lab.daemons import missing_tools
from napalm_frr import FrrDriver
from tests.drivers import lab_fabric as lf

pytestmark = pytest.mark.lab

SW2_LOOPBACK = f"{lf.LOOPBACK['sw2']}/32"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    if os.geteuid() != 0:
        pytest.skip("live lab needs root (network namespaces, mounts)")
    if missing_tools():
        pytest.skip(f"live lab needs {', '.join(missing_tools())} (apt install frr lldpd openssh-server)")
    workdir = tmp_path_factory.mktemp("drvlab")
    prune_stale_labs()  # what a cut-off run left behind (its name had another PID, but its subnet is ours)
    state = lab_up(lf.topology(str(workdir), f"fgd{os.getpid() % 100000}"))
    try:
        yield state
    finally:
        lab_down(workdir)


@pytest.fixture(scope="module")
def devices(lab: LabState) -> Iterator[dict[str, FrrDriver]]:
    cls = get_network_driver("frr")
    out: dict[str, FrrDriver] = {}
    for name, node in lab.nodes.items():
        d = cls(node.mgmt_ip, lab.ssh_user, "", optional_args=lf.optional_args(lab.key_file, lab.known_hosts))
        d.open()
        out[name] = d
    try:
        yield out
    finally:
        for d in out.values():
            d.close()


@pytest.fixture(scope="module")
def deployed(devices: dict[str, FrrDriver]) -> dict[str, FrrDriver]:
    """Push both configs through the driver (replace), then wait for BGP, LLDP and ECMP."""
    for name, d in devices.items():
        d.load_replace_candidate(config=lf.frr_config(name))
        diff = d.compare_config()
        assert f"+router bgp {lf.ASN[name]}\n" in diff
        d.commit_config()
    sw1 = devices["sw1"]
    lf.poll(lambda: lf.bgp_up(sw1) and lf.lldp_ports(sw1) and sw1.get_ecmp_paths(SW2_LOOPBACK) == 2,
            60, "sw1 BGP, LLDP and 2 ECMP paths")
    return devices


def test_facts(devices: dict[str, FrrDriver]) -> None:
    facts = devices["sw2"].get_facts()
    assert facts["hostname"] == "sw2" and facts["vendor"] == "FRRouting"
    assert facts["os_version"].startswith("8.") and facts["uptime"] > 0
    assert {"Ethernet0", "Ethernet8", "lo"} <= set(facts["interface_list"])


def test_commit_is_idempotent(deployed: dict[str, FrrDriver]) -> None:
    for name, d in deployed.items():
        d.load_replace_candidate(config=lf.frr_config(name))
        assert d.compare_config() == ""
        d.discard_config()
        config = d.get_config()
        assert config["startup"] == lf.frr_config(name)
        assert f"router bgp {lf.ASN[name]}" in config["running"]


def test_state_getters(deployed: dict[str, FrrDriver]) -> None:
    sw1 = deployed["sw1"]
    peers = sw1.get_bgp_neighbors()["global"]["peers"]
    assert set(peers) == {"198.19.10.1", "198.19.10.3"}
    assert all(p["is_up"] and p["remote_id"] == lf.LOOPBACK["sw2"] and p["remote_as"] == 65002 for p in peers.values())
    assert all(p["address_family"]["ipv4"]["received_prefixes"] == 1 for p in peers.values())
    assert len(sw1.get_bgp_neighbors_detail()["global"][65002]) == 2
    assert sw1.get_lldp_neighbors() == {"Ethernet0": [{"hostname": "sw2", "port": "Ethernet0"}],
                                        "Ethernet8": [{"hostname": "sw2", "port": "Ethernet8"}]}
    assert sw1.get_lldp_neighbors_detail("Ethernet8")["Ethernet8"][0]["remote_port_description"]
    intfs = sw1.get_interfaces()
    assert intfs["Ethernet0"]["is_up"] and intfs["Ethernet0"]["mtu"] == 9216
    assert intfs["Ethernet0"]["description"] == "to sw2 Ethernet0"
    assert sw1.get_interfaces_ip()["Ethernet8"]["ipv4"] == {"198.19.10.2": {"prefix_length": 31}}
    assert sw1.get_interfaces_counters()["Ethernet0"]["tx_octets"] > 0
    hops = sw1.get_route_to(SW2_LOOPBACK)[SW2_LOOPBACK]
    assert {h["outgoing_interface"] for h in hops if h["selected_next_hop"]} == {"Ethernet0", "Ethernet8"}
    assert sw1.get_ecmp_paths(SW2_LOOPBACK) == 2
    report = sw1.compliance_report(validation_source=[
        {"get_facts": {"hostname": "sw1"}},
        {"get_bgp_neighbors": {"global": {"peers": {"198.19.10.1": {"is_up": True}, "198.19.10.3": {"is_up": True}}}}},
        {"get_lldp_neighbors": {"Ethernet8": [{"hostname": "sw2", "port": "Ethernet8"}]}},
    ])
    assert report["complies"], report


def test_commit_and_rollback(deployed: dict[str, FrrDriver]) -> None:
    sw1 = deployed["sw1"]
    before = sw1.get_config()
    changed = lf.frr_config("sw1", extra_top="ip router-id 198.19.250.1")
    sw1.load_replace_candidate(config=changed)
    diff = sw1.compare_config()
    assert "+ip router-id 198.19.250.1\n" in diff
    sw1.commit_config()
    after = sw1.get_config()
    assert "ip router-id 198.19.250.1" in after["running"] and after["startup"] == changed
    sw1.rollback()
    restored = sw1.get_config()
    assert restored["running"] == before["running"]
    assert restored["startup"] == before["startup"]


def test_parser_rejection_at_load_changes_nothing(deployed: dict[str, FrrDriver]) -> None:
    sw1 = deployed["sw1"]
    before = sw1.get_config()
    with pytest.raises(ReplaceConfigException, match="no-such-keyword"):
        sw1.load_replace_candidate(config=lf.frr_config("sw1", extra_bgp=" neighbor 198.19.10.1 no-such-keyword 7"))
    assert sw1.get_config() == before


def test_daemon_rejection_at_commit_restores_previous_config(deployed: dict[str, FrrDriver]) -> None:
    sw1 = deployed["sw1"]
    before = sw1.get_config()
    # valid syntax (vtysh --dryrun passes), but bgpd refuses a peer-group that does not exist;
    # the rest of the candidate (a new description) must not survive either
    bad = lf.frr_config("sw1", extra_bgp=" neighbor 198.19.10.9 peer-group NOPE").replace(
        "description to sw2 Ethernet0", "description CHANGED")
    sw1.load_replace_candidate(config=bad)
    assert "+ neighbor 198.19.10.9 peer-group NOPE" in sw1.compare_config()
    with pytest.raises(ReplaceConfigException, match="previous config restored"):
        sw1.commit_config()
    after = sw1.get_config()
    assert after["running"] == before["running"]
    assert after["startup"] == before["startup"]
    assert "CHANGED" not in after["running"]
    assert lf.bgp_up(sw1)


def test_nornir_napalm_uses_the_driver(deployed: dict[str, FrrDriver], lab: LabState, tmp_path: Path) -> None:
    from nornir import InitNornir
    from nornir.core.task import Task
    from nornir_napalm.plugins.tasks import napalm_configure, napalm_get

    hosts = "".join(
        f"{name}:\n  hostname: {node.mgmt_ip}\n  platform: frr\n  username: root\n" for name, node in lab.nodes.items())
    (tmp_path / "hosts.yaml").write_text(hosts)
    (tmp_path / "groups.yaml").write_text("{}\n")
    (tmp_path / "defaults.yaml").write_text(
        "connection_options:\n  napalm:\n    extras:\n      optional_args:\n"
        f"        key_file: {lab.key_file}\n        allow_agent: false\n        known_hosts: {lab.known_hosts}\n")
    nr = InitNornir(runner={"plugin": "threaded", "options": {"num_workers": 2}}, logging={"enabled": False},
                    inventory={"plugin": "SimpleInventory", "options": {
                        "host_file": str(tmp_path / "hosts.yaml"), "group_file": str(tmp_path / "groups.yaml"),
                        "defaults_file": str(tmp_path / "defaults.yaml")}})
    try:
        facts = nr.run(task=napalm_get, getters=["facts"])
        assert not facts.failed
        assert {h: r.result["facts"]["hostname"] for h, r in facts.items()} == {"sw1": "sw1", "sw2": "sw2"}

        def replace_dry_run(task: Task) -> None:
            task.run(task=napalm_configure, configuration=lf.frr_config(task.host.name), replace=True, dry_run=True)

        dry = nr.run(task=replace_dry_run)
        assert not dry.failed
        assert [r[1].diff for r in dry.values()] == ["", ""]  # deployed already: nothing to change
    finally:
        nr.close_connections()
