"""The facts a source of truth owns and fabricgen reads (`fabricgen sot pull`), and how the plan honours them.

FIELDS is the one table of which field flows which way (docs/sot.md prints it).  `sot pull` writes
the source of truth's facts of a fabric beside its intent, `<intent>.sot.yaml` (inventory/fabric.yaml
-> inventory/fabric.sot.yaml), and every command that loads the intent reads that file back through
`honour()`:

* a reserved address (any address inside one of the fabric's pools that fabricgen does not own,
  whatever its status) counts as used in the pool, and a plan that would give it out is refused
  (exit 2, naming the address, who holds it and the device the plan gives it to): fabricgen's
  addresses are a pure function of each switch's slot, so it never renumbers around a reservation;
* a device's serial, asset tag, rack and position are the source of truth's: pulled into the file,
  never pushed back, never part of the diff.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import yaml

from fabricgen.errors import FabricError, Problem
from fabricgen.plan.model import Plan

# (object, field, direction, where fabricgen keeps it) -- "push": plan -> source of truth (fabricgen owns
# it; a hand edit is drift), "pull": source of truth -> fabricgen (the source of truth owns it).
FIELDS: tuple[tuple[str, str, str, str], ...] = (
    ("manufacturer", "name", "push", "plan: the platform's vendor or the model's first word"),
    ("device type", "model, part number, interface templates", "push", "plan: the role's SKU / model"),
    ("device role, platform, site", "name", "push", "plan"),
    ("device", "name, type, role, platform, site, status, description", "push", "plan"),
    ("device", "ASN (custom field fabricgen_asn)", "push", "plan: the switch's ASN"),
    ("device", "serial, asset tag, rack, position", "pull", "<intent>.sot.yaml `devices:`"),
    ("interface", "name, type, enabled, management only", "push", "plan"),
    ("cable", "label, terminations (both ends), type, length, status, description", "push", "plan / cabling.csv"),
    ("prefix", "prefix, status, description (one per pool)", "push", "plan: addressing"),
    ("IP address", "address, interface, status, role", "push", "plan"),
    ("IP address", "any address in a fabric pool that fabricgen does not own", "pull",
     "<intent>.sot.yaml `reserved:`; the plan refuses to give it out"),
    ("ASN", "number, description", "push", "plan (NetBox: ipam ASNs under RIR fabricgen-private)"),
    ("tag", "fabricgen", "push", "marks what fabricgen owns"),
    ("VRF, route target", "name, RD, targets", "push", "plan, once the intent has tenants (none yet)"),
)
DEVICE_FACTS = ("serial", "asset_tag", "rack", "position")


def facts_path(intent: str | Path) -> Path:
    p = Path(intent)
    return p.with_name(f"{p.stem}.sot.yaml")


def write(path: Path, source: str, fabric: str, facts: dict[str, Any]) -> None:
    reserved = sorted(facts.get("reserved", []), key=lambda r: ipaddress.ip_interface(r["address"]))
    devices = {name: {k: v for k, v in sorted(f.items()) if v not in ("", None)}
               for name, f in sorted(facts.get("devices", {}).items())}
    doc = {"fabric": fabric, "source": source, "reserved": reserved,
           "devices": {k: v for k, v in devices.items() if v}}
    head = (f"# The source of truth's facts of fabric {fabric}, written by `fabricgen sot pull` (docs/sot.md).\n"
            "# Edit them in the source of truth and pull again: the next pull rewrites this file.\n")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=120),
                   encoding="utf-8")
    tmp.replace(path)


def read(path: Path) -> tuple[list[tuple[str, str, str, int | None]], dict[str, dict[str, Any]]]:
    """(address, status, holder, line) of every reservation and the device facts; FabricError if malformed."""
    from fabricgen.intent.reader import load

    data, lines = load(path)
    source = str(path)
    if data is None:
        return [], {}
    if not isinstance(data, dict):
        raise FabricError.single(source, "", "not a mapping", "rerun `fabricgen sot pull`, or delete the file", 1)
    out: list[tuple[str, str, str, int | None]] = []
    items = data.get("reserved") or []
    if not isinstance(items, list):
        raise FabricError.single(source, "reserved", "not a list", "rerun `fabricgen sot pull`",
                                 lines.get(("reserved",)))
    for i, item in enumerate(items):
        line = lines.get(("reserved", i, "address")) or lines.get(("reserved", i))
        address = item.get("address") if isinstance(item, dict) else None
        try:
            ipaddress.ip_interface(str(address))
        except ValueError:
            raise FabricError.single(source, f"reserved.{i}.address", f"{address!r} is not an IP address",
                                     "write it as 198.18.0.7/24, or rerun `fabricgen sot pull`", line) from None
        out.append((str(address), str(item.get("status") or ""), str(item.get("owner") or ""), line))
    devices = data.get("devices") or {}
    if not isinstance(devices, dict):
        raise FabricError.single(source, "devices", "not a mapping of device name -> facts",
                                 "rerun `fabricgen sot pull`", lines.get(("devices",)))
    return out, {str(k): dict(v or {}) for k, v in devices.items()}


def honour(plan: Plan, intent: str | Path) -> None:
    """Refuse a plan that gives out a reserved address; count reservations in their pools' use."""
    path = facts_path(intent)
    if not path.is_file():
        return
    from fabricgen.plan.underlay import planned_addresses

    reserved, _ = read(path)
    if not reserved:
        return
    given = {addr: (device, what) for addr, device, what in planned_addresses(plan)}
    problems = []
    pools = {name: getattr(plan.settings.pools, attr) for name, attr in
             (("loopbacks", "loopbacks"), ("p2p", "p2p"), ("gpu", "gpu"), ("management", "management"))}
    extra = dict.fromkeys(pools, 0)
    for i, (address, status, owner, line) in enumerate(reserved):
        ip = ipaddress.ip_interface(address).ip
        hit = given.get(str(ip))
        if hit is not None:
            held = f"{status or 'held'}" + (f", on {owner}" if owner else "")
            problems.append(Problem(
                f"reserved.{i}.address", f"{ip} is reserved in the source of truth ({held}) but the plan gives it "
                f"to {hit[0]} {hit[1]}", "free it in the source of truth and run `fabricgen sot pull` again, or "
                "give the fabric a pool that does not hold it (addressing)", line))
            continue
        for name, net in pools.items():
            if ip.version == net.version and ip in net:
                extra[name] += 1
    if problems:
        raise FabricError(str(path), problems)
    for name, n in extra.items():
        if n and name in plan.pool_use:
            used, size = plan.pool_use[name]
            plan.pool_use[name] = (used + n, size)
