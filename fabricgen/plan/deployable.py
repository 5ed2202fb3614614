"""Settings an intent asks for that a role's platform cannot deploy: never a silent no-op.

Each platform's registry record lists what its renderer leaves out of the config it pushes.  An
intent that sets one of those explicitly for a role on that platform gets a ``plan``
warning naming the setting and the platform, and ``deploy`` refuses it unless
``--accept-undeployable``.  MTU on Linux + FRR is a property of the kernel interface, not
of frr.conf: deploy compares the planned MTU with the live one on each device instead
(:func:`mtu_mismatches`), since only the device knows whether it already has it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fabricgen.catalog.registry import PlatformGap, platform
from fabricgen.plan.model import Plan, Switch


@dataclass(frozen=True)
class Undeployable:
    setting: str
    platform: str
    roles: tuple[str, ...]
    why: str
    fix: str
    refuse: bool

    @property
    def message(self) -> str:
        return (f"{self.setting} is set in the intent, but {', '.join(self.roles)} run platform {self.platform}, "
                f"which cannot deploy it: {self.why}")


def _gap(name: str, setting: str) -> PlatformGap | None:
    """The most specific gap of platform ``name`` covering ``setting``."""
    best = None
    for gap in platform(name).not_deployed:
        if (setting == gap.setting or setting.startswith(gap.setting + ".")) and (
                best is None or len(gap.setting) > len(best.setting)):
            best = gap
    return best


def undeployable(plan: Plan, hosts: Iterable[str] | None = None) -> list[Undeployable]:
    """Explicit intent settings the platforms of the (selected) switches cannot deploy.

    Only refusals are returned when ``hosts`` is given (deploy); every gap otherwise (plan).
    """
    switches = [plan.switches[h] for h in hosts] if hosts is not None else list(plan.switches.values())
    roles_by_platform: dict[str, set[str]] = {}
    for sw in switches:
        roles_by_platform.setdefault(sw.platform, set()).add(sw.role)
    found: dict[tuple[str, str], Undeployable] = {}
    for setting in (s for s in plan.settings.explicit if s == "qos" or s.startswith("qos.")):
        for name, roles in sorted(roles_by_platform.items()):
            gap = _gap(name, setting)
            if gap is None or (hosts is not None and not gap.refuse):
                continue
            key = (gap.setting, name)
            prev = found.get(key)
            found[key] = Undeployable(setting if prev is None else gap.setting, name, tuple(sorted(roles)), gap.why,
                                      gap.fix, gap.refuse)
    return list(found.values())


def mtu_mismatches(sw: Switch, interfaces: dict[str, Any]) -> list[str]:
    """Planned ports whose live MTU differs from the plan (platforms that cannot set it)."""
    out = []
    for itf in sw.interfaces:
        live = interfaces.get(itf.name, {}).get("mtu")
        if live is not None and int(live) != itf.mtu:
            out.append(f"{itf.name} mtu {live} (plan {itf.mtu}, peer {itf.peer_device} {itf.peer_interface})")
    return out


def platform_sets_mtu(name: str) -> bool:
    return platform(name).capabilities.sets_mtu
