"""What each platform can do: one declarative record per platform (netlab's device files, in Python).

Every platform capability or limit that changes what fabricgen plans or renders lives here and
nowhere else; planning and rendering code asks `platform_facts(name)` instead of branching on
platform names.  The platform registry of issue 11 takes these records over as they are.

Sources (vendor reference, ../shared/reference/roce-fabric-vendor-reference.md):

* NX-OS dynamic load balancing (§1.10): flowlet and per-packet modes on Cloud Scale
  9300-FX3/GX/GX2/HX-TOR from 10.5(1)F; it steers traffic to a DLB MAC that every participating
  switch must own, so a port joins DLB only when its neighbour does DLB too; changing
  `hardware profile dlb` is reload-pending.
* NX-OS pause buffers (§5.3): `pause buffer-size ... pause-threshold ... resume-threshold` is
  mandatory on no-drop classes of cables longer than 100 m (Cisco Nexus 9000 QoS guide, PFC
  guidelines).  Cloud Scale thresholds are in bytes; every published value is a whole number of
  208-byte buffer cells (e.g. 101920 / 46800 / 34320), so fabricgen rounds to cells too.
* NX-OS PFC watchdog (§1.7): the watchdog polls every `watch-dog interval` (100..1000 ms, default
  100 ms; Nexus Dashboard offers 101..1000), declares a queue stuck after `shutdown-multiplier`
  intervals (1..10) and drops its traffic -- NX-OS has no forward or alert-only action.
* SONiC renders no adaptive routing today (ARS needs SKU support, issue 9's SONiC half); FRR
  (Linux) has none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricgen.errors import Problem
from fabricgen.intent import Intent, PfcWatchdog, Platform


@dataclass(frozen=True, slots=True)
class WatchdogFacts:
    """How a platform's PFC watchdog is configured (timers are whole multiples of its poll interval)."""

    interval_ms: tuple[int, int]  # poll interval range
    detection_multiplier: tuple[int, int]  # intervals before a stuck queue is shut
    restore_multiplier: tuple[int, int]  # intervals without PFC before it is restored
    actions: frozenset[str]  # storm actions the platform implements


@dataclass(frozen=True, slots=True)
class WatchdogTimers:
    """The intent's PFC watchdog in a platform's terms: a poll interval and two multiples of it."""

    interval_ms: int
    detection_multiplier: int  # stuck after this many intervals (detection = interval x multiplier)
    restore_multiplier: int  # restored after this many intervals without PFC

    @property
    def detection_ms(self) -> int:
        return self.interval_ms * self.detection_multiplier

    @property
    def restoration_ms(self) -> int:
        return self.interval_ms * self.restore_multiplier


@dataclass(frozen=True, slots=True)
class PlatformFacts:
    """One platform's capabilities, as far as fabricgen's plan and templates depend on them."""

    name: Platform
    adaptive_routing_modes: frozenset[str] = frozenset()  # modes it renders; empty = no adaptive routing
    adaptive_routing_needs_reload: bool = False  # enabling it only takes effect after a reload
    pause_buffer_above_m: float | None = None  # static ingress pause buffer needed above this cable length
    buffer_cell_bytes: int = 1  # granularity of buffer thresholds
    watchdog: WatchdogFacts | None = None  # None: watchdog timers are not rendered by this platform

    def adaptive_routing(self, mode: str) -> bool:
        """True if the platform renders adaptive routing in this mode."""
        return mode in self.adaptive_routing_modes

    def needs_pause_buffer(self, cable_m: float) -> bool:
        return self.pause_buffer_above_m is not None and cable_m > self.pause_buffer_above_m


PLATFORM_FACTS: dict[str, PlatformFacts] = {
    "nxos": PlatformFacts(
        name="nxos",
        adaptive_routing_modes=frozenset({"flowlet", "per-packet"}),
        adaptive_routing_needs_reload=True,
        pause_buffer_above_m=100.0,
        buffer_cell_bytes=208,
        watchdog=WatchdogFacts(interval_ms=(100, 1000), detection_multiplier=(1, 10), restore_multiplier=(0, 100),
                               actions=frozenset({"drop"})),
    ),
    "sonic": PlatformFacts(name="sonic"),
    "frr": PlatformFacts(name="frr"),
}


def watchdog_timers(wd: PfcWatchdog, facts: WatchdogFacts) -> WatchdogTimers:
    """Poll interval = the intent's poll_ms; detection and restoration rounded up to whole intervals.

    Rounding up never makes the watchdog fire earlier than the intent says.  Raises ValueError
    naming the intent field when the platform cannot express the timers or the action.
    """
    lo, hi = facts.interval_ms
    if not lo <= wd.poll_ms <= hi:
        raise ValueError(f"poll_ms: {wd.poll_ms} ms is outside the watchdog interval range {lo}..{hi} ms")
    detect = math.ceil(wd.detection_ms / wd.poll_ms)
    restore = math.ceil(wd.restoration_ms / wd.poll_ms)
    for field, value, (low, high), ms in (("detection_ms", detect, facts.detection_multiplier, wd.detection_ms),
                                          ("restoration_ms", restore, facts.restore_multiplier, wd.restoration_ms)):
        if not low <= value <= high:
            raise ValueError(f"{field}: {ms} ms is {value} x the {wd.poll_ms} ms poll interval, the platform takes "
                             f"{low}..{high} intervals (at most {high * wd.poll_ms} ms)")
    if wd.action not in facts.actions:
        raise ValueError(f"action: {wd.action!r} is not a storm action of the platform "
                         f"({', '.join(sorted(facts.actions))})")
    return WatchdogTimers(wd.poll_ms, detect, restore)


def intent_problems(intent: Intent) -> list[Problem]:
    """Settings of the intent that a role's platform cannot render: errors, before anything is planned."""
    roles = ["leaf", "spine", "super_spine"][:intent.topology.tiers]
    problems: list[Problem] = []
    seen: set[str] = set()
    wd = intent.qos.pfc_watchdog
    for role in roles:
        platform = getattr(intent.platforms, role)
        facts = platform_facts(platform)
        if platform in seen or facts.watchdog is None or not wd.enabled:
            continue
        seen.add(platform)
        try:
            watchdog_timers(wd, facts.watchdog)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            problems.append(Problem(f"qos.pfc_watchdog.{field}", f"{platform} ({role}s) cannot run this PFC "
                                    f"watchdog: {message}", "pick timers and an action every platform of the "
                                    "fabric supports"))
    return problems


def platform_facts(platform: str) -> PlatformFacts:
    """The record of a platform; KeyError names the known ones."""
    try:
        return PLATFORM_FACTS[platform]
    except KeyError:
        raise KeyError(f"unknown platform {platform!r} (known: {', '.join(sorted(PLATFORM_FACTS))})") from None
