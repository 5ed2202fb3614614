"""Settings an intent asks for that a role's platform cannot deploy: never a silent no-op.

One record per platform lists what its renderer leaves out of the config it pushes.  An
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

from pydantic import BaseModel

from fabricgen.model import Plan, Switch


@dataclass(frozen=True)
class PlatformGap:
    setting: str  # dotted intent path; a prefix covers everything under it
    why: str
    fix: str
    refuse: bool = True  # False: a plan warning only (deploy checks it live)


# What each platform's configs do not carry (platforms not listed deploy every setting).
NOT_DEPLOYED: dict[str, tuple[PlatformGap, ...]] = {
    "frr": (
        PlatformGap("qos.mtu", "frr.conf has no interface MTU (FRR 8.4's zebra has no `mtu` command); the MTU "
                               "is the Linux interface's", "set the MTU on the switch ports themselves (the lab "
                                                            "does at `fabricgen lab up`)", refuse=False),
        PlatformGap("qos.nic", "NIC settings go to the servers' NIC scripts, not to switches",
                    "run the hosts/*.sh scripts on the servers", refuse=False),
        PlatformGap("qos", "Linux + FRR switches get no QoS from fabricgen (no PFC, ECN, scheduling or buffers "
                           "in frr.conf)", "use platform sonic or nxos for lossless RoCE switches"),
    ),
}


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


def explicit_settings(model: BaseModel, prefix: str) -> list[str]:
    """Dotted paths of every field the intent sets explicitly (not left to its default)."""
    out = []
    for name in sorted(model.model_fields_set):
        value: Any = getattr(model, name)
        path = f"{prefix}.{name}"
        if isinstance(value, BaseModel):
            out += explicit_settings(value, path) or [path]
        else:
            out.append(path)
    return out


def _gap(platform: str, setting: str) -> PlatformGap | None:
    """The most specific gap of ``platform`` covering ``setting``."""
    best = None
    for gap in NOT_DEPLOYED.get(platform, ()):
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
    for setting in explicit_settings(plan.intent.qos, "qos"):
        for platform, roles in sorted(roles_by_platform.items()):
            gap = _gap(platform, setting)
            if gap is None or (hosts is not None and not gap.refuse):
                continue
            key = (gap.setting, platform)
            prev = found.get(key)
            name = setting if prev is None else gap.setting
            found[key] = Undeployable(name, platform, tuple(sorted(roles)), gap.why, gap.fix, gap.refuse)
    return list(found.values())


def mtu_mismatches(sw: Switch, interfaces: dict[str, Any]) -> list[str]:
    """Planned ports whose live MTU differs from the plan (platforms that cannot set it)."""
    out = []
    for itf in sw.interfaces:
        live = interfaces.get(itf.name, {}).get("mtu")
        if live is not None and int(live) != itf.mtu:
            out.append(f"{itf.name} mtu {live} (plan {itf.mtu}, peer {itf.peer_device} {itf.peer_interface})")
    return out


def platform_sets_mtu(platform: str) -> bool:
    return not any(g.setting == "qos.mtu" for g in NOT_DEPLOYED.get(platform, ()))
