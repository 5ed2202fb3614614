"""get_interfaces, get_interfaces_counters, get_interfaces_ip: iproute2's JSON (``ip -j -d -s link show``,
``ip -j addr show``), with zebra's ``show interface json`` for speed, description and the last link flap."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from napalm.base import models

from napalm_frr.parsers.decode import format_mac, natural_key, to_int

_FRR_TS_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S")


def _parse_frr_timestamp(value: str) -> datetime | None:
    for fmt in _FRR_TS_FORMATS:
        try:
            return datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
    return None


def _last_flapped(frr_intf: dict[str, Any], device_now: datetime | None) -> float:
    """Seconds since the last link up/down zebra saw, -1.0 if none (or no device clock)."""
    if device_now is None:
        return -1.0
    stamps = [
        ts for key in ("lastLinkUp", "lastLinkDown")
        if isinstance(frr_intf.get(key), str) and (ts := _parse_frr_timestamp(frr_intf[key])) is not None
    ]
    if not stamps:
        return -1.0
    return max(0.0, (device_now - max(stamps)).total_seconds())


def _speed_mbps(value: Any) -> float:
    speed = to_int(value, 0)
    # zebra reports 0 (or UINT32_MAX from ethtool's SPEED_UNKNOWN) when the speed is not known.
    if speed <= 0 or speed >= 0xFFFFFFFF:
        return 0.0
    return float(speed)


def parse_interfaces(
    ip_link: list[dict[str, Any]],
    frr_interfaces: dict[str, Any] | None = None,
    device_now: str = "",
) -> dict[str, models.InterfaceDict]:
    """``ip -j -d -s link show`` (+ zebra's ``show interface json``) -> get_interfaces().

    is_enabled: admin UP flag; is_up: UP and LOWER_UP (carrier) - works for loopback
    and dummy devices whose operstate is UNKNOWN.  speed (Mbit/s) and description come
    from zebra (it reads ethtool and holds the configured description); the kernel
    alias is the fallback description.  last_flapped is seconds since zebra's
    lastLinkUp/lastLinkDown, measured on the device clock (``device_now``,
    ``%Y/%m/%d %H:%M:%S``), or -1.0.
    """
    frr_interfaces = frr_interfaces or {}
    now = _parse_frr_timestamp(device_now) if device_now else None
    out: dict[str, models.InterfaceDict] = {}
    for link in ip_link:
        name = str(link.get("ifname", ""))
        if not name:
            continue
        flags = set(link.get("flags", []))
        frr = frr_interfaces.get(name, {}) if isinstance(frr_interfaces.get(name), dict) else {}
        description = str(frr.get("description") or link.get("ifalias") or "")
        out[name] = {
            "is_up": "UP" in flags and "LOWER_UP" in flags,
            "is_enabled": "UP" in flags,
            "description": description,
            "last_flapped": _last_flapped(frr, now),
            "mtu": to_int(link.get("mtu"), 0),
            "speed": _speed_mbps(frr.get("speed")),
            "mac_address": format_mac(str(link.get("address", ""))) if link.get("link_type") == "ether"
            else str(link.get("address", "")),
        }
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))


def parse_interfaces_counters(ip_link: list[dict[str, Any]]) -> dict[str, models.InterfaceCounterDict]:
    """``ip -j -s link show`` stats64 -> get_interfaces_counters().

    The kernel counts multicast only on receive; tx multicast/broadcast and rx
    broadcast are not exposed by rtnetlink and are reported as 0, so unicast
    counters are packets minus multicast on rx and all packets on tx.
    """
    out: dict[str, models.InterfaceCounterDict] = {}
    for link in ip_link:
        name = str(link.get("ifname", ""))
        stats = link.get("stats64") or link.get("stats") or {}
        rx = stats.get("rx", {})
        tx = stats.get("tx", {})
        rx_mcast = to_int(rx.get("multicast"))
        out[name] = {
            "tx_errors": to_int(tx.get("errors")),
            "rx_errors": to_int(rx.get("errors")),
            "tx_discards": to_int(tx.get("dropped")),
            "rx_discards": to_int(rx.get("dropped")),
            "tx_octets": to_int(tx.get("bytes")),
            "rx_octets": to_int(rx.get("bytes")),
            "tx_unicast_packets": to_int(tx.get("packets")),
            "rx_unicast_packets": max(0, to_int(rx.get("packets")) - rx_mcast),
            "tx_multicast_packets": 0,
            "rx_multicast_packets": rx_mcast,
            "tx_broadcast_packets": 0,
            "rx_broadcast_packets": 0,
        }
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))


def parse_interfaces_ip(ip_addr: list[dict[str, Any]]) -> dict[str, models.InterfacesIPDict]:
    """``ip -j addr show`` -> get_interfaces_ip(); interfaces without addresses are left out."""
    out: dict[str, models.InterfacesIPDict] = {}
    for link in ip_addr:
        name = str(link.get("ifname", ""))
        entry: models.InterfacesIPDict = {}
        for addr in link.get("addr_info", []):
            family = {"inet": "ipv4", "inet6": "ipv6"}.get(str(addr.get("family")))
            local = addr.get("local")
            if family is None or not local:
                continue
            length: models.InterfacesIPDictEntry = {"prefix_length": to_int(addr.get("prefixlen"))}
            if family == "ipv4":
                entry.setdefault("ipv4", {})[str(local)] = length
            else:
                entry.setdefault("ipv6", {})[str(local)] = length
        if entry:
            out[name] = entry
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))
