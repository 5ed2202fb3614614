"""Change impact: what each hunk of a deploy diff does to the traffic of a running fabric.

Every hunk of a device's diff gets one label, the worst of its changed lines:

==================  =========================================================================
``hitless``         nothing stops: descriptions, policy (route refresh), ECN and scheduler
                    settings, BFD timers (poll sequence), a new session or address
``bgp-reset``       one or more BGP sessions go down and come back (or keep their old timers
                    until they do): ECMP routes around the switch's links meanwhile
``port-flap``       a port goes down and up: MTU, speed, FEC, breakout, shutdown
``buffer-recarve``  buffers or queue mapping are re-programmed: PFC, PGs, buffer profiles,
                    DSCP/TC/queue maps; lossless traffic pauses or moves queue mid-flight
``daemon-restart``  a routing daemon or container restarts: every session of the switch drops
``reload-required`` takes effect only after a reload (NX-OS ``hardware profile dlb``, SONiC's
                    buffer model or HWSKU)
``refused-live``    the platform refuses it on a running switch (SONiC GCU's field rules)
==================  =========================================================================

The labels are ordered, hitless least; a device's and the fabric's impact is the worst of its
hunks.  The rules are one table per config file kind (``frr.conf``, SONiC ``config_db.json``,
NX-OS ``nxos.cfg``, EOS ``eos.cfg``); a line no rule knows gets a conservative label and says so.

Hunks come from the two normalised sides a driver diffed (``last_sides``, so every changed line
knows its full stanza or JSON path), or, for drivers that do not expose them, from the unified
diff text alone (then a line's path is what the hunk itself shows).  A ConfigDB diff is labelled by
the patch operations of the two documents (table, entry or field added, removed or replaced, as
GCU validates them), each placed in the hunk that shows its line: how difflib happens to align
JSON lines never turns an added buffer profile into edited fields of its neighbour.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

HITLESS, BGP_RESET, PORT_FLAP, BUFFER_RECARVE = "hitless", "bgp-reset", "port-flap", "buffer-recarve"
DAEMON_RESTART, RELOAD_REQUIRED, REFUSED_LIVE = "daemon-restart", "reload-required", "refused-live"
LABELS = (HITLESS, BGP_RESET, PORT_FLAP, BUFFER_RECARVE, DAEMON_RESTART, RELOAD_REQUIRED, REFUSED_LIVE)
SEVERITY = {label: rank for rank, label in enumerate(LABELS)}


@dataclass(frozen=True)
class Impact:
    label: str
    why: str

    @property
    def severity(self) -> int:
        return SEVERITY[self.label]


@dataclass(frozen=True)
class Change:
    """One changed line: ``sign`` "+"/"-", its ancestors (outermost first, stripped) and its text."""

    file: str
    sign: str
    path: tuple[str, ...]
    text: str
    whole: bool = False  # an ancestor was added/removed with it (an object or stanza as a whole)


@dataclass
class Hunk:
    file: str
    header: str  # "@@ -a,b +c,d @@"
    lines: list[str]  # the hunk's lines as the unified diff shows them
    changes: list[Change] = field(default_factory=list)
    impacts: list[Impact] = field(default_factory=list)  # per change, same order
    old_span: tuple[int, int] = (0, 0)  # 0-based, end excluded: the side lines the hunk covers
    new_span: tuple[int, int] = (0, 0)

    @property
    def impact(self) -> Impact:
        return worst(self.impacts) or Impact(HITLESS, "no changed line")


@dataclass
class DeviceImpact:
    host: str
    platform: str
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def worst(self) -> Impact | None:
        return worst(h.impact for h in self.hunks)

    def counts(self) -> dict[str, int]:
        """Hunks per label, worst label first."""
        out: dict[str, int] = {}
        for label in reversed(LABELS):
            n = sum(1 for h in self.hunks if h.impact.label == label)
            if n:
                out[label] = n
        return out


def worst(impacts: Iterable[Impact]) -> Impact | None:
    best: Impact | None = None
    for impact in impacts:
        if best is None or impact.severity > best.severity:
            best = impact
    return best


def exceeds(impact: Impact | None, limit: str) -> bool:
    return impact is not None and impact.severity > SEVERITY[limit]


_TIMERS = re.compile(r"^(timers bgp |neighbor \S+ timers \d|timers \d)")


def needs_session_reset(impact: DeviceImpact) -> bool:
    """The change sets BGP keepalive/hold time, which a session takes only when it re-establishes:
    deploy resets the sessions so the new timers apply (the hunk is labelled bgp-reset)."""
    for hunk in impact.hunks:
        for c in hunk.changes:
            if c.sign == "+" and (_TIMERS.match(c.text) or _json_key(c.text) in ("holdtime", "keepalive")):
                return True
    return False


# --------------------------------------------------------------------------- hunks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def ancestors(lines: Sequence[str]) -> list[tuple[int, ...]]:
    """Per line, the indices of its ancestors (outermost first): the nearest earlier line of smaller
    indentation, recursively.  Works for indented config text and for pretty-printed JSON."""
    out: list[tuple[int, ...]] = []
    stack: list[int] = []
    for i, line in enumerate(lines):
        if not line.strip():
            out.append(tuple(stack))
            continue
        depth = _indent(line)
        while stack and _indent(lines[stack[-1]]) >= depth:
            stack.pop()
        out.append(tuple(stack))
        stack.append(i)
    return out


def _range(start: int, length: int) -> str:
    """A unified diff hunk range, as difflib writes it."""
    beginning = start + 1
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def hunks_from_sides(file: str, old: Sequence[str], new: Sequence[str], context: int = 3) -> list[Hunk]:
    """The hunks ``difflib.unified_diff(old, new, n=context)`` prints, each changed line with its full path."""
    old_parents, new_parents = ancestors(old), ancestors(new)
    groups = list(difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(context))
    removed = {i for g in groups for tag, i1, i2, _, _ in g if tag in ("replace", "delete") for i in range(i1, i2)}
    added = {j for g in groups for tag, _, _, j1, j2 in g if tag in ("replace", "insert") for j in range(j1, j2)}
    out = []
    for group in groups:
        first, last = group[0], group[-1]
        header = f"@@ -{_range(first[1], last[2] - first[1])} +{_range(first[3], last[4] - first[3])} @@"
        hunk = Hunk(file, header, [], old_span=(first[1], last[2]), new_span=(first[3], last[4]))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                hunk.lines += [" " + ln for ln in old[i1:i2]]
                continue
            for i in range(i1, i2):
                hunk.lines.append("-" + old[i])
                hunk.changes.append(Change(file, "-", tuple(old[a].strip() for a in old_parents[i]), old[i].strip(),
                                           any(a in removed for a in old_parents[i])))
            for j in range(j1, j2):
                hunk.lines.append("+" + new[j])
                hunk.changes.append(Change(file, "+", tuple(new[a].strip() for a in new_parents[j]), new[j].strip(),
                                           any(a in added for a in new_parents[j])))
        out.append(hunk)
    return out


_HUNK_RE = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def hunks_from_text(diff: str) -> list[Hunk]:
    """Hunks of a unified diff text (any number of files); a line's path is what its hunk shows.

    Each hunk is read by the line counts of its header, so a changed line that itself starts
    with ``--``/``++`` is never taken for a file header.
    """
    out: list[Hunk] = []
    file = ""
    lines = diff.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("+++ "):
            file = line[4:].strip()
            continue
        m = _HUNK_RE.match(line)
        if not m:
            continue
        old_left = int(m.group(1)) if m.group(1) is not None else 1
        new_left = int(m.group(2)) if m.group(2) is not None else 1
        hunk = Hunk(file, m.group(0), [])
        while i < len(lines) and (old_left > 0 or new_left > 0):
            body = lines[i]
            i += 1
            if body.startswith("\\"):  # "\ No newline at end of file"
                continue
            hunk.lines.append(body)
            if body[:1] != "+":
                old_left -= 1
            if body[:1] != "-":
                new_left -= 1
        out.append(hunk)
    for hunk in out:
        texts = [ln[1:] for ln in hunk.lines]
        parents = ancestors(texts)
        changed = {k for k, ln in enumerate(hunk.lines) if ln[:1] in "+-"}
        for k, ln in enumerate(hunk.lines):
            if ln[:1] in "+-":
                hunk.changes.append(Change(hunk.file, ln[0], tuple(texts[a].strip() for a in parents[k]),
                                           texts[k].strip(), any(a in changed for a in parents[k])))
    return out


# --------------------------------------------------------------------------- rules: FRR (frr and sonic)

Rule = Callable[[Change], Impact]

_BGP_RESET_NEIGHBOR = re.compile(r"^neighbor \S+ (remote-as|timers|update-source|ebgp-multihop|password|local-as|"
                                 r"capability|shutdown|port|ttl-security|interface)\b")
_HITLESS_NEIGHBOR = re.compile(r"^neighbor \S+ (description|bfd|route-map|prefix-list|filter-list|allowas-in|"
                               r"soft-reconfiguration|next-hop-self|send-community|weight|maximum-prefix|"
                               r"advertisement-interval|default-originate|as-override|remove-private-AS)\b")


_NEIGHBOR_AS = re.compile(r"^neighbor (\S+) remote-as ")


def session_changes(changes: Iterable[Change]) -> tuple[set[str], set[str]]:
    """Neighbors a diff adds and removes as a whole (a ``remote-as`` line on one side only)."""
    added: set[str] = set()
    removed: set[str] = set()
    for c in changes:
        m = _NEIGHBOR_AS.match(c.text)
        if m:
            (added if c.sign == "+" else removed).add(m.group(1))
    return added - removed, removed - added


def frr_rule(c: Change, new_sessions: set[str] | None = None, gone_sessions: set[str] | None = None) -> Impact:
    """FRR config lines (frr.conf on Linux + FRR and SONiC); ``new_sessions``/``gone_sessions`` are the
    neighbors the whole diff adds or removes (their other lines share that fate)."""
    text, top = c.text, c.path[0] if c.path else c.text
    m = re.match(r"^neighbor (\S+) ", text)
    if m and top.startswith("router bgp ") and not _NEIGHBOR_AS.match(text):
        if m.group(1) in (new_sessions or set()):
            return Impact(HITLESS, f"part of the new session to {m.group(1)}")
        if m.group(1) in (gone_sessions or set()):
            return Impact(BGP_RESET, f"part of the session to {m.group(1)}, which is removed")
    if text.startswith("frr version") or text in ("end", "exit", "!", "exit-address-family"):
        return Impact(HITLESS, "not config (a version banner or a stanza end)")
    if not c.path:
        if text.startswith("frr defaults"):
            return Impact(DAEMON_RESTART, "FRR reads `frr defaults` only when its daemons start: restart them")
        if text.startswith("router bgp "):
            return Impact(BGP_RESET, "the BGP instance is deleted and created again: every session resets")
        if text.startswith(("hostname ", "log ", "service ", "line vty", "ip route ", "ipv6 route ")):
            return Impact(HITLESS, "host setting or static route")
        if text.startswith(("ip prefix-list ", "ipv6 prefix-list ", "route-map ", "bgp as-path ",
                            "bgp community-list ", "bgp large-community-list ")):
            return Impact(HITLESS, "routing policy: applied by a route refresh, sessions stay up")
        if text.startswith(("interface ", "bfd")):
            return Impact(HITLESS, "stanza header; its lines carry the impact")
        return Impact(DAEMON_RESTART, f"no impact rule for `{text}`: assumed the worst short of a reload")
    if top.startswith("interface "):
        if text.startswith(("ip address", "ipv6 address")):
            if c.sign == "-":
                return Impact(BGP_RESET, "an address is removed: the sessions over it drop")
            return Impact(HITLESS, "an address is added")
        if text == "shutdown":
            return Impact(PORT_FLAP, "the port is shut down") if c.sign == "+" else \
                Impact(PORT_FLAP, "the port comes up")
        if text.startswith("description"):
            return Impact(HITLESS, "description only")
        return Impact(PORT_FLAP, f"interface setting `{text}`: assumed to flap the port")
    if top.startswith(("ip prefix-list", "ipv6 prefix-list", "route-map ", "bgp as-path", "bgp community-list")):
        return Impact(HITLESS, "routing policy: applied by a route refresh, sessions stay up")
    if top == "bfd":
        return Impact(HITLESS, "BFD timers: renegotiated with a poll sequence, sessions stay up")
    if top.startswith("router bgp "):
        if text.startswith("bgp router-id"):
            return Impact(BGP_RESET, "a new router-id resets every session")
        if text.startswith("timers bgp") or re.match(r"^neighbor \S+ timers", text):
            return Impact(BGP_RESET, "keepalive/hold apply only when a session re-establishes (validate's "
                                     "`timers` check names sessions still on the old ones)")
        if text.startswith("address-family") and len(c.path) == 1:
            return Impact(HITLESS, "stanza header; its lines carry the impact")
        if re.match(r"^neighbor \S+ activate", text):
            return Impact(BGP_RESET, "activating or deactivating an address family renegotiates the session")
        if re.match(r"^neighbor \S+ remote-as", text):
            if c.sign == "+":
                return Impact(HITLESS, "a new session (a changed peer AS shows its removal too)")
            return Impact(BGP_RESET, "the session is removed or its peer AS changes")
        if _BGP_RESET_NEIGHBOR.match(text):
            return Impact(BGP_RESET, f"`{text.split()[2]}` resets the session")
        if _HITLESS_NEIGHBOR.match(text):
            return Impact(HITLESS, "per-session policy or description: route refresh, the session stays up")
        if text.startswith(("bgp bestpath", "maximum-paths", "redistribute", "network ", "no bgp default",
                            "bgp log-neighbor-changes", "aggregate-address", "bgp deterministic-med")):
            return Impact(HITLESS, "best-path or origination: routes are recomputed, sessions stay up")
        return Impact(BGP_RESET, f"no impact rule for `{text}` under router bgp: assumed to reset sessions")
    return Impact(DAEMON_RESTART, f"no impact rule for `{text}` under `{top}`: assumed the worst short of a reload")


# --------------------------------------------------------------------------- rules: SONiC ConfigDB

# GCU's field rules as fabricgen ships them (tools/sonic_facts.py makes them from sonic-utilities'
# gcu_field_operation_validators.conf.json; tests/test_deploy_impact.py checks them against it)
GCU_RULES = Path(__file__).resolve().parents[1] / "platforms" / "sonic_facts" / "gcu_rules.json"


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
    "hostname": Impact(HITLESS, "hostname only"),
    "bgp_router_id": Impact(BGP_RESET, "a new router-id resets every session"),
    "bgp_asn": Impact(DAEMON_RESTART, "bgpcfgd reads DEVICE_METADATA bgp_asn when the bgp container starts"),
    "docker_routing_config_mode": Impact(DAEMON_RESTART, "the bgp container reads it when it starts "
                                                         "(docker_init.sh): deploy restarts the container"),
    "frr_mgmt_framework_config": Impact(DAEMON_RESTART, "the bgp container starts bfdd by it (supervisord "
                                                        "template): deploy restarts the container"),
    "type": Impact(DAEMON_RESTART, "bgpcfgd picks its templates by device type when the bgp container starts"),
    "buffer_model": Impact(RELOAD_REQUIRED, "switching traditional/dynamic buffer model takes `config reload`"),
    "default_pfcwd_status": Impact(RELOAD_REQUIRED, "read when the config is loaded (boot or `config reload`)"),
    "hwsku": Impact(RELOAD_REQUIRED, "a new HWSKU takes effect only after a reload"),
    "platform": Impact(RELOAD_REQUIRED, "a new platform takes effect only after a reload"),
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


def _json_key(line: str) -> str | None:
    m = re.match(r'^"((?:[^"\\]|\\.)*)"\s*:', line)
    return json.loads(f'"{m.group(1)}"') if m else None


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
        keys = tuple(k for k in (_json_key(p) for p in c.path) if k is not None)
        own = _json_key(c.text)
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
        own = _json_key(line.strip())
        if own is None:
            continue
        path = tuple(k for k in (_json_key(lines[a].strip()) for a in parents[i]) if k is not None)
        out.setdefault((*path, own), i)
    return out


def config_db_hunks(file: str, old: Sequence[str], new: Sequence[str], hwsku: str = "",
                    branch: str | None = None) -> list[Hunk]:
    """The hunks of a ConfigDB diff, each labelled by the patch operations whose lines it shows."""
    hunks = hunks_from_sides(file, old, new)
    try:
        ops = config_db_ops(json.loads("\n".join(old) or "{}"), json.loads("\n".join(new) or "{}"))
    except ValueError:
        return label_hunks(hunks, "sonic", hwsku, branch)  # not JSON after all: by lines
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
            home.impacts.append(config_db_rule(op, hwsku, branch))
    return hunks


def config_db_rule(d: DbChange, hwsku: str, branch: str | None = None) -> Impact:
    table, parts = d.table, d.parts
    fld = parts[1] if len(parts) > 1 else ""
    if table in ("PFC_WD", "BUFFER_POOL", "BUFFER_PROFILE"):
        ok, why = gcu_allows(GcuOp(table, parts, d.op), hwsku, branch)
        if not ok:
            return Impact(REFUSED_LIVE, why)
        if table == "PFC_WD":
            return Impact(HITLESS, f"PFC watchdog setting ({why})")
        return Impact(BUFFER_RECARVE, f"buffer profile re-carved; lossless traffic may pause ({why})")
    if table == "DEVICE_METADATA":
        return _DEVICE_METADATA.get(fld, Impact(HITLESS, f"DEVICE_METADATA {fld or 'entry'}"))
    if table in ("PORT", "BREAKOUT_CFG"):
        if table == "BREAKOUT_CFG" or len(parts) == 1:
            return Impact(PORT_FLAP, "a port is added or removed (breakout)")
        if fld in _PORT_FLAP_FIELDS:
            return Impact(PORT_FLAP, f"PORT {fld} takes the port down and up")
        return Impact(HITLESS, f"PORT {fld} only")
    if table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        if d.op == "add":
            return Impact(HITLESS, "an address or routed interface is added")
        return Impact(BGP_RESET, "an address is removed or changed: the sessions over it drop")
    if table == "BGP_NEIGHBOR":
        if d.op == "add" and len(parts) == 1:
            return Impact(HITLESS, "a new session")
        if fld == "name":
            return Impact(HITLESS, "neighbor name only")
        return Impact(BGP_RESET, f"BGP_NEIGHBOR {fld or 'entry'}: bgpcfgd re-creates the session")
    if table == "PORT_QOS_MAP" and fld == "pfcwd_sw_enable":
        return Impact(HITLESS, "PFC watchdog on/off per port")
    if table in _QUEUE_MAP_TABLES or table == "PORT_QOS_MAP":
        return Impact(BUFFER_RECARVE, f"{table}: PFC or queue mapping re-programmed; traffic changes priority "
                                      "group or queue mid-flight")
    if table in _BUFFER_TABLES:
        return Impact(BUFFER_RECARVE, f"{table}: buffers re-carved; lossless traffic may pause")
    if table in _HITLESS_TABLES:
        return Impact(HITLESS, _HITLESS_TABLES[table])
    if table == "FEATURE":
        return Impact(DAEMON_RESTART, "a SONiC feature (container) is started, stopped or restarted")
    return Impact(DAEMON_RESTART, f"no impact rule for table {table}: assumed the worst short of a reload")


# --------------------------------------------------------------------------- rules: NX-OS

_NXOS_PORT_FLAP = ("mtu", "speed", "fec", "duplex", "channel-group", "switchport", "no switchport")


def nxos_rule(c: Change) -> Impact:
    text, top = c.text, c.path[0] if c.path else c.text
    if c.whole and c.sign == "+":
        return Impact(HITLESS, f"part of the new `{c.path[-1]}`")
    if not c.path:
        if text.startswith("feature "):
            return Impact(HITLESS, "a feature is enabled") if c.sign == "+" else \
                Impact(DAEMON_RESTART, "a feature is disabled: its process stops")
        if text.startswith("hardware profile dlb"):
            return Impact(RELOAD_REQUIRED, "NX-OS applies `hardware profile dlb` only after a reload")
        if text.startswith("interface breakout"):
            return Impact(PORT_FLAP, "breakout re-creates the ports")
        if text.startswith("router bgp "):
            return Impact(BGP_RESET, "the BGP instance is removed and created again: every session resets")
        if text.startswith(("hostname ", "ip load-sharing", "bfd interval", "priority-flow-control watch-dog",
                            "priority-flow-control auto-restore")):
            why = {"ip load-sharing": "ECMP rehash: flows may move to other paths (brief reordering)"}
            return Impact(HITLESS, next((v for k, v in why.items() if text.startswith(k)),
                                        "global timer or name: applies at once"))
        if text.startswith(("interface ", "route-map ", "ip prefix-list ", "ipv6 prefix-list ", "system qos",
                            "policy-map ", "class-map ")):
            return _nxos_stanza(text, text, c.sign, header=True)
        return Impact(DAEMON_RESTART, f"no impact rule for `{text}`: assumed the worst short of a reload")
    return _nxos_stanza(top, text, c.sign, path=c.path)


def _nxos_stanza(top: str, text: str, sign: str, header: bool = False, path: tuple[str, ...] = ()) -> Impact:
    if top.startswith("hardware profile dlb"):
        return Impact(RELOAD_REQUIRED, "NX-OS applies `hardware profile dlb` only after a reload")
    if top == "system qos" or top.startswith(("policy-map type network-qos", "class-map type network-qos")):
        return Impact(BUFFER_RECARVE, "network-qos (no-drop, pause, class MTU): buffers re-carved, lossless "
                                      "traffic pauses")
    if top.startswith(("policy-map type qos", "class-map type qos")):
        return Impact(BUFFER_RECARVE, "DSCP classification: traffic changes queue mid-flight")
    if top.startswith("policy-map type queuing"):
        if text.startswith("pause"):
            return Impact(BUFFER_RECARVE, "ingress pause buffer and thresholds re-carved")
        return Impact(HITLESS, "scheduling or ECN of a queue: applies at once")
    if top.startswith(("class-map type queuing", "route-map ", "ip prefix-list", "ipv6 prefix-list")):
        return Impact(HITLESS, "matching or routing policy: applies at once, sessions stay up")
    if top.startswith("interface "):
        if header:
            return Impact(HITLESS, "stanza header; its lines carry the impact")
        if text.startswith("description") or text in ("no ip redirects", "no shutdown"):
            return Impact(HITLESS, "description or a port coming up")
        if text == "shutdown":
            return Impact(PORT_FLAP, "the port is shut down")
        if text.startswith(_NXOS_PORT_FLAP):
            return Impact(PORT_FLAP, f"`{text.split()[0]}` takes the port down and up")
        if text.startswith(("priority-flow-control", "service-policy")):
            if "watch-dog" in text:
                return Impact(HITLESS, "PFC watchdog on the port")
            return Impact(BUFFER_RECARVE, "PFC or QoS policy on the port re-programs its buffers")
        if text.startswith(("ip address", "ipv6 address")):
            return Impact(BGP_RESET, "an address is removed: the sessions over it drop") if sign == "-" else \
                Impact(HITLESS, "an address is added")
        return Impact(PORT_FLAP, f"interface setting `{text}`: assumed to flap the port")
    if top.startswith("router bgp "):
        if header:
            return Impact(BGP_RESET, "the BGP instance is removed and created again")
        inner = path[1] if len(path) > 1 else ""
        if text.startswith("router-id"):
            return Impact(BGP_RESET, "a new router-id resets every session")
        if text.startswith("timers bgp") or (inner.startswith("neighbor ") and text.startswith("timers")):
            return Impact(BGP_RESET, "keepalive/hold apply only when a session re-establishes")
        if text.startswith("neighbor ") and len(path) == 1:
            return Impact(HITLESS, "a new session") if sign == "+" else Impact(BGP_RESET, "a session is removed")
        if inner.startswith("neighbor "):
            if text.startswith(("remote-as", "update-source", "password", "local-as", "ebgp-multihop")):
                return Impact(BGP_RESET, f"`{text.split()[0]}` resets the session")
            if text.startswith("address-family"):
                return Impact(BGP_RESET, "activating or removing an address family renegotiates the session")
            return Impact(HITLESS, "per-session policy, BFD or description: the session stays up")
        return Impact(HITLESS, "best-path, multipath or origination: routes are recomputed, sessions stay up")
    return Impact(DAEMON_RESTART, f"no impact rule for `{text}` under `{top}`: assumed the worst short of a reload")


# --------------------------------------------------------------------------- rules: Arista EOS


def eos_rule(c: Change, new_sessions: set[str] | None = None, gone_sessions: set[str] | None = None) -> Impact:
    """EOS lines: global QoS maps and ``qos profile`` (applied through ``service-profile``), interfaces,
    ``router bfd`` and a flat ``router bgp`` much like FRR's."""
    text, top = c.text, c.path[0] if c.path else c.text
    if c.whole and c.sign == "+" and not top.startswith("router bgp"):
        return Impact(HITLESS, f"part of the new `{c.path[-1]}`")
    if not c.path:
        if text.startswith("qos map "):
            return Impact(BUFFER_RECARVE, "DSCP to traffic-class map: traffic changes queue mid-flight")
        if text.startswith("priority-flow-control pause watchdog"):
            return Impact(HITLESS, "PFC watchdog timers or action: applies at once")
        if text.startswith("port-channel load-balance"):
            return Impact(HITLESS, "ECMP rehash: flows may move to other paths (brief reordering)")
        if text.startswith(("hostname ", "ip routing", "ipv6 unicast-routing", "no ip routing")):
            return Impact(HITLESS, "host setting")
        if text.startswith("router bgp "):
            return Impact(BGP_RESET, "the BGP instance is removed and created again: every session resets")
        if text.startswith(("ip prefix-list ", "ipv6 prefix-list ", "route-map ")):
            return Impact(HITLESS, "routing policy: applied by a route refresh, sessions stay up")
        if text.startswith(("interface ", "qos profile ", "router bfd")):
            return Impact(HITLESS, "stanza header; its lines carry the impact")
        return Impact(DAEMON_RESTART, f"no impact rule for `{text}`: assumed the worst short of a reload")
    if top.startswith("qos profile "):
        if "priority-flow-control" in text and "watchdog" not in text:
            return Impact(BUFFER_RECARVE, "PFC / no-drop of the profile: the ports using it re-carve buffers")
        return Impact(HITLESS, "scheduling, ECN or trust of a queue: applies at once")
    if top.startswith("interface "):
        if text.startswith("description"):
            return Impact(HITLESS, "description only")
        if text.startswith(("ip address", "ipv6 address")):
            return Impact(BGP_RESET, "an address is removed: the sessions over it drop") if c.sign == "-" else \
                Impact(HITLESS, "an address is added")
        if text.startswith(("service-profile", "priority-flow-control")):
            return Impact(BUFFER_RECARVE, "QoS profile or PFC of the port: its buffers are re-carved")
        if text == "no shutdown":
            return Impact(HITLESS, "the port comes up")
        return Impact(PORT_FLAP, f"`{text.split()[0]}` takes the port down and up")
    if top == "router bfd":
        return Impact(HITLESS, "BFD timers: renegotiated with a poll sequence, sessions stay up")
    if top.startswith("router bgp ") and text.startswith("router-id"):
        return Impact(BGP_RESET, "a new router-id resets every session")
    if top.startswith("router bgp ") and text.startswith("maximum-paths"):
        return Impact(HITLESS, "multipath: routes are recomputed, sessions stay up")
    return frr_rule(c, new_sessions, gone_sessions)


# --------------------------------------------------------------------------- per device


# Which rules a platform's config text takes (SONiC's config_db.json is recognised by its name).
RULES_BY_PLATFORM = {"nxos": "nxos", "eos": "eos", "frr": "frr", "sonic": "frr"}


def file_kind(file: str, platform: str) -> str:
    """Which rules a diffed file takes: SONiC's ConfigDB, or its platform's config text."""
    if file.endswith("config_db.json"):
        return "config_db"
    return RULES_BY_PLATFORM.get(platform, "frr")


def label_hunks(hunks: list[Hunk], platform: str, hwsku: str = "", branch: str | None = None) -> list[Hunk]:
    """Give every change of every hunk its impact (rules by file kind, see :func:`file_kind`)."""
    for hunk in hunks:
        kind = file_kind(hunk.file, platform)
        if kind == "config_db":
            pairs = config_db_changes(hunk.changes)
            hunk.impacts = [config_db_rule(d, hwsku, branch) for d, _ in pairs]
        elif kind == "nxos":
            hunk.impacts = [nxos_rule(c) for c in hunk.changes]
        else:
            added, removed = session_changes(c for h in hunks if file_kind(h.file, platform) == kind
                                             for c in h.changes)
            rule = eos_rule if kind == "eos" else frr_rule
            hunk.impacts = [rule(c, added, removed) for c in hunk.changes]
    return hunks


def device_impact(host: str, platform: str, sides: Sequence[tuple[str, Sequence[str], Sequence[str]]] | None,
                  diff: str, hwsku: str = "", branch: str | None = None) -> DeviceImpact:
    """Label a device's diff: from the driver's ``last_sides`` when it has them, else from the text."""
    if not sides:
        return DeviceImpact(host, platform, label_hunks(hunks_from_text(diff), platform, hwsku, branch))
    hunks: list[Hunk] = []
    for file, old, new in sides:
        if file_kind(file, platform) == "config_db":
            hunks += config_db_hunks(file, old, new, hwsku, branch)
        else:
            hunks += label_hunks(hunks_from_sides(file, old, new), platform, hwsku, branch)
    return DeviceImpact(host, platform, hunks)


def labelled_diff(impact: DeviceImpact) -> str:
    """The diff with each hunk's label (and why) after its ``@@`` header."""
    out: list[str] = []
    file = None
    for hunk in impact.hunks:
        if hunk.file != file:
            file = hunk.file
            out.append(f"+++ {file}" if file else "")
        worst_change = hunk.impact
        out.append(f"{hunk.header} [{worst_change.label}] {worst_change.why}")
        out += hunk.lines
    return "\n".join(ln for ln in out if ln != "") + "\n" if out else ""
