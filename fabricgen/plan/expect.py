"""What the live fabric should show, derived from the plan alone: prefixes per BGP session.

``expected_prefixes(plan)`` propagates every switch's originated IPv4 prefixes over the
planned eBGP sessions the way the rendered policy does, and counts what each switch
should accept from each neighbor:

* a switch originates its loopback and, on leaves, its GPU-facing /31s (under evpn-vxlan, those of no
  tenant: a tenant's are EVPN routes of its VRF);
* FRR and SONiC leaves announce only their own prefixes (``RM-EXPORT`` matches
  ``PL-LOCAL``); spines, super-spines and NX-OS switches pass on their best path;
* a receiver drops a path that already holds its own ASN more often than its
  ``allowas-in`` for that neighbor allows (eBGP loop prevention);
* each switch keeps its shortest accepted paths and passes on one of them (the one
  with the lowest AS sequence: a deterministic stand-in for BGP's tie-breaks, which
  never changes which ASNs a path holds in these fabrics).

Deploy's post-check and validate's ``routes`` check compare the live per-session
``accepted_prefixes`` with these counts.
"""

from __future__ import annotations

from collections import defaultdict

from fabricgen.catalog.registry import platform
from fabricgen.plan.model import Plan, Switch

Session = tuple[str, str]  # (switch, neighbor address)


def originated(sw: Switch, plan: Plan | None = None) -> int:
    """IPv4 prefixes ``sw`` announces itself.  Under evpn-vxlan a tenant port's /31 is in its tenant's VRF and
    travels as an EVPN type-5 route, not in the default VRF's IPv4 sessions (vrf-lite leaks it there)."""
    if sw.bgp is None:
        return 0
    count = sum(1 for net in sw.bgp.networks if ":" not in net)
    t = plan.tenancy if plan is not None else None
    in_vrf = {port for (leaf, port) in t.port_tenant if leaf == sw.hostname} if t is not None and t.evpn else set()
    if sw.bgp.connected_gpu_subnets:
        count += sum(1 for itf in sw.interfaces if itf.tier == "gpu_leaf" and itf.ipv4 and itf.name not in in_vrf)
    return count


def announces_only_own(sw: Switch) -> bool:
    """Leaves whose platform exports PL-LOCAL only (FRR-based ones, see platforms/frr_common)."""
    return sw.role == "leaf" and platform(sw.platform).leaf_announces_own_only


def expected_prefixes(plan: Plan) -> dict[Session, int]:
    """(switch, neighbor address) -> IPv4 prefixes it should accept on that session.

    One breadth-first propagation per originating switch: compute it once per run.
    """
    switches = plan.switches
    # sessions towards each switch: (receiver, neighbor ip, sender, allowas-in)
    inbound: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for sw in switches.values():
        if sw.bgp is None:
            continue
        for n in sw.bgp.neighbors:
            if n.afi == "ipv4" and n.peer_device in switches:
                inbound[n.peer_device].append((sw.hostname, n.ip, n.allowas_in))
    counts: dict[Session, int] = defaultdict(int)
    for origin in switches.values():
        weight = originated(origin, plan)
        if weight == 0:
            continue
        # best[switch] = the AS path (without the switch's own ASN) it selected for origin's prefixes
        best: dict[str, tuple[int, ...]] = {origin.hostname: ()}
        frontier = [origin.hostname]
        while frontier:
            offers: dict[str, list[tuple[int, ...]]] = defaultdict(list)
            for sender_name in frontier:
                sender = switches[sender_name]
                if sender_name != origin.hostname and announces_only_own(sender):
                    continue
                path = (sender.asn, *best[sender_name])
                for receiver, ip, allowas in inbound[sender_name]:
                    if path.count(switches[receiver].asn) > allowas:
                        continue
                    counts[receiver, ip] += weight
                    if receiver not in best:
                        offers[receiver].append(path)
            frontier = []
            for receiver, paths in offers.items():
                best[receiver] = min(paths)
                frontier.append(receiver)
    return dict(sorted(counts.items()))
