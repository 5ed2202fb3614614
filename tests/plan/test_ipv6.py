"""IPv6 underlay (text only, 2001:db8::/32): v6 loopbacks, /127 links and v6 BGP on every platform.

The lab stays IPv4; these configs are only rendered and checked: SONiC's YANG models and FRR's own
parser take them, and every platform's BGP has one IPv6 session per fabric link.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest

from fabricgen.check.frr_parser import check_frr_configs
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.sonic.buffers import device_base
from fabricgen.platforms.sonic.configdb import merge_owned
from fabricgen.render.build import environment, render_switch
from tests.conftest import small_intent
from tests.platforms.test_render_sonic import validator  # noqa: F401 - the module-scoped fixture

LO6 = ipaddress.ip_network("2001:db8:0:1::/64")
P2P6 = ipaddress.ip_network("2001:db8:1::/56")


def v6_plan(leaf: str = "sonic", spine: str = "nxos") -> Plan:
    data: dict[str, Any] = small_intent(platforms={"leaf": leaf, "spine": spine})
    data["addressing"].update(loopbacks_v6=str(LO6), p2p_v6=str(P2P6))
    return build_plan(Intent.model_validate(data))


@pytest.fixture(scope="module")
def plan() -> Plan:
    return v6_plan()


def test_v6_loopbacks_are_unique_and_announced(plan: Plan) -> None:
    los = [ipaddress.ip_address(s.loopback_v6) for s in plan.switches.values()]
    assert len(set(los)) == len(los) and all(a in LO6 for a in los)
    for sw in plan.switches.values():
        assert sw.bgp is not None and f"{sw.loopback_v6}/128" in sw.bgp.networks


def test_fabric_links_get_127s_shared_by_both_ends(plan: Plan) -> None:
    ports = {(sw.hostname, i.name): i for sw in plan.switches.values() for i in sw.interfaces}
    seen: set[str] = set()
    for sw in plan.switches.values():
        for itf in sw.interfaces:
            if itf.tier == "gpu_leaf":
                assert itf.ipv6 == ""  # GPU NICs stay IPv4
                continue
            net = ipaddress.ip_interface(itf.ipv6)
            assert net.network.prefixlen == 127 and net.ip in P2P6 and itf.ipv6 not in seen
            seen.add(itf.ipv6)
            peer = ports[itf.peer_device, itf.peer_interface]
            assert ipaddress.ip_address(itf.peer_ipv6) == ipaddress.ip_interface(peer.ipv6).ip
            assert ipaddress.ip_interface(peer.ipv6).network == net.network


def _v6_neighbors(plan: Plan, host: str) -> set[str]:
    sw = plan.switches[host]
    assert sw.bgp is not None
    return {n.ip for n in sw.bgp.neighbors if n.afi == "ipv6"}


def test_every_fabric_link_has_a_v6_session(plan: Plan) -> None:
    for sw in plan.switches.values():
        fabric = [i for i in sw.interfaces if i.tier != "gpu_leaf"]
        assert _v6_neighbors(plan, sw.hostname) == {i.peer_ipv6 for i in fabric}


@pytest.mark.parametrize(("leaf", "spine"), [("sonic", "nxos"), ("frr", "sonic"), ("nxos", "frr")])
def test_v6_bgp_in_every_platforms_config(leaf: str, spine: str, tmp_path: Path, validator: Any) -> None:  # noqa: F811
    plan = v6_plan(leaf, spine)
    env = environment()
    frr_files: list[Path] = []
    for host in (plan.by_role("leaf")[0].hostname, plan.by_role("spine")[0].hostname):
        sw = plan.switches[host]
        files = render_switch(sw, plan, env)
        text = "\n".join(files.values())
        for ip in _v6_neighbors(plan, host):
            assert f"neighbor {ip}" in text, (sw.platform, ip)
        assert sw.loopback_v6 in text
        if "config_db.json" in files:
            db = json.loads(files["config_db.json"])
            assert any(k.endswith("/127") for k in db["INTERFACE"])
            on_device = merge_owned(device_base(plan, sw), db)  # as the SONiC driver pushes it
            assert validator.validate(on_device, host, "config_db.json") == []
        if "frr.conf" in files:
            assert "address-family ipv6 unicast" in files["frr.conf"]
            path = tmp_path / host / "frr.conf"
            path.parent.mkdir()
            path.write_text(files["frr.conf"], encoding="utf-8")
            frr_files.append(path)
    assert frr_files, "each pair renders at least one FRR config"
    assert check_frr_configs(frr_files) == []
