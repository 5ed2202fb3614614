"""The PTP topology of a build: one domain, every clock reachable from the grandmaster, one role per port,
and a DSCP for PTP that is neither paused nor starved (rules ``ptp-*`` of catalog/rules.py).

The configs say which ports run PTP and in which domain (each platform's `ptp_reader`); the plan says
where the grandmaster is and which role each port should settle in.  Reachability is a breadth-first
search from the preferred grandmaster over links whose both ends run PTP in the configs, so a tier left
out of `ptp.boundary_clocks`, or one port a hand edit dropped, shows as the clocks it cuts off.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from fabricgen.base.findings import Finding
from fabricgen.catalog.registry import load, platform
from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan, PtpPlan, QosPolicy
from fabricgen.plan.ptp import clock_key
from fabricgen.platforms.ptp_facts import PtpFacts

RULES = ids("config", "ptp-")  # catalog/rules.py documents each
DOMAIN, PORTS, REACHABLE, PORT_ROLE, DSCP = RULES
MAX_NAMED = 4


def check_ptp(plan: Plan, configs: Path) -> list[Finding]:
    """Every ptp-* finding of a build (none when the plan has no PTP)."""
    ptp = plan.ptp
    if ptp is None:
        return []
    facts: dict[str, PtpFacts] = {}
    out: list[Finding] = []
    for host, sw in plan.switches.items():
        reader = platform(sw.platform).ptp_reader
        found: PtpFacts | None = load(reader)(configs, host) if reader else None
        clock = ptp.clocks.get(host)
        if found is None or (found.domain is None and not found.ports):
            if clock is not None:
                out.append(Finding(host, platform(sw.platform).main_file, "", PORTS,
                                   f"{host} is a planned boundary clock but its config has no PTP"))
            continue
        facts[host] = found
        out += _device(host, found, ptp, clock)
    out += _roles(ptp)
    out += _reachable(plan, ptp, facts)
    out += _dscp(plan, ptp)
    return out


def _device(host: str, found: PtpFacts, ptp: PtpPlan, clock: object) -> list[Finding]:
    out = []
    if found.domain is not None and found.domain != ptp.domain:
        out.append(Finding(host, found.file, found.domain_loc, DOMAIN,
                           f"PTP domain {found.domain}, the fabric's is {ptp.domain} ({ptp.profile})"))
    if found.dscp is not None and found.dscp != ptp.dscp:
        out.append(Finding(host, found.file, found.dscp_loc, DSCP,
                           f"PTP event messages marked DSCP {found.dscp}, the plan's PTP DSCP is {ptp.dscp}"))
    planned = {p.name for p in clock.ports} if clock is not None and hasattr(clock, "ports") else set()
    extra = sorted(set(found.ports) - planned)
    missing = sorted(planned - set(found.ports))
    if extra:
        out.append(Finding(host, found.file, found.ports[extra[0]], PORTS,
                           f"PTP runs on {_names(extra)}, which the plan gives no PTP role"))
    if missing:
        out.append(Finding(host, found.file, "", PORTS, f"no PTP on planned PTP port(s) {_names(missing)}"))
    return out


def _roles(ptp: PtpPlan) -> list[Finding]:
    out = []
    for key, clock in ptp.clocks.items():
        if clock.kind == "grandmaster" or clock.steps_removed < 0:
            continue
        roles: dict[str, set[str]] = {}
        for port in clock.ports:
            roles.setdefault(port.name, set()).add(port.role)
        both = sorted(name for name, r in roles.items() if len(r) > 1)
        if both:
            out.append(Finding(key, "", "", PORT_ROLE, f"port(s) {_names(both)} planned both toward and away from "
                               "the grandmaster"))
        if not clock.port_roles("upstream"):
            out.append(Finding(key, "", "", PORT_ROLE, f"{clock.kind} clock {key} has no port toward the "
                               "grandmaster"))
        if clock.kind == "client" and clock.port_roles("downstream"):
            out.append(Finding(key, "", "", PORT_ROLE, f"client clock {key} would serve time "
                               f"on {_names(clock.port_roles('downstream'))}"))
    return out


def _reachable(plan: Plan, ptp: PtpPlan, facts: dict[str, PtpFacts]) -> list[Finding]:
    """Clocks the preferred grandmaster cannot reach over links with PTP at both ends."""
    def runs(device: str, port: str) -> bool:
        if device in plan.switches:
            return device in facts and port in facts[device].ports
        return True  # hosts: their clocks are the plan's (the NIC scripts carry them)

    adjacent: dict[str, list[str]] = {}
    for ln in plan.links:
        a = clock_key(ln.a_device, ln.a_port) if ln.a_device not in plan.switches and ln.a_device not in \
            ptp.clocks else ln.a_device
        if a in ptp.clocks and ln.z_device in ptp.clocks and runs(ln.a_device, ln.a_port) \
                and runs(ln.z_device, ln.z_port):
            adjacent.setdefault(a, []).append(ln.z_device)
            adjacent.setdefault(ln.z_device, []).append(a)
    seen = {ptp.grandmaster} if ptp.grandmaster else set()
    queue = deque(seen)
    while queue:
        here = queue.popleft()
        if here != ptp.grandmaster and ptp.clocks[here].kind != "boundary":
            continue
        for peer in adjacent.get(here, []):
            if peer not in seen:
                seen.add(peer)
                queue.append(peer)
    out = []
    if not ptp.grandmaster:
        return [Finding(plan.settings.name, "", "", REACHABLE, "the plan has no grandmaster")]
    for key, clock in ptp.clocks.items():
        if key not in seen:
            where = (f"its tier ({plan.switches[key].role}) runs no boundary clock" if key in plan.switches
                     and key not in facts else "no path of PTP ports leads there")
            out.append(Finding(key, "", "", REACHABLE, f"{clock.kind} clock {key} cannot reach grandmaster "
                               f"{ptp.grandmaster}: {where}"))
    return out


def _dscp(plan: Plan, ptp: PtpPlan) -> list[Finding]:
    """The class the PTP DSCP maps to must be neither lossless (PFC pauses it) nor starved."""
    policy: QosPolicy | None = plan.qos
    if policy is None:
        return []
    tc = policy.dscp_to_tc.get(ptp.dscp, 0)
    where = (plan.settings.name, "", "", DSCP)
    if tc in policy.lossless_tcs:
        return [Finding(*where, f"PTP's DSCP {ptp.dscp} maps to lossless class {tc}: PFC pauses PTP with RoCE, "
                        "and a paused sync message arrives late (set ptp.dscp to a lossy class's DSCP, e.g. 46)")]
    share = policy.bandwidth.get("roce", 0) if tc == policy.roce_tc else policy.bandwidth.get("default", 0)
    if tc != policy.cnp_tc and share <= 0:
        return [Finding(*where, f"PTP's DSCP {ptp.dscp} maps to class {tc}, which has no bandwidth and no strict "
                        "priority: PTP would starve under load")]
    return []


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")
