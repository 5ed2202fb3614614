"""get_route_to: zebra's ``show ip route <dest> json`` and its route ages, and the number of ECMP paths
validate asks for (the selected, FIB-installed next hops)."""

from __future__ import annotations

import re
from typing import Any

from napalm.base import models

from napalm_frr.parsers.decode import as_list, to_int

_FRR_UPTIME_RE = re.compile(r"(\d+)([ywdhms])")
_UNIT = {"y": 365 * 86400, "w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_frr_uptime(text: str) -> int:
    """FRR route/peer age: ``00:03:07``, ``1d02h03m``, ``02w3d04h`` -> seconds (-1 if unknown)."""
    text = (text or "").strip()
    if not text or text == "never":
        return -1
    if ":" in text:
        parts = text.split(":")
        try:
            total = 0
            for p in parts:
                total = total * 60 + int(p)
            return total
        except ValueError:
            return -1
    units = _FRR_UPTIME_RE.findall(text)
    if not units:
        return -1
    return sum(int(n) * _UNIT[u] for n, u in units)


def parse_route(doc: dict[str, Any], protocol: str = "") -> dict[str, list[models.RouteDict]]:
    """``show ip route <dest> json`` -> get_route_to(): one RouteDict per next hop.

    ``selected_next_hop`` is True for next hops installed in the FIB of the selected
    route, so the number of ECMP paths is the count of selected next hops.
    """
    out: dict[str, list[models.RouteDict]] = {}
    for prefix, entries in doc.items():
        for route in as_list(entries):
            if not isinstance(route, dict):
                continue
            proto = str(route.get("protocol", ""))
            if protocol and proto.lower() != protocol.lower():
                continue
            selected = bool(route.get("selected", False))
            for nh in as_list(route.get("nexthops")):
                if not isinstance(nh, dict):
                    continue
                nh_active = bool(nh.get("active", False))
                out.setdefault(str(prefix), []).append({
                    "protocol": proto,
                    "current_active": selected,
                    "last_active": False,
                    "age": parse_frr_uptime(str(route.get("uptime", ""))),
                    "next_hop": str(nh.get("ip", "")),
                    "outgoing_interface": str(nh.get("interfaceName", "")),
                    "selected_next_hop": selected and nh_active and bool(nh.get("fib", route.get("installed"))),
                    "preference": to_int(route.get("distance")),
                    "inactive_reason": "" if selected else "not selected",
                    "routing_table": str(route.get("vrfName", "default")),
                    "protocol_attributes": {"metric": to_int(route.get("metric"))},
                })
    return out


def count_ecmp_paths(routes: dict[str, list[models.RouteDict]], prefix: str = "") -> int:
    """Number of selected (FIB-installed) next hops of ``prefix`` (or of every prefix if empty)."""
    return sum(
        1 for p, hops in routes.items() if not prefix or p == prefix for h in hops if h["selected_next_hop"]
    )
