"""validate --tenants without a lab (issue 25): the sampled reachability matrix, how ping output is judged, and
each switch's live VRFs, L3VNIs and routes against the plan (the live run: tests/lab/test_tenants_live.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.frr.tenants import parse_live
from fabricgen.platforms.tenant_facts import LiveVrf
from fabricgen.validate.collect import server_script
from fabricgen.validate.tenants import (
    TenantPing,
    check_switch_tenants,
    check_tenant_output,
    tenant_sample,
    tenant_subnets,
    vrf_of,
)
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "tenants.yaml"
GPU_EVPN = ROOT / "inventory" / "examples" / "tenants-gpu-evpn.yaml"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(LAB)


def test_sample_covers_every_leaf_pair_of_each_vrf_and_every_vrf_pair(plan: Plan) -> None:
    sample = tenant_sample(plan)
    pings = [p for pings in sample.pings.values() for p in pings]
    vrfs = vrf_of(plan)
    ip_vrf = {nic.ip.split("/")[0]: vrfs[srv.name, nic.ifname] for srv in plan.servers for nic in srv.nics}
    pairs = {(ip_vrf[p.src], ip_vrf[p.dst]) for p in pings}
    names = {"red", "green", "blue", "default"}
    assert pairs == {(a, b) for a in names for b in names}  # every VRF with itself and every other
    assert all(p.reach == (ip_vrf[p.src] == ip_vrf[p.dst]) for p in pings)  # no leaks in this intent
    # each VRF: 2 servers in two stripes, 2 rails: 4 leaves, of whose 16 ordered pairs the 8 across the
    # stripes join two servers (the 8 within a stripe see one server only); and 4 x 3 VRF pairs
    assert sum(p.reach for p in pings) == 4 * 8 and sum(not p.reach for p in pings) == 12
    assert sample.coverage == ["tenant pings: 44 sampled over 4 VRFs: one for each of 32 same-VRF leaf pairs (32 "
                               "more reach one server only) and each of 12/12 VRF pairs (0 leaked by reach, the rest "
                               "must fail)"]
    assert all(srv.name in sample.pings for srv in plan.servers)  # the sources rotate over the servers


def test_sample_follows_reach_both_ways() -> None:
    plan = load_plan(GPU_EVPN)  # blue reaches green
    pings = [p for pings in tenant_sample(plan).pings.values() for p in pings]
    ends = {p: re.findall(r"\((\w+)\)", p.label) for p in pings}
    cross = {f"{a}>{b}": p.reach for p, (a, b) in ends.items() if a != b}
    assert cross == {"red>green": False, "red>blue": False, "green>red": False, "green>blue": True,
                     "blue>red": False, "blue>green": True}


def test_ping_output_judged_both_ways(plan: Plan) -> None:
    srv = plan.servers[0]
    pings = [TenantPing("198.18.32.1", "198.18.32.17", "a (red) -> b (red)", True),
             TenantPing("198.18.32.1", "198.18.32.19", "a (red) -> c (red)", True),
             TenantPing("198.18.32.1", "198.18.32.3", "a (red) -> d (green)", False),
             TenantPing("198.18.32.1", "198.18.32.5", "a (red) -> e (blue)", False)]
    output = ("OK 198.18.32.1 198.18.32.17\nSMALL 198.18.32.1 198.18.32.19\nOK 198.18.32.1 198.18.32.3\n"
              "FAIL 198.18.32.1 198.18.32.5\n")
    got = {o.item: (o.ok, o.actual) for o in check_tenant_output(srv, pings, output, 9216)}
    assert got == {"a (red) -> b (red)": (True, "reachable at 9216 bytes, don't fragment"),
                   "a (red) -> c (red)": (False, "only small packets pass (9216-byte don't-fragment pings are lost)"),
                   "a (red) -> d (green)": (False, "reachable: isolation broken"),
                   "a (red) -> e (blue)": (True, "unreachable (tenant isolation)")}
    script = server_script([(p.src, p.dst, p.label) for p in pings], 9216)
    assert "ping -c1 -W1 -M do -s 9188 -I 198.18.32.1 198.18.32.3" in script


def live_as_planned(plan: Plan, leaf: str) -> dict[str, LiveVrf]:
    assert plan.tenancy is not None
    subnets = tenant_subnets(plan)
    out = {tp.name: LiveVrf(tp.vni, frozenset(s for s, t in subnets.items() if t in {tp.name, *tp.reach}))
           for tp in plan.tenancy.on(leaf)}
    out["default"] = LiveVrf(0, frozenset({"198.18.0.1/32", "198.18.32.6/31"}))  # a loopback, an untenanted port
    return out


def test_switch_as_planned_passes_and_each_fault_is_named(plan: Plan) -> None:
    leaf = plan.switches["tlab-leaf01"]
    live = live_as_planned(plan, leaf.hostname)
    found = check_switch_tenants(plan, leaf, live)
    assert found and all(o.ok for o in found) and {o.item for o in found} >= {"vrf red", "vrf red routes"}
    green = next(s for s, t in tenant_subnets(plan).items() if t == "green")
    red = live["red"]
    live["red"] = LiveVrf(10002, red.prefixes | {green})  # wrong L3VNI, green's route leaked into red
    live["default"] = LiveVrf(0, live["default"].prefixes | {green})
    live["amber"] = LiveVrf(10009)
    del live["blue"]
    bad = {(o.item, o.actual) for o in check_switch_tenants(plan, leaf, live) if not o.ok}
    assert bad == {("vrf red", "L3VNI 10002"), (f"route {green} in vrf red", "tenant green's route in VRF red"),
                   (f"route {green} in vrf default", "tenant green's route in VRF default"),
                   ("vrf amber", "present with L3VNI 10009"), ("vrf blue", "missing")}
    spine = plan.switches["tlab-spine01"]
    assert check_switch_tenants(plan, spine, {"default": LiveVrf(0, frozenset({"198.18.0.1/32"}))}) == []


def test_missing_tenant_route_is_named(plan: Plan) -> None:
    leaf = plan.switches["tlab-leaf01"]
    live = live_as_planned(plan, leaf.hostname)
    gone = sorted(live["red"].prefixes)[-1]
    live["red"] = LiveVrf(live["red"].vni, live["red"].prefixes - {gone})
    bad = [o for o in check_switch_tenants(plan, leaf, live) if not o.ok]
    assert [(o.item, o.actual) for o in bad] == [("vrf red routes", f"missing {gone}")]


def test_frr_live_vrfs_parsed(tmp_path: Path) -> None:
    """The JSON zebra gives for `show evpn vni json` and `show ip route vrf all json` (shapes of FRR 8.4)."""
    vnis = {"10001": {"vni": 10001, "type": "L3", "vxlanIf": "vx1", "tenantVrf": "red"},
            "10002": {"vni": 10002, "type": "L3", "vxlanIf": "vx2", "tenantVrf": "green"},
            "200": {"vni": 200, "type": "L2", "vxlanIf": "vx200", "tenantVrf": "default"}}
    tables = [{"198.18.32.0/31": [{"prefix": "198.18.32.0/31", "vrfName": "red", "protocol": "connected"}],
               "198.18.32.16/31": [{"prefix": "198.18.32.16/31", "vrfName": "red", "protocol": "bgp"}]},
              {"198.18.0.3/32": [{"prefix": "198.18.0.3/32", "vrfName": "default", "protocol": "connected"}]}]
    routes = "\n".join(json.dumps(t, indent=2) for t in tables)  # one object per VRF, back to back
    live = parse_live(json.dumps(vnis), routes)
    assert live == {"default": LiveVrf(0, frozenset({"198.18.0.3/32"})),
                    "green": LiveVrf(10002, frozenset()),
                    "red": LiveVrf(10001, frozenset({"198.18.32.0/31", "198.18.32.16/31"}))}


class _FrrShell:
    """A Linux + FRR switch as `cli()` answers: zebra's JSON and iproute2's per netns VRF (FRR 8.4, iproute2 6.x
    shapes, as the lab's leaves print them)."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def cli(self, commands: list[str]) -> dict[str, str]:
        self.asked += commands
        return {c: self.answers[c] for c in commands}


def test_router_macs_read_back_and_a_missing_one_named_as_the_cause(plan: Plan) -> None:
    """validate --tenants reads, for each tenant VRF with an L3VNI, the VTEPs its kernel routes go through
    (`ip -n red -j route show proto bgp`: `via 198.18.0.4 dev br11 onlink`) and its neighbours (`ip -n red -j
    neigh show`): a VTEP without zebra's router-MAC neighbour (none, or INCOMPLETE) is named as the cause; a
    VRF whose every VTEP has one passes; a platform that does not read them (None) gets no such check."""
    from fabricgen.platforms.frr.tenants import (
        ROUTES_COMMAND,
        VNI_COMMAND,
        kernel_routes_command,
        neighbours_command,
        read_live,
    )

    leaf = plan.switches["tlab-leaf01"]
    vnis = {"10011": {"vni": 10011, "type": "L3", "tenantVrf": "red"},
            "10012": {"vni": 10012, "type": "L3", "tenantVrf": "green"}}
    route = {"dst": "198.18.32.8/31", "gateway": "198.18.0.4", "dev": "br11", "protocol": "bgp", "flags": ["onlink"]}
    other = {**route, "dst": "198.18.32.16/31", "gateway": "198.18.0.6"}
    answers = {VNI_COMMAND: json.dumps(vnis), ROUTES_COMMAND: "{}",
               kernel_routes_command("red"): json.dumps([route, other]),
               neighbours_command("red"): json.dumps([
                   {"dst": "198.18.0.4", "dev": "br11", "lladdr": "0a:f9:12:cc:dc:91", "state": ["NOARP"]},
                   {"dst": "198.18.0.6", "dev": "br11", "state": ["INCOMPLETE"]}]),
               kernel_routes_command("green"): json.dumps([{**route, "dev": "br12"}]),
               neighbours_command("green"): json.dumps([{"dst": "198.18.0.4", "dev": "br12",
                                                         "lladdr": "0a:f9:12:cc:dc:92", "state": ["NOARP"]}])}
    device = _FrrShell(answers)
    live = read_live(device)
    assert (live["red"].silent_vteps, live["green"].silent_vteps) == (("198.18.0.6",), ())
    assert device.asked[2:] == [kernel_routes_command("green"), neighbours_command("green"),
                                kernel_routes_command("red"), neighbours_command("red")]
    planned = live_as_planned(plan, leaf.hostname)
    planned["red"] = LiveVrf(planned["red"].vni, planned["red"].prefixes, silent_vteps=live["red"].silent_vteps)
    planned["green"] = LiveVrf(planned["green"].vni, planned["green"].prefixes, silent_vteps=())
    found = check_switch_tenants(plan, leaf, planned)
    assert [(o.item, o.actual) for o in found if not o.ok] == [
        ("vrf red router MACs", "no router-MAC neighbour for VTEP 198.18.0.6: traffic to it is dropped (zebra lost "
                                "the router MAC; fix: bind the L3VNI again, `no vni` then `vni`, as deploy does)")]
    assert [o.ok for o in found if o.item == "vrf green router MACs"] == [True]
    assert not [o for o in found if o.item == "vrf blue router MACs"]  # not read: no such check
