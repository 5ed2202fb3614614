"""SONiC facts: ports, QoS and buffers from config_db.json; BGP from the split-unified frr.conf."""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

import orjson

from fabricgen.plan.model import Plan
from fabricgen.platforms.facts import (
    DeviceFacts,
    Ecn,
    LosslessPg,
    PortFacts,
    QosMaps,
    Queue,
    as_int,
    config_text,
    escape_token,
    int_map,
    key_range,
    pointer,
    read_config,
    read_config_bytes,
    scan_frr,
)

CONFIG_DB = "config_db.json"
FRR_CONF = "frr.conf"
SONIC_DEFAULT_MTU = 9100  # PORT.mtu default in SONiC's YANG model


def _wred_ecn(wname: str, w: dict[str, Any]) -> tuple[bool, tuple[Ecn, ...]]:
    """ECN marking on? and one threshold pair per distinct (min, max) of the enabled colours."""
    marks = str(w.get("ecn", "ecn_none")) not in ("ecn_none", "")
    by_value: dict[tuple[int, int], list[str]] = {}
    for color in ("green", "yellow", "red"):
        if str(w.get(f"wred_{color}_enable", "false")).lower() != "true":
            continue
        lo, hi = w.get(f"{color}_min_threshold"), w.get(f"{color}_max_threshold")
        if lo is not None and hi is not None:
            by_value.setdefault((as_int(lo), as_int(hi)), []).append(color)
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
        self.lossless_pgs: dict[str, LosslessPg | None] = {}

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
            dscp = int_map(dscp_tables[dscp_name])
            identity = {tc: tc for tc in range(8)}
            tq = self.table("TC_TO_QUEUE_MAP")
            tpg = self.table("TC_TO_PRIORITY_GROUP_MAP")
            pfcq = self.table("MAP_PFC_PRIORITY_TO_QUEUE")
            result = QosMaps(
                name=dscp_name,
                dscp_to_tc=dscp,
                tc_to_queue=int_map(tq[queue_name]) if queue_name in tq else identity,
                tc_to_pg=int_map(tpg[pg_name]) if pg_name in tpg else {},
                pfc_to_queue=int_map(pfcq[pfc_name]) if pfc_name in pfcq else identity,
                dscp_locs={d: pointer("DSCP_TO_TC_MAP", dscp_name, str(d)) for d in range(64)},
                pfc_to_queue_loc=pointer("MAP_PFC_PRIORITY_TO_QUEUE", pfc_name) if pfc_name else "",
                tc_to_pg_loc=pointer("TC_TO_PRIORITY_GROUP_MAP", pg_name) if pg_name in tpg else "",
            )
        self.maps[names] = result
        return result

    def queue(self, key: str, entry: dict[str, Any]) -> Queue:
        sname, wname = str(entry.get("scheduler", "")), str(entry.get("wred_profile", ""))
        cached = self.queues.get((sname, wname))
        loc = f"/QUEUE/{escape_token(key)}"
        if cached is not None:
            return Queue(cached.scheduler, cached.strict, cached.weight, cached.marks, cached.ecn, loc,
                         cached.sched_loc)
        sched = self.table("SCHEDULER").get(sname)
        strict, weight, sched_loc = False, 0, pointer("QUEUE", key, "scheduler")
        if isinstance(sched, dict):
            strict = str(sched.get("type", "")).upper() == "STRICT"
            weight = 0 if strict else as_int(sched.get("weight"), 0)
            sched_loc = pointer("SCHEDULER", sname, "type" if strict or "weight" not in sched else "weight")
        marks: bool = False
        ecn: tuple[Ecn, ...] = ()
        wred = self.table("WRED_PROFILE").get(wname) if wname else None
        if isinstance(wred, dict):
            marks, ecn = _wred_ecn(wname, wred)
        q = Queue(sname, strict, weight, marks, ecn, loc, sched_loc)
        self.queues[(sname, wname)] = q
        return q

    def lossless_profile(self, name: str, pg_loc: str) -> LosslessPg | None:
        """A PG's buffering if lossless: "NULL" under the dynamic buffer model (buffermgrd computes the
        headroom from speed, cable length and MTU), or a profile with xoff headroom."""
        if name == "NULL":
            meta = self.table("DEVICE_METADATA").get("localhost")
            dynamic = isinstance(meta, dict) and meta.get("buffer_model") == "dynamic"
            return LosslessPg(name, pg_loc) if dynamic else None
        if name in self.lossless_pgs:
            return self.lossless_pgs[name]
        prof = self.table("BUFFER_PROFILE").get(name)
        x = None
        if isinstance(prof, dict) and "xoff" in prof:
            static = as_int(prof.get("static_th")) if "static_th" in prof else None
            x = LosslessPg(name, pointer("BUFFER_PROFILE", name), static)
        self.lossless_pgs[name] = x
        return x


def extract_sonic(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """SONiC: ports, QoS and buffers from config_db.json; BGP from the split-unified frr.conf."""
    f = DeviceFacts(host, "sonic", qos=True)
    raw = read_config_bytes(f, configs, CONFIG_DB)
    if raw is not None:
        db = load_json(f, CONFIG_DB, raw)
        if db is not None and not isinstance(db, dict):
            f.errors.append((CONFIG_DB, "not a JSON object"))
        elif db is not None:
            _sonic_ports(f, _SonicTables(db), finite=b"NaN" not in raw and b"Infinity" not in raw)
    frr = read_config(f, configs, FRR_CONF)
    if frr is not None:
        scan_frr(frr.splitlines(), f, with_interfaces=False)
    return f


# A run of 20 digits may be an integer beyond 64 bits, which orjson reads as a float where json keeps it whole.
# Found as a run of one byte in the file's digits-only image: a tenth of the time of a pattern search.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))  # every digit a 0
_LONG_NUMBER = b"0" * 20


def _long_number(raw: bytes) -> bool:
    return _LONG_NUMBER in raw.translate(_DIGITS_ONLY)


_NOTHING = object()


def load_json(f: DeviceFacts, name: str, raw: bytes) -> Any:
    """The value json.loads gives for the file's text, or None with the file's error.  orjson reads it where it
    reads the same value (a ConfigDB of 128 ports in 0.94 ms, json 1.9 ms); json reads what orjson refuses (NaN,
    Infinity, a lone surrogate, a BOM, invalid JSON: json's own error message) and any file with a number that
    may not fit 64 bits."""
    value: Any = _NOTHING
    if not _long_number(raw):
        with contextlib.suppress(orjson.JSONDecodeError):
            value = orjson.loads(raw)
    if value is _NOTHING:
        text = config_text(f, name, raw)
        if text is None:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            f.errors.append((name, f"not JSON: {exc}"))
            return None
    return value


def _split_key(key: str) -> tuple[str, str]:
    name, _, rest = key.partition("|")
    return name, rest


# Memos of two pure parses that 2,048 ConfigDBs repeat 800,000 times with a handful of distinct texts (bounded,
# so an odd fabric cannot grow them without limit).
_MEMO_MAX = 4096
_RANGES: dict[str, list[int]] = {}
_PFC: dict[str, frozenset[int]] = {}


def _key_range(text: str) -> list[int]:
    """facts.key_range, remembered (callers only iterate it)."""
    found = _RANGES.get(text)
    if found is None:
        found = key_range(text)
        if len(_RANGES) < _MEMO_MAX:
            _RANGES[text] = found
    return found


def _pfc_set(text: str) -> frozenset[int]:
    """PORT_QOS_MAP pfc_enable "3,4" -> {3, 4}; a part that is not a number -> -1."""
    found = _PFC.get(text)
    if found is None:
        found = frozenset(as_int(x, -1) for x in text.split(",") if x.strip())
        if len(_PFC) < _MEMO_MAX:
            _PFC[text] = found
    return found


def _sonic_ports(f: DeviceFacts, t: _SonicTables, finite: bool = False) -> None:
    """`finite`: the file has no NaN or infinity (json.loads reads those words; JSON has neither), so its QoS
    tables have a faithful digest and their facts may come from another file of the same class."""
    ports = f.ports
    for name, entry in t.table("PORT").items():
        e = entry if isinstance(entry, dict) else {}
        n = escape_token(name)
        ports[name] = PortFacts(name, f"/PORT/{n}", mtu=as_int(e.get("mtu", SONIC_DEFAULT_MTU)),
                                mtu_loc=f"/PORT/{n}/mtu" if "mtu" in e else f"/PORT/{n}")
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "MGMT_INTERFACE", "PORTCHANNEL_INTERFACE", "VLAN_INTERFACE"):
        for key in t.table(table):
            name, addr = _split_key(key)
            if not addr:
                continue
            loc = pointer(table, key)
            f.addresses.append((name, addr, loc))
            port = ports.get(name) if table == "INTERFACE" else None
            if port is not None and ":" not in addr and not port.ipv4:
                port.ipv4, port.ipv4_loc = addr, loc
    names = list(ports)
    digest = _qos_key(t, names) if finite else None
    qos = _QOS.get(digest) if digest is not None else None
    if qos is None:
        qos = _port_qos(t, names)
        if digest is not None:
            if len(_QOS) >= _QOS_MAX:
                _QOS.clear()
            _QOS[digest] = qos
    for name, port in ports.items():  # read-only facts, shared by the same port of every file of the class
        (port.maps, port.maps_loc, port.pfc, port.pfc_loc, port.pfc_on, port.watchdog, port.watchdog_loc,
         port.queues, port.pg_locs, port.lossless) = qos[name]


# The tables a port's QoS facts come from.  Render writes them whole per port class (platforms/sonic/render.py's
# class tables), so the ConfigDBs of one class repeat them byte for byte: their facts are read once per class
# (4,096 ConfigDBs of 128 ports at 128K GPUs, a handful of classes).
_QOS_TABLES = ("PORT_QOS_MAP", "PFC_WD", "QUEUE", "BUFFER_PG", "SCHEDULER", "WRED_PROFILE", "DSCP_TO_TC_MAP",
               "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "BUFFER_PROFILE")
_QOS_MAX = 64
PortQos = tuple[QosMaps | None, str, frozenset[int], str, bool, bool, str, dict[int, Queue], dict[int, str],
                dict[int, LosslessPg]]
_QOS: dict[bytes, dict[str, PortQos]] = {}


def _qos_key(t: _SonicTables, names: list[str]) -> bytes | None:
    """A digest of everything `_port_qos` reads, or None where orjson cannot serialise it (an integer beyond
    64 bits; `_sonic_ports` never asks for a file with a NaN or an infinity, which orjson writes as null)."""
    meta = t.table("DEVICE_METADATA").get("localhost")
    model = meta.get("buffer_model") if isinstance(meta, dict) else None
    try:
        text = orjson.dumps([names, model, [t.db.get(name) for name in _QOS_TABLES]])
    except TypeError:
        return None
    return hashlib.sha256(text).digest()


def _port_qos(t: _SonicTables, names: list[str]) -> dict[str, PortQos]:
    """Each port's classification, PFC, watchdog, queues and PG buffering, with where each is set."""
    qos_map = t.table("PORT_QOS_MAP")
    wd = t.table("PFC_WD")
    queues: dict[str, dict[int, Queue]] = {name: {} for name in names}
    pg_locs: dict[str, dict[int, str]] = {name: {} for name in names}
    lossless: dict[str, dict[int, LosslessPg]] = {name: {} for name in names}
    for key, entry in t.table("QUEUE").items():
        name, rest = _split_key(key)
        if name not in queues or not isinstance(entry, dict):
            continue
        q = t.queue(key, entry)
        for qi in _key_range(rest):
            queues[name][qi] = q
    for key, entry in t.table("BUFFER_PG").items():
        name, rest = _split_key(key)
        if name not in pg_locs:
            continue
        loc = f"/BUFFER_PG/{escape_token(key)}/profile"
        x = t.lossless_profile(str(entry.get("profile", "")), loc) if isinstance(entry, dict) else None
        for pg in _key_range(rest):
            pg_locs[name][pg] = loc
            if x is not None:
                lossless[name][pg] = x
    out: dict[str, PortQos] = {}
    for name in names:
        entry = qos_map.get(name)
        n = escape_token(name)
        maps: QosMaps | None = None
        maps_loc = pfc_loc = f"/PORT_QOS_MAP/{n}"
        pfc: frozenset[int] = frozenset()
        pfc_on = False
        if isinstance(entry, dict):
            maps = t.qos_maps(entry)
            maps_loc = f"/PORT_QOS_MAP/{n}/dscp_to_tc_map"
            if "pfc_enable" in entry:
                pfc = _pfc_set(str(entry["pfc_enable"]))
                pfc_loc = f"/PORT_QOS_MAP/{n}/pfc_enable"
                pfc_on = bool(pfc)
        out[name] = (maps, maps_loc, pfc, pfc_loc, pfc_on, isinstance(wd.get(name), dict), f"/PFC_WD/{n}",
                     queues[name], pg_locs[name], lossless[name])
    return out
