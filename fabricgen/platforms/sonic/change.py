"""What a change does on SONiC (ConfigDB as GCU validates it, and frr.conf), and how to drain first.

A ConfigDB diff is labelled by the patch operations of the two documents (table, entry or field
added, removed or replaced, as GCU validates them), each placed in the hunk that shows its line:
how difflib happens to align JSON lines never turns an added buffer profile into edited fields of
its neighbour.  GCU's field rules ship with fabricgen (catalog/sonic_facts/gcu_rules.json).  The
drain is FRR's, on the frr.conf of the candidate bundle.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fabricgen.platforms.change import Change, Context, Hunk, Impact, Label, ancestors, json_key
from fabricgen.platforms.frr import change as frr

CONFIG_DB = "config_db.json"

# GCU's field rules as fabricgen ships them (tools/sonic_facts.py makes them from sonic-utilities'
# gcu_field_operation_validators.conf.json; tests/deploy/test_deploy_impact.py checks them against it)
GCU_RULES = Path(__file__).resolve().parents[2] / "catalog" / "sonic_facts" / "gcu_rules.json"


@cache
def gcu_conf() -> dict[str, Any]:
    """GCU's field rules (which table fields `config apply-patch`/`replace` may change live, per ASIC family)."""
    data: dict[str, Any] = json.loads(GCU_RULES.read_text(encoding="utf-8"))
    return data


def gcu_asic(hwsku: str, conf: dict[str, Any]) -> str:
    """The ASIC family GCU files an HWSKU under ("spc4", "th5", ...; "unknown" as GCU says): an exact
    (case-blind) name for NVIDIA's families, a name part for Broadcom's, as GCU matches them."""
    sku = hwsku.lower()
    for family in conf.get("asic_families", []):
        names = [s.lower() for s in family["hwskus"]]
        if sku in names if family["match"] == "exact" else any(s in sku for s in names):
            return str(family["family"])
    return "unknown"


@dataclass(frozen=True)
class GcuOp:
    """One JSON-patch operation as GCU validates it: table, the path below it, op."""

    table: str
    parts: tuple[str, ...]
    op: str  # add | remove | replace


def gcu_allows(op: GcuOp, hwsku: str, branch: str | None = None,
               conf: dict[str, Any] | None = None) -> tuple[bool, str]:
    """Whether GCU's field validators let ``op`` through on this HWSKU (and SONiC branch, when known,
    e.g. "20230531"), with the reason.  Tables GCU does not validate pass."""
    conf = conf if conf is not None else gcu_conf()
    table = conf.get("tables", {}).get(op.table)
    if table is None:
        return True, "GCU has no field rule for this table"
    validators = table.get("validators", [])
    if "port_config_update_validator" in validators:
        return True, "GCU checks PORT speed/fec against the switch's supported values (STATE_DB) at commit"
    if "buffer_profile_config_update_validator" in validators and len(op.parts) == 1:
        return True, "GCU lets a whole buffer profile be added, replaced or removed"
    if "rdma_config_update_validator" not in validators and "buffer_profile_config_update_validator" \
            not in validators:
        return True, "GCU has no field rule for this table"
    exact = "rdma_config_update_validator" in validators
    parts = [p for p in op.parts if not any(ch.isdigit() for ch in p)] if exact else list(op.parts)
    cleaned = "/".join(parts).lower()
    asic = gcu_asic(hwsku, conf) if hwsku else "unknown"
    for rule in table.get("rules", []):
        name, fields = rule["name"], rule["fields"]
        hit = cleaned in fields if exact else cleaned.split("/")[-1] in fields
        if not hit:
            continue
        since = rule["since"].get(asic)
        if asic == "unknown" or not since:
            return False, f"GCU refuses {name!r} on ASIC {asic} (HWSKU {hwsku or '?'})"
        if op.op not in rule["operations"]:
            return False, f"GCU allows {name!r} only as {'/'.join(rule['operations'])}, not {op.op}"
        if branch is not None and branch < str(since):
            return False, f"GCU allows {name!r} on {asic} from SONiC {since} on, the switch runs {branch}"
        return True, f"GCU allows {name!r} on {asic} (SONiC {since} or later)"
    what = "/".join(op.parts) or "the table"
    return False, f"GCU refuses live changes to {op.table} {what} (no field rule allows it)"


_DEVICE_METADATA: dict[str, Impact] = {
    "hostname": Impact(Label.HITLESS, "hostname only"),
    "bgp_router_id": Impact(Label.BGP_RESET, "a new router-id resets every session"),
    "bgp_asn": Impact(Label.DAEMON_RESTART, "bgpcfgd reads DEVICE_METADATA bgp_asn when the bgp container starts"),
    "docker_routing_config_mode": Impact(Label.DAEMON_RESTART, "the bgp container reads it when it starts "
                                                         "(docker_init.sh): deploy restarts the container"),
    "frr_mgmt_framework_config": Impact(Label.DAEMON_RESTART, "the bgp container starts bfdd by it (supervisord "
                                                        "template): deploy restarts the container"),
    "type": Impact(Label.DAEMON_RESTART, "bgpcfgd picks its templates by device type when the bgp container starts"),
    "buffer_model": Impact(Label.RELOAD_REQUIRED, "switching traditional/dynamic buffer model takes `config reload`"),
    "default_pfcwd_status": Impact(Label.RELOAD_REQUIRED, "read when the config is loaded (boot or `config reload`)"),
    "hwsku": Impact(Label.RELOAD_REQUIRED, "a new HWSKU takes effect only after a reload"),
    "platform": Impact(Label.RELOAD_REQUIRED, "a new platform takes effect only after a reload"),
}
_PORT_FLAP_FIELDS = ("mtu", "speed", "fec", "lanes", "autoneg", "adv_speeds", "adv_interface_types",
                     "interface_type", "link_training", "admin_status", "tpid")
_QUEUE_MAP_TABLES = ("DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
                     "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "DOT1P_TO_TC_MAP")
_BUFFER_TABLES = ("BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST",
                  "CABLE_LENGTH")
_HITLESS_TABLES = {"DEVICE_NEIGHBOR": "LLDP/metadata only", "WRED_PROFILE": "ECN thresholds apply at once, no pause",
                   "SCHEDULER": "scheduling weights apply at once", "QUEUE": "scheduler/ECN binding of a queue",
                   "FLEX_COUNTER_TABLE": "counter polling only",
                   "SWITCH_HASH": "ECMP rehash: flows may move to other paths (brief reordering)"}


@dataclass(frozen=True)
class DbChange:
    """A ConfigDB change: table, key path below it (entry key, field, ...) and the JSON-patch op."""

    table: str
    parts: tuple[str, ...]
    op: str


def config_db_changes(changes: Sequence[Change]) -> list[tuple[DbChange, list[Change]]]:
    """Pair the +/- lines of a ConfigDB JSON diff into patch operations (a field on both sides is a
    replace; a line that only moved a trailing comma is no change)."""
    by_path: dict[tuple[str, ...], dict[str, list[Change]]] = {}
    order: list[tuple[str, ...]] = []
    for c in changes:
        keys = tuple(k for k in (json_key(p) for p in c.path) if k is not None)
        own = json_key(c.text)
        path = keys + ((own,) if own is not None else ())
        if not path or c.text in ("{", "}", "},", "]", "],"):
            continue
        if c.whole:  # inside an object added/removed as a whole: the object's own line stands for it
            continue
        if path not in by_path:
            by_path[path] = {"+": [], "-": []}
            order.append(path)
        by_path[path][c.sign].append(c)
    out = []
    for path in order:
        sides = by_path[path]
        plus, minus = sides["+"], sides["-"]
        if plus and minus:
            if [c.text.rstrip(",") for c in plus] == [c.text.rstrip(",") for c in minus]:
                continue
            op = "replace"
        else:
            op = "add" if plus else "remove"
        out.append((DbChange(path[0], path[1:], op), plus + minus))
    return out


def config_db_ops(old: dict[str, Any], new: dict[str, Any]) -> list[DbChange]:
    """The ConfigDB change as GCU's patch would carry it: a table, an entry or a field added, removed
    or replaced (from the two documents, not from how their lines happen to align)."""
    out: list[DbChange] = []
    for table in sorted(set(old) | set(new)):
        a, b = old.get(table), new.get(table)
        if a == b:
            continue
        if a is None or b is None or not isinstance(a, dict) or not isinstance(b, dict):
            out.append(DbChange(table, (), "add" if a is None else "remove" if b is None else "replace"))
            continue
        for key in sorted(set(a) | set(b)):
            x, y = a.get(key), b.get(key)
            if x == y:
                continue
            if x is None or y is None or not isinstance(x, dict) or not isinstance(y, dict):
                out.append(DbChange(table, (key,), "add" if x is None else "remove" if y is None else "replace"))
                continue
            for fld in sorted(set(x) | set(y)):
                if x.get(fld) != y.get(fld):
                    op = "add" if fld not in x else "remove" if fld not in y else "replace"
                    out.append(DbChange(table, (key, fld), op))
    return out


def _json_lines(lines: Sequence[str]) -> dict[tuple[str, ...], int]:
    """Key path (table, entry, field) -> its line in pretty-printed JSON."""
    out: dict[tuple[str, ...], int] = {}
    parents = ancestors(lines)
    for i, line in enumerate(lines):
        own = json_key(line.strip())
        if own is None:
            continue
        path = tuple(k for k in (json_key(lines[a].strip()) for a in parents[i]) if k is not None)
        out.setdefault((*path, own), i)
    return out


def place_ops(hunks: list[Hunk], old: Sequence[str], new: Sequence[str], ctx: Context) -> bool:
    """Label a ConfigDB diff's hunks by the patch operations whose lines each shows; False if not JSON."""
    try:
        ops = config_db_ops(json.loads("\n".join(old) or "{}"), json.loads("\n".join(new) or "{}"))
    except ValueError:
        return False
    where_old, where_new = _json_lines(old), _json_lines(new)
    for op in ops:
        path = (op.table, *op.parts)
        at_new, at_old = where_new.get(path), where_old.get(path)
        home = None
        for hunk in hunks:
            if (at_new is not None and hunk.new_span[0] <= at_new < hunk.new_span[1]) or (
                    at_old is not None and hunk.old_span[0] <= at_old < hunk.old_span[1]):
                home = hunk
                break
        if home is None and hunks:  # a field that moved no line of its own: the hunk nearest to it
            line = at_new if at_new is not None else at_old or 0
            home = min(hunks, key=lambda h: abs(h.new_span[0] - line))
        if home is not None:
            home.impacts.append(config_db_rule(op, ctx.hwsku, ctx.branch))
    return True


# What the lossless config asks of GCU on a running switch: the PFC watchdog per port, a PG headroom
# (BUFFER_PROFILE xoff) and the shared pools.
LOSSLESS_OPS = (GcuOp("PFC_WD", ("Ethernet0", "action"), "add"),
                GcuOp("BUFFER_PROFILE", ("pg_lossless_400000_5m_profile", "xoff"), "replace"))
DAY0 = ("day 0: `config load` of the whole ConfigDB, `config save` and `config reload` (fabricgen deploy --day0: "
        "every service restarts)")


def lossless_apply(hwsku: str, branch: str | None = None) -> tuple[bool, str]:
    """(live, statement): whether GCU applies the lossless config (PFC watchdog, PG headroom) live on this HWSKU,
    from the GCU field rules fabricgen ships; else the day-0 path."""
    conf = gcu_conf()
    asic = gcu_asic(hwsku, conf) if hwsku else "unknown"
    verdicts = [gcu_allows(op, hwsku, branch, conf) for op in LOSSLESS_OPS]
    refused = [why for ok, why in verdicts if not ok]
    if not refused:
        return True, f"GCU applies the lossless config live (ASIC family {asic}: " + "; ".join(
            why for _, why in verdicts) + ")"
    known = "GCU does not know this HWSKU" if asic == "unknown" else f"ASIC family {asic}"
    return False, (f"{known}: it refuses PFC_WD and BUFFER_PROFILE changes live ({'; '.join(refused)}); {DAY0}")


def config_db_rule(d: DbChange, hwsku: str, branch: str | None = None) -> Impact:
    table, parts = d.table, d.parts
    fld = parts[1] if len(parts) > 1 else ""
    if table in ("PFC_WD", "BUFFER_POOL", "BUFFER_PROFILE"):
        ok, why = gcu_allows(GcuOp(table, parts, d.op), hwsku, branch)
        if not ok:
            return Impact(Label.REFUSED_LIVE, why)
        if table == "PFC_WD":
            return Impact(Label.HITLESS, f"PFC watchdog setting ({why})")
        return Impact(Label.BUFFER_RECARVE, f"buffer profile re-carved; lossless traffic may pause ({why})")
    if table == "DEVICE_METADATA":
        return _DEVICE_METADATA.get(fld, Impact(Label.HITLESS, f"DEVICE_METADATA {fld or 'entry'}"))
    if table in ("PORT", "BREAKOUT_CFG"):
        if table == "BREAKOUT_CFG" or len(parts) == 1:
            return Impact(Label.PORT_FLAP, "a port is added or removed (breakout)")
        if fld in _PORT_FLAP_FIELDS:
            return Impact(Label.PORT_FLAP, f"PORT {fld} takes the port down and up")
        return Impact(Label.HITLESS, f"PORT {fld} only")
    if table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        if d.op == "add":
            return Impact(Label.HITLESS, "an address or routed interface is added")
        return Impact(Label.BGP_RESET, "an address is removed or changed: the sessions over it drop")
    if table == "BGP_NEIGHBOR":
        if d.op == "add" and len(parts) == 1:
            return Impact(Label.HITLESS, "a new session")
        if fld == "name":
            return Impact(Label.HITLESS, "neighbor name only")
        return Impact(Label.BGP_RESET, f"BGP_NEIGHBOR {fld or 'entry'}: bgpcfgd re-creates the session")
    if table == "PORT_QOS_MAP" and fld == "pfcwd_sw_enable":
        return Impact(Label.HITLESS, "PFC watchdog on/off per port")
    if table in _QUEUE_MAP_TABLES or table == "PORT_QOS_MAP":
        return Impact(Label.BUFFER_RECARVE, f"{table}: PFC or queue mapping re-programmed; traffic changes priority "
                                      "group or queue mid-flight")
    if table in _BUFFER_TABLES:
        return Impact(Label.BUFFER_RECARVE, f"{table}: buffers re-carved; lossless traffic may pause")
    if table in _HITLESS_TABLES:
        return Impact(Label.HITLESS, _HITLESS_TABLES[table])
    if table == "FEATURE":
        return Impact(Label.DAEMON_RESTART, "a SONiC feature (container) is started, stopped or restarted")
    return Impact(Label.DAEMON_RESTART, f"no impact rule for table {table}: assumed the worst short of a reload")


def impact(hunks: list[Hunk], ctx: Context, sides: dict[str, tuple[Sequence[str], Sequence[str]]] | None) -> None:
    """ConfigDB hunks by GCU's rules (by patch operation when the sides are known), frr.conf by FRR's."""
    db = [h for h in hunks if h.file.endswith(CONFIG_DB)]
    text = [h for h in hunks if not h.file.endswith(CONFIG_DB)]
    side = next((s for f, s in (sides or {}).items() if f.endswith(CONFIG_DB)), None)
    if ctx.day0:
        for hunk in db:
            hunk.impacts = [Impact(Label.RELOAD_REQUIRED, DAY0)]
    elif not (db and side is not None and place_ops(db, side[0], side[1], ctx)):
        for hunk in db:
            hunk.impacts = [config_db_rule(d, ctx.hwsku, ctx.branch) for d, _ in config_db_changes(hunk.changes)]
    frr.impact(text, ctx, sides)


def drained(candidate: str, on: bool = True) -> str:
    """FRR's drain on the frr.conf of the candidate bundle (render.manifest.candidate_config's JSON)."""
    return frr.drained(candidate, on)
