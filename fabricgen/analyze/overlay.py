"""The header every switch hashes: a QP's own RoCEv2 header, or the VXLAN header its VTEP wraps it in.

With `tenancy.mechanism: evpn-vxlan`, a packet between two GPUs of one tenant
(or of two tenants leaked by intent) on different leaves leaves its leaf
encapsulated (RFC 7348 §5): outer source and destination IP the two leaves'
loopbacks (the VTEP addresses FRR, SONiC and NX-OS source the tunnel from),
outer UDP destination port 4789, and an outer UDP source port that is a hash
of the inner headers:

* Linux (the `frr` platform's kernel VXLAN device): `udp_flow_src_port()`
  (include/net/udp.h) takes the skb's flow hash (the flow dissector's inner
  addresses and ports, jhash with a per-boot key) into the device's `srcport`
  range, the local port range 32768-60999 when none is set (tenants.sh sets
  none): ``min + (hash * (max - min) >> 32)``.
* ASIC VTEPs (SONiC, NX-OS, EOS): the chip's hash over the inner L2-L4
  headers (NVIDIA Cumulus Linux "Network Virtualization": "the source UDP
  port is unique, with the hash based on layer 2 through layer 4 information
  from the original frame"); RFC 7348 §5 recommends a hash of the inner
  packet into 49152-65535.

Both are modelled alike: the modelled crc32 of the inner 5-tuple, with a
stand-in key per VTEP, scaled into 49152-65535 (the range changes no load
statistics: the port is hashed again at every hop).  So every QP keeps its own
outer port where its inner source port is its own: per-QP entropy survives.

QP hashing does not: a switch hashing the BTH destination QP reads the three
bytes at outer L4 offset 13-15 (UDP header 8 + BTH bytes 5-7; docs/
load-balancing.md).  In a VXLAN packet those are bytes 5-7 of the VXLAN
header: the VNI's low 16 bits and a reserved byte (RFC 7348 §5), one value per
tenant; Jericho's Sand profile matches UDP destination port 4791 and never
sees 4789 at all.  Both are modelled as the VNI bytes: no per-QP entropy.

The encapsulating leaf is modelled hashing the outer header as well, as Linux
does (the kernel routes the encapsulated packet by its outer ports); an ASIC
that picks the uplink from the received packet would see the QP at that one
hop, never at the spines.  With `tenancy.outer: ipv6` the VTEPs' IPv4
loopbacks stand in for their IPv6 ones (one address per VTEP either way).

A vrf-lite tenant's packets are not encapsulated: the fabric sees, and hashes,
their own headers.  A packet between isolated VRFs is not routed: `reach`
marks it, and the analyses count it as lost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import Flows
from fabricgen.analyze.hashing import FIELDS, ROCE_UDP_PORT, hash_keys, keys, mix

VXLAN_UDP_PORT = 4789  # IANA, RFC 7348 §5
OUTER_SPORT = (49152, 65536)  # RFC 7348 §5: the dynamic/private range, [low, high)


@dataclass
class Headers:
    """Per flow: the hash key of the header the fabric links carry, and whether it is VXLAN, and routed."""

    key: np.ndarray  # uint8 [n, 16]: 5-tuple key, then the 3 bytes at outer L4 offset 13 (the QP, or the VNI)
    encap: np.ndarray  # bool: VXLAN between two VTEPs
    reach: np.ndarray  # bool: its VRF has a route to the destination (same tenant, leaked, or both default)


def reachable(fabric: Fabric, flows: Flows) -> np.ndarray:
    """Flows whose source VRF routes to the destination: both in the default VRF, one tenant, or leaked."""
    if not fabric.tenants:
        return np.ones(len(flows), dtype=bool)
    ts, td = fabric.ep_tenant[flows.src], fabric.ep_tenant[flows.dst]
    both = (ts >= 0) & (td >= 0)
    out: np.ndarray = (ts == td) | (both & fabric.tenant_reach[np.maximum(ts, 0), np.maximum(td, 0)])
    return out


def outer_sport(fabric: Fabric, flows: Flows, vtep: np.ndarray) -> np.ndarray:
    """The outer UDP source port the encapsulating VTEP `vtep` (node per flow) derives from the inner 5-tuple."""
    inner = keys(fabric.ep_ip[flows.src], fabric.ep_ip[flows.dst], flows.sport, FIELDS)
    seed = (mix(fabric.vtep_ip[vtep].astype(np.uint64)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    h = hash_keys("crc32", inner, seed).astype(np.uint64)
    low, high = OUTER_SPORT
    return (np.uint64(low) + ((h * np.uint64(high - low)) >> np.uint64(32))).astype(np.uint16)


def headers(fabric: Fabric, flows: Flows) -> Headers:
    """What every flow looks like on the fabric links, as the switches' hash reads it."""
    reach = reachable(fabric, flows)
    src_leaf, dst_leaf = fabric.ep_leaf[flows.src], fabric.ep_leaf[flows.dst]
    encap = np.zeros(len(flows), dtype=bool)
    if fabric.tenant_mechanism == "evpn-vxlan":
        ts = fabric.ep_tenant[flows.src]
        encap = reach & (ts >= 0) & (src_leaf != dst_leaf)
    src_ip = fabric.ep_ip[flows.src].copy()
    dst_ip = fabric.ep_ip[flows.dst].copy()
    sport = flows.sport.copy()
    dport = np.full(len(flows), ROCE_UDP_PORT, dtype=np.int64)
    qp = flows.dqpn.astype(np.int64)
    if encap.any():
        sub = flows.take(np.flatnonzero(encap))
        src_ip[encap] = fabric.vtep_ip[src_leaf[encap]]
        dst_ip[encap] = fabric.vtep_ip[dst_leaf[encap]]
        sport[encap] = outer_sport(fabric, sub, src_leaf[encap])
        dport[encap] = VXLAN_UDP_PORT
        vni = fabric.tenant_vni[fabric.ep_tenant[flows.dst[encap]]]  # the route's VNI: the destination VRF's L3VNI
        qp[encap] = (vni & 0xFFFF) << 8  # VXLAN header bytes 5-7: VNI bits 15-0, then a reserved zero byte
    key = keys(src_ip, dst_ip, sport, fabric.hash_fields, dport, qp)
    return Headers(key, encap, reach)
