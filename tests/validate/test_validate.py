"""validate's comparisons against getter data shaped like napalm's (no devices needed)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.validate import (
    Report,
    check_bfd,
    check_bgp,
    check_config,
    check_ecmp,
    check_gpu_output,
    check_interfaces,
    check_lldp,
    check_mtu,
    check_persisted,
    check_routes,
    check_timers,
    gpu_targets,
    ping_script,
    render_report,
)
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def lab() -> Plan:
    return load_plan(ROOT / "inventory" / "lab" / "fabric.yaml")


def healthy_bgp(plan: Plan, host: str) -> dict[str, Any]:
    sw = plan.switches[host]
    assert sw.bgp is not None
    return {"global": {"router_id": sw.loopback, "peers": {
        n.ip: {"remote_as": n.remote_asn, "is_up": True, "is_enabled": True} for n in sw.bgp.neighbors}}}


def test_bgp(lab: Plan) -> None:
    sw = lab.switches["lab-leaf01"]
    assert sw.bgp is not None
    data = healthy_bgp(lab, sw.hostname)
    assert all(o.ok for o in check_bgp(sw, data))
    a, b, c = (n.ip for n in sw.bgp.neighbors[:3])
    peers = data["global"]["peers"]
    peers[a]["is_up"] = False
    peers[b]["remote_as"] = 65000
    del peers[c]
    peers["198.18.16.250"] = {"remote_as": 65001, "is_up": True}
    bad = {o.item.split()[0]: o for o in check_bgp(sw, data) if not o.ok}
    assert bad[a].actual == "down"
    assert (bad[b].expected, bad[b].actual) == (f"AS{sw.bgp.neighbors[1].remote_asn}", "AS65000")
    assert bad[c].actual == "no such session configured"
    assert bad["198.18.16.250"].expected == "no session (not in plan)"
    assert len(bad) == 4


def test_ecmp(lab: Plan) -> None:
    sw = lab.switches["lab-leaf01"]
    routes: dict[str, Any] = {}  # the routing table, read once
    for other in lab.by_role("leaf")[1:]:
        prefix = f"{other.loopback}/32"
        routes[prefix] = [{"next_hop": f"198.18.16.{i}", "outgoing_interface": f"Ethernet{32 + 8 * i}",
                           "current_active": True} for i in range(4)]
    assert [o.ok for o in check_ecmp(lab, sw, routes)] == [True, True, True]
    first = next(iter(routes))
    routes[first] = routes[first][:3]
    out = check_ecmp(lab, sw, routes)
    assert [(o.ok, o.actual) for o in out][0] == (False, "3 next hops")


def test_lldp_miscabled_and_missing(lab: Plan) -> None:
    sw = lab.switches["lab-leaf01"]
    lldp = {i.name: [{"remote_system_name": i.peer_device, "remote_port": i.peer_interface}] for i in sw.interfaces}
    assert all(o.ok for o in check_lldp(lab, sw, lldp))
    a, b = sw.interfaces[0], sw.interfaces[1]
    lldp[a.name], lldp[b.name] = lldp[b.name], []
    bad = {o.item.split()[0]: o for o in check_lldp(lab, sw, lldp) if not o.ok}
    assert bad[a.name].actual == f"{b.peer_device} {b.peer_interface} (miscabled)"
    assert bad[a.name].expected == f"{a.peer_device} {a.peer_interface}"
    assert bad[b.name].actual.startswith("no LLDP neighbor")


def test_interfaces(lab: Plan) -> None:
    sw = lab.switches["lab-spine01"]
    live = {i.name: {"is_up": True, "mtu": i.mtu, "speed": 400000} for i in sw.interfaces}
    ips = {i.name: {"ipv4": {i.ipv4.split("/")[0]: {"prefix_length": 31}}} for i in sw.interfaces}
    assert all(o.ok for o in check_interfaces(sw, live, ips))
    live[sw.interfaces[0].name]["is_up"] = False
    live[sw.interfaces[1].name]["mtu"] = 1500
    ips[sw.interfaces[2].name] = {"ipv4": {"198.18.16.200": {"prefix_length": 31}}}
    del live[sw.interfaces[3].name]
    actual = [o.actual for o in check_interfaces(sw, live, ips)[:4]]
    assert actual[0] == "down" and actual[1] == "mtu: expected 9216, got 1500"
    assert actual[2] == f"ipv4 {sw.interfaces[2].ipv4.split('/')[0]} missing" and actual[3] == "missing"


def test_config_drift() -> None:
    from fabricgen.plan.model import Switch

    sw = Switch("s1", "spine", "frr", "m", 0, 0, 0, 0)
    assert check_config(sw, "")[0].ok
    drift = check_config(sw, "--- running\n+++ candidate\n@@ -1 +1 @@\n-hostname x\n+hostname s1\n")[0]
    assert not drift.ok and drift.actual.startswith("2 line(s) differ")


def test_gpu_pings_cross_rails(lab: Plan) -> None:
    src = lab.servers[0]
    pairs = gpu_targets(lab, src)
    assert len(pairs) == len(src.nics) * (len(lab.servers) - 1)
    nic_rail = {n.ip.split("/")[0]: n.rail for s in lab.servers for n in s.nics}
    assert all(nic_rail[s] != nic_rail[d] for s, d, _ in pairs)
    script = ping_script(pairs)
    assert script.count("ping -c1 -W1 -I") == len(pairs) and ">" not in script.replace(" >/dev/null 2>&1", "")
    output = "\n".join(f"OK {s} {d}" for s, d, _ in pairs[1:]) + f"\nFAIL {pairs[0][0]} {pairs[0][1]}\n"
    result = check_gpu_output(src, pairs, output)
    assert [o.ok for o in result] == [False] + [True] * (len(pairs) - 1)


def test_report_formats(lab: Plan) -> None:
    sw = lab.switches["lab-leaf01"]
    data = healthy_bgp(lab, sw.hostname)
    data["global"]["peers"][next(iter(data["global"]["peers"]))]["is_up"] = False
    report = Report()
    report.add(check_bgp(sw, data))
    assert not report.ok
    js = json.loads(render_report(report, "json"))
    assert js["ok"] is False and len(js["failures"]) == 1 and js["checked"] == len(sw.bgp.neighbors)  # type: ignore[union-attr]
    suites = ET.fromstring(render_report(report, "junit"))
    suite = suites.find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("tests") == str(js["checked"])


class _Routes:
    """A device answering get_route_to from one table; records every call."""

    def __init__(self, table: dict[str, Any], longer: bool) -> None:
        self.table, self.longer, self.calls = table, longer, []  # type: ignore[var-annotated]

    def get_route_to(self, destination: str = "", protocol: str = "", longer: bool = False) -> dict[str, Any]:
        self.calls.append((destination, longer))
        if longer:
            if not self.longer:
                raise NotImplementedError("Longer prefixes not yet supported")
            return dict(self.table)
        return {destination: self.table[destination]} if destination in self.table else {}


def test_routing_table_is_read_once_per_device(lab: Plan) -> None:
    from fabricgen.validate.collect import route_table

    sw = lab.switches["lab-leaf01"]
    table = {f"{o.loopback}/32": [{"next_hop": "198.18.16.1", "current_active": True}] for o in lab.by_role("leaf")}
    one = _Routes(table, longer=True)
    assert route_table(one, lab, sw) == table
    assert one.calls == [(str(lab.settings.pools.loopbacks), True)]
    per_prefix = _Routes(table, longer=False)  # napalm's nxos_ssh has no `longer`
    assert set(route_table(per_prefix, lab, sw)) == set(table) - {f"{sw.loopback}/32"}
    assert len(per_prefix.calls) == 1 + len(lab.by_role("leaf")) - 1


@pytest.mark.parametrize("intent", ["inventory/lab/fabric.yaml", "inventory/fabric.yaml",
                                    "inventory/examples/three-tier.yaml"])
def test_gpu_sample_reaches_every_nic_rail_leaf_pair_and_uplink(intent: str) -> None:
    from fabricgen.validate import gpu_sample
    from fabricgen.validate.checks import full_ping_count

    plan = load_plan(ROOT / intent)
    sample = gpu_sample(plan)
    leaf_of = {n.ip.split("/")[0]: n.leaf for s in plan.servers for n in s.nics}
    switch_of = {sw.loopback: sw for sw in plan.switches.values()}
    sources, leaf_pairs, uplinks = set(), set(), set()
    for server, pings in sample.pings.items():
        for src, dst, label in pings:
            assert src in leaf_of and label.startswith(f"{server}:")
            sources.add(src)
            if dst in leaf_of:
                leaf_pairs.add((leaf_of[src], leaf_of[dst]))
            else:
                uplinks.add((leaf_of[src], switch_of[dst].hostname))
    assert sources == set(leaf_of)  # every NIC (so every rail) sources a ping
    leaves = {sw.hostname: sw for sw in plan.by_role("leaf")}
    assert leaf_pairs == {(a, b) for a in leaves for b in leaves if leaves[a].plane == leaves[b].plane}
    for a in leaves.values():
        for sw in plan.switches.values():
            if sw.role != "leaf" and sw.plane == a.plane and (sw.role == "super_spine" or sw.pod == a.pod):
                assert (a.hostname, sw.hostname) in uplinks
    total = sum(len(p) for p in sample.pings.values())
    full = sum(len(gpu_targets(plan, s)) for s in plan.servers)
    assert full_ping_count(plan) == full and (total < full or len(plan.servers) < 8)
    (line,) = sample.coverage
    assert f"GPU pings: {total} sampled (--full: {full}); NICs {len(leaf_of)}/{len(leaf_of)}" in line


# --------------------------------------------------------------------------- issue 8: timers, BFD, routes, MTU, drift


def neighbors_detail(plan: Plan, host: str, live: tuple[int, int] | None = None,
                     configured: tuple[int, int] | None = None) -> dict[str, Any]:
    """get_bgp_neighbors_detail() of a switch whose sessions run ``live`` timers (default: the plan's)."""
    sw = plan.switches[host]
    assert sw.bgp is not None
    want = (sw.bgp.keepalive, sw.bgp.holdtime)
    ka, hold = live or want
    cka, chold = configured or want
    by_as: dict[int, list[dict[str, Any]]] = {}
    for n in sw.bgp.neighbors:
        by_as.setdefault(n.remote_asn, []).append({"remote_address": n.ip, "up": True, "keepalive": ka,
                                                   "holdtime": hold, "configured_keepalive": cka,
                                                   "configured_holdtime": chold})
    return {"global": by_as}


def test_timers_name_sessions_still_on_old_timers(lab: Plan) -> None:
    sw = lab.switches["lab-leaf01"]
    assert sw.bgp is not None
    assert all(o.ok for o in check_timers(sw, neighbors_detail(lab, sw.hostname)))
    # the hold time was changed in the config; the sessions keep the old one until they reset
    detail = neighbors_detail(lab, sw.hostname, live=(sw.bgp.keepalive, 180))
    bad = [o for o in check_timers(sw, detail) if not o.ok]
    assert len(bad) == len(sw.bgp.neighbors)
    assert f"negotiated keepalive {sw.bgp.keepalive}s, hold 180s" in bad[0].actual
    assert "`clear bgp " in bad[0].actual
    configured = [o for o in check_timers(sw, neighbors_detail(lab, sw.hostname, configured=(60, 180)))
                  if not o.ok]
    assert configured and configured[0].actual.startswith("configured keepalive 60s, hold 180s")


def test_frr_defaults_name_a_daemon_started_without_the_config(lab: Plan) -> None:
    """Issue 23 D4: a lone bgpd restart left it on FRR's built-in profile beside zebra's datacenter one."""
    from fabricgen.validate.checks import check_frr_defaults
    from napalm_frr.parsers.facts import parse_frr_defaults

    sw = lab.switches["lab-leaf01"]
    probe = "zebra datacenter\n\nbgpd traditional\n\nstaticd datacenter\n\nbfdd \n\n"
    daemons = parse_frr_defaults(probe)
    assert daemons == {"zebra": "datacenter", "bgpd": "traditional", "staticd": "datacenter", "bfdd": ""}
    [bad] = check_frr_defaults(sw, "datacenter", daemons)
    assert not bad.ok and bad.check == "frr-defaults"
    assert bad.actual.startswith("bfdd shows no `frr defaults`; bgpd runs `frr defaults traditional`: FRR reads")
    assert "systemctl restart frr" in bad.actual
    healthy = {d: "datacenter" for d in daemons}
    assert [o.ok for o in check_frr_defaults(sw, "datacenter", healthy)] == [True]
    assert [o.ok for o in check_frr_defaults(sw, "datacenter", {})] == [False]


def test_bfd_timers_and_state(lab: Plan) -> None:
    sw = lab.switches["lab-spine01"]
    b = sw.bgp
    assert b is not None
    peers = [{"peer": n.ip, "status": "up", "transmit_interval": b.bfd_min_tx, "receive_interval": b.bfd_min_rx,
              "detect_multiplier": b.bfd_multiplier} for n in b.neighbors]
    assert all(o.ok for o in check_bfd(sw, peers))
    peers[0]["transmit_interval"] = 300
    peers[1]["status"] = "down"
    del peers[2]
    bad = {o.item.split()[0]: o.actual for o in check_bfd(sw, peers) if not o.ok}
    assert bad == {b.neighbors[0].ip: f"up, tx 300 ms, rx {b.bfd_min_rx} ms, x{b.bfd_multiplier}",
                   b.neighbors[1].ip: f"down, tx {b.bfd_min_tx} ms, rx {b.bfd_min_rx} ms, x{b.bfd_multiplier}",
                   b.neighbors[2].ip: "no BFD session"}
    assert check_bfd(sw, None) == []  # a driver that cannot read BFD checks nothing, claims nothing


def test_routes_per_session_against_the_plan(lab: Plan) -> None:
    from fabricgen.plan.expect import expected_prefixes

    sw = lab.switches["lab-leaf01"]
    assert sw.bgp is not None
    expected = {ip: n for (host, ip), n in expected_prefixes(lab).items() if host == sw.hostname}
    assert set(expected) == {n.ip for n in sw.bgp.neighbors} and all(expected.values())
    bgp = healthy_bgp(lab, sw.hostname)
    for ip, peer in bgp["global"]["peers"].items():
        peer["address_family"] = {"ipv4": {"received_prefixes": expected[ip], "accepted_prefixes": expected[ip]}}
    assert all(o.ok for o in check_routes(sw, bgp, expected))
    first = sw.bgp.neighbors[0].ip
    bgp["global"]["peers"][first]["address_family"]["ipv4"]["accepted_prefixes"] = 0  # bgpd lost its policy
    bad = [o for o in check_routes(sw, bgp, expected) if not o.ok]
    assert [(o.item.split()[0], o.actual) for o in bad] == [(first, f"{expected[first]} received, 0 accepted")]


def test_persisted_names_every_line_a_reboot_would_load(lab: Plan) -> None:
    sw = lab.switches["lab-leaf01"]
    assert check_persisted(sw, None) == []  # the driver cannot read its saved config: no claim
    assert check_persisted(sw, "")[0].ok
    diff = "--- saved\n+++ build\n@@ -3,2 +3,2 @@\n bgp router-id 198.18.0.3\n- timers bgp 3 9\n+ timers bgp 1 3\n"
    out = check_persisted(sw, diff)[0]
    assert not out.ok and out.actual == ("2 line(s) differ (a reboot would load them):\n- timers bgp 3 9\n"
                                         "+ timers bgp 1 3")


def test_drift_reports_every_changed_line_and_folds_only_with_a_count(lab: Plan) -> None:
    from fabricgen.validate.output import FOLD, folded

    sw = lab.switches["lab-leaf01"]
    removed = [f"- neighbor 198.18.16.{i} remote-as 42001000{i:02d}" for i in range(30)]
    diff = "--- running\n+++ candidate\n@@ -1,30 +1,1 @@\n" + "\n".join(removed) + "\n+ bgp router-id 198.18.0.3\n"
    out = check_config(sw, diff)[0]
    assert out.actual.splitlines()[1:] == [*removed, "+ bgp router-id 198.18.0.3"]  # nothing cut
    shown = folded(out.actual).splitlines()
    assert len(shown) == FOLD + 1 and shown[-1] == f"... {31 + 1 - FOLD} more line(s) folded (--format json shows all)"
    js = json.loads(render_report(Report([out]), "json"))
    assert js["failures"][0]["actual"] == out.actual


def test_mtu_mismatch_names_both_ends(lab: Plan) -> None:
    leaf = lab.switches["lab-leaf01"]
    up = next(i for i in leaf.interfaces if i.tier == "leaf_spine")
    live = {(sw.hostname, i.name): i.mtu for sw in lab.switches.values() for i in sw.interfaces}
    live.update({(s.name, n.ifname): 9216 for s in lab.servers for n in s.nics})
    assert all(o.ok for o in check_mtu(lab, live))
    live[leaf.hostname, up.name] = 1500
    bad = [o for o in check_mtu(lab, live) if not o.ok]
    assert len(bad) == 1
    ends = {f"{leaf.hostname} {up.name}", f"{up.peer_device} {up.peer_interface}"}
    assert all(end in bad[0].item for end in ends)
    assert bad[0].actual.startswith("MTU mismatch: ")
    assert f"{leaf.hostname} {up.name} mtu 1500" in bad[0].actual
    assert f"{up.peer_device} {up.peer_interface} mtu {up.mtu}" in bad[0].actual
    # only the links of the devices asked about
    assert check_mtu(lab, live, {"lab-leaf04"}) and all(
        "lab-leaf04" in o.item for o in check_mtu(lab, live, {"lab-leaf04"}))


def test_mtu_of_a_selection_judges_the_ends_it_read(lab: Plan) -> None:
    """Issue 23 D12: `validate --limit/--role` read only the selected switches; a link leading outside used to
    fail as "MTU mismatch ... mtu ?" on a healthy fabric."""
    spines = {sw.hostname for sw in lab.by_role("spine")}
    live = {(sw.hostname, i.name): i.mtu for sw in lab.switches.values() for i in sw.interfaces
            if sw.hostname in spines}  # what `validate --role spine` reads
    found = check_mtu(lab, live, spines)
    assert found and all(o.ok for o in found), [o.actual for o in found if not o.ok]
    leaf = lab.switches["lab-leaf01"]
    up = next(i for i in leaf.interfaces if i.tier == "leaf_spine")
    one = next(o for o in found if f"{up.peer_device} {up.peer_interface}" in o.item and leaf.hostname in o.item)
    assert one.actual == (f"{up.peer_device} {up.peer_interface} mtu {up.mtu}; the far end {leaf.hostname} {up.name} "
                          f"was not read (outside the selection)")
    live[up.peer_device, up.peer_interface] = 1500  # a selected end off the plan still fails, named alone
    [bad] = [o for o in check_mtu(lab, live, spines) if not o.ok]
    assert bad.actual.startswith(f"off plan: {up.peer_device} {up.peer_interface} mtu 1500; the far end ")


def test_an_unreadable_switch_is_a_finding_not_a_logged_traceback(lab: Plan, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture,
                                                                   tmp_path: Any) -> None:
    """Issue 23 D7: a task that raised made nornir log its traceback (ERROR), which Python's last-resort handler
    prints on stderr: validate showed one per switch for an unknown host key.  Now each is one finding."""
    from napalm.base.exceptions import ConnectionException
    from nornir.core.inventory import Host

    from fabricgen.validate import run_validate

    def refuse(host: Host, connection: str, configuration: object) -> None:
        raise ConnectionException(f"host key of {host.hostname} is unknown: it offers ssh-ed25519 SHA256:x")

    monkeypatch.setattr(Host, "get_connection", refuse)
    report = run_validate(lab, ("bgp",), lab_dir=str(tmp_path))
    assert {(o.device, o.check) for o in report.failures} == {(h, "reachability") for h in lab.switches}
    assert all("is unknown: it offers" in o.actual for o in report.failures)
    # the health reads (validate --health) the same way
    from fabricgen.connect import connection_settings, nornir_for
    from fabricgen.validate.health_collect import _read

    snaps, errors = _read(nornir_for(lab, connection_settings(lab, tmp_path)), lab)
    assert not snaps and sorted(e.device for e in errors) == sorted(lab.switches)
    assert not [r for r in caplog.records if r.name.startswith("nornir")], caplog.text
