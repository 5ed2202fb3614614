"""Neutral description of a live lab: nodes, cables, management network.

The plan-to-lab converter fills these in; the engine only reads them.  Nothing here
knows about FRR or namespaces, so the model can be built and validated without root.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fabricgen.lab.nic_emulation import EmulatedNic

IFNAMSIZ = 15  # Linux interface names hold at most 15 bytes
_BAD_IFNAME = re.compile(r"[\s/:%]")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,62})$")


class LabError(Exception):
    """Anything that stops a lab from coming up or going down; the message says what to do."""


@dataclass(frozen=True)
class SonicBox:
    """What a SONiC lab node starts with: the bgp container's start-up and the box's ConfigDB."""

    daemons: tuple[tuple[str, str], ...]  # (FRR daemon, its command line), zebra first
    init_script: str  # docker_init.sh's frr.conf treatment for the routing mode (bash)
    config_db: str  # the ConfigDB the box boots with (JSON text)
    not_run: tuple[str, ...] = ()  # the template's programs the lab does not run, with why
    # what `systemctl restart bgp` starts, by frr_mgmt_framework_config ("true" / anything else)
    restart_daemons: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    @property
    def daemon_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.daemons)


@dataclass(frozen=True)
class LabInterface:
    """A server NIC and the addresses to put on it."""

    name: str  # e.g. "eth0"
    addresses: tuple[str, ...] = ()  # CIDR strings, e.g. "198.19.0.1/31"


@dataclass(frozen=True)
class LabRoute:
    """A static server route; ``table`` enables per-NIC source routing."""

    prefix: str
    via: str
    dev: str
    table: int | None = None


@dataclass(frozen=True)
class LabRule:
    """``ip rule add from <source> table <table>``."""

    source: str
    table: int


@dataclass(frozen=True)
class LabNode:
    """One switch or GPU server: its own netns, hostname, sshd and lldpd (and FRR for switches)."""

    name: str  # hostname
    kind: Literal["switch", "server"]
    mgmt_ip: str  # e.g. "198.18.255.11", inside LabTopology.mgmt_subnet
    interfaces: tuple[LabInterface, ...] = ()  # servers: NIC addresses; switches: empty (FRR sets them)
    routes: tuple[LabRoute, ...] = ()
    rules: tuple[LabRule, ...] = ()
    frr_config: str = ""  # initial /etc/frr/frr.conf for switches; "" means just "hostname <name>"
    host_script: str = ""  # servers: a bring-up script (fabricgen's NIC script) run at setup instead of addresses
    emulated_rdma: tuple[EmulatedNic, ...] = ()  # servers: the ConnectX RDMA side to emulate (no NIC exists)
    ptp_config: str = ""  # switches: the rendered ptp4l.conf of its boundary clock, run at setup (lab.ptp)
    sonic: SonicBox | None = None  # switches of platform sonic: FRR as the bgp container runs it, ConfigDB stand-in
    # switches: kernel settings written at setup, (dotted sysctl name, value): the plan's ECMP hash policy
    sysctls: tuple[tuple[str, str], ...] = ()
    # switches: the platform's rendered kernel script (registry `lab_script`: tenant VRFs as network
    # namespaces), run before FRR starts; zebra then runs with its netns VRF backend (`-n`)
    kernel_script: str = ""


@dataclass(frozen=True)
class LabLink:
    """A point-to-point cable (veth pair) between two node ports."""

    a: str
    a_if: str
    z: str
    z_if: str
    mtu: int = 9216


@dataclass(frozen=True)
class LabTopology:
    """Everything the engine needs to build a lab."""

    name: str  # lab name; prefixes namespace names so labs do not collide
    nodes: tuple[LabNode, ...]
    links: tuple[LabLink, ...]
    mgmt_subnet: str  # e.g. "198.18.255.0/24"; the root namespace gets the last usable address
    workdir: str  # keys, per-node dirs and state.json live here

    def node(self, name: str) -> LabNode:
        """Look a node up by name (KeyError names the node)."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(name)

    @property
    def host_mgmt_address(self) -> str:
        """CIDR of the root-namespace side of the management bridge (last usable address)."""
        net = ipaddress.ip_network(self.mgmt_subnet, strict=False)
        return f"{net.broadcast_address - 1}/{net.prefixlen}"


def linux_ifname(name: str) -> str:
    """Map a port name to a legal Linux interface name.

    SONiC names (``Ethernet8``) are legal already; NX-OS style names cannot hold ``/``,
    so ``Ethernet1/1`` becomes ``Eth1-1`` and ``Ethernet1/1/2`` becomes ``Eth1-1-2``.
    Raises ValueError for names that are still not usable.
    """
    out = name
    if "/" in out:
        if out.startswith("Ethernet"):
            out = "Eth" + out[len("Ethernet") :]
        out = out.replace("/", "-")
    if not out or out in (".", "..") or len(out.encode()) > IFNAMSIZ or _BAD_IFNAME.search(out):
        raise ValueError(
            f"interface name {name!r} cannot be a Linux interface name "
            f"(max {IFNAMSIZ} bytes, no '/', ':', '%' or whitespace)"
        )
    return out


def validate_topology(topo: LabTopology) -> None:
    """Reject a topology the engine cannot build, listing every problem at once."""
    problems: list[str] = []
    if not _NAME.match(topo.name) or len(topo.name) > 32:
        problems.append(f"lab name {topo.name!r} must be 1-32 chars of [A-Za-z0-9_.-]")
    try:
        subnet = ipaddress.ip_network(topo.mgmt_subnet, strict=False)
    except ValueError as exc:
        raise LabError(f"mgmt_subnet {topo.mgmt_subnet!r}: {exc}") from exc
    if subnet.version != 4 or subnet.num_addresses < 4:
        problems.append(f"mgmt_subnet {topo.mgmt_subnet} must be an IPv4 subnet of /30 or larger")
    host_ip = ipaddress.ip_interface(topo.host_mgmt_address).ip
    if not topo.workdir:
        problems.append("workdir must be set")

    names: set[str] = set()
    mgmt_ips: set[str] = set()
    ports: dict[str, set[str]] = {}
    for node in topo.nodes:
        if node.name in names:
            problems.append(f"node {node.name!r} defined twice")
        names.add(node.name)
        ports[node.name] = set()
        if not _HOSTNAME.match(node.name):
            problems.append(f"node name {node.name!r} is not a valid hostname ([A-Za-z0-9-], max 63)")
        if node.kind not in ("switch", "server"):
            problems.append(f"node {node.name}: kind must be 'switch' or 'server', not {node.kind!r}")
        try:
            ip = ipaddress.ip_address(node.mgmt_ip)
        except ValueError:
            problems.append(f"node {node.name}: mgmt_ip {node.mgmt_ip!r} is not an IP address")
        else:
            if ip not in subnet or ip in (subnet.network_address, subnet.broadcast_address, host_ip):
                problems.append(
                    f"node {node.name}: mgmt_ip {ip} must be a usable address of {subnet} other than "
                    f"the host's {host_ip}"
                )
            if node.mgmt_ip in mgmt_ips:
                problems.append(f"node {node.name}: mgmt_ip {ip} used twice")
            mgmt_ips.add(node.mgmt_ip)

    for link in topo.links:
        for end, ifname in ((link.a, link.a_if), (link.z, link.z_if)):
            if end not in ports:
                problems.append(f"link {link.a}:{link.a_if} - {link.z}:{link.z_if}: unknown node {end!r}")
                continue
            try:
                linux = linux_ifname(ifname)
            except ValueError as exc:
                problems.append(f"link end {end}:{ifname}: {exc}")
                continue
            if linux in ports[end] or linux in ("lo", "mgmt0"):
                problems.append(f"node {end}: interface {ifname} ({linux}) used twice or reserved")
            ports[end].add(linux)
        if not 68 <= link.mtu <= 65535:
            problems.append(f"link {link.a}:{link.a_if}: mtu {link.mtu} out of range 68-65535")

    for node in topo.nodes:
        own = ports.get(node.name, set())
        for iface in node.interfaces:
            try:
                linux = linux_ifname(iface.name)
            except ValueError as exc:
                problems.append(f"node {node.name}: {exc}")
                continue
            if linux not in own and linux != "lo":
                problems.append(f"node {node.name}: interface {iface.name} is not cabled by any link")
            for addr in iface.addresses:
                try:
                    ipaddress.ip_interface(addr)
                except ValueError:
                    problems.append(f"node {node.name}: {iface.name} address {addr!r} is not CIDR")
        for route in node.routes:
            try:
                ipaddress.ip_network(route.prefix, strict=False)
                ipaddress.ip_address(route.via)
                linux_ifname(route.dev)
            except ValueError as exc:
                problems.append(f"node {node.name}: route {route.prefix} via {route.via}: {exc}")
        for rule in node.rules:
            try:
                ipaddress.ip_network(rule.source, strict=False)
            except ValueError as exc:
                problems.append(f"node {node.name}: rule from {rule.source}: {exc}")
    if problems:
        raise LabError("invalid lab topology:\n  " + "\n  ".join(problems))
