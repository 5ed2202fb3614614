"""The adapter: the plan's public data as compact arrays for the analyses.

This is the only module of the package that reads the plan's model (switches,
interfaces, links, servers, BGP neighbors, ASNs, maximum-paths, the intent's
ECMP hash fields).  When the plan changes shape (per-tier speeds, endpoints,
adaptive routing renamed, a typed design), only this module follows.

Links are full duplex: every switch-to-switch cable gives two directed *arcs*
(arc 2k is a->z, arc 2k+1 is z->a), and every GPU NIC gives an up arc
(NIC->leaf) and a down arc (leaf->NIC) after them, so one load array covers
every direction of every cable.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fabricgen.intent.model import Intent
from fabricgen.plan.model import Plan, Switch

# Tier rank of a role: traffic climbs ranks on the way up, descends on the way down.
RANK = {"leaf": 0, "spine": 1, "super_spine": 2}
TIER_OF_RANKS = {(0, 1): "leaf_spine", (1, 2): "spine_super_spine"}
GPU_TIER = "gpu_leaf"


@dataclass(slots=True)
class Fabric:
    """Switches, arcs and GPU NIC ports of one fabric, indexed by small integers."""

    name: str
    nodes: list[str]
    role: list[str]
    rank: np.ndarray  # int8 per node
    plane: np.ndarray  # int16 per node
    pod: np.ndarray  # int16 per node
    platform: list[str]
    model: list[str]
    asn: np.ndarray  # int64 per node
    max_paths: np.ndarray  # int32 per node (BGP maximum-paths)
    # Switch-to-switch arcs (2 per cable)
    arc_src: np.ndarray  # int32 node
    arc_dst: np.ndarray  # int32 node
    arc_port: list[str]  # egress port name on arc_src
    arc_peer_port: list[str]  # ingress port name on arc_dst
    arc_speed: np.ndarray  # Gb/s, float64
    arc_tier: list[str]
    arc_allowas: np.ndarray  # int8: allowas-in of the receiver's session (0 = off)
    arc_peer_check: np.ndarray  # bool: sender suppresses routes holding the receiver's AS
    # GPU NIC ports (endpoints): one per NIC port attached to a leaf
    ep_server: np.ndarray  # int32 server index
    ep_server_name: list[str]
    ep_nic: np.ndarray  # int16 NIC index in the server (the rail in rail-optimized designs)
    ep_rail: np.ndarray
    ep_plane: np.ndarray
    ep_leaf: np.ndarray  # int32 node
    ep_port: list[str]  # leaf port name
    ep_ip: np.ndarray  # uint32 IPv4 of the NIC
    ep_speed: np.ndarray  # Gb/s float64
    servers: list[str]
    hash_fields: tuple[str, ...]
    adaptive_routing: bool  # the plan turns adaptive routing on for fabric ports
    # The hash as planned (plan.hashing): modelled hash, each switch's seed and rotation, where they come from
    hash_kind: str = "crc32"
    hash_seed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint32))
    hash_rotate: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint8))
    hash_how: dict[str, str] = field(default_factory=dict)  # role -> where its seed comes from
    qps: int = 1  # QPs per connection the NICs open (qos.nic.qps_per_connection)
    qp_hash: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))  # per node: ecmp.qp_hashing rendered
    # Tenants (plan.tenancy): each NIC port's tenant (-1: the default VRF), and what the overlay needs
    vtep_ip: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint32))  # per node: its loopback
    ep_tenant: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    tenants: list[str] = field(default_factory=list)  # in id order
    tenant_vni: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tenant_reach: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))  # [t, u]: t reaches u
    tenant_mechanism: str = ""  # "vrf-lite" | "evpn-vxlan" ("" without tenants)
    index: dict[str, int] = field(default_factory=dict)
    lists: dict[str, list[Any]] = field(default_factory=dict, repr=False, compare=False)

    def as_list(self, name: str) -> list[Any]:
        """An array field as a Python list, converted once (the BGP simulation reads them per node)."""
        out = self.lists.get(name)
        if out is None:
            out = self.lists[name] = getattr(self, name).tolist()
        return out

    @property
    def switch_arcs(self) -> int:
        return len(self.arc_src)

    @property
    def n_arcs(self) -> int:
        """Switch arcs plus two arcs per GPU NIC port."""
        return self.switch_arcs + 2 * len(self.ep_leaf)

    def ep_up_arc(self, ep: np.ndarray) -> np.ndarray:
        return self.switch_arcs + 2 * ep

    def ep_down_arc(self, ep: np.ndarray) -> np.ndarray:
        return self.switch_arcs + 2 * ep + 1

    def arc_capacity(self) -> np.ndarray:
        """Gb/s of every arc, GPU arcs included."""
        return np.concatenate([self.arc_speed, np.repeat(self.ep_speed, 2)])

    def arc_tiers(self) -> np.ndarray:
        """Tier name of every arc, GPU arcs included (object array for masking)."""
        return np.array(self.arc_tier + [GPU_TIER] * (2 * len(self.ep_leaf)), dtype=object)

    def arc_label(self, arc: int) -> str:
        if arc < self.switch_arcs:
            return (f"{self.nodes[self.arc_src[arc]]}:{self.arc_port[arc]} -> "
                    f"{self.nodes[self.arc_dst[arc]]}:{self.arc_peer_port[arc]}")
        ep, down = divmod(arc - self.switch_arcs, 2)
        leaf = f"{self.nodes[self.ep_leaf[ep]]}:{self.ep_port[ep]}"
        nic = f"{self.ep_server_name[ep]}:nic{self.ep_nic[ep]}"
        return f"{leaf} -> {nic}" if down else f"{nic} -> {leaf}"

    def leaves(self) -> np.ndarray:
        return np.flatnonzero(self.rank == 0)


def from_plan(plan: Plan) -> Fabric:
    """Read the plan once into a Fabric."""
    switches = list(plan.switches.values())
    index = {sw.hostname: i for i, sw in enumerate(switches)}
    n = len(switches)
    asn = np.array([sw.asn for sw in switches], dtype=np.int64)
    max_paths = np.array([sw.bgp.maximum_paths if sw.bgp else 1 for sw in switches], dtype=np.int32)
    # BGP session settings per (device, interface): allowas-in on the receiver, peer-AS check on the sender.
    allowas: dict[tuple[str, str], int] = {}
    peer_check: dict[tuple[str, str], bool] = {}
    for sw in switches:
        for nb in sw.bgp.neighbors if sw.bgp else ():
            if nb.afi == "ipv4":
                allowas[sw.hostname, nb.interface] = nb.allowas_in
                peer_check[sw.hostname, nb.interface] = not nb.disable_peer_as_check
    src: list[int] = []
    dst: list[int] = []
    ports: list[str] = []
    peer_ports: list[str] = []
    speeds: list[float] = []
    tiers: list[str] = []
    arc_allow: list[int] = []
    arc_check: list[bool] = []
    for link in plan.links:
        if link.a_device not in index or link.z_device not in index:
            continue  # a GPU NIC cable: an endpoint below
        a, z = index[link.a_device], index[link.z_device]
        for s, d, sp, dp in ((a, z, link.a_port, link.z_port), (z, a, link.z_port, link.a_port)):
            src.append(s)
            dst.append(d)
            ports.append(sp)
            peer_ports.append(dp)
            speeds.append(float(link.speed))
            tiers.append(link.tier)
            arc_allow.append(allowas.get((switches[d].hostname, dp), 0))
            arc_check.append(peer_check.get((switches[s].hostname, sp), True))
    server_index = {srv.name: i for i, srv in enumerate(plan.servers)}
    eps = [(server_index[srv.name], srv.name, nic) for srv in plan.servers for nic in srv.nics]
    adaptive = any(getattr(itf, "dlb", False) or getattr(itf, "adaptive_routing", False)
                   for sw in switches for itf in sw.interfaces)
    return Fabric(
        name=plan.settings.name,
        nodes=[sw.hostname for sw in switches],
        role=[sw.role for sw in switches],
        rank=np.array([RANK[sw.role] for sw in switches], dtype=np.int8),
        plane=np.array([sw.plane for sw in switches], dtype=np.int16),
        pod=np.array([sw.pod for sw in switches], dtype=np.int16),
        platform=[sw.platform for sw in switches],
        model=[sw.model for sw in switches],
        asn=asn if n else np.zeros(0, dtype=np.int64),
        max_paths=max_paths,
        arc_src=np.array(src, dtype=np.int32),
        arc_dst=np.array(dst, dtype=np.int32),
        arc_port=ports,
        arc_peer_port=peer_ports,
        arc_speed=np.array(speeds, dtype=np.float64),
        arc_tier=tiers,
        arc_allowas=np.array(arc_allow, dtype=np.int8),
        arc_peer_check=np.array(arc_check, dtype=bool),
        ep_server=np.array([e[0] for e in eps], dtype=np.int32),
        ep_server_name=[e[1] for e in eps],
        ep_nic=np.array([e[2].nic for e in eps], dtype=np.int16),
        ep_rail=np.array([e[2].rail for e in eps], dtype=np.int16),
        ep_plane=np.array([e[2].plane for e in eps], dtype=np.int16),
        ep_leaf=np.array([index[e[2].leaf] for e in eps], dtype=np.int32),
        ep_port=[e[2].leaf_port for e in eps],
        ep_ip=np.array([int(ipaddress.IPv4Interface(e[2].ip).ip) if e[2].ip else 0 for e in eps], dtype=np.uint32),
        ep_speed=np.array([float(e[2].speed) for e in eps], dtype=np.float64),
        servers=[srv.name for srv in plan.servers],
        hash_fields=tuple(plan.settings.hash_fields),
        adaptive_routing=adaptive,
        index=index,
        **_hashing(plan, switches),
        **_tenants(plan, switches, eps),
    )


def _hashing(plan: Plan, switches: list[Switch]) -> dict[str, Any]:
    """The plan's hash per switch; a per-switch random key (Linux) becomes a stable stand-in from the name."""
    seeds = np.zeros(len(switches), dtype=np.uint32)
    rotate = np.zeros(len(switches), dtype=np.uint8)
    kind = "crc32"
    for i, sw in enumerate(switches):
        h = plan.hashing.get(sw.role)
        if h is None:
            continue
        kind = h.algorithm
        if h.per_switch:
            key = int.from_bytes(hashlib.sha256(sw.hostname.encode()).digest()[:5], "big")
            seeds[i], rotate[i] = key & 0xFFFFFFFF, (key >> 32) % 16
        else:
            seeds[i], rotate[i] = h.seed, h.rotate
    qps = plan.qos.nic_qps_per_connection if plan.qos is not None else 1
    qp_roles = {role for role, h in plan.hashing.items() if h.qp_hashing}
    return {"hash_kind": kind, "hash_seed": seeds, "hash_rotate": rotate,
            "hash_how": {role: h.how for role, h in plan.hashing.items()}, "qps": qps,
            "qp_hash": np.array([sw.role in qp_roles for sw in switches], dtype=bool)}


def _tenants(plan: Plan, switches: list[Switch], eps: list[tuple[int, str, Any]]) -> dict[str, Any]:
    """Each NIC port's tenant, the tenants' VNIs and leaks, and every switch's loopback (a leaf's VTEP address)."""
    vtep = np.array([int(ipaddress.IPv4Address(sw.loopback)) if sw.loopback else 0 for sw in switches],
                    dtype=np.uint32)
    tenancy = plan.tenancy
    if tenancy is None or not tenancy.tenants:
        return {"vtep_ip": vtep, "ep_tenant": np.full(len(eps), -1, dtype=np.int32)}
    names = list(tenancy.tenants)
    number = {name: i for i, name in enumerate(names)}
    reach = np.eye(len(names), dtype=bool)
    for name, tp in tenancy.tenants.items():
        for other in tp.reach:
            reach[number[name], number[other]] = True
    ep_tenant = [number.get(tenancy.nic_tenant.get((e[1], e[2].ifname), ""), -1) for e in eps]
    return {"vtep_ip": vtep, "ep_tenant": np.array(ep_tenant, dtype=np.int32), "tenants": names,
            "tenant_vni": np.array([tp.vni for tp in tenancy.tenants.values()], dtype=np.int64),
            "tenant_reach": reach, "tenant_mechanism": tenancy.mechanism}


def replan_with_asn_scheme(intent: Intent, plan: Plan, scheme: str) -> Plan:
    """The intent of `plan` planned with another BGP ASN scheme (a what-if for the deadlock analysis)."""
    from fabricgen.plan.build import build_plan

    if plan.settings.asn_scheme == scheme:
        return plan
    bgp = intent.bgp.model_copy(update={"asn_scheme": scheme})
    return build_plan(intent.model_copy(update={"bgp": bgp}), check_qos=False)
