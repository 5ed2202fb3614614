"""PTP: the grandmasters, boundary clocks and clients of the fabric, and each port's planned role.

The plan decides what the best master clock algorithm (BMCA) should settle on, so `check` can verify
the topology before anything runs and `validate --ptp` can compare the live clocks with it:

* the preferred grandmaster is the first host of the intent's grandmaster endpoint group; the others
  stand by (priority1 one worse each), and behave as clients while the preferred one runs;
* every switch of a boundary-clock tier runs a boundary clock; every GPU server NIC (``ptp.servers``)
  a client (ordinary, client-only) clock;
* steps removed is the hop count from the preferred grandmaster over PTP-speaking links (a clock
  next to the grandmaster counts 1, IEEE 1588 ``currentDS.stepsRemoved``);
* a port whose peer is one step nearer the grandmaster is ``upstream`` (one of them becomes SLAVE,
  the others PASSIVE), one whose peer is one step farther is ``downstream`` (MASTER).  A Clos is
  bipartite, so no link joins two clocks at the same distance.

A clock the grandmaster cannot reach (its tier runs no boundary clock, or the way there does not)
keeps steps removed -1; `fabricgen check` names it (rule ``ptp-reachable``).
"""

from __future__ import annotations

import re
from collections import deque
from typing import Literal

from fabricgen.intent.model import Intent
from fabricgen.intent.ptp import Ptp
from fabricgen.plan.model import ClockKind, Plan, PtpClock, PtpPlan, PtpPort, Server

BC_PRIORITY = 128  # IEEE 1588 default priority1/priority2: boundary clocks never outrank a grandmaster
# G.8275.1 runs over Ethernet (L2 multicast), the default profile and G.8275.2 over UDP/IPv4.
TRANSPORT: dict[str, Literal["UDPv4", "L2"]] = {"default-1588": "UDPv4", "g8275.1": "L2", "g8275.2": "UDPv4"}


def clock_key(host: str, instance: str = "") -> str:
    """The plan's name of a clock: the host, or host/ifname for one of a server's NIC clocks."""
    return f"{host}/{instance}" if instance else host


def grandmaster_hosts(plan: Plan, prefix: str) -> list[Server]:
    """The hosts of one endpoint group (names are the group prefix and digits; prefixes never nest)."""
    return [h for h in plan.endpoints if h.name.startswith(prefix) and h.name[len(prefix):].isdigit()]


def build_ptp(plan: Plan, intent: Intent) -> PtpPlan | None:
    """The PTP plan of the fabric (None when the intent has no `ptp:`)."""
    ptp: Ptp | None = intent.ptp
    if ptp is None:
        return None
    gms = grandmaster_hosts(plan, ptp.grandmaster.endpoints)
    tiers = tuple(t for t in ptp.boundary_clocks if any(sw.role == t for sw in plan.switches.values()))
    out = PtpPlan(profile=ptp.profile, domain=ptp.domain_number, transport=TRANSPORT[ptp.profile], dscp=ptp.dscp,
                  timestamping=ptp.timestamping, offset_ns=ptp.thresholds.offset_ns,
                  path_delay_ns=ptp.thresholds.path_delay_ns, last_sync_s=ptp.thresholds.last_sync_s,
                  grandmaster=gms[0].name if gms else "", boundary_tiers=tiers)
    kinds: dict[str, ClockKind] = {}
    for i, gm in enumerate(gms):
        kinds[gm.name] = "grandmaster" if i == 0 else "standby"
        out.clocks[gm.name] = PtpClock(gm.name, kinds[gm.name], -1, (), priority1=ptp.grandmaster.priority1 + i)
    for sw in plan.switches.values():
        if sw.role in tiers:
            kinds[sw.hostname] = "boundary"
            out.clocks[sw.hostname] = PtpClock(sw.hostname, "boundary", -1, (), priority1=BC_PRIORITY,
                                               priority2=BC_PRIORITY, source_ip=sw.loopback)
    if ptp.servers:
        for srv in plan.servers:
            for nic in sorted(srv.nics, key=lambda n: (n.nic, n.port)):
                key = clock_key(srv.name, nic.ifname)
                kinds[key] = "client"
                out.clocks[key] = PtpClock(srv.name, "client", -1, ())
    _place(plan, out, kinds)
    return out


def _place(plan: Plan, out: PtpPlan, kinds: dict[str, ClockKind]) -> None:
    """Steps removed by breadth-first search from the preferred grandmaster; then each port's role."""
    links: dict[str, list[tuple[str, str, str]]] = {}  # clock -> [(its port, peer clock, peer port)]
    for ln in plan.links:
        a = clock_key(ln.a_device, ln.a_port) if ln.tier == "gpu_leaf" and ln.a_device not in kinds else ln.a_device
        if a not in kinds or ln.z_device not in kinds:
            continue
        a_port = ln.a_port
        links.setdefault(a, []).append((a_port, ln.z_device, ln.z_port))
        links.setdefault(ln.z_device, []).append((ln.z_port, a, a_port))
    dist: dict[str, int] = {}
    if out.grandmaster:
        dist[out.grandmaster] = 0
        queue = deque([out.grandmaster])
        while queue:
            here = queue.popleft()
            if here != out.grandmaster and kinds[here] != "boundary":
                continue  # only boundary clocks pass time on
            for _, peer, _ in links.get(here, []):
                if peer not in dist:
                    dist[peer] = dist[here] + 1
                    queue.append(peer)
    for key, clock in out.clocks.items():
        clock.steps_removed = dist.get(key, -1)
        ports, parents = [], []
        for port, peer, peer_port in sorted(links.get(key, []), key=lambda p: _natural(p[0])):
            if key not in dist or peer not in dist:
                continue
            if dist[peer] == dist[key] - 1:
                ports.append(PtpPort(port, "upstream", _host(peer), peer_port))
                parents.append(_host(peer))
            elif dist[peer] == dist[key] + 1:
                ports.append(PtpPort(port, "downstream", _host(peer), peer_port))
        clock.ports = ports
        clock.parents = tuple(dict.fromkeys(parents))


def _host(key: str) -> str:
    return key.split("/", 1)[0]


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))
