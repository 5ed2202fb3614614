"""Which parts of a SONiC ConfigDB fabricgen owns, and how its part goes into a device's.

A switch's ConfigDB is two things at once.  The **device** owns what its hardware SKU and
image give it: the ports' SerDes lanes, aliases and front-panel indexes, the SKU's buffer
pools and profiles, the identity (mac, platform, hwsku), management, AAA, NTP, features...
fabricgen owns the **fabric**: port admin state, description, speed, FEC and MTU; addresses;
QoS maps, schedulers and ECN; the per-port buffer and queue assignments; cable lengths; the
PFC watchdog; the routing mode.  `render` writes only fabricgen's part (config_db.json is a
partial ConfigDB), and the SONiC driver, `check` and the tests put it into the device's with
`merge_owned`, one rule per table (`OWNERSHIP`):

* ``fields``: each entry's fields are fabricgen's over the device's (PORT, DEVICE_METADATA,
  CABLE_LENGTH, SWITCH_HASH, FLEX_COUNTER_TABLE); a PORT must already exist on the device
  and only `OWNED_PORT_FIELDS` may be given;
* ``ports``: fabricgen owns every entry of a port it configures (keys ``<port>`` and
  ``<port>|...``: INTERFACE, QUEUE, BUFFER_PG, ...): the device's entries of that port go,
  fabricgen's come; other ports keep theirs ("global" / "GLOBAL" count as a port).  A front-panel
  port the plan leaves free is fabricgen's too: its PORT entry is shut and described
  `UNUSED_DESCRIPTION`, and it keeps no INTERFACE entry (the factory config's
  ``EthernetN|10.0.x.y/31`` addresses, sonic-config-engine ``config_samples.py``, go);
* ``entries``: named objects (QoS maps, schedulers, WRED and buffer profiles) are added or
  replaced by name; the device's other objects stay, since its other ports use them.

Tables fabricgen does not render are never touched, so nothing it did not create is
removed.  After a merge every reference (buffer profile -> pool, PG/queue -> profile, queue
-> scheduler / WRED profile, port -> QoS map, per-port entry -> PORT) must resolve:
`dangling_references` lists those that do not, and `merge_owned` refuses such a result, as
GCU would refuse to apply it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

Scope = Literal["fields", "ports", "entries"]

OWNERSHIP: Mapping[str, Scope] = {
    "DEVICE_METADATA": "fields",
    "PORT": "fields",
    "CABLE_LENGTH": "fields",
    "SWITCH_HASH": "fields",
    "FLEX_COUNTER_TABLE": "fields",
    "INTERFACE": "ports",
    "LOOPBACK_INTERFACE": "ports",
    "DEVICE_NEIGHBOR": "ports",
    "PORT_QOS_MAP": "ports",
    "QUEUE": "ports",
    "BUFFER_PG": "ports",
    "BUFFER_QUEUE": "ports",
    "PFC_WD": "ports",
    "DSCP_TO_TC_MAP": "entries",
    "TC_TO_QUEUE_MAP": "entries",
    "TC_TO_PRIORITY_GROUP_MAP": "entries",
    "MAP_PFC_PRIORITY_TO_QUEUE": "entries",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": "entries",
    "SCHEDULER": "entries",
    "WRED_PROFILE": "entries",
    "BUFFER_PROFILE": "entries",
    # tenants (issue 25): named objects of fabricgen's tenants, added or replaced by name
    "VRF": "entries",
    "VLAN": "entries",
    "VLAN_INTERFACE": "entries",
    "VXLAN_TUNNEL": "entries",
    "VXLAN_EVPN_NVO": "entries",
    "VXLAN_TUNNEL_MAP": "entries",
}
# The PORT fields fabricgen sets; lanes, alias, index, subport, autoneg, ... are the device's (its SKU's).
OWNED_PORT_FIELDS = frozenset({"admin_status", "description", "fec", "mtu", "speed"})
# The description of a front-panel port the plan leaves free (shut, no address), as on NX-OS and EOS.
UNUSED_DESCRIPTION = "unused: not in the fabric plan"
FREE_PORT_TABLES = frozenset({"INTERFACE"})  # a free port keeps no entry of these (no address)


def free_ports(candidate: Mapping[str, Any]) -> set[str]:
    """The ports the candidate shuts as free (admin down, described `UNUSED_DESCRIPTION`)."""
    return {name for name, entry in candidate.get("PORT", {}).items()
            if isinstance(entry, dict) and entry.get("description") == UNUSED_DESCRIPTION
            and entry.get("admin_status") == "down"}

# field -> table it names, per referencing table (SONiC YANG leafrefs, sonic-buildimage 086b03bd70)
_QOS_MAP_FIELDS = {
    "dscp_to_tc_map": "DSCP_TO_TC_MAP",
    "tc_to_queue_map": "TC_TO_QUEUE_MAP",
    "tc_to_pg_map": "TC_TO_PRIORITY_GROUP_MAP",
    "pfc_to_queue_map": "MAP_PFC_PRIORITY_TO_QUEUE",
    "pfc_to_pg_map": "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP",
    "dot1p_to_tc_map": "DOT1P_TO_TC_MAP",
    "tc_to_dscp_map": "TC_TO_DSCP_MAP",
    "tc_to_dot1p_map": "TC_TO_DOT1P_MAP",
}
REFERENCES: Mapping[str, Mapping[str, str]] = {
    "BUFFER_PROFILE": {"pool": "BUFFER_POOL"},
    "BUFFER_PG": {"profile": "BUFFER_PROFILE"},
    "BUFFER_QUEUE": {"profile": "BUFFER_PROFILE"},
    "BUFFER_PORT_INGRESS_PROFILE_LIST": {"profile_list": "BUFFER_PROFILE"},
    "BUFFER_PORT_EGRESS_PROFILE_LIST": {"profile_list": "BUFFER_PROFILE"},
    "QUEUE": {"scheduler": "SCHEDULER", "wred_profile": "WRED_PROFILE"},
    "PORT_QOS_MAP": _QOS_MAP_FIELDS,
}
# Tables keyed by a port name (first key part) that must exist in PORT.
PORT_KEYED = ("INTERFACE", "PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
              "BUFFER_PORT_EGRESS_PROFILE_LIST", "PFC_WD", "DEVICE_NEIGHBOR")
NOT_A_PORT = frozenset({"global", "GLOBAL"})


class OwnershipError(ValueError):
    """A candidate that would change what the device owns, or leave a reference dangling."""


def port_of(key: str) -> str:
    """The port (first key part) of a per-port key: "Ethernet0|3" -> "Ethernet0"."""
    return key.split("|", 1)[0]


def ref_name(value: str) -> str:
    """A reference as SONiC stores it: "name", or the legacy "[TABLE|name]" (db_migrator strips the brackets)."""
    if value.startswith("[") and value.endswith("]") and "|" in value:
        return value[1:-1].split("|", 1)[1]
    return value


def _check_candidate(device: Mapping[str, Any], candidate: Mapping[str, Any]) -> None:
    unknown = sorted(t for t in candidate if t not in OWNERSHIP)
    if unknown:
        raise OwnershipError(f"the candidate has tables fabricgen does not own: {', '.join(unknown)}")
    ports = device.get("PORT", {})
    missing = sorted(p for p in candidate.get("PORT", {}) if p not in ports)
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise OwnershipError(f"the device has no port {shown}: the candidate was rendered for another hardware SKU "
                             "or breakout (set switch_models.<role>.sku to the device's HwSKU)")
    for name, entry in candidate.get("PORT", {}).items():
        owned = set(entry) - OWNED_PORT_FIELDS
        if owned:
            raise OwnershipError(f"PORT {name}: {', '.join(sorted(owned))} belong to the device (its SKU), "
                                 "not to fabricgen")


def merge_owned(device: Mapping[str, Any], candidate: Mapping[str, Any], *, check_references: bool = True
                ) -> dict[str, Any]:
    """The device's ConfigDB with fabricgen's candidate put in, table by table (see the module doc).

    Raises OwnershipError when the candidate reaches into what the device owns, or (with
    `check_references`) when the result has a dangling reference.
    """
    _check_candidate(device, candidate)
    merged: dict[str, Any] = dict(device)
    free = free_ports(candidate)
    for table, rows in candidate.items():
        old = device.get(table)
        old = old if isinstance(old, dict) else {}
        scope = OWNERSHIP[table]
        if scope == "fields":
            out = dict(old)
            for key, entry in rows.items():
                base = old.get(key)
                out[key] = {**base, **entry} if isinstance(base, dict) else dict(entry)
        elif scope == "ports":
            ours = {port_of(k) for k in rows} | (free if table in FREE_PORT_TABLES else set())
            out = {k: v for k, v in old.items() if port_of(k) not in ours}
            out.update(rows)
        else:
            out = {**old, **rows}
        merged[table] = out
    if check_references:
        dangling = dangling_references(merged)
        if dangling:
            shown = "; ".join(dangling[:5]) + (f" and {len(dangling) - 5} more" if len(dangling) > 5 else "")
            raise OwnershipError(f"the merged ConfigDB has dangling references: {shown}")
    return merged


def _references(db: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(where, target table, target name) of every reference `dangling_references` checks."""
    for table, fields in REFERENCES.items():
        rows = db.get(table)
        if not isinstance(rows, dict):
            continue
        for key, entry in rows.items():
            if not isinstance(entry, dict):
                continue
            for fld, target in fields.items():
                value = entry.get(fld)
                if not isinstance(value, str) or not value:
                    continue
                for name in value.split(","):
                    name = ref_name(name.strip())
                    if name and name != "NULL":
                        yield f"{table}|{key}.{fld}", target, name
    for table in PORT_KEYED:
        rows = db.get(table)
        if isinstance(rows, dict):
            for key in rows:
                port = port_of(key)
                if port not in NOT_A_PORT and port.startswith("Ethernet"):
                    yield f"{table}|{key}", "PORT", port
    cable = db.get("CABLE_LENGTH")
    if isinstance(cable, dict):
        for name, ports in cable.items():
            for port in ports if isinstance(ports, dict) else ():
                yield f"CABLE_LENGTH|{name}.{port}", "PORT", port


def dangling_references(db: Mapping[str, Any]) -> list[str]:
    """Every reference in `db` whose target does not exist, as "<where> -> <TABLE>|<name>", sorted."""
    out = set()
    for where, target, name in _references(db):
        rows = db.get(target)
        if not isinstance(rows, dict) or name not in rows:
            out.add(f"{where} -> {target}|{name}")
    return sorted(out)
