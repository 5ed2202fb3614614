"""FRR configs (SONiC frr.conf and the `frr` platform): plan BGP in, FRR 8.4-valid text out."""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.catalog.registry import platform
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.frr import bgp as frr_common
from fabricgen.platforms.frr import render as frr
from fabricgen.platforms.sonic import render as sonic
from fabricgen.render.build import environment, render_switch
from tests.conftest import EXAMPLE, small_intent

VTYSH = shutil.which("vtysh")
needs_vtysh = pytest.mark.skipif(VTYSH is None, reason="FRR's vtysh is not installed")


def example_dict(**platforms: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    if platforms:
        data["platforms"] = platforms
        data["ecmp"].pop("adaptive_routing", None)  # no FRR or SONiC switch does it: plan would refuse it
    return data


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


@pytest.fixture(scope="module")
def example() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def all_frr() -> Plan:
    return plan_of(example_dict(leaf="frr", spine="frr"))


def frr_conf(sw: Switch, plan: Plan) -> str:
    return render_switch(sw, plan, environment())["frr.conf"]


def bgp_lines(text: str) -> list[str]:
    """Stripped lines of the `router bgp` block."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("router bgp "):
            inside = True
        elif inside and line == "exit":
            break
        if inside:
            out.append(line.strip())
    assert out, "no router bgp block"
    return out


def af_lines(text: str, af: str = "ipv4 unicast") -> list[str]:
    lines = bgp_lines(text)
    start = lines.index(f"address-family {af}")
    end = lines.index("exit-address-family", start)
    return lines[start + 1:end]


def remote_as(text: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^ neighbor (\S+) remote-as (\d+)$", text, re.MULTILINE)}


def vtysh_check(path: Path) -> subprocess.CompletedProcess[str]:
    assert VTYSH is not None
    return subprocess.run([VTYSH, "--dryrun", "--inputfile", str(path)], capture_output=True, text=True,
                          timeout=60, check=False)


# --------------------------------------------------------------------------- FRR accepts the files


@needs_vtysh
def test_sonic_frr_conf_passes_vtysh_dryrun(example: Plan, tmp_path: Path) -> None:
    leaves = [s for s in example.switches.values() if s.platform == "sonic"]
    assert leaves
    for sw in leaves:
        path = tmp_path / f"{sw.hostname}.conf"
        path.write_text(frr_conf(sw, example), encoding="utf-8")
        res = vtysh_check(path)
        assert res.returncode == 0, f"{sw.hostname}: {res.stdout}{res.stderr}"


@needs_vtysh
def test_frr_platform_passes_vtysh_dryrun_for_every_role(all_frr: Plan, tmp_path: Path) -> None:
    assert {s.platform for s in all_frr.switches.values()} == {"frr"}
    for sw in all_frr.switches.values():
        path = tmp_path / f"{sw.hostname}.conf"
        path.write_text(frr_conf(sw, all_frr), encoding="utf-8")
        res = vtysh_check(path)
        assert res.returncode == 0, f"{sw.hostname}: {res.stdout}{res.stderr}"


@needs_vtysh
def test_vtysh_dryrun_catches_errors(tmp_path: Path) -> None:
    """The check is real: FRR 8.4 has no interface `mtu` command, so MTU stays with the lab."""
    path = tmp_path / "bad.conf"
    path.write_text("interface Ethernet0\n mtu 9216\nexit\n", encoding="utf-8")
    assert vtysh_check(path).returncode != 0


# --------------------------------------------------------------------------- BGP content


@pytest.mark.parametrize("fixture", ["example", "all_frr"])
def test_every_planned_neighbor_with_its_remote_as(fixture: str, request: pytest.FixtureRequest) -> None:
    plan: Plan = request.getfixturevalue(fixture)
    checked = 0
    for sw in plan.switches.values():
        if sw.platform not in ("sonic", "frr"):
            continue
        assert sw.bgp is not None
        text = frr_conf(sw, plan)
        want = {n.ip: n.remote_asn for n in sw.bgp.neighbors}
        assert remote_as(text) == want
        assert f"router bgp {sw.asn}" in text
        lines = bgp_lines(text)
        assert f"bgp router-id {sw.loopback}" in lines
        if (sw.bgp.keepalive, sw.bgp.holdtime) == frr_common.FRR_DATACENTER_TIMERS:  # FRR's default: unprinted
            assert not any(ln.startswith("timers bgp") for ln in lines)
        else:
            assert f"timers bgp {sw.bgp.keepalive} {sw.bgp.holdtime}" in lines
        assert "bgp bestpath as-path multipath-relax" in lines
        af = af_lines(text)
        for n in sw.bgp.neighbors:
            assert f"neighbor {n.ip} description {n.description}" in lines
            assert f"neighbor {n.ip} activate" in af
            assert f"neighbor {n.ip} route-map {frr_common.ROUTE_MAP_IMPORT} in" in af
            assert f"neighbor {n.ip} route-map RM-EXPORT-V4 out" in af
        checked += 1
    assert checked


@pytest.mark.parametrize("fixture", ["example", "all_frr"])
def test_maximum_paths_equals_plan(fixture: str, request: pytest.FixtureRequest) -> None:
    plan: Plan = request.getfixturevalue(fixture)
    for sw in plan.switches.values():
        if platform(sw.platform).bgp_config_file == "frr.conf":
            assert sw.bgp is not None
            assert af_lines(frr_conf(sw, plan)).count(f"maximum-paths {sw.bgp.maximum_paths}") == 1


def test_maximum_paths_above_frr_limit_is_capped_and_said() -> None:
    data = example_dict(leaf="frr", spine="frr")
    data["bgp"]["maximum_paths"] = frr_common.FRR_MAX_PATHS + 44
    plan = plan_of(data)
    text = frr_conf(plan.by_role("leaf")[0], plan)
    assert f"maximum-paths {frr_common.FRR_MAX_PATHS}" in af_lines(text)
    assert f"the plan asks for {frr_common.FRR_MAX_PATHS + 44} paths" in text


def test_allowas_in_only_on_same_tier_leaves(example: Plan) -> None:
    assert "allowas-in" not in "".join(frr_conf(s, example) for s in example.by_role("leaf"))
    multi = plan_of(example_dict(leaf="frr", spine="frr"))
    assert all("allowas-in" not in frr_conf(s, multi) for s in multi.switches.values())

    data = example_dict(leaf="frr", spine="frr")
    data["bgp"]["asn_scheme"] = "same-tier"
    data["bgp"]["allowas_in"] = 2
    same = plan_of(data)
    for sw in same.switches.values():
        assert sw.bgp is not None
        af = af_lines(frr_conf(sw, same))
        allow = [line for line in af if "allowas-in" in line]
        if sw.role == "leaf":
            assert allow == [f"neighbor {n.ip} allowas-in 2" for n in sw.bgp.neighbors]
        else:
            assert allow == []


def test_announced_prefixes(all_frr: Plan) -> None:
    a = all_frr.settings.pools
    leaf = all_frr.by_role("leaf")[0]
    text = frr_conf(leaf, all_frr)
    local = re.findall(r"^ip prefix-list PL-LOCAL-V4 seq \d+ permit (\S+)$", text, re.MULTILINE)
    gpu = [str(ipaddress.ip_interface(i.ipv4).network) for i in leaf.interfaces if i.tier == "gpu_leaf"]
    assert local == [f"{leaf.loopback}/32", *gpu]
    assert len(gpu) == len(all_frr.servers)  # one NIC of every server on its rail leaf
    # fabric /31s never enter BGP: redistribution and export both filter on the local list
    fabric_nets = {str(ipaddress.ip_interface(i.ipv4).network) for i in leaf.interfaces if i.tier != "gpu_leaf"}
    assert not fabric_nets & set(local)
    assert "redistribute connected route-map RM-CONNECTED-V4" in af_lines(text)
    assert "PL-FABRIC-V4" not in text  # a leaf is never transit

    spine = all_frr.by_role("spine")[0]
    stext = frr_conf(spine, all_frr)
    assert re.findall(r"^ip prefix-list PL-LOCAL-V4 seq \d+ permit (\S+)$", stext, re.MULTILINE) == \
        [f"{spine.loopback}/32"]
    assert f"ip prefix-list PL-FABRIC-V4 seq 10 permit {a.loopbacks} ge 32" in stext
    assert f"ip prefix-list PL-FABRIC-V4 seq 20 permit {a.gpu} ge 31 le 31" in stext
    assert "route-map RM-EXPORT-V4 permit 20\n match ip address prefix-list PL-FABRIC-V4\n" in stext


def test_bfd_profile_from_intent(all_frr: Plan) -> None:
    b = Intent.model_validate(example_dict(leaf="frr", spine="frr")).bgp.bfd
    sw = all_frr.by_role("leaf")[0]
    text = frr_conf(sw, all_frr)
    # Default timers (300/300/3) are left to FRR, so running-config and the file agree line for line.
    assert (b.min_rx_ms, b.min_tx_ms, b.multiplier) == (300, 300, 3)
    assert f"bfd\n profile {frr_common.BFD_PROFILE}\n exit\n" in text
    fast = plan_of(small_intent(platforms={"leaf": "frr", "spine": "frr"},
                                bgp={"bfd": {"min_rx_ms": 100, "min_tx_ms": 150, "multiplier": 3}}))
    ftext = frr_conf(fast.by_role("leaf")[0], fast)
    # in the order FRR prints a profile (detect-multiplier, transmit, receive): a no-op is an empty diff
    assert f"bfd\n profile {frr_common.BFD_PROFILE}\n  transmit-interval 150\n  receive-interval 100\n exit\n" in ftext
    assert sw.bgp is not None
    lines = bgp_lines(text)
    for n in sw.bgp.neighbors:
        assert f"neighbor {n.ip} bfd" in lines
        assert f"neighbor {n.ip} bfd profile {frr_common.BFD_PROFILE}" in lines

    data = example_dict(leaf="frr", spine="frr")
    data["bgp"]["bfd"] = {"enabled": False}
    off = plan_of(data)
    text = frr_conf(off.by_role("leaf")[0], off)
    assert "bfd" not in text


def test_bfd_timers_follow_the_intent() -> None:
    data = small_intent(platforms={"leaf": "frr", "spine": "frr"},
                        bgp={"bfd": {"min_tx_ms": 150, "min_rx_ms": 250, "multiplier": 5}})
    plan = plan_of(data)
    text = frr_conf(plan.by_role("spine")[0], plan)
    assert "  detect-multiplier 5\n  transmit-interval 150\n  receive-interval 250\n" in text  # FRR's order


# --------------------------------------------------------------------------- frr platform specifics


def test_frr_platform_interfaces_and_loopback(all_frr: Plan) -> None:
    for sw in (all_frr.by_role("leaf")[0], all_frr.by_role("spine")[0]):
        text = frr_conf(sw, all_frr)
        assert text.startswith("frr defaults datacenter\n")
        for header in (f"hostname {sw.hostname}", "log syslog informational", "service integrated-vtysh-config"):
            assert f"\n{header}\n" in text
        for itf in sw.interfaces:
            block = f"interface {itf.name}\n description {itf.description}\n ip address {itf.ipv4}\nexit\n"
            assert block in text
        assert f"interface lo\n ip address {sw.loopback}/32\nexit\n" in text
        assert " mtu " not in text
        assert text.count("\ninterface ") == len(sw.interfaces) + 1


def test_sonic_frr_conf_has_no_interfaces_and_no_integrated_service(example: Plan) -> None:
    """On SONiC the interfaces come from ConfigDB; vtysh.conf is written by the bgp container."""
    sw = example.by_role("leaf")[0]
    text = sonic.render(sw, example, environment())["frr.conf"]
    assert "\ninterface " not in text
    assert "service integrated-vtysh-config" not in text
    assert text.startswith(f"frr defaults datacenter\nhostname {sw.hostname}\nlog syslog informational\n")


def test_sonic_and_frr_share_the_bgp_part(all_frr: Plan) -> None:
    """Same leaf, SONiC or Linux+FRR (same spines): the BGP text is identical."""
    mixed = plan_of(example_dict(leaf="sonic", spine="frr"))
    for host, sw in mixed.switches.items():
        if sw.role != "leaf":
            continue
        ta, tb = frr_conf(sw, mixed), frr_conf(all_frr.switches[host], all_frr)
        assert ta[ta.index("ip prefix-list"):] == tb[tb.index("ip prefix-list"):]


def test_rerender_is_byte_identical(all_frr: Plan) -> None:
    again = plan_of(example_dict(leaf="frr", spine="frr"))
    for host, sw in all_frr.switches.items():
        first = frr_conf(sw, all_frr)
        assert first == frr.render(sw, all_frr, environment())["frr.conf"]
        assert first == frr_conf(again.switches[host], again)
    ex = load_plan(EXAMPLE)
    leaf = ex.by_role("leaf")[0]
    assert frr_conf(leaf, ex) == frr_conf(leaf, ex)


def test_network_helper_matches_ipaddress() -> None:
    for p in ("198.18.32.1/31", "198.18.32.0/31", "198.18.0.9/32", "198.19.255.255/15", "198.18.7.3/24"):
        assert frr_common._network(p) == str(ipaddress.ip_interface(p).network)


@pytest.mark.parametrize("prefix", ["198.18.32.0/31", "198.18.32.1/31", "198.18.32.6/31", "198.18.32.7/30",
                                    "198.18.32.130/25", "127.64.255.254/31", "198.18.0.9/32", "2001:db8::3/127"])
def test_network_of_an_interface_address(prefix: str) -> None:
    """`_network` (integer arithmetic, and a leaf's even end of a /31 as it is) is what `ipaddress` says."""
    assert frr_common._network(prefix) == str(ipaddress.ip_interface(prefix).network)
