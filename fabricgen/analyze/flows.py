"""Collective traffic as NCCL generates it: connections per rail, QPs per connection.

* ``ring``: per rail, one ring over the job's servers in order; server i's NIC
  of rail r sends to server i+1's NIC of the same rail and carries the whole
  all-reduce, 2(n-1)/n of the message.
* ``tree``: per rail, NCCL's double binary tree: two complementary in-order
  binary trees over the servers, each carrying half of the message up (reduce)
  and down (broadcast) every edge.
* ``alltoall``: every server pair on every rail (PXN keeps NCCL's traffic rail
  aligned), 1/n of the message per pair; ``cross_rail`` sends from every GPU to
  every GPU of the other servers over the sender's own NIC instead (no PXN).

Each connection has `qps` queue pairs.  ConnectX takes a RoCEv2 QP's UDP
source port from its flow label, which RDMA-CM computes from the two QP
numbers (Linux ``rdma_calc_flow_label`` / ``rdma_flow_label_to_udp_sport``):
fl = lqpn*rqpn folded by 20 and 40 bits to 20 bits; sport = 0xC000 | (fl's
low 14 bits XOR its high 6 bits).  QP numbers are modelled as allocated in
sequence per NIC from a per-NIC base.  In multi-plane designs a connection's
QPs alternate over the NIC's planes.  `sport="connection"` models a NIC that
gives every QP of a connection one source port (the first QP's): then only a
switch that hashes the BTH destination QP (ecmp.qp_hashing) tells them apart.

With tenants, a job runs inside one VRF (`Job.vrf`): on each rail only the
servers whose NIC port there is in that VRF take part (GPU-scope tenants own
some rails of a server).  `default_jobs` gives one job per tenant and one for
the default VRF, since a collective does not cross isolated tenants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.hashing import SPORTS

PATTERNS = ("ring", "tree", "alltoall")
GIB = 1 << 30


@dataclass(frozen=True)
class Job:
    name: str
    servers: tuple[int, ...]  # server indices in rank order
    pattern: str = "ring"
    qps: int = 1
    message_bytes: int = GIB
    cross_rail: bool = False
    vrf: int | None = None  # only NIC ports of this tenant (Fabric.tenants index; -1: the default VRF); None: all


@dataclass
class Flows:
    """One row per QP: endpoints, UDP source port, BTH destination QP, bytes and the job it belongs to."""

    src: np.ndarray  # endpoint index
    dst: np.ndarray
    sport: np.ndarray  # uint16
    nbytes: np.ndarray  # float64
    job: np.ndarray  # int32 index into jobs
    conn: np.ndarray  # int64 connection id (QPs of one connection share it)
    jobs: list[Job]
    dqpn: np.ndarray  # uint32: the destination QP number the BTH of every packet carries (24 bits)

    def __len__(self) -> int:
        return len(self.src)

    def take(self, idx: np.ndarray) -> Flows:
        """The flows at `idx`, every column alike."""
        return Flows(self.src[idx], self.dst[idx], self.sport[idx], self.nbytes[idx], self.job[idx], self.conn[idx],
                     self.jobs, self.dqpn[idx])


def udp_sport(lqpn: np.ndarray, rqpn: np.ndarray) -> np.ndarray:
    v = lqpn.astype(np.uint64) * rqpn.astype(np.uint64)
    v ^= v >> np.uint64(20)
    v ^= v >> np.uint64(40)
    fl = v & np.uint64(0xFFFFF)
    low = (fl & np.uint64(0x3FFF)) ^ ((fl & np.uint64(0xFC000)) >> np.uint64(14))
    return (low | np.uint64(0xC000)).astype(np.uint16)


def _qpn_base(ep: np.ndarray, salt: int) -> np.ndarray:
    """A per-NIC QP number base (24-bit QPNs, away from the reserved low numbers)."""
    z = ep.astype(np.uint64) * np.uint64(0x9E3779B1) + np.uint64(salt) * np.uint64(0x85EBCA77) + np.uint64(0x165667B1)
    z ^= z >> np.uint64(15)
    z *= np.uint64(0x2C1B3C6D)
    z ^= z >> np.uint64(12)
    return (z % np.uint64(0xF00000)).astype(np.uint64) + np.uint64(0x1000)


def _btree_parent(n: int) -> np.ndarray:
    """Parent of every rank in an in-order balanced binary tree over ranks 0..n-1 (-1 for the root)."""
    parent = np.full(n, -1, dtype=np.int64)
    stack = [(0, n, -1)]
    while stack:
        lo, hi, up = stack.pop()
        if lo >= hi:
            continue
        mid = (lo + hi) // 2
        parent[mid] = up
        stack += [(lo, mid, mid), (mid + 1, hi, mid)]
    return parent


def _pairs(job: Job, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sender rank, receiver rank, bytes) of every connection of one rail with `n` of the job's servers on it."""
    s = float(job.message_bytes)
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    ranks = np.arange(n, dtype=np.int64)
    if job.pattern == "ring":
        return ranks, (ranks + 1) % n, np.full(n, 2.0 * (n - 1) / n * s)
    if job.pattern == "tree":
        snd, rcv = [], []
        for mirror in (False, True):
            parent = _btree_parent(n)
            child = ranks[parent >= 0]
            par = parent[parent >= 0]
            if mirror:  # the second tree: NCCL mirrors the first for an even count, shifts it by one for odd
                child, par = ((n - 1 - child, n - 1 - par) if n % 2 == 0 else ((child + 1) % n, (par + 1) % n))
            snd += [child, par]
            rcv += [par, child]
        a, b = np.concatenate(snd), np.concatenate(rcv)
        return a, b, np.full(len(a), s / 2.0)
    if job.pattern == "alltoall":
        a, b = np.meshgrid(ranks, ranks, indexing="ij")
        keep = a != b
        return a[keep], b[keep], np.full(int(keep.sum()), s / n)
    raise ValueError(f"unknown pattern {job.pattern!r}; use one of {', '.join(PATTERNS)}")


def generate(fabric: Fabric, jobs: list[Job], salt: int = 0, sport: str = "qp") -> Flows:
    """Every QP of every job's collective on every rail; `sport`: one UDP source port per QP or per connection."""
    if sport not in SPORTS:
        raise ValueError(f"unknown source-port mode {sport!r}; use one of {', '.join(SPORTS)}")
    # endpoint lookup: (server, nic, plane) -> endpoint index
    n_srv = len(fabric.servers)
    n_nic = int(fabric.ep_nic.max()) + 1 if len(fabric.ep_nic) else 0
    n_plane = int(fabric.ep_plane.max()) + 1 if len(fabric.ep_plane) else 0
    table = np.full((n_srv, max(n_nic, 1), max(n_plane, 1)), -1, dtype=np.int64)
    table[fabric.ep_server, fabric.ep_nic, fabric.ep_plane] = np.arange(len(fabric.ep_server))
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("src", "dst", "bytes", "job", "conn", "qp")}
    conn_base = 0
    for j, job in enumerate(jobs):
        every = np.asarray(job.servers, dtype=np.int64)
        for nic in range(n_nic):
            dst_nics = range(n_nic) if job.cross_rail else (nic,)
            for dnic in dst_nics:
                servers = every
                if job.vrf is not None and len(every):  # the servers whose ports on both rails are in the VRF
                    ours = [fabric.ep_tenant[np.maximum(table[every, r, 0], 0)] == job.vrf for r in {nic, dnic}]
                    servers = every[np.logical_and.reduce(ours) & (table[every, nic, 0] >= 0)
                                    & (table[every, dnic, 0] >= 0)]
                a, b, nbytes = _pairs(job, len(servers))
                if not len(a):
                    continue
                conns = np.arange(len(a)) + conn_base
                conn_base += len(a)
                for q in range(job.qps):
                    plane = q % max(n_plane, 1)
                    src = table[servers[a], nic, plane]
                    dst = table[servers[b], dnic, plane]
                    ok = (src >= 0) & (dst >= 0)
                    cols["src"].append(src[ok])
                    cols["dst"].append(dst[ok])
                    cols["bytes"].append(nbytes[ok] / job.qps)
                    cols["job"].append(np.full(int(ok.sum()), j, dtype=np.int32))
                    cols["conn"].append(conns[ok])
                    cols["qp"].append(np.full(int(ok.sum()), q, dtype=np.int64))
    if not cols["src"]:
        empty = np.zeros(0, dtype=np.int64)
        return Flows(empty, empty, empty.astype(np.uint16), empty.astype(float), empty.astype(np.int32), empty, jobs,
                     empty.astype(np.uint32))
    src = np.concatenate(cols["src"])
    dst = np.concatenate(cols["dst"])
    qp = np.concatenate(cols["qp"])
    conn = np.concatenate(cols["conn"])
    # QPs are created in connection order on each NIC: qpn = base(NIC) + 2 * (connection slot) + qp index
    slot = np.uint64(8) * (conn.astype(np.uint64) % np.uint64(4096))
    lqpn = (_qpn_base(src, salt) + slot + qp.astype(np.uint64)) & np.uint64(0xFFFFFF)
    rqpn = (_qpn_base(dst, salt + 1) + slot + qp.astype(np.uint64)) & np.uint64(0xFFFFFF)
    if sport == "qp":
        ports = udp_sport(lqpn, rqpn)
    else:  # the connection's first QP's port on every QP of it
        ports = udp_sport((_qpn_base(src, salt) + slot) & np.uint64(0xFFFFFF),
                          (_qpn_base(dst, salt + 1) + slot) & np.uint64(0xFFFFFF))
    return Flows(src, dst, ports, np.concatenate(cols["bytes"]), np.concatenate(cols["job"]), conn, jobs,
                 rqpn.astype(np.uint32))


def whole_fabric_job(fabric: Fabric, pattern: str, qps: int, message_bytes: int = GIB,
                     cross_rail: bool = False) -> Job:
    return Job("all", tuple(range(len(fabric.servers))), pattern, qps, message_bytes, cross_rail)


DEFAULT_VRF = "default VRF"


def default_jobs(fabric: Fabric, pattern: str, qps: int, cross_rail: bool = False) -> list[Job]:
    """The whole fabric as one job; with tenants one job per tenant (its ports) and one over the default VRF's."""
    if not fabric.tenants:
        return [whole_fabric_job(fabric, pattern, qps, cross_rail=cross_rail)]
    out = []
    for t, name in [*enumerate(fabric.tenants), (-1, DEFAULT_VRF)]:
        servers = np.unique(fabric.ep_server[fabric.ep_tenant == t])
        if len(servers):
            out.append(Job(name, tuple(servers.tolist()), pattern, qps, GIB, cross_rail, vrf=t))
    return out
