"""ECMP step of the plan: which fabric ports run adaptive routing.

Adaptive routing (NX-OS dynamic load balancing, Spectrum-X AR) only works between two switches
that both do it: an NX-OS DLB member forwards to the DLB MAC of its neighbour, which a
non-DLB neighbour does not own (vendor reference §1.10).  So a fabric port is active only when
the platforms at both ends render the intent's mode (`platforms.registry` capabilities); everything the intent
asked for but the plan cannot give becomes a warning, never a silent drop.
"""

from __future__ import annotations

from collections import Counter

from fabricgen.errors import Problem
from fabricgen.model import Plan
from fabricgen.platforms.registry import capabilities

MAX_NAMED = 4


def plan_adaptive_routing(plan: Plan) -> None:
    """Mark every fabric port whose both ends do adaptive routing; list the active ports in plan.facts."""
    ar = plan.intent.ecmp.adaptive_routing
    active: dict[str, list[str]] = {}
    missing: Counter[str] = Counter()  # platform without the capability -> fabric ports left on plain ECMP
    examples: dict[str, list[str]] = {}
    if ar.enabled:
        for sw in plan.switches.values():
            mine = capabilities(sw.platform).adaptive_routing(ar.mode)
            for itf in sw.interfaces:
                if itf.tier == "gpu_leaf":
                    continue
                peer = plan.switches[itf.peer_device]
                theirs = capabilities(peer.platform).adaptive_routing(ar.mode)
                itf.adaptive_routing = mine and theirs
                if itf.adaptive_routing:
                    active.setdefault(sw.hostname, []).append(itf.name)
                    continue
                for platform, able in ((sw.platform, mine), (peer.platform, theirs)):
                    if not able:
                        missing[platform] += 1
                        named = examples.setdefault(platform, [])
                        if len(named) < MAX_NAMED:
                            named.append(f"{sw.hostname} {itf.name}")
                        break
    plan.facts["adaptive_routing"] = {
        "enabled": ar.enabled,
        "mode": ar.mode if ar.enabled else "",
        "active_ports": sum(len(ports) for ports in active.values()),
        "switches": active,
    }
    for name, count in sorted(missing.items()):
        shown = ", ".join(examples[name]) + (" ..." if count > len(examples[name]) else "")
        plan.warnings.append(Problem(
            "ecmp.adaptive_routing.enabled",
            f"adaptive routing ({ar.mode}) is not rendered on {count} fabric port(s) because platform "
            f"{name} at one end cannot do it; they use plain ECMP ({shown})",
            "accept plain ECMP on those links, or use switches that do adaptive routing at both ends",
        ))
