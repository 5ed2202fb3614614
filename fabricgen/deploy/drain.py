"""Drain a switch before a disruptive change: BGP graceful shutdown (RFC 8326), then wait for its
neighbors to move their traffic away.

Draining is a config, committed like any other (rollback point, saved = running):

1. *drain* - the switch's current saved config plus the platform's graceful shutdown, its record's
   ``drain`` transform (FRR and SONiC: ``bgp graceful-shutdown`` under ``router bgp``; NX-OS:
   ``graceful-shutdown activate``; EOS: maintenance mode, ``unit System`` ``quiesce``).
   The switch then sends every route with the GRACEFUL_SHUTDOWN community (65535:0);
2. *wait* - until no neighbor still forwards through it: on every neighbor, no installed route
   has a next hop on the switch, except the prefixes only the switch can reach (its loopback, a
   leaf's GPU subnets).  Receivers honour the community: fabricgen's import policy sets
   LOCAL_PREF 0 on it (``RM-IMPORT``, frr_common), NX-OS is ``graceful-shutdown aware`` by default;
3. *change* - the build plus the drain line; its post-commit check runs while drained;
4. *undrain* - the build itself (or, when the change failed and was rolled back, the config it
   returned to without the drain line).

A platform whose record has no ``drain`` is refused by ``--drain``, by name; every fabricgen switch
platform has one.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fabricgen.catalog.registry import load, platform
from fabricgen.plan.model import Plan, Switch

if TYPE_CHECKING:
    from napalm.base import NetworkDriver


class DrainFailed(Exception):
    """The neighbors did not move their traffic in time (the switch is undrained again)."""


def drained(platform_name: str, candidate: str, on: bool = True) -> str:
    """The candidate (the text deploy pushes to this platform) with the drain on (or off): the platform's
    record names its transform (``drain``); `can_drain` says whether it has one."""
    return str(load(platform(platform_name).drain)(candidate, on))


def can_drain(platform_name: str) -> bool:
    return bool(platform(platform_name).drain)


def saved_candidate(device: NetworkDriver, platform_name: str) -> str:
    """The device's saved config in the form its driver takes as a candidate."""
    side = platform(platform_name).saved_config
    return str(device.get_config(retrieve=side)[side])


# --------------------------------------------------------------------------- has traffic moved?


@dataclass(frozen=True)
class Neighbor:
    host: str  # the neighbor switch
    via: frozenset[str]  # the drained switch's addresses on their links (next hops on the neighbor)


def neighbors(plan: Plan, sw: Switch) -> list[Neighbor]:
    """The switches with a BGP session to ``sw``, and ``sw``'s addresses they see as next hops."""
    out: dict[str, set[str]] = {}
    assert sw.bgp is not None
    for n in sw.bgp.neighbors:
        if n.peer_device in plan.switches:
            mine = sw.interface(n.interface).ipv4.split("/")[0] if n.interface else ""
            out.setdefault(n.peer_device, set()).add(mine)
    return [Neighbor(h, frozenset(a for a in v if a)) for h, v in sorted(out.items())]


def own_prefixes(sw: Switch) -> set[str]:
    """Prefixes only ``sw`` reaches: its loopback and, on a leaf, its server subnets."""
    import ipaddress

    out = {f"{sw.loopback}/32"} if sw.loopback else set()
    for itf in sw.interfaces:
        if itf.tier == "gpu_leaf" and itf.ipv4:
            out.add(str(ipaddress.ip_interface(itf.ipv4).network))
    return out


def routes_still_via(routes: dict[str, Any], via: frozenset[str], own: set[str]) -> list[str]:
    """Prefixes (not in ``own``) whose installed next hops still include an address in ``via``;
    ``routes`` is napalm ``get_route_to()`` output (prefix -> list of next hops)."""
    out = []
    for prefix, hops in sorted(routes.items()):
        if prefix in own or not isinstance(hops, list):
            continue
        if any(h.get("next_hop") in via and h.get("selected_next_hop", h.get("current_active", True))
               and "bgp" in str(h.get("protocol", "bgp")).lower() for h in hops):
            out.append(prefix)
    return out


def wait_moved(plan: Plan, sw: Switch, open_device: Callable[[str], Any], timeout: float,
               cancel: threading.Event | None = None, poll: float = 0.5) -> float:
    """Wait until every neighbor forwards around ``sw``; returns the seconds it took.

    ``open_device(host)`` returns an open napalm driver of a neighbor (closed here).  Raises
    DrainFailed naming the neighbors and prefixes still going through ``sw``.
    """
    own = own_prefixes(sw)
    peers = neighbors(plan, sw)
    devices = {p.host: open_device(p.host) for p in peers}
    start = time.monotonic()
    try:
        while True:
            left = {}
            for p in peers:
                still = routes_still_via(devices[p.host].get_route_to(destination=""), p.via, own)
                if still:
                    left[p.host] = still
            if not left:
                return time.monotonic() - start
            if time.monotonic() - start > timeout or (cancel is not None and cancel.is_set()):
                detail = "; ".join(f"{h}: {len(v)} prefixes, e.g. {', '.join(v[:3])}" for h, v in left.items())
                raise DrainFailed(f"neighbors still forward through {sw.hostname} after {timeout:.0f}s: {detail}")
            time.sleep(poll)
    finally:
        for d in devices.values():
            with contextlib.suppress(Exception):  # closing a neighbor's session must not mask the result
                d.close()
