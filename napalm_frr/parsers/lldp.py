"""get_lldp_neighbors and get_lldp_neighbors_detail: ``lldpcli show neighbors -f json`` (lldpd 1.0.x), whose
JSON collapses one-element arrays and names the chassis by its system name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from napalm.base import models

from napalm_frr.parsers.decode import as_list, natural_key

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
