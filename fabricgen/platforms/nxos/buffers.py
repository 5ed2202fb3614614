"""The NX-OS no-drop buffer budget: what a plan reserves per switch against what the model has.

NX-OS allocates the ingress `pause buffer-size` of every no-drop class on every port whose queuing policy
sets one, whatever the port's state (Cisco Nexus 9000 QoS guide, PFC guidelines: "buffer allocation is
based on the configuration irrespective of the operational state of the port").  The sum per switch must
fit the model's packet buffer (`fabricgen.catalog.nxos_models.no_drop_budget`); a plan over it is refused,
naming the tier whose cables drive the reservation.
"""

from __future__ import annotations

from fabricgen.catalog.nxos_models import no_drop_budget
from fabricgen.errors import Problem
from fabricgen.plan.model import Plan
from fabricgen.platforms.nxos.render import no_drop_reservation, roce_interfaces

_CABLE_FIELD = {"gpu_leaf": "cabling.gpu_leaf_m", "leaf_spine": "cabling.leaf_spine_m",
                "spine_super_spine": "cabling.spine_super_spine_m"}


def reservations(plan: Plan) -> dict[str, tuple[int, int, str]]:
    """hostname -> (bytes reserved for no-drop, budget, where the budget comes from), for every NX-OS switch."""
    out: dict[str, tuple[int, int, str]] = {}
    for sw in plan.switches.values():
        if sw.platform != "nxos":
            continue
        budget, source = no_drop_budget(sw.model)
        out[sw.hostname] = (no_drop_reservation(sw, plan), budget, source)
    return out


def budget_problems(plan: Plan) -> list[Problem]:
    """One problem per (role, tier) whose NX-OS switches reserve more no-drop buffer than their model has."""
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for host, (reserved, budget, source) in reservations(plan).items():
        if reserved <= budget:
            continue
        sw = plan.switches[host]
        long_tiers = sorted({itf.tier for itf in roce_interfaces(sw) if itf.cable_m > 100})
        path = _CABLE_FIELD[long_tiers[-1]] if long_tiers else "switch_models"
        if (sw.role, path) in seen:
            continue
        seen.add((sw.role, path))
        problems.append(Problem(path, f"NX-OS {sw.role} {host} reserves {reserved / 1e6:.1f} MB of no-drop "
                                f"buffer (pause buffer-size on its ports over 100 m), above its {budget / 1e6:.0f} MB "
                                f"({source})", "shorten those cables, put fewer long-cable ports on one switch, or "
                                "use a model with a larger buffer"))
    return problems
