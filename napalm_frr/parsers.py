"""Pure parsers for the Linux/FRR/lldpd command outputs the FRR and SONiC napalm drivers read.

Every function takes command output text (or already-decoded JSON) and returns the
napalm getter shapes from ``napalm.base.models``.  Nothing here touches the network,
so each parser is unit-tested against outputs recorded from a live FRR 8.4 + lldpd
switch under ``tests/drivers/mocked_data``.

Sources:
- ``ip -j -d -s link show`` / ``ip -j addr show`` (iproute2 JSON)
- ``vtysh -c 'show version'``, ``show interface json``, ``show bgp vrf all summary json``,
  ``show bgp vrf all neighbors json``, ``show ip route <dest> json``, ``show running-config``
- ``lldpcli show neighbors -f json`` (lldpd 1.0.x)
- ``frr-reload.py --test --stdout`` (the "Lines To Delete" / "Lines To Add" listing)
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from napalm.base import models
from napalm.base.helpers import mac as _napalm_mac

# --------------------------------------------------------------------------- helpers


def load_json(text: str, what: str) -> Any:
    """json.loads with an error that says which command produced the bad text."""
    text = text.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: output is not JSON ({exc}): {text[:200]!r}") from exc


def as_list(value: Any) -> list[Any]:
    """lldpd's JSON writer emits a bare object when there is one element and a list otherwise."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


_NUM_RE = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[Any, ...]:
    """Ethernet8 sorts before Ethernet16."""
    return tuple(int(p) if p.isdigit() else p for p in _NUM_RE.split(name))


def format_mac(value: str) -> str:
    if not value:
        return ""
    try:
        return str(_napalm_mac(value))
    except Exception:  # noqa: BLE001 - napalm raises AddrFormatError for odd link types
        return value


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# --------------------------------------------------------------------------- facts


_SHOW_VERSION_RE = re.compile(r"^FRRouting\s+(\S+)\s+\(([^)]*)\)", re.MULTILINE)


def parse_show_version(text: str) -> tuple[str, str]:
    """``vtysh -c 'show version'`` -> (os_version, FRR hostname).

    First line: ``FRRouting 8.4.4 (sw1) on Linux(6.1.0).``
    """
    m = _SHOW_VERSION_RE.search(text)
    if not m:
        return "", ""
    return m.group(1), m.group(2)


def parse_key_values(text: str) -> dict[str, str]:
    """``key=value`` lines (the facts probe prints one per fact); later keys win."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_uptime(text: str) -> float:
    """``/proc/uptime`` first field -> seconds."""
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return -1.0


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


# --------------------------------------------------------------------------- interfaces

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
    speed = _int(value, 0)
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
            "mtu": _int(link.get("mtu"), 0),
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
        rx_mcast = _int(rx.get("multicast"))
        out[name] = {
            "tx_errors": _int(tx.get("errors")),
            "rx_errors": _int(rx.get("errors")),
            "tx_discards": _int(tx.get("dropped")),
            "rx_discards": _int(rx.get("dropped")),
            "tx_octets": _int(tx.get("bytes")),
            "rx_octets": _int(rx.get("bytes")),
            "tx_unicast_packets": _int(tx.get("packets")),
            "rx_unicast_packets": max(0, _int(rx.get("packets")) - rx_mcast),
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
            length: models.InterfacesIPDictEntry = {"prefix_length": _int(addr.get("prefixlen"))}
            if family == "ipv4":
                entry.setdefault("ipv4", {})[str(local)] = length
            else:
                entry.setdefault("ipv6", {})[str(local)] = length
        if entry:
            out[name] = entry
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))


# --------------------------------------------------------------------------- LLDP

_CAPAB_MAP = {
    "other": "other",
    "repeater": "repeater",
    "bridge": "bridge",
    "wlan": "wlan-access-point",
    "router": "router",
    "telephone": "telephone",
    "docsis": "docsis-cable-device",
    "station": "station",
}


def _iter_lldp_interfaces(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (local interface, neighbor object) for every neighbor in lldpcli's JSON.

    lldpd collapses one-element arrays: ``lldp.interface`` is an object keyed by
    interface name when there is a single neighbor and a list of one-key objects when
    there are several (the same interface name repeats if a port sees two neighbors).
    With no neighbors ``lldp`` is ``{}`` (or ``[]`` in some versions).
    """
    lldp = doc.get("lldp", {})
    if not isinstance(lldp, dict):
        return
    for item in as_list(lldp.get("interface")):
        if not isinstance(item, dict):
            continue
        for ifname, nbr in item.items():
            if isinstance(nbr, dict):
                yield str(ifname), nbr


def _lldp_chassis(nbr: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Chassis is ``{sysname: {...}}`` when the neighbor sent a system name, else the bare object."""
    chassis = nbr.get("chassis", {})
    if not isinstance(chassis, dict):
        return "", {}
    if "id" in chassis or not chassis:
        return str(chassis.get("name", "")), chassis
    name, body = next(iter(chassis.items()))
    return str(name), body if isinstance(body, dict) else {}


def _value(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("value", ""))
    return "" if obj is None else str(obj)


def lldp_remote_port(port: dict[str, Any]) -> str:
    """The neighbor's port name.

    lldpd on Linux sends the MAC as port ID (subtype mac) and the interface name as the
    port description unless ``portidsubtype ifname`` is configured; SONiC sends
    subtype local with the port alias.  Use the ID when it names an interface, the
    description when the ID is only a MAC.
    """
    pid = port.get("id", {})
    ptype = str(pid.get("type", "")) if isinstance(pid, dict) else ""
    pval = _value(pid)
    descr = str(port.get("descr", "") or "")
    if ptype in ("mac", "") and descr:
        return descr
    return pval or descr


def parse_lldp(doc: dict[str, Any]) -> list[tuple[str, models.LLDPNeighborDetailDict]]:
    """lldpcli JSON -> [(local interface, napalm detail dict)] in output order."""
    out: list[tuple[str, models.LLDPNeighborDetailDict]] = []
    for ifname, nbr in _iter_lldp_interfaces(doc):
        sysname, chassis = _lldp_chassis(nbr)
        port = nbr.get("port", {}) if isinstance(nbr.get("port"), dict) else {}
        capab: list[str] = []
        enabled: list[str] = []
        for cap in as_list(chassis.get("capability")):
            if not isinstance(cap, dict):
                continue
            kind = _CAPAB_MAP.get(str(cap.get("type", "")).lower(), str(cap.get("type", "")).lower())
            capab.append(kind)
            if cap.get("enabled") in (True, "on", "true"):
                enabled.append(kind)
        out.append((ifname, {
            "parent_interface": "",
            "remote_port": lldp_remote_port(port),
            "remote_port_description": str(port.get("descr", "") or ""),
            "remote_chassis_id": _value(chassis.get("id")),
            "remote_system_name": sysname,
            "remote_system_description": str(chassis.get("descr", "") or ""),
            "remote_system_capab": capab,
            "remote_system_enable_capab": enabled,
        }))
    return out


def parse_lldp_neighbors(doc: dict[str, Any]) -> dict[str, list[models.LLDPNeighborDict]]:
    out: dict[str, list[models.LLDPNeighborDict]] = {}
    for ifname, d in parse_lldp(doc):
        out.setdefault(ifname, []).append({"hostname": d["remote_system_name"], "port": d["remote_port"]})
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))


def parse_lldp_neighbors_detail(doc: dict[str, Any], interface: str = "") -> models.LLDPNeighborsDetailDict:
    out: models.LLDPNeighborsDetailDict = {}
    for ifname, d in parse_lldp(doc):
        if interface and ifname != interface:
            continue
        out.setdefault(ifname, []).append(d)
    return dict(sorted(out.items(), key=lambda kv: natural_key(kv[0])))


# --------------------------------------------------------------------------- BGP

_AFI_NAMES = {
    "ipv4Unicast": "ipv4",
    "ipv6Unicast": "ipv6",
    "ipv4Multicast": "ipv4_multicast",
    "ipv6Multicast": "ipv6_multicast",
    "ipv4LabeledUnicast": "ipv4_labeled_unicast",
    "ipv6LabeledUnicast": "ipv6_labeled_unicast",
    "ipv4Vpn": "ipv4_vpn",
    "ipv6Vpn": "ipv6_vpn",
    "ipv4Flowspec": "ipv4_flowspec",
    "ipv6Flowspec": "ipv6_flowspec",
    "l2VpnEvpn": "l2vpn_evpn",
}


def afi_name(frr_afi: str) -> str:
    if frr_afi in _AFI_NAMES:
        return _AFI_NAMES[frr_afi]
    return re.sub(r"(?<!^)([A-Z])", r"_\1", frr_afi).lower()


def napalm_vrf(vrf: str) -> str:
    """napalm names the default VRF ``global``."""
    return "global" if vrf == "default" else vrf


def _neighbor_entries(vrf_obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Peers in one VRF of ``show bgp vrf all neighbors json`` (mixed with vrfId/vrfName keys)."""
    for key, val in vrf_obj.items():
        if isinstance(val, dict) and ("remoteAs" in val or "bgpState" in val):
            yield key, val


def _peer_disabled(state: str, peer_state: str = "") -> bool:
    return peer_state == "Admin" or "(Admin)" in state


def parse_bgp_neighbors(
    summary: dict[str, Any], neighbors: dict[str, Any] | None = None
) -> dict[str, models.BGPStateNeighborsPerVRFDict]:
    """``show bgp vrf all summary json`` (+ ``show bgp vrf all neighbors json``) -> get_bgp_neighbors().

    Per address family: received_prefixes = pfxRcd, sent_prefixes = pfxSnt (summary);
    accepted_prefixes = acceptedPrefixCounter from the neighbors output (pfxRcd when
    that is missing).  remote_id (the peer's router-id) only exists in the neighbors
    output; without it remote_id is "".
    """
    neighbors = neighbors or {}
    out: dict[str, models.BGPStateNeighborsPerVRFDict] = {}
    for vrf, afis in summary.items():
        if not isinstance(afis, dict):
            continue
        vrf_name = napalm_vrf(vrf)
        detail = dict(_neighbor_entries(neighbors.get(vrf, {}))) if isinstance(neighbors.get(vrf), dict) else {}
        entry = out.setdefault(vrf_name, {"router_id": "", "peers": {}})
        for frr_afi, af in afis.items():
            if not isinstance(af, dict):
                continue
            if not entry["router_id"] and af.get("routerId"):
                entry["router_id"] = str(af["routerId"])
            for peer, p in (af.get("peers") or {}).items():
                d = detail.get(peer, {})
                state = str(p.get("state", ""))
                peer_entry = entry["peers"].get(peer)
                if peer_entry is None:
                    peer_entry = {
                        "local_as": _int(p.get("localAs", af.get("as"))),
                        "remote_as": _int(p.get("remoteAs")),
                        "remote_id": str(d.get("remoteRouterId", "")),
                        "is_up": state == "Established",
                        "is_enabled": not _peer_disabled(state, str(p.get("peerState", ""))),
                        "description": str(p.get("desc", d.get("nbrDesc", "")) or ""),
                        "uptime": _int(p.get("peerUptimeMsec")) // 1000,
                        "address_family": {},
                    }
                    entry["peers"][peer] = peer_entry
                afi_detail = (d.get("addressFamilyInfo") or {}).get(frr_afi, {})
                received = _int(p.get("pfxRcd"))
                peer_entry["address_family"][afi_name(frr_afi)] = {
                    "received_prefixes": received,
                    "accepted_prefixes": _int(afi_detail.get("acceptedPrefixCounter", received)),
                    "sent_prefixes": _int(p.get("pfxSnt", afi_detail.get("sentPrefixCounter"))),
                }
    return out


def parse_bgp_neighbors_detail(neighbors: dict[str, Any], neighbor_address: str = "") -> dict[str, Any]:
    """``show bgp vrf all neighbors json`` -> get_bgp_neighbors_detail(): {vrf: {remote_as: [PeerDetailsDict]}}."""
    out: dict[str, dict[int, list[models.PeerDetailsDict]]] = {}
    for vrf, vrf_obj in neighbors.items():
        if not isinstance(vrf_obj, dict):
            continue
        for peer, d in _neighbor_entries(vrf_obj):
            if neighbor_address and peer != neighbor_address:
                continue
            afis = d.get("addressFamilyInfo") or {}
            accepted = sum(_int(a.get("acceptedPrefixCounter")) for a in afis.values() if isinstance(a, dict))
            sent = sum(_int(a.get("sentPrefixCounter")) for a in afis.values() if isinstance(a, dict))
            msgs = d.get("messageStats") or {}
            import_pol = ",".join(
                str(a.get("routeMapForIncomingAdvertisements", "")) for a in afis.values()
                if isinstance(a, dict) and a.get("routeMapForIncomingAdvertisements"))
            export_pol = ",".join(
                str(a.get("routeMapForOutgoingAdvertisements", "")) for a in afis.values()
                if isinstance(a, dict) and a.get("routeMapForOutgoingAdvertisements"))
            state = str(d.get("bgpState", ""))
            remote_as = _int(d.get("remoteAs"))
            record: models.PeerDetailsDict = {
                "up": state == "Established",
                "local_as": _int(d.get("localAs")),
                "remote_as": remote_as,
                "router_id": str(d.get("localRouterId", "")),
                "local_address": str(d.get("hostLocal", "")),
                "routing_table": str(vrf_obj.get("vrfName", vrf)),
                "local_address_configured": bool(d.get("updateSource")),
                "local_port": _int(d.get("portLocal")),
                "remote_address": str(d.get("hostForeign", peer)),
                "remote_port": _int(d.get("portForeign")),
                "multihop": _int(d.get("externalBgpNbrMaxHopsAway"), 1) > 1,
                "multipath": False,
                "remove_private_as": any(
                    isinstance(a, dict) and any(k.startswith("privateAsNumsRemoved") for k in a)
                    for a in afis.values()),
                "import_policy": import_pol,
                "export_policy": export_pol,
                "input_messages": _int(msgs.get("totalRecv")),
                "output_messages": _int(msgs.get("totalSent")),
                "input_updates": _int(msgs.get("updatesRecv")),
                "output_updates": _int(msgs.get("updatesSent")),
                "messages_queued_out": _int(msgs.get("depthOutq")),
                "connection_state": state,
                "previous_connection_state": "",
                "last_event": str(d.get("lastResetDueTo", "")),
                "suppress_4byte_as": (d.get("neighborCapabilities") or {}).get("4byteAs") is None,
                "local_as_prepend": False,
                "holdtime": _int(d.get("bgpTimerHoldTimeMsecs")) // 1000,
                "configured_holdtime": _int(d.get("bgpTimerConfiguredHoldTimeMsecs")) // 1000,
                "keepalive": _int(d.get("bgpTimerKeepAliveIntervalMsecs")) // 1000,
                "configured_keepalive": _int(d.get("bgpTimerConfiguredKeepAliveIntervalMsecs")) // 1000,
                "active_prefix_count": accepted,
                "received_prefix_count": accepted,
                "accepted_prefix_count": accepted,
                "suppressed_prefix_count": 0,
                "advertised_prefix_count": sent,
                "flap_count": _int(d.get("connectionsDropped")),
            }
            out.setdefault(napalm_vrf(vrf), {}).setdefault(remote_as, []).append(record)
    return out


# --------------------------------------------------------------------------- routes


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
                    "preference": _int(route.get("distance")),
                    "inactive_reason": "" if selected else "not selected",
                    "routing_table": str(route.get("vrfName", "default")),
                    "protocol_attributes": {"metric": _int(route.get("metric"))},
                })
    return out


def count_ecmp_paths(routes: dict[str, list[models.RouteDict]], prefix: str = "") -> int:
    """Number of selected (FIB-installed) next hops of ``prefix`` (or of every prefix if empty)."""
    return sum(
        1 for p, hops in routes.items() if not prefix or p == prefix for h in hops if h["selected_next_hop"]
    )


# --------------------------------------------------------------------------- config text

# Lines that carry no configuration: show running-config's banner, "!" separators and
# comments, the "end" trailer, the "frr version" stamp (frr-reload never removes it) and
# the bare "exit" FRR 8.x prints after every top-level block (indentation carries the nesting).
_NOISE_RE = re.compile(r"^(Building configuration\.\.\.|Current configuration:|end|exit|exit-vrf|frr version .*)$")


def normalise_frr_config(text: str) -> list[str]:
    """FRR config text -> the lines that matter for a diff (right-stripped, no separators)."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or stripped.startswith("#"):
            continue
        if _NOISE_RE.match(line):
            continue
        lines.append(line)
    return lines


def unified_diff(old: Iterable[str], new: Iterable[str], fromfile: str, tofile: str) -> str:
    """Unified diff text ("" when equal), each line newline-terminated."""
    return "".join(
        line if line.endswith("\n") else line + "\n"
        for line in difflib.unified_diff(list(old), list(new), fromfile=fromfile, tofile=tofile, lineterm="")
    )


def parse_frr_reload_test(text: str) -> tuple[list[str], list[str]]:
    """``frr-reload.py --test --stdout`` stdout -> (lines to delete, lines to add).

    The listing is ``Lines To Delete`` / ``===`` / commands, then ``Lines To Add`` / ``===`` /
    commands; context lines (``router bgp 65001``) repeat before every sub-command, and
    deletions are printed as the ``no ...`` commands frr-reload would run.
    """
    to_delete: list[str] = []
    to_add: list[str] = []
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line == "Lines To Delete":
            current = to_delete
            continue
        if line == "Lines To Add":
            current = to_add
            continue
        if not line.strip() or set(line.strip()) == {"="}:
            continue
        if current is not None:
            current.append(line)
    return to_delete, to_add


def frr_reload_errors(stderr: str) -> str:
    """The ERROR/WARNING records (and vtysh ``% ...`` / ``line N:`` complaints) of frr-reload's log."""
    keep: list[str] = []
    for raw in stderr.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", raw).rstrip()
        if not line.strip():
            continue
        if re.search(r"\b(ERROR|WARNING|CRITICAL)\b", line) or line.lstrip().startswith(("%", "line ", "b'line")):
            keep.append(line.strip())
    return "\n".join(keep)


_SECRET_RE = re.compile(
    r"^(\s*(?:neighbor\s+\S+\s+password|.*authentication-key|.*message-digest-key\s+\d+\s+md5|"
    r"password|enable password|.*\bkey-string)\s+)(\S.*)$",
    re.MULTILINE,
)


def sanitize_frr_config(text: str) -> str:
    """Replace secrets (BGP/OSPF/ISIS passwords, key strings) with ``<removed>``."""
    return _SECRET_RE.sub(lambda m: m.group(1) + "<removed>", text)


def parse_frr_defaults(text: str) -> dict[str, str]:
    """``<daemon> [<profile>]`` lines (napalm_frr's frr_defaults probe) -> {daemon: profile or ""}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        if words:
            out[words[0]] = words[1] if len(words) > 1 else ""
    return out


def netns_lines(config: str) -> dict[str, str]:
    """Each VRF an frr.conf binds to a network namespace and its ``netns <path>`` line (stripped)."""
    out: dict[str, str] = {}
    vrf = ""
    for line in config.splitlines():
        if line.startswith("vrf ") and len(line.split()) == 2:
            vrf = line.split()[1]
        elif not line.startswith(" "):
            vrf = ""
        elif vrf and line.split()[:1] == ["netns"]:
            out[vrf] = line.strip()
    return out


def netns_vrfs(config: str) -> set[str]:
    """The VRFs an frr.conf binds to a network namespace (``vrf X`` with a ``netns <path>`` line)."""
    return set(netns_lines(config))


def netns_l3vnis(config: str) -> dict[str, int]:
    """The L3VNI of each VRF an frr.conf binds to a network namespace (``vrf X`` with ``vni N`` and ``netns``)."""
    vnis: dict[str, int] = {}
    vrf = ""
    for line in config.splitlines():
        words = line.split()
        if line.startswith("vrf ") and len(words) == 2:
            vrf = words[1]
        elif not line.startswith(" "):
            vrf = ""
        elif vrf and len(words) == 2 and words[0] == "vni" and words[1].isdigit():
            vnis[vrf] = int(words[1])
    bound = netns_vrfs(config)
    return {vrf: vni for vrf, vni in sorted(vnis.items()) if vrf in bound}


def vrf_bgp_stanzas(config: str, leave_out: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Per VRF, its ``router bgp <asn> vrf <vrf>`` stanza of an frr.conf as vtysh takes it line by line
    (indent and ``!`` stripped, its ``exit``), without the lines that start with one of ``leave_out``."""
    out: dict[str, list[str]] = {}
    vrf = ""
    for line in config.splitlines():
        words = line.split()
        if line.startswith("router bgp ") and len(words) == 5 and words[3] == "vrf":
            vrf = words[4]
            out[vrf] = [line]
        elif vrf and line == "exit":
            out[vrf].append(line)
            vrf = ""
        elif not line.startswith(" "):
            vrf = ""
        elif vrf and line.strip() != "!" and not line.strip().startswith(leave_out):
            out[vrf].append(line.strip())
    return out


def vrf_interface_stanzas(config: str) -> dict[str, list[list[str]]]:
    """Per VRF, the ``interface <port> vrf <vrf>`` stanzas of an frr.conf, each as its lines (indent stripped,
    without ``exit``/``!``)."""
    out: dict[str, list[list[str]]] = {}
    stanza: list[str] | None = None
    for line in config.splitlines():
        words = line.split()
        if line.startswith("interface ") and len(words) == 4 and words[2] == "vrf":
            stanza = [line]
            out.setdefault(words[3], []).append(stanza)
        elif not line.startswith(" "):
            stanza = None
        elif stanza is not None and line.strip() not in ("!", "exit"):
            stanza.append(line.strip())
    return out


def l3vni_up(show_evpn_vni_json: str, vrf: str) -> bool:
    """zebra's ``show evpn vni <vni> json``: the VNI is an L3VNI of ``vrf`` whose VXLAN device and SVI zebra
    has mapped and sees up (``"state": "Up"``, zebra_vxlan.c ``zl3vni_print``); "" or an L2VNI: False."""
    try:
        doc = json.loads(show_evpn_vni_json or "{}")
    except ValueError:
        return False
    return (isinstance(doc, dict) and doc.get("type") == "L3" and doc.get("state") == "Up"
            and vrf in (doc.get("tenantVrf"), doc.get("vrf")))


def bound_vrfs(show_vrf: str) -> set[str]:
    """zebra's ``show vrf``: the active VRFs (``vrf X id N netns <path>`` / ``... table T``; not ``inactive``)."""
    return {words[1] for words in (line.split() for line in show_vrf.splitlines())
            if len(words) >= 4 and words[0] == "vrf" and words[2] == "id"}


FAILED_REMOVE = "we failed to remove this command"  # frr-reload.py's words for a line it could not delete
_FAILED_REMOVE_RE = re.compile(r'"interface (\S+) -- [^"]*" ' + FAILED_REMOVE)


def moved_port_failures(output: str, candidate: str) -> list[str]:
    """The ports whose old default-VRF ``interface`` stanza frr-reload could not delete because the port
    now lives in a tenant VRF's namespace (the candidate has ``interface <port> vrf <v>``): vtysh cannot enter
    ``interface <port>`` in the default VRF once zebra moved the port, yet adding the VRF stanza moves its
    config with it.  [] when frr-reload's output holds anything else, or no such line: a real failure."""
    in_vrf = set(re.findall(r"^interface (\S+) vrf \S+$", candidate, re.MULTILINE))
    ports: list[str] = []
    for line in (ln.strip() for ln in output.splitlines()):
        if not line:
            continue
        m = _FAILED_REMOVE_RE.search(line)
        if m is None or m.group(1) not in in_vrf:
            return []
        ports.append(m.group(1))
    return ports
