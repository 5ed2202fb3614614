"""Parsers of vtysh / iproute2 / lldpcli / frr-reload output, against outputs recorded from a live lab."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from napalm.base import models
from typing_extensions import is_typeddict

from fabricgen.base.ssh import redact
from napalm_frr.config import normalise_frr_config, sanitize_frr_config, unified_diff
from napalm_frr.parsers.bgp import afi_name, parse_bgp_neighbors, parse_bgp_neighbors_detail
from napalm_frr.parsers.decode import natural_key
from napalm_frr.parsers.facts import parse_key_values, parse_show_version, parse_uptime
from napalm_frr.parsers.interfaces import parse_interfaces, parse_interfaces_counters, parse_interfaces_ip
from napalm_frr.parsers.lldp import parse_lldp_neighbors, parse_lldp_neighbors_detail
from napalm_frr.parsers.reload import frr_reload_errors, parse_frr_reload_test
from napalm_frr.parsers.routes import count_ecmp_paths, parse_frr_uptime, parse_route
from napalm_frr.parsers.tenant_vrfs import (
    active_interfaces,
    default_vrf_interfaces,
    l3vni_up,
    netns_l3vnis,
    vrf_bgp_stanzas,
    vrf_interface_stanzas,
)
from napalm_sonic import parsers as SP

DATA = Path(__file__).resolve().parent / "mocked_data" / "frr"


def recorded(case: str, command: str, nth: int = 0) -> str:
    """stdout the live device gave for ``command`` (its ``nth`` run) in recorded ``case``."""
    index = json.loads((DATA / case / "commands.json").read_text())
    name = index[command][nth].get("stdout")
    return (DATA / case / name).read_text() if name else ""


def recorded_err(case: str, command: str, nth: int = 0) -> str:
    index = json.loads((DATA / case / "commands.json").read_text())
    name = index[command][nth].get("stderr")
    return (DATA / case / name).read_text() if name else ""


def js(case: str, command: str) -> Any:
    return json.loads(recorded(case, command))


def assert_model(model: Any, data: dict[str, Any]) -> None:
    """Exactly the model's keys, each of its declared type (napalm's own helper chokes on Dict[...])."""
    annotations = model.__annotations__
    assert set(data) == set(annotations), f"{sorted(data)} != {model.__name__} keys {sorted(annotations)}"
    for key, typ in annotations.items():
        expected = dict if is_typeddict(typ) else (typing.get_origin(typ) or typ)
        assert isinstance(data[key], expected), f"{model.__name__}.{key}: {data[key]!r} is not {typ}"


LINK = "ip -j -d -s link show"
FRR_INTF = "vtysh -c 'show interface json'"
DATE = "date '+%Y/%m/%d %H:%M:%S'"
LLDP = "lldpcli show neighbors -f json"
SUMMARY = "vtysh -c 'show bgp vrf all summary json'"
NEIGHBORS = "vtysh -c 'show bgp vrf all neighbors json'"
ROUTE = "vtysh -c 'show ip route 198.19.250.2/32 json'"


# --------------------------------------------------------------------------- facts


def test_show_version_gives_version_and_frr_hostname() -> None:
    assert parse_show_version(recorded("getters", "vtysh -c 'show version'")) == ("8.4.4", "sw1")
    assert parse_show_version("garbage") == ("", "")


def test_key_values_and_uptime() -> None:
    kv = parse_key_values("uptime=12.5\nhostname=sw1\nserial=\nmodel=\nnoise\n")
    assert kv == {"uptime": "12.5", "hostname": "sw1", "serial": "", "model": ""}
    assert parse_uptime("12.5") == 12.5
    assert parse_uptime("") == -1.0


@pytest.mark.parametrize(("text", "seconds"), [
    ("00:03:07", 187), ("1d02h03m", 93780), ("02w3d04h", 1483200), ("never", -1), ("", -1), ("1y2w", 32745600),
])
def test_frr_uptime(text: str, seconds: int) -> None:
    assert parse_frr_uptime(text) == seconds


def test_natural_sort() -> None:
    assert sorted(["Ethernet16", "Ethernet8", "Ethernet0", "eth0"], key=natural_key) == \
        ["Ethernet0", "Ethernet8", "Ethernet16", "eth0"]


# --------------------------------------------------------------------------- interfaces


def test_interfaces_from_live_output() -> None:
    intfs = parse_interfaces(js("getters", LINK), js("getters", FRR_INTF), recorded("getters", DATE).strip())
    assert list(intfs)[:2] == ["Ethernet0", "Ethernet8"]
    e0 = intfs["Ethernet0"]
    assert e0["is_up"] and e0["is_enabled"]
    assert e0["mtu"] == 9216
    assert e0["speed"] == 10000.0
    assert e0["description"] == "to sw2 Ethernet0"
    assert e0["mac_address"] == e0["mac_address"].upper() and e0["mac_address"].count(":") == 5
    assert intfs["lo"]["is_up"] and intfs["lo"]["speed"] == 0.0
    for data in intfs.values():
        assert_model(models.InterfaceDict, dict(data))


def test_interface_down_when_peer_is_down_and_flap_time_counted() -> None:
    intfs = parse_interfaces(js("degraded", LINK), js("degraded", FRR_INTF), recorded("degraded", DATE).strip())
    e8 = intfs["Ethernet8"]
    assert e8["is_enabled"] and not e8["is_up"]  # admin up, no carrier: sw2 took its end down
    assert e8["last_flapped"] >= 0.0
    assert intfs["Ethernet0"]["is_up"]


def test_interfaces_without_frr_data() -> None:
    intfs = parse_interfaces(js("getters", LINK))
    assert intfs["Ethernet0"]["speed"] == 0.0 and intfs["Ethernet0"]["last_flapped"] == -1.0
    assert intfs["Ethernet0"]["description"] == ""


def test_interfaces_counters() -> None:
    counters = parse_interfaces_counters(js("getters", LINK))
    assert counters["Ethernet0"]["rx_octets"] > 0 and counters["Ethernet0"]["tx_octets"] > 0
    for data in counters.values():
        assert_model(models.InterfaceCounterDict, dict(data))


def test_interfaces_ip() -> None:
    ips = parse_interfaces_ip(js("getters", "ip -j addr show"))
    assert ips["Ethernet0"]["ipv4"] == {"198.19.10.0": {"prefix_length": 31}}
    assert ips["Ethernet8"]["ipv4"] == {"198.19.10.2": {"prefix_length": 31}}
    assert "198.19.250.1" in ips["lo"]["ipv4"]
    assert all(v["prefix_length"] == 64 for k, v in ips["Ethernet0"]["ipv6"].items() if k.startswith("fe80"))


# --------------------------------------------------------------------------- LLDP


def test_lldp_two_neighbors_list_shape() -> None:
    doc = js("getters", LLDP)
    assert isinstance(doc["lldp"]["interface"], list)
    assert parse_lldp_neighbors(doc) == {
        "Ethernet0": [{"hostname": "sw2", "port": "Ethernet0"}],
        "Ethernet8": [{"hostname": "sw2", "port": "Ethernet8"}],
    }
    detail = parse_lldp_neighbors_detail(doc)
    d0 = detail["Ethernet0"][0]
    assert d0["remote_system_name"] == "sw2"
    assert d0["remote_port"] == "Ethernet0"
    assert d0["remote_chassis_id"].count(":") == 5
    assert "router" in d0["remote_system_enable_capab"]
    assert set(d0["remote_system_enable_capab"]) <= set(d0["remote_system_capab"])
    assert_model(models.LLDPNeighborDetailDict, dict(d0))
    assert list(parse_lldp_neighbors_detail(doc, "Ethernet8")) == ["Ethernet8"]


def test_lldp_single_neighbor_object_shape() -> None:
    doc = js("degraded", LLDP)
    assert isinstance(doc["lldp"]["interface"], dict)
    assert parse_lldp_neighbors(doc) == {"Ethernet0": [{"hostname": "sw2", "port": "Ethernet0"}]}


def test_lldp_mac_port_id_falls_back_to_port_description() -> None:
    doc = json.loads((DATA / "lldp_shapes" / "lldpd_mac_portid_two_neighbors.json").read_text())
    assert parse_lldp_neighbors(doc) == {
        "Ethernet0": [{"hostname": "sw2", "port": "Ethernet0"}],
        "Ethernet8": [{"hostname": "sw2", "port": "Ethernet8"}],
    }


def test_lldp_bare_chassis_and_scalar_capability() -> None:
    doc = json.loads((DATA / "lldp_shapes" / "lldpd_bare_chassis_one_capability.json").read_text())
    d = parse_lldp_neighbors_detail(doc)["Ethernet16"][0]
    assert d["remote_system_name"] == ""
    assert d["remote_chassis_id"] == "02:00:c6:12:00:01"
    assert d["remote_port"] == "etp4"  # subtype local: the ID is the name
    assert d["remote_system_capab"] == ["station"] and d["remote_system_enable_capab"] == ["station"]


def test_lldp_no_neighbors() -> None:
    doc = json.loads((DATA / "lldp_shapes" / "lldpd_no_neighbors.json").read_text())
    assert parse_lldp_neighbors(doc) == {}
    assert parse_lldp_neighbors({"lldp": []}) == {}


# --------------------------------------------------------------------------- BGP


def test_bgp_neighbors_established() -> None:
    bgp = parse_bgp_neighbors(js("getters", SUMMARY), js("getters", NEIGHBORS))
    assert set(bgp) == {"global"}
    assert bgp["global"]["router_id"] == "198.19.250.1"
    peers = bgp["global"]["peers"]
    assert set(peers) == {"198.19.10.1", "198.19.10.3"}
    for peer in peers.values():
        assert peer["is_up"] and peer["is_enabled"]
        assert (peer["local_as"], peer["remote_as"], peer["remote_id"]) == (65001, 65002, "198.19.250.2")
        assert peer["address_family"]["ipv4"] == {"received_prefixes": 1, "accepted_prefixes": 1,
                                                  "sent_prefixes": 2}
        assert peer["uptime"] >= 0
        assert_model(models.BGPStateNeighborDict, dict(peer))
    assert peers["198.19.10.1"]["description"] == "sw2-Ethernet0"


def test_bgp_neighbors_down_and_admin_shutdown() -> None:
    peers = parse_bgp_neighbors(js("degraded", SUMMARY), js("degraded", NEIGHBORS))["global"]["peers"]
    assert peers["198.19.10.1"]["is_up"]
    assert not peers["198.19.10.3"]["is_up"] and peers["198.19.10.3"]["is_enabled"]
    assert not peers["198.19.10.5"]["is_up"] and not peers["198.19.10.5"]["is_enabled"]
    assert peers["198.19.10.5"]["remote_as"] == 65009


def test_bgp_summary_alone_and_vrf_naming() -> None:
    bgp = parse_bgp_neighbors(js("getters", SUMMARY))
    assert bgp["global"]["peers"]["198.19.10.1"]["remote_id"] == ""
    summary = {"RED": {"ipv6Unicast": {"routerId": "198.18.0.9", "as": 65010, "peers": {
        "Ethernet4": {"remoteAs": 65011, "state": "Established", "peerUptimeMsec": 5000, "pfxRcd": 3, "pfxSnt": 4}}}}}
    red = parse_bgp_neighbors(summary)["RED"]
    assert red["router_id"] == "198.18.0.9"
    assert red["peers"]["Ethernet4"]["address_family"]["ipv6"]["received_prefixes"] == 3
    assert red["peers"]["Ethernet4"]["local_as"] == 65010 and red["peers"]["Ethernet4"]["uptime"] == 5


def test_bgp_neighbors_detail() -> None:
    detail = parse_bgp_neighbors_detail(js("getters", NEIGHBORS))
    records = detail["global"][65002]
    assert len(records) == 2
    for r in records:
        assert r["up"] and r["connection_state"] == "Established"
        assert r["remote_port"] == 179 or r["local_port"] == 179
        assert r["holdtime"] == 9 and r["keepalive"] == 3
        assert_model(models.PeerDetailsDict, dict(r))
    only = parse_bgp_neighbors_detail(js("getters", NEIGHBORS), "198.19.10.3")
    assert [r["remote_address"] for r in only["global"][65002]] == ["198.19.10.3"]


def test_afi_names() -> None:
    assert afi_name("ipv4Unicast") == "ipv4"
    assert afi_name("l2VpnEvpn") == "l2vpn_evpn"
    assert afi_name("ipv4Somethingnew") == "ipv4_somethingnew"


# --------------------------------------------------------------------------- routes


def test_route_ecmp_two_paths() -> None:
    routes = parse_route(js("getters", ROUTE))
    hops = routes["198.19.250.2/32"]
    assert {(h["next_hop"], h["outgoing_interface"]) for h in hops} == {
        ("198.19.10.1", "Ethernet0"), ("198.19.10.3", "Ethernet8")}
    assert all(h["protocol"] == "bgp" and h["preference"] == 20 and h["selected_next_hop"] for h in hops)
    assert count_ecmp_paths(routes, "198.19.250.2/32") == 2
    for h in hops:
        assert_model(models.RouteDict, dict(h))
    assert parse_route(js("getters", ROUTE), protocol="ospf") == {}


def test_route_one_path_when_degraded() -> None:
    assert count_ecmp_paths(parse_route(js("degraded", ROUTE))) == 1
    assert count_ecmp_paths(parse_route({})) == 0


# --------------------------------------------------------------------------- config text


def test_normalise_drops_only_noise() -> None:
    running = recorded("getters", "vtysh -c 'show running-config'")
    lines = normalise_frr_config(running)
    assert "Building configuration..." not in lines and "end" not in lines and "!" not in lines
    assert not any(line.startswith("frr version") for line in lines)
    assert "router bgp 65001" in lines and " exit-address-family" in lines


def test_running_equals_candidate_after_normalisation() -> None:
    """What a commit installed normalises to what FRR shows running (so the diff is empty)."""
    running = recorded("getters", "vtysh -c 'show running-config'")
    startup = recorded("getters", "cat /etc/frr/frr.conf")
    diff = unified_diff(normalise_frr_config(running), normalise_frr_config(startup), "running", "candidate")
    assert diff == ""


def test_unified_diff_format() -> None:
    diff = unified_diff(["a", "b"], ["a", "c"], "running", "candidate")
    assert diff.splitlines()[:2] == ["--- running", "+++ candidate"]
    assert "-b\n" in diff and "+c\n" in diff and diff.endswith("\n")


def test_frr_reload_test_listing() -> None:
    out = recorded("commit_initial",
                   "/usr/lib/frr/frr-reload.py --test /etc/frr/.fabricgen/fabricgen-0123456789ab-frr.conf")
    to_delete, to_add = parse_frr_reload_test(out)
    assert "router bgp 65001" in to_add
    assert any("neighbor 198.19.10.1 remote-as 65002" in line for line in to_add)
    assert not any(line.startswith("=") for line in to_add + to_delete)
    assert parse_frr_reload_test("") == ([], [])
    assert parse_frr_reload_test("\nLines To Delete\n===============\nno ip router-id 1.2.3.4\n") == (
        ["no ip router-id 1.2.3.4"], [])


def test_frr_reload_errors_keep_the_rejection() -> None:
    cmd = "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf"
    text = recorded("commit_rejected", cmd) + "\n" + recorded_err("commit_rejected", cmd)
    errors = frr_reload_errors(text)
    assert "peer-group NOPE" in errors


def test_sanitize_and_redact_hide_secrets() -> None:
    conf = "router bgp 1\n neighbor 198.18.0.1 password s3cr3t\n neighbor 198.18.0.1 remote-as 2\n"
    clean = sanitize_frr_config(conf)
    assert "s3cr3t" not in clean and "neighbor 198.18.0.1 password <removed>" in clean
    assert "remote-as 2" in clean
    assert "s3cr3t" not in redact("line 3: % Unknown command: neighbor 198.18.0.1 password s3cr3t junk")


# --------------------------------------------------------------------------- SONiC helpers


def test_sonic_show_version_and_checkpoints() -> None:
    text = ("SONiC Software Version: SONiC.202311.1-8c08d87\nDistribution: Debian 11.8\n\n"
            "Platform: x86_64-accton_as7326_56x-r0\nHwSKU: Accton-AS7326-56X\nSerial Number: 732656X2147C001\n"
            "Uptime: 14:32:17 up 47 days,  3:12,  1 user\n\nDocker images:\nREPOSITORY  TAG\n")
    ver = SP.parse_sonic_show_version(text)
    assert ver["SONiC Software Version"] == "SONiC.202311.1-8c08d87"
    assert ver["HwSKU"] == "Accton-AS7326-56X" and ver["Serial Number"] == "732656X2147C001"
    assert "REPOSITORY  TAG" not in ver
    listing = '[\n    "fabricgen-20250101T000000Z",\n    "x"\n]'
    assert SP.parse_checkpoints(listing) == ["fabricgen-20250101T000000Z", "x"]
    assert SP.parse_checkpoints("a\nb\n") == ["a", "b"]
    assert SP.parse_checkpoints("") == []


def test_moved_port_failures_only_forgive_ports_gone_to_a_tenant_vrf() -> None:
    """frr-reload 8.4's answer when a port moved into a tenant namespace before the reload (the live lab's
    deploy of a new tenant): only that failure, for a port the candidate puts in a VRF, is forgiven."""
    from napalm_frr.parsers.reload import moved_port_failures

    cand = "interface Ethernet24 vrf amber\n ip address 198.18.32.6/31\nexit\n"
    line = '"interface Ethernet24 --  no" we failed to remove this command\n'
    assert moved_port_failures(line + "\n", cand) == ["Ethernet24"]
    assert moved_port_failures(line, cand.replace(" vrf amber", "")) == []  # the port stays in the default VRF
    assert moved_port_failures(line + "% Unknown command: neighbor 198.18.16.1 bfd\n", cand) == []
    assert moved_port_failures('"router bgp 65001 -- no" we failed to remove this command\n', cand) == []
    assert moved_port_failures("", cand) == []


TENANT_CONF = """vrf red
 vni 10011
 netns /run/netns/red
exit-vrf
!
vrf blue
 vni 10013
exit-vrf
!
interface Ethernet0 vrf red
 description gpu_leaf:gpu0001:eth0
 ip address 198.18.32.0/31
exit
!
router bgp 4200000000
 bgp router-id 198.18.0.3
exit
!
router bgp 4200000000 vrf red
 bgp router-id 198.18.0.3
 !
 address-family l2vpn evpn
  route-target import 65000:10011
 exit-address-family
exit
!
router bgp 4200000000 vrf blue
 no bgp default ipv4-unicast
exit
"""


def test_tenant_vrf_parsers_for_the_setup_order() -> None:
    """What napalm_frr's setup reads to apply a new tenant VRF in FRR's safe order: the netns VRFs' L3VNIs
    (blue has no namespace: a Linux VRF, not set up by the script), each VRF's BGP head and router id, and
    whether zebra lists an L3VNI up for its VRF (`show evpn vni <vni> json`)."""
    assert netns_l3vnis(TENANT_CONF) == {"red": 10011}
    assert vrf_interface_stanzas(TENANT_CONF) == {
        "red": [["interface Ethernet0 vrf red", "description gpu_leaf:gpu0001:eth0", "ip address 198.18.32.0/31"]]}
    assert vrf_bgp_stanzas(TENANT_CONF) == {
        "red": ["router bgp 4200000000 vrf red", "bgp router-id 198.18.0.3", "address-family l2vpn evpn",
                "route-target import 65000:10011", "exit-address-family", "exit"],
        "blue": ["router bgp 4200000000 vrf blue", "no bgp default ipv4-unicast", "exit"]}
    assert vrf_bgp_stanzas(TENANT_CONF, leave_out=("route-target import",))["red"] == [
        "router bgp 4200000000 vrf red", "bgp router-id 198.18.0.3", "address-family l2vpn evpn",
        "exit-address-family", "exit"]
    up = {"vni": 10011, "type": "L3", "vrf": "red", "tenantVrf": "red", "state": "Up", "sviIntf": "br11"}
    assert l3vni_up(json.dumps(up), "red")
    assert not l3vni_up(json.dumps({**up, "state": "Down"}), "red")
    assert not l3vni_up(json.dumps(up), "blue")
    assert not l3vni_up(json.dumps({**up, "type": "L2"}), "red")
    assert not l3vni_up("% VNI 10011 does not exist", "red") and not l3vni_up("", "red")


def test_active_interfaces_are_zebras_kernel_devices_in_the_vrf() -> None:
    """zebra's `show interface vrf X json` (FRR 8.4, netns VRFs, as the lab answered it right after a port moved
    from the default VRF into amber's namespace): in amber the port is a device (its ifindex); in the default
    VRF zebra keeps a pseudo interface of the same name, config without a device, which is not the port."""
    amber = {"Ethernet24": {"administrativeStatus": "up", "operationalStatus": "up", "vrfName": "amber",
                            "pseudoInterface": False, "index": 10, "type": "Ethernet"},
             "br14": {"vrfName": "amber", "pseudoInterface": False, "index": 2},
             "vx14": {"vrfName": "amber", "pseudoInterface": False, "index": 46}}
    default = {"Ethernet24": {"administrativeStatus": "down", "vrfName": "default", "pseudoInterface": True},
               "Ethernet32": {"vrfName": "default", "pseudoInterface": False, "index": 5}}
    assert active_interfaces(json.dumps(amber)) == {"Ethernet24", "br14", "vx14"}
    assert active_interfaces(json.dumps(default)) == {"Ethernet32"}
    assert active_interfaces("{}") == active_interfaces("") == active_interfaces("% VRF nosuch not found") == set()


def test_default_vrf_interfaces_leave_out_tenant_ports() -> None:
    """The ports an undo must drop from the default VRF: `interface X` stanzas, not `interface X vrf Y`."""
    conf = "interface Ethernet8\n ip address 198.18.32.2/31\nexit\n!\n" + TENANT_CONF + "interface lo\nexit\n"
    assert default_vrf_interfaces(conf) == {"Ethernet8", "lo"}
    assert default_vrf_interfaces(TENANT_CONF) == set()
