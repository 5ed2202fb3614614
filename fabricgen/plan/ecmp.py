"""ECMP step of the plan: which fabric ports run adaptive routing.

Adaptive routing (NX-OS dynamic load balancing, Spectrum-X AR) only works between two switches
that both do it: an NX-OS DLB member forwards to the DLB MAC of its neighbour, which a
non-DLB neighbour does not own (vendor reference §1.10).  So a fabric port is active only when
the switches at both ends render the intent's mode: the role's model where its record says
which modes it does (`skus`, e.g. an N9364E-SG2 does only policy-driven DLB, which fabricgen does
not render), else its platform (`platforms.registry` capabilities).  Everything the intent asked for but the plan
cannot give becomes a warning, never a silent drop.
"""

from __future__ import annotations

from collections import Counter

from fabricgen.catalog.registry import capabilities
from fabricgen.errors import Problem
from fabricgen.intent.model import AdaptiveRouting as AdaptiveRoutingIntent
from fabricgen.plan.model import AdaptiveRouting, Plan, Switch

MAX_NAMED = 4


def adaptive_routing_of(plan: Plan, sw: Switch, mode: str) -> tuple[bool, str]:
    """(renders `mode` on `sw`, what decides it: "model N9364E-SG2-Q" or "platform sonic")."""
    hw = plan.hardware.get(sw.role)
    if hw is not None and hw.sku is not None and hw.sku.adaptive_routing_modes is not None:
        return mode in hw.sku.adaptive_routing_modes, f"{sw.platform} model {hw.sku.name}"
    return capabilities(sw.platform).adaptive_routing(mode), f"platform {sw.platform}"


def plan_adaptive_routing(plan: Plan, ar: AdaptiveRoutingIntent) -> None:
    """Mark every fabric port whose both ends do adaptive routing; the plan keeps the settings and active ports."""
    active: dict[str, list[str]] = {}
    missing: Counter[str] = Counter()  # platform without the capability -> fabric ports left on plain ECMP
    examples: dict[str, list[str]] = {}
    if ar.enabled:
        able: dict[str, tuple[bool, str]] = {}  # role -> (renders the mode, what decides it)
        for sw in plan.switches.values():
            if sw.role not in able:
                able[sw.role] = adaptive_routing_of(plan, sw, ar.mode)
        for sw in plan.switches.values():
            mine = able[sw.role]
            for itf in sw.interfaces:
                if itf.tier == "gpu_leaf":
                    continue
                theirs = able[plan.switches[itf.peer_device].role]
                itf.adaptive_routing = mine[0] and theirs[0]
                if itf.adaptive_routing:
                    active.setdefault(sw.hostname, []).append(itf.name)
                    continue
                for can, what in (mine, theirs):
                    if not can:
                        missing[what] += 1
                        named = examples.setdefault(what, [])
                        if len(named) < MAX_NAMED:
                            named.append(f"{sw.hostname} {itf.name}")
                        break
    plan.adaptive_routing = AdaptiveRouting(ar.enabled, ar.mode if ar.enabled else "", ar.flowlet_aging_us,
                                            ar.mac_address.lower(), active)
    for name, count in sorted(missing.items()):
        shown = ", ".join(examples[name]) + (" ..." if count > len(examples[name]) else "")
        plan.warnings.append(Problem(
            "ecmp.adaptive_routing.enabled",
            f"adaptive routing ({ar.mode}) is not rendered on {count} fabric port(s) because {name} at one end "
            f"cannot do it; they use plain ECMP ({shown})",
            "accept plain ECMP on those links, or use switches that do adaptive routing at both ends",
        ))
