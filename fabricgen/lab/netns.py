"""Network namespaces, veth cables, the management bridge, and process bookkeeping.

Everything that touches the kernel's network objects goes through ``ip -batch``: one
``ip`` process per operation is slow on some hosts, one batch builds a whole fabric.
Process helpers identify a process by (pid, start time) so a recycled PID is never
mistaken for one of ours.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fabricgen.lab.topology import LabError, LabNode, LabTopology, linux_ifname

NETNS_DIR = "/run/netns"
MGMT_IF = "mgmt0"


# --------------------------------------------------------------------------- naming


def lab_tag(lab: str) -> str:
    """Short stable hash of the lab name, for names that must fit in 15 chars."""
    return hashlib.sha1(lab.encode()).hexdigest()[:5]


def namespace_name(lab: str, node: str) -> str:
    """Netns of a node; prefixed with the lab name so two labs never share one."""
    return f"{lab}-{node}"


def bridge_name(lab: str) -> str:
    """Management bridge in the root namespace, derived from the lab name (<= 15 chars)."""
    name = f"{lab}-mgmt"
    return name if len(name) <= 15 else f"fg{lab_tag(lab)}mgmt"


def host_veth_name(lab: str, index: int) -> str:
    """Root-namespace end of node ``index``'s management cable (<= 15 chars)."""
    return f"fg{lab_tag(lab)}m{index}"


# --------------------------------------------------------------------------- ip batches


def run_ip_batch(commands: Sequence[str], netns: str | None = None, force: bool = False) -> None:
    """Run many ``ip`` commands in one process; raise LabError with ip's message on failure."""
    if not commands:
        return
    argv = ["ip"]
    if netns:
        argv += ["-n", netns]
    if force:
        argv.append("-force")
    argv += ["-batch", "-"]
    proc = subprocess.run(argv, input="\n".join(commands) + "\n", capture_output=True, text=True, check=False)
    if proc.returncode != 0 and not force:
        raise LabError(f"`{' '.join(argv)}` failed: {proc.stderr.strip() or proc.stdout.strip()}")


def root_batch(topo: LabTopology, bridge: str, host_links: Sequence[str]) -> list[str]:
    """Commands creating every namespace, cable and the management bridge, from the root netns.

    Veth ends are created directly inside their namespaces, so port names only have to be
    unique per node.  The in-namespace ends are brought up by :func:`node_batch` (the
    kernel refuses ``up`` for a peer created in another namespace).
    """
    cmds = [f"netns add {namespace_name(topo.name, n.name)}" for n in topo.nodes]
    cmds += [
        f"link add {bridge} type bridge",
        f"address add {topo.host_mgmt_address} dev {bridge}",
        f"link set {bridge} up",
    ]
    for node, host_if in zip(topo.nodes, host_links, strict=True):
        ns = namespace_name(topo.name, node.name)
        cmds.append(f"link add {host_if} master {bridge} up type veth peer name {MGMT_IF} netns {ns}")
    for link in topo.links:
        a_ns, z_ns = namespace_name(topo.name, link.a), namespace_name(topo.name, link.z)
        cmds.append(
            f"link add {linux_ifname(link.a_if)} netns {a_ns} mtu {link.mtu} type veth "
            f"peer name {linux_ifname(link.z_if)} netns {z_ns} mtu {link.mtu}"
        )
    return cmds


def node_ports(topo: LabTopology, node: str) -> list[str]:
    """Linux names of the cabled ports of ``node``, in link order."""
    ports: list[str] = []
    for link in topo.links:
        if link.a == node:
            ports.append(linux_ifname(link.a_if))
        if link.z == node:
            ports.append(linux_ifname(link.z_if))
    return ports


def node_batch(topo: LabTopology, node: LabNode) -> list[str]:
    """Commands run inside a node's netns: links up, mgmt and server addresses, routes, rules."""
    prefix = topo.mgmt_subnet.split("/")[1]
    cmds = ["link set lo up", f"address add {node.mgmt_ip}/{prefix} dev {MGMT_IF}", f"link set {MGMT_IF} up"]
    cmds += [f"link set {port} up" for port in node_ports(topo, node.name)]
    for iface in node.interfaces:
        dev = linux_ifname(iface.name)
        cmds += [f"address add {addr} dev {dev}" for addr in iface.addresses]
    for route in node.routes:
        table = f" table {route.table}" if route.table is not None else ""
        cmds.append(f"route add {route.prefix} via {route.via} dev {linux_ifname(route.dev)}{table}")
    cmds += [f"rule add from {rule.source} table {rule.table}" for rule in node.rules]
    return cmds


# --------------------------------------------------------------------------- queries


def list_netns() -> set[str]:
    """Names of all named network namespaces on the host."""
    try:
        return set(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return set()


def netns_inode(name: str) -> int | None:
    """Kernel inode of a named netns (what /proc/PID/ns/net points at), None if absent."""
    try:
        return os.stat(os.path.join(NETNS_DIR, name)).st_ino
    except OSError:
        return None


def link_exists(name: str) -> bool:
    """True if an interface of that name exists in the root namespace."""
    return os.path.exists(f"/sys/class/net/{name}")


def pids_in_netns(inodes: Iterable[int]) -> list[int]:
    """Every process whose network namespace is one of ``inodes`` (like `ip netns pids`)."""
    wanted = {f"net:[{ino}]" for ino in inodes}
    if not wanted:
        return []
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/ns/net") in wanted:
                found.append(int(entry))
        except OSError:
            continue
    return found


# --------------------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of a process, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return fields[0], int(fields[19])


@dataclass(frozen=True)
class ProcRef:
    """A process we started, pinned by its start time against PID reuse."""

    pid: int
    start: int

    @classmethod
    def capture(cls, pid: int) -> ProcRef | None:
        """Pin a running process; None if it already exited."""
        st = _stat(pid)
        if st is None or st[0] in "ZX":
            return None
        return cls(pid, st[1])

    def alive(self) -> bool:
        """Running (zombies count as exited: nobody reaps orphans promptly here)."""
        st = _stat(self.pid)
        return st is not None and st[0] not in "ZX" and st[1] == self.start

    def to_json(self) -> dict[str, int]:
        return {"pid": self.pid, "start": self.start}

    @classmethod
    def from_json(cls, data: dict[str, int]) -> ProcRef:
        return cls(int(data["pid"]), int(data["start"]))


def read_pidfile(path: str) -> int | None:
    """PID from a daemon's pidfile, None if missing or garbled."""
    try:
        with open(path) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _reap(pids: Iterable[int]) -> None:
    """Collect exit status of any of ``pids`` that are our own children, so they do not linger as zombies."""
    for pid in pids:
        with contextlib.suppress(OSError):  # ChildProcessError: not our child
            os.waitpid(pid, os.WNOHANG)


def terminate(procs: Iterable[ProcRef], grace: float = 2.0) -> list[ProcRef]:
    """SIGTERM all at once, SIGKILL what is left after ``grace`` seconds; return survivors."""
    live = [p for p in set(procs) if p.alive()]
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0)):
        for proc in live:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, sig)
        deadline = time.monotonic() + wait
        while live and time.monotonic() < deadline:
            _reap(p.pid for p in live)
            live = [p for p in live if p.alive()]
            if live:
                time.sleep(0.02)
        if not live:
            break
    _reap(p.pid for p in live)
    return live
