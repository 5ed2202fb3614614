"""Bring a LabTopology up as namespaces + FRR/sshd/lldpd on this machine, and take it down again.

``lab_up`` refuses to start over a lab that is still (partly) running in the same workdir
and raises LabError; leftovers of a crashed lab that has nothing alive any more are
cleaned up automatically.  Every namespace, cable, bridge and PID is recorded in
``<workdir>/state.json`` before or right after it is created, so ``lab_down`` can clean
up after a crash at any point; ``lab_down`` is idempotent.  The same facts go to a
host-wide record outside the workdir (fabricgen.lab.records), so a lab whose workdir is
gone can still be explained and pruned.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import ipaddress
import json
import os
import selectors
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.base.outdir import DEFAULT_LAB_DIR as DEFAULT_LAB_DIR  # where `fabricgen lab` keeps its state
from fabricgen.lab import daemons as dmn
from fabricgen.lab import lossless_counters, netns, records
from fabricgen.lab.netns import ProcRef
from fabricgen.lab.topology import LabError, LabTopology, linux_ifname, validate_topology

STATE_FILE = "state.json"
KNOWN_HOSTS_FILE = "known_hosts"
SSH_USER = "root"
READY_TIMEOUT = 20.0
# The lab's state (state file, SSH key, known_hosts) by default: beside the render output, never
# inside it, so no render can delete what `lab down` needs (deploy's journal lives beside it).


@dataclass
class NodeState:
    """What was created for one node (mutable: filled in while the lab comes up)."""

    name: str
    kind: str
    namespace: str
    mgmt_ip: str
    dir: str
    host_link: str
    frr_daemons: tuple[str, ...] = ()  # switches: the FRR daemons it runs (a SONiC node: its bgp container's)
    holder: ProcRef | None = None
    daemons: dict[str, ProcRef] = field(default_factory=dict)

    @property
    def paths(self) -> dmn.NodePaths:
        return dmn.NodePaths(Path(self.dir))


@dataclass
class LabState:
    """Contents of state.json; also what ``lab_up`` returns (SSH as ``root`` with ``key_file``)."""

    name: str
    workdir: str
    bridge: str
    host_address: str
    key_file: str
    nodes: dict[str, NodeState]
    links: list[tuple[str, str, str, str]]  # (netns a, ifname a, netns z, ifname z)
    phase: str = "creating"  # creating -> up
    timings: dict[str, float] = field(default_factory=dict)
    record: records.LabRecord | None = field(default=None, repr=False, compare=False)  # host-wide copy

    @property
    def namespaces(self) -> list[str]:
        return [n.namespace for n in self.nodes.values()]

    @property
    def ssh_user(self) -> str:
        return SSH_USER

    @property
    def known_hosts(self) -> str:
        """The lab's own known_hosts: every node's host key under its management address."""
        return str(Path(self.workdir) / KNOWN_HOSTS_FILE)

    def all_procs(self) -> list[ProcRef]:
        """Every process recorded for this lab."""
        return list(self.named_procs().values())

    def named_procs(self) -> dict[str, ProcRef]:
        """Every process recorded for this lab, by ``<node>/holder`` or ``<node>/<daemon>``."""
        procs: dict[str, ProcRef] = {}
        for node in self.nodes.values():
            if node.holder:
                procs[f"{node.name}/holder"] = node.holder
            procs.update({f"{node.name}/{daemon}": proc for daemon, proc in node.daemons.items()})
        return procs

    def save(self) -> None:
        """Atomically rewrite state.json (called after every step of lab_up)."""
        data: dict[str, Any] = {
            "version": 1,
            "name": self.name,
            "workdir": self.workdir,
            "bridge": self.bridge,
            "host_address": self.host_address,
            "key_file": self.key_file,
            "phase": self.phase,
            "timings": self.timings,
            "links": [list(link) for link in self.links],
            "nodes": {
                n.name: {
                    "kind": n.kind,
                    "namespace": n.namespace,
                    "mgmt_ip": n.mgmt_ip,
                    "dir": n.dir,
                    "host_link": n.host_link,
                    "frr_daemons": list(n.frr_daemons),
                    "holder": n.holder.to_json() if n.holder else None,
                    "daemons": {d: p.to_json() for d, p in n.daemons.items()},
                }
                for n in self.nodes.values()
            },
        }
        path = Path(self.workdir) / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, path)
        if self.record is not None:
            self.record.procs = self.named_procs()
            self.record.phase = self.phase
            records.write_record(self.record)

    @classmethod
    def load(cls, workdir: str | os.PathLike[str]) -> LabState | None:
        """Read state.json; None if there is no lab in that workdir."""
        path = Path(workdir).resolve() / STATE_FILE
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise LabError(f"{path} is unreadable ({exc}) (fix: `fabricgen lab prune` removes what the lab's "
                           "record lists; then remove the file)") from exc
        nodes = {
            name: NodeState(
                name=name,
                kind=n["kind"],
                namespace=n["namespace"],
                mgmt_ip=n["mgmt_ip"],
                dir=n["dir"],
                host_link=n["host_link"],
                frr_daemons=tuple(n.get("frr_daemons", dmn.FRR_DAEMONS if n["kind"] == "switch" else ())),
                holder=ProcRef.from_json(n["holder"]) if n.get("holder") else None,
                daemons={d: ProcRef.from_json(p) for d, p in n.get("daemons", {}).items()},
            )
            for name, n in data["nodes"].items()
        }
        return cls(
            name=data["name"],
            workdir=data["workdir"],
            bridge=data["bridge"],
            host_address=data["host_address"],
            key_file=data["key_file"],
            nodes=nodes,
            links=[(a, b, c, d) for a, b, c, d in data.get("links", [])],
            phase=data.get("phase", "creating"),
            timings=data.get("timings", {}),
        )


@dataclass(frozen=True)
class NodeStatus:
    """Health of one node as seen from the host."""

    name: str
    kind: str
    namespace: str
    mgmt_ip: str
    namespace_present: bool
    holder_alive: bool
    daemons: Mapping[str, bool]  # daemon -> alive
    ssh_reachable: bool | None  # None: not probed (no namespace, or `lab_status(check_ssh=False)`)

    @property
    def healthy(self) -> bool:
        return self.namespace_present and self.holder_alive and all(self.daemons.values()) and \
            self.ssh_reachable is not False


@dataclass(frozen=True)
class LabStatus:
    """Health of a whole lab; ``running`` is False when the workdir holds no lab."""

    workdir: str
    running: bool
    name: str | None = None
    phase: str | None = None
    bridge_present: bool = False
    nodes: tuple[NodeStatus, ...] = ()

    @property
    def healthy(self) -> bool:
        return self.running and self.bridge_present and all(n.healthy for n in self.nodes)


# --------------------------------------------------------------------------- helpers


SSH_PROBE_S = 2.0  # `lab status`: seconds for sshd's banner (a loaded 2-core host needs more than 0.5 s)


def _ssh_banner(ip: str, timeout: float) -> bool:
    """True once something on ip:22 speaks SSH (sshd is listening and the mgmt net works)."""
    try:
        with socket.create_connection((ip, 22), timeout=timeout) as sock:
            sock.settimeout(timeout)
            return sock.recv(4).startswith(b"SSH-")
    except OSError:
        return False


def _wait_ssh(ips: Sequence[str], timeout: float) -> list[str]:
    """Poll every sshd concurrently until it answers; return the IPs that never did."""
    deadline = time.monotonic() + timeout

    def poll(ip: str) -> bool:
        while True:
            if _ssh_banner(ip, timeout=1.0):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)

    with concurrent.futures.ThreadPoolExecutor(max_workers=min(32, max(1, len(ips)))) as pool:
        results = list(pool.map(poll, ips))
    return [ip for ip, ok in zip(ips, results, strict=True) if not ok]


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _check_host_conflicts(topo: LabTopology, record: records.LabRecord) -> None:
    """Fail early if another lab (live, dead or unrecorded) holds our names or management subnet.

    Called under the records lock, before our own record replaces a previous one of this name.
    """
    present = netns.list_netns()
    taken = [ns for ns in record.namespaces if ns in present] + [ln for ln in record.links if netns.link_exists(ln)]
    prior = records.load_record(topo.name)
    if prior is not None:  # a dead lab of this name may have had more nodes, so other host veths
        taken += [o for o in prior.present()[0] if o not in taken]
    if taken:
        raise LabError(f"lab {topo.name!r} cannot come up in {record.workdir}: {records.describe_taken(taken)}")
    live = prior.live_pids() if prior is not None else []
    if prior is not None and live:
        raise LabError(
            f"lab {topo.name!r} is recorded as running from {prior.workdir} (live processes "
            f"{', '.join(map(str, live))}); run `fabricgen lab down --workdir {prior.workdir}` first"
        )
    subnet = ipaddress.ip_network(topo.mgmt_subnet, strict=False)
    out = subprocess.run(["ip", "-j", "-4", "address", "show"], capture_output=True, text=True, check=False)
    try:
        entries = json.loads(out.stdout or "[]")
    except ValueError:
        entries = []
    for entry in entries:
        for addr in entry.get("addr_info", []):
            other = ipaddress.ip_interface(f"{addr['local']}/{addr['prefixlen']}").network
            ifname = entry.get("ifname")
            if other.overlaps(subnet) and ifname != "lo":
                owner = next((r for r in records.all_records() if ifname in r.links), None)
                why = records.describe_taken([ifname]) if owner else "another lab uses it - choose another mgmt_subnet"
                raise LabError(f"mgmt_subnet {subnet} overlaps {addr['local']}/{addr['prefixlen']} on {ifname}: {why}")


def _start_holders(state: LabState, topo: LabTopology) -> None:
    """Spawn every node's namespace holder at once, then wait until each has mounted its dirs."""
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for node in topo.nodes:
        ns_node = state.nodes[node.name]
        with open(ns_node.paths.holder_log, "w") as log:
            proc = subprocess.Popen(
                dmn.holder_command(ns_node.namespace, node, ns_node.paths),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,  # a Ctrl-C of the CLI must not kill the lab
            )
        procs[node.name] = proc
        ns_node.holder = ProcRef.capture(proc.pid)
    state.save()

    # each holder prints "ready" once hostname and mounts are in place; wait for all, bounded
    output = {name: b"" for name in procs}
    deadline = time.monotonic() + READY_TIMEOUT
    with selectors.DefaultSelector() as sel:
        for name, proc in procs.items():
            assert proc.stdout is not None
            sel.register(proc.stdout, selectors.EVENT_READ, name)
        while sel.get_map() and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=max(0.0, deadline - time.monotonic())):
                chunk = os.read(key.fd, 64)
                output[key.data] += chunk
                if not chunk or b"\n" in output[key.data]:
                    sel.unregister(key.fileobj)
    for proc in procs.values():
        assert proc.stdout is not None
        proc.stdout.close()
    failed = [
        f"{name}: {_tail(state.nodes[name].paths.holder_log)}"
        for name, out in output.items()
        if out.strip() != b"ready"
    ]
    if failed:
        raise LabError("namespace holder(s) failed or timed out:\n" + "\n".join(failed))


def _run_setup(state: LabState) -> None:
    """Run every node's setup script inside its namespaces, all nodes in parallel."""
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for node in state.nodes.values():
        assert node.holder is not None
        with open(node.paths.setup_log, "w") as log:
            procs[node.name] = subprocess.Popen(
                ["nsenter", "-t", str(node.holder.pid), "-n", "-m", "-u", "--",
                 "sh", str(node.paths.setup_script)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
    deadline = time.monotonic() + READY_TIMEOUT
    failed: list[str] = []
    for name, proc in procs.items():
        try:
            rc = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = -1
        if rc != 0:
            log_path = state.nodes[name].paths.setup_log
            failed.append(f"{name} (rc {rc}, {log_path}):\n{_tail(log_path)}")
    _record_daemons(state)
    state.save()
    if failed:
        raise LabError("node setup failed:\n" + "\n".join(failed))


def _record_daemons(state: LabState) -> None:
    """Pin every daemon the nodes' pidfiles name; FRR daemons also need their vty socket.

    Polls (bounded) rather than trusting start order, so a slow host only waits longer.
    """
    deadline = time.monotonic() + 5.0
    while True:
        missing: list[str] = []
        for node in state.nodes.values():
            for daemon in dmn.node_daemons(node.kind, node.frr_daemons):
                if daemon in node.daemons and node.daemons[daemon].alive():
                    continue
                pid = netns.read_pidfile(str(node.paths.pidfile(daemon)))
                ref = ProcRef.capture(pid) if pid else None
                if ref is None:
                    missing.append(f"{node.name}/{daemon}")
                    continue
                node.daemons[daemon] = ref
                if daemon in node.frr_daemons and not node.paths.vty_socket(daemon).exists():
                    del node.daemons[daemon]  # not accepting vtysh yet: look again next round
                    missing.append(f"{node.name}/{daemon} (no vty socket)")
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if missing:
        state.save()
        raise LabError(f"daemons not ready: {', '.join(missing)} (fix: read nodes/*/setup.log and log/ in the lab "
                       "directory for why they did not start)")


@contextlib.contextmanager
def _workdir_lock(workdir: Path) -> Iterator[None]:
    """One lab_up/lab_down at a time per workdir; a second one fails instead of racing."""
    with open(workdir / ".lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise LabError(f"another `fabricgen lab up` or `lab down` is running on {workdir} "
                           "(fix: wait for it to finish, or use another --lab-dir)") from exc
        yield


# --------------------------------------------------------------------------- public API


def lab_up(topo: LabTopology) -> LabState:
    """Build the lab described by ``topo``; on any failure tear down what was built and raise LabError."""
    if os.geteuid() != 0:
        raise LabError("the lab needs root (network namespaces, mounts) (fix: run it with sudo)")
    validate_topology(topo)
    missing = dmn.missing_tools()
    if missing:
        raise LabError(f"missing on this host: {', '.join(missing)} (fix: apt install frr lldpd openssh-server)")
    t0 = time.monotonic()
    workdir = Path(topo.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    with _workdir_lock(workdir):
        return _lab_up(topo, workdir, t0)


def _lab_up(topo: LabTopology, workdir: Path, t0: float) -> LabState:
    """lab_up under the workdir lock."""
    old = LabState.load(workdir)
    if old is not None:
        status = lab_status(workdir, check_ssh=False)
        if any(n.namespace_present or n.holder_alive or any(n.daemons.values()) for n in status.nodes):
            raise LabError(f"lab {old.name!r} is already up in {workdir} (state.json) (fix: run `fabricgen lab down "
                           f"--lab-dir {workdir}` first)")
        _lab_down(workdir)  # stale leftovers of a crashed run: nothing alive, just clean up

    bridge = netns.bridge_name(topo.name)
    nodes: dict[str, NodeState] = {}
    for index, node in enumerate(topo.nodes):
        nodes[node.name] = NodeState(
            name=node.name,
            kind=node.kind,
            namespace=netns.namespace_name(topo.name, node.name),
            mgmt_ip=node.mgmt_ip,
            dir=str(workdir / "nodes" / node.name),
            host_link=netns.host_veth_name(topo.name, index),
            frr_daemons=dmn.frr_daemons(node),
        )
    record = records.LabRecord(
        name=topo.name,
        workdir=str(workdir),
        namespaces=tuple(n.namespace for n in nodes.values()),
        bridge=bridge,
        host_links=tuple(n.host_link for n in nodes.values()),
        mgmt_subnet=topo.mgmt_subnet,
        owner=ProcRef.capture(os.getpid()),
    )
    with records.locked():  # claim the names: a concurrent prune sees this lab as live from here on
        _check_host_conflicts(topo, record)
        records.write_record(record)

    state = LabState(
        name=topo.name,
        workdir=str(workdir),
        bridge=bridge,
        host_address=topo.host_mgmt_address,
        key_file=str(workdir / "id_ed25519"),
        nodes=nodes,
        links=[
            (
                netns.namespace_name(topo.name, link.a),
                linux_ifname(link.a_if),
                netns.namespace_name(topo.name, link.z),
                linux_ifname(link.z_if),
            )
            for link in topo.links
        ],
        record=record,
    )
    try:
        authorized = dmn.ensure_keys(workdir, [n.paths.host_key for n in nodes.values()])
        dmn.write_known_hosts(workdir / KNOWN_HOSTS_FILE, {n.mgmt_ip: n.paths.host_key for n in nodes.values()})
        for node in topo.nodes:
            dmn.prepare_node_dir(node, nodes[node.name].paths, authorized, netns.node_batch(topo, node))
            if node.kind == "switch":  # veths carry no PFC: the lab's own per-port counters (health checks)
                lossless_counters.write_zero(lossless_counters.host_dir(nodes[node.name].paths.run),
                                             netns.node_ports(topo, node.name))
        state.timings["files"] = round(time.monotonic() - t0, 3)
        state.save()  # intent first: a crash inside the batch still leaves a complete cleanup list

        t = time.monotonic()
        netns.run_ip_batch(netns.root_batch(topo, bridge, [n.host_link for n in nodes.values()]))
        record.capture_identity()
        state.timings["netns"] = round(time.monotonic() - t, 3)

        t = time.monotonic()
        _start_holders(state, topo)
        state.timings["holders"] = round(time.monotonic() - t, 3)

        t = time.monotonic()
        _run_setup(state)
        state.timings["daemons"] = round(time.monotonic() - t, 3)

        t = time.monotonic()
        late = _wait_ssh([n.mgmt_ip for n in nodes.values()], READY_TIMEOUT)
        if late:
            raise LabError(f"sshd not reachable on {', '.join(late)} within {READY_TIMEOUT:.0f}s (fix: read "
                               "nodes/<node>/setup.log in the lab directory; a loaded host may need a retry)")
        state.timings["ssh"] = round(time.monotonic() - t, 3)
    except BaseException:
        record.phase = "failed"  # from here only its processes keep it alive, not this one
        with contextlib.suppress(LabError):
            records.write_record(record)
        with contextlib.suppress(LabError):
            _lab_down(workdir)
        raise
    state.phase = "up"
    state.timings["total"] = round(time.monotonic() - t0, 3)
    state.save()
    return state


def registered_lab(name: str) -> Path | None:
    """The workdir of the running lab of fabric ``name`` on this machine, if any, so deploy and
    validate find the lab of their intent from any working directory."""
    return records.registered_workdir(name)


def lab_down(workdir: str | os.PathLike[str]) -> None:
    """Stop every process and delete every namespace, cable and bridge of the lab; idempotent.

    Without a state.json (the workdir was deleted while the lab ran) the host-wide record of
    the lab in that workdir says what to stop and remove.
    """
    workdir = Path(workdir).resolve()
    if not (workdir / STATE_FILE).exists():
        record = records.record_of_workdir(workdir)
        if record is not None:
            _down_from_record(record)
        return
    with _workdir_lock(workdir):
        _lab_down(workdir)


def _down_from_record(record: records.LabRecord) -> None:
    """lab_down for a lab known only by its record: its processes by PID, then its objects."""
    if record.creating():
        assert record.owner is not None
        raise LabError(f"lab {record.name!r} is still being created by process {record.owner.pid} "
                       "(fix: let that `lab up` finish or fail first)")
    survivors: list[ProcRef] = []
    for _ in range(3):
        procs = [p for p in (ProcRef.capture(pid) for pid in record.lab_pids()) if p is not None]
        if not procs:
            break
        survivors = netns.terminate(procs)
    if survivors:
        raise LabError(f"lab {record.name!r} not removed: processes {[p.pid for p in survivors]} survive "
                       f"SIGKILL; record kept in {record.path}")
    outcome = records.remove_objects(record)
    if outcome.error:
        raise LabError(f"lab {record.name!r} not fully removed: {outcome.error}")


def _lab_procs(state: LabState, inodes: Sequence[int]) -> set[ProcRef]:
    """Live processes of the lab: recorded ones, current pidfiles, and anything in its namespaces."""
    procs = {p for p in state.all_procs() if p.alive()}
    for node in state.nodes.values():  # daemons restarted by hand since lab_up wrote their pids
        for daemon in dmn.node_daemons(node.kind, node.frr_daemons):
            pid = netns.read_pidfile(str(node.paths.pidfile(daemon)))
            ref = ProcRef.capture(pid) if pid else None
            if ref:
                procs.add(ref)
    for pid in netns.pids_in_netns(inodes):  # ssh sessions, vtysh, lldpd's helpers, ...
        ref = ProcRef.capture(pid)
        if ref:
            procs.add(ref)
    return procs


def _lab_down(workdir: Path) -> None:
    """lab_down under the workdir lock."""
    state = LabState.load(workdir)
    if state is None:
        return
    inodes = [ino for ino in (netns.netns_inode(ns) for ns in state.namespaces) if ino is not None]
    survivors: list[ProcRef] = []
    for _ in range(3):  # a process may fork while we signal: rescan until the namespaces are empty
        procs = _lab_procs(state, inodes)
        if not procs:
            break
        survivors = netns.terminate(procs)

    cmds = [f"link del {n.host_link}" for n in state.nodes.values() if netns.link_exists(n.host_link)]
    if netns.link_exists(state.bridge):
        cmds.append(f"link del {state.bridge}")
    present = netns.list_netns()
    cmds += [f"netns del {ns}" for ns in state.namespaces if ns in present]
    netns.run_ip_batch(cmds, force=True)

    _unmount_under(workdir)
    leftovers = sorted(set(state.namespaces) & netns.list_netns())
    if netns.link_exists(state.bridge):
        leftovers.append(state.bridge)
    if survivors or leftovers:
        raise LabError(
            f"lab {state.name!r} not fully removed: processes {[p.pid for p in survivors]}, "
            f"objects {leftovers}; state kept in {workdir / STATE_FILE}"
        )
    for node in state.nodes.values():  # stale pidfiles/sockets would confuse the next status
        shutil.rmtree(node.paths.run, ignore_errors=True)
    records.remove_record(state.name, workdir)
    (workdir / STATE_FILE).unlink(missing_ok=True)


def _unmount_under(workdir: Path) -> None:
    """Lazily unmount anything the host sees mounted inside the workdir (none in normal runs)."""
    prefix = str(workdir) + "/"
    try:
        with open("/proc/self/mountinfo") as fh:
            points = [line.split()[4] for line in fh]
    except OSError:
        return
    for point in sorted((p for p in points if p.startswith(prefix)), reverse=True):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)


def _daemon_alive(node: NodeState, daemon: str) -> bool:
    """Alive by the daemon's own pidfile (a daemon restarted since `lab up` has a new PID),
    else by the PID recorded at `lab up`."""
    pid = netns.read_pidfile(str(node.paths.pidfile(daemon)))
    if pid and ProcRef.capture(pid) is not None:
        return True
    return bool(node.daemons.get(daemon) and node.daemons[daemon].alive())


def lab_status(workdir: str | os.PathLike[str], check_ssh: bool = True) -> LabStatus:
    """Per node: namespace present, holder/daemons alive, sshd answering on the mgmt IP."""
    workdir = Path(workdir).resolve()
    state = LabState.load(workdir)
    if state is None:
        return LabStatus(workdir=str(workdir), running=False)
    present = netns.list_netns()
    ssh_ok: dict[str, bool] = {}
    if check_ssh:
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(32, len(state.nodes) or 1)) as pool:
            futures = {
                n.name: pool.submit(_ssh_banner, n.mgmt_ip, SSH_PROBE_S) for n in state.nodes.values()
                if n.namespace in present
            }
            ssh_ok = {name: f.result() for name, f in futures.items()}
    nodes = tuple(
        NodeStatus(
            name=n.name,
            kind=n.kind,
            namespace=n.namespace,
            mgmt_ip=n.mgmt_ip,
            namespace_present=n.namespace in present,
            holder_alive=bool(n.holder and n.holder.alive()),
            daemons={d: _daemon_alive(n, d) for d in dmn.node_daemons(n.kind, n.frr_daemons)},
            ssh_reachable=ssh_ok.get(n.name),
        )
        for n in state.nodes.values()
    )
    return LabStatus(
        workdir=str(workdir),
        running=True,
        name=state.name,
        phase=state.phase,
        bridge_present=netns.link_exists(state.bridge),
        nodes=nodes,
    )


def node_exec(
    workdir: str | os.PathLike[str], node: str, argv: Sequence[str], timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """Run a command inside a node (its netns, hostname and mounts) without SSH."""
    state = LabState.load(Path(workdir).resolve())
    if state is None:
        raise LabError(f"no lab in {workdir} (fix: pass the --lab-dir `fabricgen lab up` used)")
    if node not in state.nodes:
        raise LabError(f"lab {state.name!r} has no node {node!r} (nodes: {', '.join(state.nodes)})")
    holder = state.nodes[node].holder
    if holder is None or not holder.alive():
        raise LabError(f"node {node} is not running (holder process gone) (fix: run `fabricgen lab down`, "
                       "then `fabricgen lab up`)")
    return subprocess.run(
        ["nsenter", "-t", str(holder.pid), "-n", "-m", "-u", "--", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "PATH": dmn.SHELL_PATH},
    )
