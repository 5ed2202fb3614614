"""Live lab engine: real namespaces, FRR, sshd and lldpd on this host.

Pure tests (names, validation, ip batches) run anywhere; the ``lab`` tests build a
2-switch + 1-server lab once per module and check behaviour through SSH, as the napalm
driver will see it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import paramiko
import pytest

from fabricgen.base.ssh import strict_client
from fabricgen.lab import (
    LabError,
    LabInterface,
    LabLink,
    LabNode,
    LabRoute,
    LabRule,
    LabState,
    LabTopology,
    lab_down,
    lab_status,
    lab_up,
    linux_ifname,
    node_exec,
    prune_stale_labs,
    validate_topology,
)
from fabricgen.lab import netns as ln

T = TypeVar("T")
MGMT = {"s1": "198.18.255.11", "s2": "198.18.255.12", "h1": "198.18.255.21"}

S1_CONF = """\
frr defaults datacenter
hostname s1
!
interface Ethernet0
 ip address 198.19.0.0/31
!
interface Ethernet8
 ip address 198.19.1.0/31
!
interface lo
 ip address 198.19.255.1/32
!
router bgp 65101
 bgp router-id 198.19.255.1
 no bgp ebgp-requires-policy
 neighbor 198.19.0.1 remote-as 65102
 neighbor 198.19.0.1 timers connect 1
 address-family ipv4 unicast
  redistribute connected
 exit-address-family
!
"""

S2_CONF = """\
frr defaults datacenter
hostname s2
!
interface Ethernet0
 ip address 198.19.0.1/31
!
interface lo
 ip address 198.19.255.2/32
!
router bgp 65102
 bgp router-id 198.19.255.2
 no bgp ebgp-requires-policy
 neighbor 198.19.0.0 remote-as 65101
 neighbor 198.19.0.0 timers connect 1
 address-family ipv4 unicast
  redistribute connected
 exit-address-family
!
"""


def tiny_topology(workdir: str, name: str = "fgt") -> LabTopology:
    """s1 Ethernet0 <-> s2 Ethernet0, h1 eth0 <-> s1 Ethernet8; every address in 198.18.0.0/15."""
    return LabTopology(
        name=name,
        nodes=(
            LabNode("s1", "switch", MGMT["s1"]),
            LabNode("s2", "switch", MGMT["s2"], frr_config="hostname s2\n"),
            LabNode(
                "h1",
                "server",
                MGMT["h1"],
                interfaces=(LabInterface("eth0", ("198.19.1.1/31",)),),
                routes=(
                    LabRoute("198.19.0.0/16", "198.19.1.0", "eth0"),
                    LabRoute("0.0.0.0/0", "198.19.1.0", "eth0", table=101),
                ),
                rules=(LabRule("198.19.1.1/32", 101),),
            ),
        ),
        links=(LabLink("s1", "Ethernet0", "s2", "Ethernet0"), LabLink("h1", "eth0", "s1", "Ethernet8")),
        mgmt_subnet="198.18.255.0/24",
        workdir=workdir,
    )


def poll(fn: Callable[[], T | None], timeout: float, what: str) -> T:
    """Retry ``fn`` until it returns something truthy; fail with ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = fn()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


# --------------------------------------------------------------------------- pure tests


@pytest.mark.parametrize(
    ("name", "linux"),
    [
        ("Ethernet0", "Ethernet0"),
        ("Ethernet248", "Ethernet248"),
        ("eth0", "eth0"),
        ("Ethernet1/1", "Eth1-1"),
        ("Ethernet1/1/2", "Eth1-1-2"),
        ("Ethernet1/32/4", "Eth1-32-4"),
    ],
)
def test_linux_ifname_maps_names(name: str, linux: str) -> None:
    assert linux_ifname(name) == linux


@pytest.mark.parametrize("bad", ["", "Ethernet0:1", "eth 0", "PortChannel1000000", "Gi/0/0/0/0/0/0/0"])
def test_linux_ifname_rejects_invalid(bad: str) -> None:
    with pytest.raises(ValueError, match="Linux interface name"):
        linux_ifname(bad)


def test_validate_reports_every_problem(tmp_path: Path) -> None:
    topo = tiny_topology(str(tmp_path))
    broken = LabTopology(
        name=topo.name,
        nodes=(*topo.nodes, LabNode("s1", "switch", "198.18.254.1")),
        links=(*topo.links, LabLink("s2", "Ethernet0", "ghost", "Ethernet4")),
        mgmt_subnet=topo.mgmt_subnet,
        workdir=topo.workdir,
    )
    with pytest.raises(LabError) as exc:
        validate_topology(broken)
    text = str(exc.value)
    assert "defined twice" in text
    assert "198.18.254.1" in text
    assert "unknown node 'ghost'" in text
    assert "used twice" in text


def test_validate_accepts_tiny_topology(tmp_path: Path) -> None:
    topo = tiny_topology(str(tmp_path))
    validate_topology(topo)
    assert topo.host_mgmt_address == "198.18.255.254/24"


def test_root_batch_builds_everything_in_one_go(tmp_path: Path) -> None:
    topo = tiny_topology(str(tmp_path))
    cmds = ln.root_batch(topo, "fgt-mgmt", ["fga0", "fga1", "fga2"])
    assert cmds[:3] == ["netns add fgt-s1", "netns add fgt-s2", "netns add fgt-h1"]
    assert "address add 198.18.255.254/24 dev fgt-mgmt" in cmds
    assert "link add Ethernet0 netns fgt-s1 mtu 9216 type veth peer name Ethernet0 netns fgt-s2 mtu 9216" in cmds
    node_cmds = ln.node_batch(topo, topo.node("h1"))
    assert "route add 0.0.0.0/0 via 198.19.1.0 dev eth0 table 101" in node_cmds
    assert node_cmds[-1] == "rule add from 198.19.1.1/32 table 101"
    assert all(len(ln.host_veth_name("a-very-long-lab-name-indeed", i)) <= 15 for i in range(1000))
    assert len(ln.bridge_name("a-very-long-lab-name-indeed")) <= 15


# --------------------------------------------------------------------------- live lab


class Ssh:
    """One paramiko connection per node, as the napalm driver would hold it."""

    def __init__(self, state: LabState) -> None:
        self.clients: dict[str, paramiko.SSHClient] = {}
        for name, node in state.nodes.items():
            client = strict_client(Path(state.known_hosts))  # the lab's own known_hosts: keys verified
            client.connect(
                node.mgmt_ip,
                username=state.ssh_user,
                key_filename=state.key_file,
                look_for_keys=False,
                allow_agent=False,
                timeout=5,
            )
            self.clients[name] = client

    def run(self, node: str, command: str, stdin: str | None = None) -> str:
        """Run a command over SSH; fail the test with stderr if it exits non-zero."""
        chan_in, chan_out, chan_err = self.clients[node].exec_command(command, timeout=20)
        if stdin is not None:
            chan_in.write(stdin)
            chan_in.channel.shutdown_write()
        out = chan_out.read().decode()
        rc = chan_out.channel.recv_exit_status()
        assert rc == 0, f"{node}: `{command}` exited {rc}: {chan_err.read().decode()}"
        return out

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


@pytest.fixture(scope="module")
def lab(lab_host: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    """The tiny lab, up for the whole module; always torn down."""
    workdir = tmp_path_factory.mktemp("lab")
    topo = tiny_topology(str(workdir), name=f"fgt{os.getpid() % 100000}")
    prune_stale_labs()  # what a cut-off run left behind
    state = lab_up(topo)
    try:
        yield state
    finally:
        lab_down(workdir)


@pytest.fixture(scope="module")
def ssh(lab: LabState) -> Iterator[Ssh]:
    conn = Ssh(lab)
    yield conn
    conn.close()


@pytest.fixture(scope="module")
def configured(ssh: Ssh) -> Ssh:
    """Push the FRR configs the way the napalm driver does: write frr.conf, frr-reload.py."""
    for node, conf in (("s1", S1_CONF), ("s2", S2_CONF)):
        ssh.run(node, "cat > /etc/frr/frr.conf", stdin=conf)
        ssh.run(node, "/usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf")
    return ssh


@pytest.mark.lab
def test_failed_up_leaves_nothing_behind(lab_host: None, tmp_path: Path) -> None:
    good = tiny_topology(str(tmp_path), name=f"fgf{os.getpid() % 100000}")
    bad_s2 = LabNode("s2", "switch", MGMT["s2"], frr_config="hostname s2\nthis is no frr command\n")
    topo = LabTopology(
        name=good.name,
        nodes=(good.nodes[0], bad_s2, good.nodes[2]),
        links=good.links,
        mgmt_subnet=good.mgmt_subnet,
        workdir=good.workdir,
    )
    prune_stale_labs()
    with pytest.raises(LabError, match="vtysh -b"):
        lab_up(topo)
    assert not [ns for ns in ln.list_netns() if ns.startswith(f"{topo.name}-")]
    assert not ln.link_exists(ln.bridge_name(topo.name))
    assert not (tmp_path / "state.json").exists()
    assert not lab_status(str(tmp_path)).running


@pytest.mark.lab
def test_lab_is_healthy_and_fast(lab: LabState) -> None:
    status = lab_status(lab.workdir)
    assert status.running and status.healthy, status
    assert {n.name for n in status.nodes} == {"s1", "s2", "h1"}
    assert all(n.ssh_reachable is True for n in status.nodes)  # probed, and answering
    # issue 23 D12: what was not probed is not reported as "ssh NO"
    assert {n.ssh_reachable for n in lab_status(lab.workdir, check_ssh=False).nodes} == {None}
    assert lab.timings["total"] < 10, lab.timings


@pytest.mark.lab
def test_each_node_has_its_own_hostname_and_frr_dir(ssh: Ssh) -> None:
    for node in ("s1", "s2", "h1"):
        assert ssh.run(node, "hostname").strip() == node
        path = ssh.run(node, "echo $PATH").strip().split(":")
        assert {"/usr/sbin", "/usr/bin", "/sbin", "/bin"} <= set(path)
    assert ssh.run("s1", "cat /etc/frr/frr.conf").strip() == "hostname s1"
    assert ssh.run("s2", "cat /etc/frr/frr.conf").strip() == "hostname s2"


@pytest.mark.lab
def test_vtysh_shows_own_hostname(ssh: Ssh) -> None:
    for node in ("s1", "s2"):
        assert f"hostname {node}\n" in ssh.run(node, "vtysh -c 'show running-config'")


@pytest.mark.lab
def test_server_addresses_routes_and_rules(ssh: Ssh) -> None:
    assert "198.19.1.1/31" in ssh.run("h1", "ip -br address show dev eth0")
    assert "from 198.19.1.1 lookup 101" in ssh.run("h1", "ip rule")
    assert "default via 198.19.1.0 dev eth0" in ssh.run("h1", "ip route show table 101")
    assert "mtu 9216" in ssh.run("h1", "ip link show dev eth0")


@pytest.mark.lab
def test_frr_reload_brings_up_ebgp(configured: Ssh) -> None:
    assert "198.19.0.0/31" in configured.run("s1", "ip -br address show dev Ethernet0")

    def established() -> bool:
        summary = json.loads(configured.run("s1", "vtysh -c 'show bgp summary json'"))
        return summary["ipv4Unicast"]["peers"]["198.19.0.1"]["state"] == "Established"

    poll(established, 20, "eBGP s1-s2 Established")

    def learned() -> bool:
        routes = json.loads(configured.run("s2", "vtysh -c 'show ip route 198.19.255.1/32 json'"))
        return any(r.get("protocol") == "bgp" for r in routes.get("198.19.255.1/32", []))

    poll(learned, 10, "s2 learning s1's loopback over BGP")


@pytest.mark.lab
def test_server_pings_switch(configured: Ssh) -> None:
    configured.run("h1", "ping -c 1 -W 2 198.19.1.0")


@pytest.mark.lab
def test_lldp_sees_neighbour_port(lab: LabState, ssh: Ssh) -> None:
    def neighbour() -> dict[str, object] | None:
        data = json.loads(ssh.run("s1", "lldpcli show neighbors -f json"))
        ifaces = data.get("lldp", {}).get("interface", {})
        if isinstance(ifaces, list):  # lldpcli emits a list once there are several neighbours
            merged: dict[str, object] = {}
            for item in ifaces:
                merged.update(item)
            ifaces = merged
        entry = ifaces.get("Ethernet0")
        return entry if isinstance(entry, dict) else None

    entry = poll(neighbour, 10, "LLDP neighbour on s1 Ethernet0")
    chassis = entry["chassis"]
    assert isinstance(chassis, dict) and "s2" in chassis
    port = entry["port"]
    assert isinstance(port, dict) and port["id"] == {"type": "ifname", "value": "Ethernet0"}
    # the explicit control socket works too, and the mgmt port is not in LLDP
    explicit = ssh.run("s1", "lldpcli -u /run/lldpd.socket show interfaces -f json")
    assert "mgmt0" not in explicit and "Ethernet8" in explicit


@pytest.mark.lab
def test_node_exec_runs_inside_node(lab: LabState) -> None:
    out = node_exec(lab.workdir, "s2", ["vtysh", "-c", "show running-config"])
    assert out.returncode == 0 and "hostname s2" in out.stdout
    with pytest.raises(LabError, match="no node"):
        node_exec(lab.workdir, "nope", ["true"])


@pytest.mark.lab
def test_second_lab_up_fails_clearly(lab: LabState) -> None:
    topo = tiny_topology(lab.workdir, name=lab.name)
    with pytest.raises(LabError, match="already up"):
        lab_up(topo)
    assert lab_status(lab.workdir, check_ssh=False).running


@pytest.mark.lab
def test_lab_down_removes_everything(lab: LabState, ssh: Ssh) -> None:
    ssh.close()  # sessions must not keep anything alive, but close them like a real client
    procs = lab.all_procs()
    assert procs and all(p.alive() for p in procs)
    lab_down(lab.workdir)
    assert not set(lab.namespaces) & ln.list_netns()
    assert not ln.link_exists(lab.bridge)
    assert not any(ln.link_exists(n.host_link) for n in lab.nodes.values())
    assert not [p.pid for p in procs if p.alive()]
    assert not (Path(lab.workdir) / "state.json").exists()
    assert not lab_status(lab.workdir).running
    lab_down(lab.workdir)  # idempotent
