"""Fabric-wide RoCEv2 invariants over the rendered configs of every platform.

Two steps, so a caller can spread the expensive one over processes:

1. ``extract_facts(plan, configs, hostnames)`` reads each device's rendered files into a
   platform-neutral `DeviceFacts` record: per port MTU, IPv4, PFC priorities, watchdog, the
   attached classification maps, egress queues (strict / DWRR weight / ECN thresholds) and
   the xoff of each lossless PG; per device the BGP local AS, neighbors and maximum-paths.
   One extractor per platform: NX-OS through `check.nxos.parse` (its indentation tree), SONiC
   from config_db.json plus a line scan of frr.conf, and the `frr` platform (Linux + FRR,
   no QoS in its config) from frr.conf alone.
2. ``check_facts(plan, facts)`` runs the invariants on each device and across every cable.

Expected values come from the plan (`plan.qos`, the per-port QoS profiles, ASNs, addresses),
so "identical across devices" means every device is compared with the one fabric policy, and
a finding always names the device that deviates.  Where both ends of a link disagree the
plan decides which end is wrong; the other end is not blamed.

Rules (stable ids):

* ``roce-lossless-chain``  RoCE DSCP -> TC -> lossless PG / no-drop class (-> PFC priority) ->
                           egress queue with ECN marking is broken on a port, or differs from the plan
* ``roce-cnp``             the CNP DSCP does not reach a strict-priority queue, or its class is
                           lossless (PFC / no-drop) on some port
* ``roce-ecn-order``       on a lossless queue ECN min >= max, or max >= the PG's PFC xoff
                           (NX-OS has no xoff in its config: the port's plan profile is used)
* ``roce-bandwidth``       DWRR / `bandwidth remaining percent` shares of the non-strict queues do
                           not sum to 100 (SONiC: the weights of the distinct DWRR schedulers in use)
* ``roce-pfc-both-ends``   a fabric-link end or a GPU-facing leaf port lacks PFC on exactly the
                           lossless priorities, or the PFC watchdog (when the plan enables it)
* ``roce-mtu-both-ends``   the two ends of a switch-switch link have different MTUs
* ``roce-maximum-paths``   `maximum-paths` is below what the switch's role needs (underlay.equal_cost_paths)
* ``roce-p2p-pair``        the two ends of a /31 are not a distinct pair in one /31, a BGP neighbor
                           is missing or its remote-as is not the peer's local AS, or a device's
                           local AS is not the planned one
* ``roce-missing-config``  a planned device has no (or an unreadable) rendered file

Locations are JSON pointers into config_db.json ("/BUFFER_PROFILE/<name>/xoff") or "L<n>"
lines of nxos.cfg / frr.conf.  Findings at a location shared by many ports (a WRED profile,
a network-qos policy) are reported once and list the ports.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.check.findings import Finding
from fabricgen.model import Interface, Plan, QosPolicy, QosProfile, Switch
from fabricgen.platforms.registry import platform

RULES = (
    "roce-lossless-chain",
    "roce-cnp",
    "roce-ecn-order",
    "roce-bandwidth",
    "roce-pfc-both-ends",
    "roce-mtu-both-ends",
    "roce-maximum-paths",
    "roce-p2p-pair",
    "roce-missing-config",
)
CHAIN, CNP, ECN, BANDWIDTH, PFC, MTU, PATHS, P2P, MISSING = RULES

CONFIG_DB = "config_db.json"
FRR_CONF = "frr.conf"
NXOS_CFG = "nxos.cfg"
NXOS_DEFAULT_MTU = 1500
SONIC_DEFAULT_MTU = 9100  # PORT.mtu default in SONiC's YANG model
MAX_PORTS_NAMED = 3
_POOL_THRESHOLD_S = 1.0


# --------------------------------------------------------------------------- facts


@dataclass(slots=True)
class Ecn:
    """One WRED/ECN threshold pair of an egress queue (SONiC: one per enabled colour)."""

    min_bytes: int
    max_bytes: int
    loc: str  # where the maximum threshold is written
    source: str  # "WRED_PROFILE AI_ECN_65536_131072_5 green" / "c-out-8q-q3"


@dataclass(slots=True)
class Queue:
    """Scheduling and marking of one egress queue."""

    scheduler: str  # SONiC SCHEDULER name, NX-OS queuing class name
    strict: bool
    weight: int  # DWRR weight / bandwidth remaining percent; 0 when strict or unset
    marks: bool  # WRED is in ECN-marking mode (not dropping)
    ecn: tuple[Ecn, ...]
    loc: str  # the queue's own entry
    sched_loc: str  # where strict priority / the weight would be set


@dataclass(slots=True)
class QosMaps:
    """The classification chain attached to a port."""

    name: str
    dscp_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    tc_to_pg: dict[int, int]
    pfc_to_queue: dict[int, int]
    dscp_locs: dict[int, str]  # where each DSCP's class is decided
    pfc_to_queue_loc: str = ""
    tc_to_pg_loc: str = ""  # SONiC: "/TC_TO_PRIORITY_GROUP_MAP/<name>" (+ "/<tc>" per entry)


@dataclass(slots=True)
class Xoff:
    value: int  # bytes
    loc: str  # "/BUFFER_PROFILE/<name>/xoff"; "" when it comes from the plan (NX-OS)
    profile: str


@dataclass(slots=True)
class PortFacts:
    name: str
    loc: str  # the port's own entry ("/PORT/Ethernet0", "L120")
    mtu: int | None = None  # None: the platform's config does not carry it (frr)
    mtu_loc: str = ""
    ipv4: str = ""  # "198.18.16.1/31"
    ipv4_loc: str = ""
    maps: QosMaps | None = None  # None: no classification attached
    maps_loc: str = ""
    pfc: frozenset[int] = frozenset()  # priorities PFC runs on at this port
    pfc_on: bool = False  # PFC enabled at all (NX-OS `priority-flow-control mode on`)
    pfc_loc: str = ""
    pfc_device_wide: bool = False  # NX-OS: the priorities come from the network-qos policy
    watchdog: bool = False
    watchdog_loc: str = ""
    lossless: dict[int, Xoff] = field(default_factory=dict)  # lossless PG -> xoff
    pg_locs: dict[int, str] = field(default_factory=dict)  # every PG's BUFFER_PG entry (SONiC)
    queues: dict[int, Queue] = field(default_factory=dict)


@dataclass(slots=True)
class Neighbor:
    ip: str
    remote_as: int | None  # None: not numeric ("external") or not set
    loc: str


@dataclass(slots=True)
class DeviceFacts:
    """What one device's rendered files actually configure, in platform-neutral form."""

    device: str
    platform: str
    files: dict[str, str] = field(default_factory=dict)  # file name -> path
    missing: list[str] = field(default_factory=list)  # planned files that do not exist
    errors: list[tuple[str, str]] = field(default_factory=list)  # (file name, why unreadable)
    qos: bool = False  # the platform's config carries QoS
    ports: dict[str, PortFacts] = field(default_factory=dict)
    pause: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # NX-OS no-drop class -> [(cos, loc)]
    no_drop_loc: str = ""  # NX-OS network-qos policy
    watchdog_global: bool = True  # NX-OS: the global `priority-flow-control watch-dog-interval on`
    bandwidth_loc: str = ""
    bgp_asn: int | None = None
    bgp_loc: str = ""
    neighbors: dict[str, Neighbor] = field(default_factory=dict)
    maximum_paths: list[tuple[int, str]] = field(default_factory=list)

    def file_for(self, loc: str) -> str:
        """The file a location points into (the platform record says which: JSON pointers, lines)."""
        name = platform(self.platform).location_file(loc)
        return self.files.get(name, name)


# --------------------------------------------------------------------------- small parsers


def _esc(part: str) -> str:
    """One RFC 6901 reference token: '~' -> '~0', '/' -> '~1'."""
    return part.replace("~", "~0").replace("/", "~1") if "/" in part or "~" in part else part


def pointer(*parts: str) -> str:
    """RFC 6901 JSON pointer: ("INTERFACE", "Ethernet0|198.18.32.0/31") -> "/INTERFACE/Ethernet0|198.18.32.0~131"."""
    return "/" + "/".join(map(_esc, parts))


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def parse_asn(text: str) -> int | None:
    """'4200000000' or asdot '64086.59904' -> int; anything else (external, internal) -> None."""
    if text.isdigit():
        return int(text)
    hi, dot, lo = text.partition(".")
    if dot and hi.isdigit() and lo.isdigit():
        return int(hi) * 65536 + int(lo)
    return None


def _key_range(text: str) -> list[int]:
    """SONiC queue/PG key suffix: '3' -> [3], '0-2' -> [0, 1, 2]; junk -> []."""
    lo, dash, hi = text.partition("-")
    if not dash:
        return [int(text)] if text.isdigit() else []
    if lo.isdigit() and hi.isdigit():
        return list(range(int(lo), int(hi) + 1))
    return []


def _int_map(raw: Any) -> dict[int, int]:
    out: dict[int, int] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            if str(k).isdigit() and str(v).isdigit():
                out[int(k)] = int(v)
    return out


def ipv4_int(prefix: str) -> tuple[int, int] | None:
    """'198.18.16.1/31' -> (address as int, prefix length); None when not IPv4 address/len."""
    addr, _, plen = prefix.partition("/")
    parts = addr.split(".")
    if len(parts) != 4 or not plen.isdigit():
        return None
    try:
        a, b, c, d = (int(x) for x in parts)
    except ValueError:
        return None
    return (a << 24 | b << 16 | c << 8 | d), int(plen)


def _ip_text(value: int) -> str:
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


# --------------------------------------------------------------------------- FRR / NX-OS BGP scan


def _scan_frr(lines: list[str], f: DeviceFacts, with_interfaces: bool) -> None:
    """Interfaces (ip address) and `router bgp` of an FRR config, by indentation."""
    block = ""
    ports = f.ports
    groups: dict[str, int | None] = {}
    members: dict[str, str] = {}
    for i, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s[0] == "!":
            continue
        if raw[0] not in " \t":
            block = ""
            parts = s.split()
            if parts[0] == "interface" and len(parts) >= 2 and with_interfaces:
                name = parts[1]
                if name != "lo" and len(parts) == 2:
                    block = "interface"
                    port = ports.setdefault(name, PortFacts(name, f"L{i}"))
            elif parts[0] == "router" and len(parts) == 3 and parts[1] == "bgp" and f.bgp_asn is None:
                block = "bgp"
                f.bgp_asn, f.bgp_loc = parse_asn(parts[2]), f"L{i}"
            continue
        if block == "interface":
            if s.startswith("ip address ") and not port.ipv4:
                port.ipv4, port.ipv4_loc = s.split()[2], f"L{i}"
        elif block == "bgp":
            parts = s.split()
            if parts[0] == "neighbor" and len(parts) >= 4:
                ip, what = parts[1], parts[2]
                if what == "remote-as":
                    asn = parse_asn(parts[3])
                    if "." in ip or ":" in ip:
                        f.neighbors[ip] = Neighbor(ip, asn, f"L{i}")
                    else:
                        groups[ip] = asn
                elif what == "peer-group" and ("." in ip or ":" in ip):
                    members[ip] = parts[3]
                    f.neighbors.setdefault(ip, Neighbor(ip, None, f"L{i}"))
            elif parts[0] == "maximum-paths" and len(parts) == 2 and parts[1].isdigit():
                f.maximum_paths.append((int(parts[1]), f"L{i}"))
    for ip, group in members.items():
        n = f.neighbors[ip]
        if n.remote_as is None and groups.get(group) is not None:
            n.remote_as = groups[group]


def _scan_nxos_bgp(lines: list[str], start: int, f: DeviceFacts) -> None:
    """`router bgp` block of NX-OS from its 1-based line `start`: local AS, neighbors, maximum-paths."""
    head = lines[start - 1].split()
    f.bgp_asn, f.bgp_loc = (parse_asn(head[2]) if len(head) >= 3 else None), f"L{start}"
    current: Neighbor | None = None
    for i in range(start, len(lines)):
        raw = lines[i]
        s = raw.strip()
        if not s:
            continue
        indent = len(raw) - len(raw.lstrip())
        if indent == 0:
            break
        parts = s.split()
        if indent <= 2:
            current = None
            if parts[0] == "neighbor" and len(parts) >= 2:
                current = f.neighbors[parts[1]] = Neighbor(parts[1], None, f"L{i + 1}")
                if len(parts) >= 4 and parts[2] == "remote-as":
                    current.remote_as, current.loc = parse_asn(parts[3]), f"L{i + 1}"
            continue
        if current is not None and parts[0] == "remote-as" and len(parts) == 2:
            current.remote_as, current.loc = parse_asn(parts[1]), f"L{i + 1}"
        elif current is None and parts[0] == "maximum-paths" and len(parts) == 2 and parts[1].isdigit():
            f.maximum_paths.append((int(parts[1]), f"L{i + 1}"))


# --------------------------------------------------------------------------- extractors


def _read(f: DeviceFacts, configs: Path, name: str) -> str | None:
    path = configs / f.device / name
    f.files[name] = str(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        f.missing.append(name)
    except (OSError, UnicodeDecodeError) as exc:
        f.errors.append((name, f"cannot read: {exc}"))
    return None


def _plan_ports(plan: Plan, host: str) -> dict[str, Interface]:
    sw = plan.switches.get(host)
    return {itf.name: itf for itf in sw.interfaces} if sw is not None else {}


def extract_frr(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """Linux + FRR switch: addresses and BGP from frr.conf; no QoS, no MTU in its config."""
    f = DeviceFacts(host, "frr")
    text = _read(f, configs, FRR_CONF)
    if text is not None:
        _scan_frr(text.splitlines(), f, with_interfaces=True)
    return f


def _wred_ecn(wname: str, w: dict[str, Any]) -> tuple[bool, tuple[Ecn, ...]]:
    """ECN marking on? and one threshold pair per distinct (min, max) of the enabled colours."""
    marks = str(w.get("ecn", "ecn_none")) not in ("ecn_none", "")
    by_value: dict[tuple[int, int], list[str]] = {}
    for color in ("green", "yellow", "red"):
        if str(w.get(f"wred_{color}_enable", "false")).lower() != "true":
            continue
        lo, hi = w.get(f"{color}_min_threshold"), w.get(f"{color}_max_threshold")
        if lo is not None and hi is not None:
            by_value.setdefault((_int(lo), _int(hi)), []).append(color)
    return marks, tuple(
        Ecn(lo, hi, pointer("WRED_PROFILE", wname, f"{colors[0]}_max_threshold"),
            f"WRED_PROFILE {wname} {'/'.join(colors)}")
        for (lo, hi), colors in by_value.items()
    )


class _SonicTables:
    """Shared, per-name objects of one config_db (maps, queues, buffer profiles)."""

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = db
        self.maps: dict[tuple[str, str, str, str], QosMaps | None] = {}
        self.queues: dict[tuple[str, str], Queue] = {}
        self.xoff: dict[str, Xoff | None] = {}

    def table(self, name: str) -> dict[str, Any]:
        t = self.db.get(name)
        return t if isinstance(t, dict) else {}

    def qos_maps(self, entry: dict[str, Any]) -> QosMaps | None:
        names = (str(entry.get("dscp_to_tc_map", "")), str(entry.get("tc_to_queue_map", "")),
                 str(entry.get("tc_to_pg_map", "")), str(entry.get("pfc_to_queue_map", "")))
        if names in self.maps:
            return self.maps[names]
        dscp_name, queue_name, pg_name, pfc_name = names
        dscp_tables = self.table("DSCP_TO_TC_MAP")
        result: QosMaps | None = None
        if dscp_name and dscp_name in dscp_tables:
            dscp = _int_map(dscp_tables[dscp_name])
            identity = {tc: tc for tc in range(8)}
            tq = self.table("TC_TO_QUEUE_MAP")
            tpg = self.table("TC_TO_PRIORITY_GROUP_MAP")
            pfcq = self.table("MAP_PFC_PRIORITY_TO_QUEUE")
            result = QosMaps(
                name=dscp_name,
                dscp_to_tc=dscp,
                tc_to_queue=_int_map(tq[queue_name]) if queue_name in tq else identity,
                tc_to_pg=_int_map(tpg[pg_name]) if pg_name in tpg else {},
                pfc_to_queue=_int_map(pfcq[pfc_name]) if pfc_name in pfcq else identity,
                dscp_locs={d: pointer("DSCP_TO_TC_MAP", dscp_name, str(d)) for d in range(64)},
                pfc_to_queue_loc=pointer("MAP_PFC_PRIORITY_TO_QUEUE", pfc_name) if pfc_name else "",
                tc_to_pg_loc=pointer("TC_TO_PRIORITY_GROUP_MAP", pg_name) if pg_name in tpg else "",
            )
        self.maps[names] = result
        return result

    def queue(self, key: str, entry: dict[str, Any]) -> Queue:
        sname, wname = str(entry.get("scheduler", "")), str(entry.get("wred_profile", ""))
        cached = self.queues.get((sname, wname))
        loc = f"/QUEUE/{_esc(key)}"
        if cached is not None:
            return Queue(cached.scheduler, cached.strict, cached.weight, cached.marks, cached.ecn, loc,
                         cached.sched_loc)
        sched = self.table("SCHEDULER").get(sname)
        strict, weight, sched_loc = False, 0, pointer("QUEUE", key, "scheduler")
        if isinstance(sched, dict):
            strict = str(sched.get("type", "")).upper() == "STRICT"
            weight = 0 if strict else _int(sched.get("weight"), 0)
            sched_loc = pointer("SCHEDULER", sname, "type" if strict or "weight" not in sched else "weight")
        marks: bool = False
        ecn: tuple[Ecn, ...] = ()
        wred = self.table("WRED_PROFILE").get(wname) if wname else None
        if isinstance(wred, dict):
            marks, ecn = _wred_ecn(wname, wred)
        q = Queue(sname, strict, weight, marks, ecn, loc, sched_loc)
        self.queues[(sname, wname)] = q
        return q

    def lossless_profile(self, name: str) -> Xoff | None:
        if name in self.xoff:
            return self.xoff[name]
        prof = self.table("BUFFER_PROFILE").get(name)
        x = None
        if isinstance(prof, dict) and "xoff" in prof:
            x = Xoff(_int(prof.get("xoff")), pointer("BUFFER_PROFILE", name, "xoff"), name)
        self.xoff[name] = x
        return x


def extract_sonic(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """SONiC: ports, QoS and buffers from config_db.json; BGP from the split-unified frr.conf."""
    f = DeviceFacts(host, "sonic", qos=True)
    text = _read(f, configs, CONFIG_DB)
    db: Any = None
    if text is not None:
        try:
            db = json.loads(text)
        except ValueError as exc:
            f.errors.append((CONFIG_DB, f"not JSON: {exc}"))
        if db is not None and not isinstance(db, dict):
            f.errors.append((CONFIG_DB, "not a JSON object"))
            db = None
    if db is not None:
        _sonic_ports(f, _SonicTables(db))
    frr = _read(f, configs, FRR_CONF)
    if frr is not None:
        _scan_frr(frr.splitlines(), f, with_interfaces=False)
    return f


def _split_key(key: str) -> tuple[str, str]:
    name, _, rest = key.partition("|")
    return name, rest


def _sonic_ports(f: DeviceFacts, t: _SonicTables) -> None:
    ports = f.ports
    for name, entry in t.table("PORT").items():
        e = entry if isinstance(entry, dict) else {}
        n = _esc(name)
        ports[name] = PortFacts(name, f"/PORT/{n}", mtu=_int(e.get("mtu", SONIC_DEFAULT_MTU)),
                                mtu_loc=f"/PORT/{n}/mtu" if "mtu" in e else f"/PORT/{n}")
    for key in t.table("INTERFACE"):
        name, addr = _split_key(key)
        port = ports.get(name)
        if port is not None and addr and ":" not in addr and not port.ipv4:
            port.ipv4, port.ipv4_loc = addr, pointer("INTERFACE", key)
    qos_map = t.table("PORT_QOS_MAP")
    wd = t.table("PFC_WD")
    for name, port in ports.items():
        entry = qos_map.get(name)
        n = _esc(name)
        port.maps_loc = port.pfc_loc = f"/PORT_QOS_MAP/{n}"
        if isinstance(entry, dict):
            port.maps = t.qos_maps(entry)
            port.maps_loc = f"/PORT_QOS_MAP/{n}/dscp_to_tc_map"
            if "pfc_enable" in entry:
                port.pfc = frozenset(_int(x, -1) for x in str(entry["pfc_enable"]).split(",") if x.strip())
                port.pfc_loc = f"/PORT_QOS_MAP/{n}/pfc_enable"
                port.pfc_on = bool(port.pfc)
        port.watchdog = isinstance(wd.get(name), dict)
        port.watchdog_loc = f"/PFC_WD/{n}"
    for key, entry in t.table("QUEUE").items():
        name, rest = _split_key(key)
        port = ports.get(name)
        if port is None or not isinstance(entry, dict):
            continue
        q = t.queue(key, entry)
        for qi in _key_range(rest):
            port.queues[qi] = q
    for key, entry in t.table("BUFFER_PG").items():
        name, rest = _split_key(key)
        port = ports.get(name)
        if port is None:
            continue
        loc = f"/BUFFER_PG/{_esc(key)}/profile"
        x = t.lossless_profile(str(entry.get("profile", ""))) if isinstance(entry, dict) else None
        for pg in _key_range(rest):
            port.pg_locs[pg] = loc
            if x is not None:
                port.lossless[pg] = x


def _nxos_dscp_maps(name: str, policy: Any, class_maps: dict[str, Any], at: Callable[[int], str]) -> QosMaps:
    """DSCP -> qos-group of a classification policy: first matching class wins, then class-default."""
    dscp: dict[int, int] = {}
    locs: dict[int, str] = {}
    default_group, default_loc = 0, at(policy.line)
    for cname, c in policy.classes.items():
        group = c.qos_group if c.qos_group is not None else 0
        loc = at(c.set_line or c.line)
        if cname == "class-default":
            default_group, default_loc = group, loc
            continue
        cm = class_maps.get(cname)
        for d in sorted(cm.dscp) if cm is not None else ():
            if d not in dscp and 0 <= d < 64:
                dscp[d], locs[d] = group, loc
    for d in range(64):
        if d not in dscp:
            dscp[d], locs[d] = default_group, default_loc
    identity = {tc: tc for tc in range(8)}
    return QosMaps(name, dscp, identity, dict(identity), dict(identity), locs)


_NQ = re.compile(r"^c-8q-nq(\d)$")
_QQ = re.compile(r"^c-out-8q-q(\d|-default)$")


def extract_nxos(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """NX-OS facts (see `analyze_nxos`)."""
    return analyze_nxos(plan, configs, host, structural=False)[1]


def analyze_nxos(plan: Plan, configs: Path, host: str, structural: bool = True) -> tuple[list[Finding], DeviceFacts]:
    """One read and one parse of nxos.cfg for both NX-OS checks: the structural findings of
    `check.nxos` (when `structural`) and this module's facts."""
    from fabricgen.check import nxos

    f = DeviceFacts(host, "nxos", qos=True)
    text = _read(f, configs, NXOS_CFG)
    path = f.files[NXOS_CFG]
    if text is None:
        return ([Finding(host, path, "", "nxos-parse", why) for _, why in f.errors] if structural else []), f
    lines = text.splitlines()
    cfg = nxos.parse(lines)
    findings = nxos.check_parsed(cfg, host, plan, path) if structural else []
    return findings, nxos_facts(plan, host, lines, cfg, path)


def nxos_facts(plan: Plan, host: str, lines: list[str], cfg: Any, path: str = NXOS_CFG) -> DeviceFacts:
    """Facts from an NX-OS config already parsed by `check.nxos.parse(lines)` (shared with the structural check)."""
    from fabricgen.check.nxos import DEFAULT_MTU

    f = DeviceFacts(host, "nxos", files={NXOS_CFG: path}, qos=True)

    def at(n: int) -> str:
        return f"L{n}"

    # Egress queues (system queuing policy) and no-drop classes (system network-qos policy).
    queues: dict[int, Queue] = {}
    qref = cfg.system_queuing
    qpolicy = cfg.policies["queuing"].get(qref.name) if qref is not None else None
    f.bandwidth_loc = at(qpolicy.line) if qpolicy is not None else (at(cfg.system_qos_line) if
                                                                      cfg.system_qos_line else "")
    if qpolicy is not None:
        for cname, c in qpolicy.classes.items():
            m = _QQ.match(cname)
            if not m:
                continue
            qi = 0 if m.group(1) == "-default" else int(m.group(1))
            w = c.wred
            ecn: tuple[Ecn, ...] = ()
            if w is not None and w.max_bytes:
                ecn = (Ecn(w.min_bytes, w.max_bytes, at(w.line), cname),)
            strict = bool(c.priority_line)
            queues[qi] = Queue(cname, strict, 0 if strict else (c.bandwidth or 0), bool(w is not None and w.ecn),
                               ecn, at(c.line), at(c.priority_line or c.bandwidth_line or c.line))
    nref = cfg.system_network_qos
    npolicy = cfg.policies["network-qos"].get(nref.name) if nref is not None else None
    f.watchdog_global = bool(cfg.watchdog_line)
    f.no_drop_loc = at(npolicy.line) if npolicy is not None else (at(cfg.system_qos_line) if
                                                                    cfg.system_qos_line else "L1")
    if npolicy is not None:
        for cname, c in npolicy.classes.items():
            m = _NQ.match(cname)
            if m and c.pause:
                f.pause[int(m.group(1))] = [(cos, at(line)) for cos, line in c.pause]
    device_pfc = frozenset(cos for pauses in f.pause.values() for cos, _ in pauses)

    planned = _plan_ports(plan, host)
    maps_cache: dict[str, QosMaps] = {}
    for name, itf in cfg.interfaces.items():
        if not name.lower().startswith("ethernet"):
            continue
        port = PortFacts(name, at(itf.line))
        port.mtu = itf.mtu if itf.mtu is not None else DEFAULT_MTU
        port.mtu_loc = at(itf.mtu_line or itf.line)
        for addr, line in itf.addresses:
            if ":" not in addr:
                port.ipv4, port.ipv4_loc = addr, at(line)
                break
        port.pfc_on = itf.pfc_on
        port.pfc = device_pfc if itf.pfc_on else frozenset()
        port.pfc_loc, port.pfc_device_wide = at(itf.line), True
        port.watchdog = itf.watchdog
        port.watchdog_loc = at(itf.line)
        port.maps_loc = at(itf.line)
        if itf.qos_input is not None:
            port.maps_loc = at(itf.qos_input.line)
            pname = itf.qos_input.name
            policy = cfg.policies["qos"].get(pname)
            if policy is not None:
                if pname not in maps_cache:
                    maps_cache[pname] = _nxos_dscp_maps(pname, policy, cfg.class_maps, at)
                port.maps = maps_cache[pname]
        port.queues = queues
        # No PG xoff in an NX-OS config: the no-drop classes buffer as the port's plan profile says.
        pitf = planned.get(name)
        prof = plan.qos_profiles.get(pitf.qos_profile) if pitf is not None else None
        if prof is not None:
            port.lossless = {tc: Xoff(prof.xoff, "", prof.name) for tc in f.pause}
        else:
            port.lossless = {tc: Xoff(0, "", "") for tc in f.pause}
        f.ports[name] = port
    if cfg.bgp_line:
        _scan_nxos_bgp(lines, cfg.bgp_line, f)
    return f


# --------------------------------------------------------------------------- extraction driver

_PLAN: Plan | None = None  # set before forking; workers read it copy-on-write


def _extract_chunk(args: tuple[str, list[str]]) -> dict[str, DeviceFacts]:
    configs, hosts = args
    assert _PLAN is not None
    return _extract_serial(_PLAN, Path(configs), hosts)


def _extract_serial(plan: Plan, configs: Path, hostnames: Iterable[str]) -> dict[str, DeviceFacts]:
    out: dict[str, DeviceFacts] = {}
    for host in hostnames:
        sw = plan.switches.get(host)
        if sw is None:
            continue
        out[host] = platform(sw.platform).extractor_fn()(plan, configs, host)
    return out


def _pooled(plan: Plan, host: str) -> bool:
    """Worth a worker process (the record's `extract_in_pool`: NX-OS, ~2.5 ms a file, a smaller pickle).
    SONiC and FRR facts are cheaper to extract (~2 ms) than to unpickle in the parent (~4 ms)."""
    sw = plan.switches.get(host)
    return sw is not None and platform(sw.platform).extract_in_pool


def _auto_workers(plan: Plan, hostnames: list[str]) -> int:
    cost = sum(platform(plan.switches[h].platform).fact_cost_s for h in hostnames if _pooled(plan, h))
    if cost < _POOL_THRESHOLD_S:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def extract_facts(
    plan: Plan, configs: Path, hostnames: Iterable[str], workers: int | None = 1
) -> dict[str, DeviceFacts]:
    """Facts of every named device (one entry per planned hostname, even if its files are missing).

    `workers` > 1 sends the NX-OS hosts to a fork-context process pool (the plan is shared
    copy-on-write, only the facts come back pickled) while this process extracts the SONiC and
    FRR hosts; None picks a pool when the NX-OS work is estimated above a second.  Call it with
    workers=1 from a worker of your own to extract one chunk.
    """
    global _PLAN
    hosts = list(hostnames)
    configs = Path(configs)
    n = _auto_workers(plan, hosts) if workers is None else workers
    heavy = [h for h in hosts if _pooled(plan, h)]
    if n <= 1 or len(heavy) < 2:
        return _extract_serial(plan, configs, hosts)
    light = [h for h in hosts if not _pooled(plan, h)]
    for name in {plan.switches[h].platform for h in heavy}:
        platform(name).extractor_fn()  # imported once, before forking

    n_chunks = min(len(heavy), n * 4)
    chunks = [heavy[i::n_chunks] for i in range(n_chunks)]
    _PLAN = plan
    gc.freeze()  # a child's GC would otherwise touch (and so copy) every page of the parent's heap
    try:
        with multiprocessing.get_context("fork").Pool(n) as pool:
            pending = pool.map_async(_extract_chunk, [(str(configs), c) for c in chunks])
            merged = _extract_serial(plan, configs, light)
            for part in pending.get():
                merged.update(part)
    finally:
        gc.unfreeze()
        _PLAN = None
    return {h: merged[h] for h in plan.switches if h in merged}


# --------------------------------------------------------------------------- checks


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name) if p)


def _port_list(ports: list[str]) -> str:
    ports = sorted(ports, key=_natural)
    if len(ports) <= MAX_PORTS_NAMED:
        return ", ".join(ports)
    return f"{', '.join(ports[:MAX_PORTS_NAMED])} and {len(ports) - MAX_PORTS_NAMED} more"


class _Out:
    """Collects findings; the same (device, rule, location, message) from several ports becomes one."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str, str, str, str], list[str]] = {}

    def add(self, f: DeviceFacts | None, device: str, rule: str, loc: str, message: str, port: str = "",
            file: str | None = None) -> None:
        path = file if file is not None else (f.file_for(loc) if f is not None else "")
        ports = self.groups.setdefault((device, path, loc, rule, message), [])
        if port and port not in ports:
            ports.append(port)

    def findings(self) -> list[Finding]:
        out = []
        for (device, path, loc, rule, message), ports in self.groups.items():
            text = f"{message} [{_port_list(ports)}]" if ports else message
            out.append(Finding(device, path, loc, rule, text))
        return out


def _fmt(values: Iterable[int]) -> str:
    items = sorted(set(values))
    return "{" + ", ".join(str(v) for v in items) + "}" if items else "none"


class _DeviceCheck:
    """Per-device QoS rules, evaluated per port (shared objects give shared findings)."""

    def __init__(self, plan: Plan, q: QosPolicy, sw: Switch, f: DeviceFacts, out: _Out) -> None:
        self.plan, self.q, self.sw, self.f, self.out = plan, q, sw, f, out
        self.lossless = frozenset(q.lossless_tcs)
        self.planned = {itf.name: itf for itf in sw.interfaces}

    def add(self, rule: str, loc: str, message: str, port: str = "") -> None:
        self.out.add(self.f, self.f.device, rule, loc, message, port)

    def run(self) -> None:
        if self.f.no_drop_loc:  # device-wide no-drop classes (NX-OS network-qos)
            self.no_drop_classes()
        for name, port in self.f.ports.items():
            if name not in self.planned:
                continue  # not a RoCE port of the plan (management, unused)
            self.port(port)

    def no_drop_classes(self) -> None:
        """NX-OS: the network-qos policy pauses exactly the lossless classes, each on its own CoS."""
        f, q = self.f, self.q
        for tc in sorted(self.lossless):
            pauses = f.pause.get(tc)
            if not pauses:
                self.add(CHAIN, f.no_drop_loc,
                         f"no no-drop class for lossless TC {tc}: the network-qos policy has no class "
                         f"c-8q-nq{tc} with `pause pfc-cos {tc}` (plan lossless TCs {_fmt(self.lossless)})")
                continue
            for cos, loc in pauses:
                if cos == q.cnp_tc:
                    self.add(CNP, loc, f"no-drop class c-8q-nq{tc} pauses CoS {cos}, the CNP priority: "
                             "CNPs must never be lossless")
                elif cos != tc:
                    self.add(CHAIN, loc, f"no-drop class c-8q-nq{tc} pauses CoS {cos}, expected CoS {tc}: "
                             f"PFC would pause priority {cos} while RoCE is sent with priority {tc}")
        for tc, pauses in sorted(f.pause.items()):
            if tc in self.lossless:
                continue
            loc = pauses[0][1]
            if tc == q.cnp_tc or any(cos == q.cnp_tc for cos, _ in pauses):
                self.add(CNP, loc, f"class c-8q-nq{tc} is no-drop (pause pfc-cos "
                         f"{_fmt(c for c, _ in pauses)}) but TC {q.cnp_tc} carries CNPs: CNPs must never be lossless")
            else:
                self.add(CHAIN, loc, f"class c-8q-nq{tc} is no-drop but the plan's lossless TCs are "
                         f"{_fmt(self.lossless)}")

    def pg_loc(self, port: PortFacts, maps: QosMaps, tc: int) -> str:
        """Where TC `tc`'s PG goes wrong: the TC->PG map entry if it differs from the plan, else the port's PG."""
        pg = maps.tc_to_pg.get(tc, 0)
        if maps.tc_to_pg_loc and pg != self.q.tc_to_pg.get(tc, 0):
            return f"{maps.tc_to_pg_loc}/{tc}"
        return port.pg_locs.get(pg, port.loc)

    def port(self, port: PortFacts) -> None:
        q = self.q
        maps = port.maps
        name = port.name
        if maps is None:
            self.add(CHAIN, port.maps_loc, "no DSCP classification attached "
                     "(or it names an undefined map): RoCE would be classified as TC 0, lossy", name)
            return
        for d in q.roce_dscp:
            tc = maps.dscp_to_tc.get(d, 0)
            if tc != q.roce_tc:
                self.add(CHAIN, maps.dscp_locs.get(d, port.maps_loc),
                         f"RoCE DSCP {d} is classified as TC {tc} by {maps.name}, expected TC {q.roce_tc} (plan)",
                         name)
        lossless_tcs = {tc for tc in range(8) if maps.tc_to_pg.get(tc, 0) in port.lossless}
        if port.pfc_device_wide:
            lossless_tcs = set(self.f.pause)
        for tc in sorted(self.lossless):
            self.lossless_tc(port, maps, tc, lossless_tcs)
        if not port.pfc_device_wide:
            for tc in sorted(lossless_tcs - self.lossless - {q.cnp_tc}):
                pg = maps.tc_to_pg.get(tc, 0)
                self.add(CHAIN, self.pg_loc(port, maps, tc),
                         f"TC {tc} (PG {pg}) has a lossless buffer profile but the plan's lossless TCs are "
                         f"{_fmt(self.lossless)}", name)
        self.cnp(port, maps, lossless_tcs)
        self.bandwidth(port)

    def lossless_tc(self, port: PortFacts, maps: QosMaps, tc: int, lossless_tcs: set[int]) -> None:
        name = port.name
        pg = maps.tc_to_pg.get(tc, 0)
        xoff = port.lossless.get(pg)
        if not port.pfc_device_wide and tc not in lossless_tcs:
            self.add(CHAIN, self.pg_loc(port, maps, tc),
                     f"lossless TC {tc} goes to PG {pg}, which has no lossless buffer profile "
                     "(no xoff): the port would drop RoCE instead of sending PFC", name)
        queue_no = maps.tc_to_queue.get(tc, tc)
        pfc_queue = maps.pfc_to_queue.get(tc, tc)
        if pfc_queue != queue_no:
            self.add(CHAIN, maps.pfc_to_queue_loc or port.maps_loc,
                     f"PFC priority {tc} pauses queue {pfc_queue}, but TC {tc} is sent from queue {queue_no}", name)
        queue = port.queues.get(queue_no)
        if queue is None:
            self.add(CHAIN, port.loc, f"no egress queue {queue_no} for lossless TC {tc}", name)
            return
        if queue.strict:
            self.add(CHAIN, queue.sched_loc, f"lossless queue {queue_no} ({queue.scheduler}) is strict priority: "
                     "RoCE would starve every other class; expected DWRR with ECN", name)
        if not queue.marks or not queue.ecn:
            what = "marks no ECN (no WRED profile with ecn)" if not queue.ecn else "drops instead of marking ECN"
            self.add(CHAIN, queue.ecn[0].loc if queue.ecn else queue.loc,
                     f"lossless queue {queue_no} ({queue.scheduler}) {what}: DCQCN would never slow senders", name)
            return
        if xoff is not None:
            self.ecn_order(port, queue_no, queue, xoff)

    def ecn_order(self, port: PortFacts, queue_no: int, queue: Queue, xoff: Xoff) -> None:
        pitf = self.planned.get(port.name)
        prof: QosProfile | None = self.plan.qos_profiles.get(pitf.qos_profile) if pitf is not None else None
        for e in queue.ecn:
            if e.min_bytes >= e.max_bytes:
                self.add(ECN, e.loc, f"queue {queue_no} ({e.source}): ECN min {e.min_bytes} B is not below "
                         f"max {e.max_bytes} B", port.name)
                continue
            if not xoff.value or e.max_bytes < xoff.value:
                continue
            loc = e.loc
            if prof is not None and e.max_bytes <= prof.ecn_max and xoff.value != prof.xoff and xoff.loc:
                loc = xoff.loc  # the thresholds are the plan's, the buffer profile is not
            where = f"PFC xoff {xoff.value} B ({xoff.profile})" if xoff.loc else \
                f"PFC xoff {xoff.value} B of the plan profile {xoff.profile}"
            plan_note = f" (plan: ECN max {prof.ecn_max} B, xoff {prof.xoff} B)" if prof is not None else ""
            self.add(ECN, loc, f"queue {queue_no}: ECN max {e.max_bytes} B ({e.source}) is not below the {where}: "
                     f"PFC would pause before ECN marks{plan_note}", port.name)

    def cnp(self, port: PortFacts, maps: QosMaps, lossless_tcs: set[int]) -> None:
        q = self.q
        name = port.name
        tc = maps.dscp_to_tc.get(q.cnp_dscp, 0)
        if tc != q.cnp_tc:
            self.add(CNP, maps.dscp_locs.get(q.cnp_dscp, port.maps_loc),
                     f"CNP DSCP {q.cnp_dscp} is classified as TC {tc} by {maps.name}, expected TC {q.cnp_tc} (plan)",
                     name)
        if tc in self.lossless:
            self.add(CNP, maps.dscp_locs.get(q.cnp_dscp, port.maps_loc),
                     f"CNP DSCP {q.cnp_dscp} lands in lossless TC {tc}: CNPs must never be paused", name)
        elif tc in lossless_tcs and not port.pfc_device_wide:
            pg = maps.tc_to_pg.get(tc, 0)
            self.add(CNP, self.pg_loc(port, maps, tc), f"CNP TC {tc} goes to PG {pg}, which has a lossless "
                     "buffer profile: CNPs must never be paused", name)
        if tc in port.pfc and not port.pfc_device_wide:
            self.add(CNP, port.pfc_loc, f"PFC runs on priority {tc}, the CNP class: CNPs must never be paused",
                     name)
        queue_no = maps.tc_to_queue.get(tc, tc)
        queue = port.queues.get(queue_no)
        if queue is None:
            self.add(CNP, port.loc, f"no egress queue {queue_no} for the CNP class (TC {tc})", name)
        elif not queue.strict:
            self.add(CNP, queue.sched_loc, f"CNP queue {queue_no} ({queue.scheduler}) is not strict priority: "
                     "CNPs would wait behind the congestion they report", name)

    def bandwidth(self, port: PortFacts) -> None:
        shares: dict[str, int] = {}
        for _, queue in sorted(port.queues.items()):
            if not queue.strict:
                shares.setdefault(queue.scheduler, queue.weight)
        if not shares:
            return
        total = sum(shares.values())
        if total != 100:
            parts = " + ".join(f"{s} {w}" for s, w in shares.items() if w)
            loc = self.f.bandwidth_loc or pointer("SCHEDULER")
            self.add(BANDWIDTH, loc, f"shares of the non-strict queues sum to {total}, not 100 ({parts})", port.name)


def _bgp_file(f: DeviceFacts) -> str:
    return platform(f.platform).bgp_config_file


def _bgp_usable(f: DeviceFacts) -> bool:
    """The file carrying BGP was read (a missing or broken one is roce-missing-config's finding)."""
    name = _bgp_file(f)
    return name in f.files and name not in f.missing and all(n != name for n, _ in f.errors)


def _bgp_device(plan: Plan, sw: Switch, f: DeviceFacts, out: _Out) -> None:
    if not f.bgp_loc:
        out.add(f, f.device, P2P, "", "no `router bgp` section: no eBGP session to any peer",
                file=f.files.get(_bgp_file(f), _bgp_file(f)))
        return
    if f.bgp_asn != sw.asn:
        out.add(f, f.device, P2P, f.bgp_loc, f"local AS {f.bgp_asn} differs from the plan's {sw.asn}: every peer's "
                f"`remote-as {sw.asn}` would fail")
    design = plan.facts.get("design")
    if design is not None:
        from fabricgen.underlay import equal_cost_paths

        need = equal_cost_paths(design, sw.role)
    elif sw.bgp is not None:
        need = sw.bgp.maximum_paths
    else:
        return
    need = min(need, platform(f.platform).capabilities.maximum_paths)
    if not f.maximum_paths and need > 1:
        out.add(f, f.device, PATHS, f.bgp_loc, f"no `maximum-paths`: a {sw.role} needs at least {need} "
                "equal-cost paths")
    for value, loc in f.maximum_paths:
        if value < need:
            out.add(f, f.device, PATHS, loc, f"maximum-paths {value} is below the {need} equal-cost paths a "
                    f"{sw.role} of this design needs: ECMP would use only {value} of them")


def _expected_pfc(q: QosPolicy) -> frozenset[int]:
    return frozenset(q.lossless_tcs)


def _pfc_end(q: QosPolicy, f: DeviceFacts, port: PortFacts, peer: str, out: _Out) -> None:
    want = _expected_pfc(q)
    have = port.pfc - {q.cnp_tc}  # PFC on the CNP priority is roce-cnp's finding
    ok = port.pfc_on if port.pfc_device_wide else have == want
    if not ok:
        what = "PFC is off" if not port.pfc_on else f"PFC runs on priorities {_fmt(port.pfc)}"
        out.add(f, f.device, PFC, port.pfc_loc, f"{port.name} (to {peer}): {what}, expected priorities "
                f"{_fmt(want)}: RoCE on this link is not lossless", port.name)
    if q.watchdog_enabled and not port.watchdog:
        out.add(f, f.device, PFC, port.watchdog_loc, f"{port.name} (to {peer}): no PFC watchdog, the plan enables "
                "it: a PFC storm would stall the lossless class", port.name)


def _links(plan: Plan, facts: dict[str, DeviceFacts], out: _Out) -> None:
    q = plan.qos
    planned_ports: dict[str, dict[str, Interface]] = {}

    def planned(host: str, name: str) -> Interface | None:
        ports = planned_ports.get(host)
        if ports is None:
            ports = planned_ports[host] = _plan_ports(plan, host)
        return ports.get(name)

    for link in plan.links:
        if link.tier == "gpu_leaf":
            leaf = facts.get(link.z_device)
            if leaf is None or not leaf.qos or q is None or not leaf.ports:
                continue  # no QoS in this platform's config, or nothing readable (roce-missing-config)
            port = leaf.ports.get(link.z_port)
            if port is None:
                out.add(leaf, leaf.device, PFC, "", f"GPU-facing port {link.z_port} (to {link.a_device}:"
                        f"{link.a_port}) is not configured", link.z_port)
            else:
                _pfc_end(q, leaf, port, f"{link.a_device}:{link.a_port}", out)
            continue
        a, z = facts.get(link.a_device), facts.get(link.z_device)
        if a is None or z is None or not a.ports or not z.ports:
            continue
        pa, pz = a.ports.get(link.a_port), z.ports.get(link.z_port)
        if pa is None or pz is None:
            for f, name, peer in ((a, link.a_port, f"{link.z_device}:{link.z_port}"),
                                  (z, link.z_port, f"{link.a_device}:{link.a_port}")):
                if name not in f.ports:
                    out.add(f, f.device, P2P, "", f"planned port {name} (to {peer}) is not configured", name)
            continue
        ia, iz = planned(link.a_device, link.a_port), planned(link.z_device, link.z_port)
        if q is not None:
            for f, port, peer in ((a, pa, f"{z.device}:{pz.name}"), (z, pz, f"{a.device}:{pa.name}")):
                if f.qos:
                    _pfc_end(q, f, port, peer, out)
        _mtu(a, pa, ia, z, pz, iz, out)
        _p2p(plan, a, pa, ia, z, pz, iz, out)


def _mtu(a: DeviceFacts, pa: PortFacts, ia: Interface | None, z: DeviceFacts, pz: PortFacts, iz: Interface | None,
         out: _Out) -> None:
    if pa.mtu is None or pz.mtu is None or pa.mtu == pz.mtu:
        return
    ends = [(a, pa, ia, z, pz), (z, pz, iz, a, pa)]
    blamed = [e for e in ends if e[2] is None or e[1].mtu != e[2].mtu] or ends
    for f, port, itf, pf, pport in blamed:
        plan_mtu = f" (plan {itf.mtu})" if itf is not None else ""
        out.add(f, f.device, MTU, port.mtu_loc, f"{port.name} has MTU {port.mtu}{plan_mtu}, the other end "
                f"{pf.device}:{pport.name} has {pport.mtu}: frames between them would be dropped", port.name)


def _p2p(plan: Plan, a: DeviceFacts, pa: PortFacts, ia: Interface | None, z: DeviceFacts,
         pz: PortFacts, iz: Interface | None, out: _Out) -> None:
    va, vz = ipv4_int(pa.ipv4), ipv4_int(pz.ipv4)
    ends = [(a, pa, ia, z, pz), (z, pz, iz, a, pa)]
    if va is None or vz is None:
        for f, port, _itf, pf, pport in ends:
            if ipv4_int(port.ipv4) is None:
                out.add(f, f.device, P2P, port.ipv4_loc or port.loc, f"{port.name} (to {pf.device}:{pport.name}) "
                        f"has no IPv4 address", port.name)
        return
    (ipa, la), (ipz, lz) = va, vz
    if la != 31 or lz != 31 or ipa >> 1 != ipz >> 1 or ipa == ipz:
        blamed = [e for e in ends if e[2] is None or e[1].ipv4 != e[2].ipv4] or ends
        for f, port, itf, pf, pport in blamed:
            plan_ip = f" (plan {itf.ipv4})" if itf is not None else ""
            why = "the same address" if ipa == ipz else "not the other half of one /31"
            out.add(f, f.device, P2P, port.ipv4_loc, f"{port.name} has {port.ipv4}{plan_ip}, the other end "
                    f"{pf.device}:{pport.name} has {pport.ipv4}: {why}", port.name)
        return
    for f, _port, _itf, pf, pport in ends:
        if not f.bgp_loc or not _bgp_usable(f):
            continue  # reported once per device
        peer_ip = _ip_text(ipz if f is a else ipa)
        n = f.neighbors.get(peer_ip)
        if n is None:
            out.add(f, f.device, P2P, f.bgp_loc, f"no BGP neighbor {peer_ip} ({pf.device}:{pport.name}, the other "
                    "end of the /31)")
            continue
        peer_asn = pf.bgp_asn
        peer_sw = plan.switches.get(pf.device)
        if peer_asn is None or not _bgp_usable(pf) or peer_sw is None or peer_asn != peer_sw.asn:
            continue  # no peer AS to compare with, or the peer's own AS is the fault (reported there)
        if n.remote_as != peer_asn:
            out.add(f, f.device, P2P, n.loc, f"neighbor {peer_ip} ({pf.device}) has remote-as {n.remote_as}, "
                    f"but {pf.device}'s local AS is {peer_asn}")


def check_facts(plan: Plan, facts: dict[str, DeviceFacts], configs: Path | None = None) -> list[Finding]:
    """Every rule over extracted facts; a planned device without facts is a missing config."""
    out = _Out()
    q = plan.qos
    for host, sw in plan.switches.items():
        f = facts.get(host)
        names = platform(sw.platform).files
        if f is None:
            for name in names:
                path = str(configs / host / name) if configs is not None else name
                out.add(None, host, MISSING, "", f"planned {sw.role} {host} ({sw.platform}) has no rendered "
                        f"{name}", file=path)
            continue
        for name in f.missing:
            out.add(f, host, MISSING, "", f"planned {sw.role} {host} ({sw.platform}) has no rendered {name}",
                    file=f.files.get(name, name))
        for name, why in f.errors:
            out.add(f, host, MISSING, "", f"{name or 'config'} of {host} is unusable: {why}",
                    file=f.files.get(name, name))
        if f.qos and q is not None and f.ports:
            _DeviceCheck(plan, q, sw, f, out).run()
            if q.watchdog_enabled and not f.watchdog_global:
                out.add(f, host, PFC, "", "the global `priority-flow-control watch-dog-interval on` is missing: "
                        "no port runs the PFC watchdog the plan enables")
        if _bgp_usable(f):
            _bgp_device(plan, sw, f, out)
    _links(plan, facts, out)
    return out.findings()


def check_fabric(plan: Plan, configs: Path, workers: int | None = 1) -> list[Finding]:
    """extract_facts + check_facts over every planned switch."""
    configs = Path(configs)
    facts = extract_facts(plan, configs, list(plan.switches), workers=workers)
    return check_facts(plan, facts, configs)
