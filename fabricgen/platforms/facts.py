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

from dataclasses import dataclass

from fabricgen.intent import Platform


@dataclass(frozen=True, slots=True)
class WatchdogFacts:
    """How a platform's PFC watchdog is configured (timers are whole multiples of its poll interval)."""

    interval_ms: tuple[int, int]  # poll interval range
    detection_multiplier: tuple[int, int]  # intervals before a stuck queue is shut
    restore_multiplier: tuple[int, int]  # intervals without PFC before it is restored
    actions: frozenset[str]  # storm actions the platform implements


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


def platform_facts(platform: str) -> PlatformFacts:
    """The record of a platform; KeyError names the known ones."""
    try:
        return PLATFORM_FACTS[platform]
    except KeyError:
        raise KeyError(f"unknown platform {platform!r} (known: {', '.join(sorted(PLATFORM_FACTS))})") from None
