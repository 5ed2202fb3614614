"""Non-GPU endpoints on the leaves (issue 10): storage nodes, UFM / management appliances."""

from __future__ import annotations

import copy
import csv
import io
import ipaddress
from pathlib import Path
from typing import Any

import pytest
import yaml

import fabricgen
from fabricgen.cli import main
from fabricgen.intent.model import Intent
from fabricgen.lab.from_plan import containerlab, lab_topology
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.render.summary import cabling_csv, summary
from tests.conftest import override

BASE: dict[str, Any] = {
    "fabric": {"name": "ep"},
    "servers": {"count": 24, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": "400G"},
    "switch_models": {"leaf": {"ports": 64, "port_speed": "400G"}, "spine": {"ports": 64, "port_speed": "400G"}},
    "platforms": {"leaf": "nxos", "spine": "nxos"},
    "topology": {"tiers": 2, "rail_optimized": True, "leaf_uplinks": 32, "spines": 8},
    "addressing": {"loopbacks": "198.18.0.0/24", "p2p": "198.18.16.0/20", "gpu": "198.18.32.0/20",
                   "management": "198.19.254.0/23"},
    "endpoints": [{"name": "storage", "role": "storage", "count": 2, "per": "leaf"},
                  {"name": "ufm", "role": "ufm", "count": 1, "per": "su"}],
    "cabling": {"gpu_leaf_m": 3, "leaf_spine_m": 50},
}


def intent(**changes: Any) -> dict[str, Any]:
    return override(copy.deepcopy(BASE), **changes)


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_of(intent())


def test_endpoints_take_the_last_server_ports(plan: Plan) -> None:
    d = plan.envelope
    assert d.endpoint_ports == 3 and d.su_size == 29  # 32 server ports: 2 storage + 1 UFM slot, 29 for servers
    assert summary(plan)["endpoints"] == {"storage": 16, "ufm": 1}
    leaf = plan.switches["ep-leaf01"]
    peers = {itf.index: itf.peer_device for itf in leaf.interfaces if itf.tier == "gpu_leaf"}
    assert (peers[29], peers[30], peers[31]) == ("storage001", "storage002", "ufm001")
    assert max(i for i, p in peers.items() if p.startswith("gpu")) < 29
    leaf2 = plan.switches["ep-leaf02"]  # the SU's single UFM rides its first rail leaf only
    assert [i.peer_device for i in leaf2.interfaces if i.tier == "gpu_leaf" and i.index >= 29] == \
        ["storage003", "storage004"]


def test_addresses_come_from_the_leaf_port_pool(plan: Plan) -> None:
    leaf = plan.switches["ep-leaf01"]
    port = next(i for i in leaf.interfaces if i.peer_device == "storage001")
    (nic,) = next(h for h in plan.endpoints if h.name == "storage001").nics
    assert nic.gateway == port.ipv4.split("/")[0] and nic.ip.split("/")[0] == port.peer_ipv4
    unit = leaf.slot * plan.envelope.leaf_down + port.index  # the same formula as a GPU NIC's /31
    assert ipaddress.ip_address(nic.gateway) == plan.settings.pools.gpu.network_address + 2 * unit
    hosts = plan.hosts()
    assert len({h.mgmt_ip for h in hosts}) == len(hosts) == 24 + 17
    assert len({n.ip for h in hosts for n in h.nics}) == 24 * 8 + 17


def test_plan_cabling_configs_scripts_and_checks(plan: Plan, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(cabling_csv(plan))))
    assert {("storage001", "eth0", "ep-leaf01:Ethernet1/30"), ("ufm001", "eth0", "ep-leaf01:Ethernet1/32")} <= \
        {(r["a_device"], r["a_ports"], r["z_ends"]) for r in rows}
    fabricgen.render(plan, tmp_path / "build")
    cfg = (tmp_path / "build" / "configs" / "ep-leaf01" / "nxos.cfg").read_text(encoding="utf-8")
    assert "interface Ethernet1/30\n  description gpu_leaf:storage001:eth0\n" in cfg
    assert "ip prefix-list PL-REDIST-DIRECT seq 20 permit 198.18.32.0/20 le 31" in cfg  # announced with the GPUs
    script = (tmp_path / "build" / "hosts" / "storage001.sh").read_text(encoding="utf-8")
    (nic,) = next(h for h in plan.endpoints if h.name == "storage001").nics
    assert f"nic_up eth0 {nic.ip} {nic.gateway}/31 {nic.gateway} " in script  # its address, MTU and routes
    assert fabricgen.check(plan, tmp_path / "build" / "configs") == []


def test_endpoints_count_toward_oversubscription(plan: Plan) -> None:
    assert plan.oversubscription["leaf"] == pytest.approx((24 + 3) / 32)
    assert plan_of(intent(endpoints=[])).oversubscription["leaf"] == pytest.approx(24 / 32)


def test_growth_keeps_names_ports_and_addresses(plan: Plan) -> None:
    grown = plan_of(intent(servers__count=58))  # a second scalable unit
    before = {h.name: (h.nics[0].leaf, h.nics[0].leaf_port, h.nics[0].ip, h.mgmt_ip) for h in plan.endpoints}
    after = {h.name: (h.nics[0].leaf, h.nics[0].leaf_port, h.nics[0].ip, h.mgmt_ip) for h in grown.endpoints}
    assert before.items() <= after.items() and len(after) == 2 * len(before)
    assert {h.name for h in grown.endpoints} - set(before) >= {"ufm002", "storage017"}
    servers = {s.name: s.mgmt_ip for s in plan.servers}
    assert servers.items() <= {s.name: s.mgmt_ip for s in grown.servers}.items()


def test_multi_plane_endpoints_are_distinct_hosts() -> None:
    p = plan_of(intent(topology__planes=2, servers__ports_per_nic=2))
    names = [h.name for h in p.endpoints]
    assert len(names) == len(set(names)) == 2 * 17
    assert {p.switches[h.nics[0].leaf].plane for h in p.endpoints} == {0, 1}


def test_sonic_leaves_with_endpoints_pass_their_checks(tmp_path: Path, sonic_yang_models: Path) -> None:
    p = plan_of(intent(platforms={"leaf": "sonic", "spine": "nxos"}))
    fabricgen.render(p, tmp_path / "b")
    assert fabricgen.check(p, tmp_path / "b" / "configs") == []


def test_lab_runs_endpoints_as_hosts(plan: Plan, tmp_path: Path) -> None:
    topo = lab_topology(plan, tmp_path)
    node = next(n for n in topo.nodes if n.name == "storage001")
    assert node.kind == "server" and node.host_script and [i.name for i in node.interfaces] == ["eth0"]
    clab = yaml.safe_load(containerlab(plan))
    assert clab["topology"]["nodes"]["ufm001"]["labels"] == {"role": "ufm"}


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"endpoints": [{"name": "storage", "count": 1, "speed": "100G"}]}, "speed",
     ["endpoints.0.speed", "endpoint storage runs at 100G but the leaf server ports at 400G"]),
    ({"endpoints": [{"name": "gpu-store", "count": 1}]}, "name",
     ["endpoints.0.name", "overlaps servers.name_prefix 'gpu'"]),
    ({"topology__rail_optimized": False, "endpoints": [{"name": "ufm", "count": 1, "per": "su"}]}, "per",
     ["endpoints.0.per", "per: su needs scalable units"]),
    ({"endpoints": [{"name": "storage", "count": 32}]}, "endpoints",
     ["endpoints:", "endpoints take 32 of a leaf's 32 server ports, leaving 0 for GPU servers"]),
])
def test_bad_endpoints_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], changes: dict[str, Any],
                              field: str, words: list[str]) -> None:
    text = yaml.safe_dump(intent(**changes), sort_keys=False)
    path = tmp_path / "intent.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["plan", "-i", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "(fix: " in err
    line = max(i for i, t in enumerate(text.splitlines(), 1) if t.lstrip(" -").startswith(f"{field}:"))
    assert f"{path}:{line}: " in err, (line, err)
    for w in words:
        assert w in err, (w, err)
