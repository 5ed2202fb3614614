"""SONiC's lossless counters as sonic-utilities prints them.

Shapes (tests/validate/health/samples/sonic/ say where each sample comes from):

* ``show pfc counters`` (pfcstat): two tabulate "simple" tables, ``Port Rx`` and ``Port Tx``,
  columns PFC0..PFC7, thousands separated by commas, ``N/A`` where COUNTERS_DB has nothing;
* ``show pfcwd stats``: one row per watched queue, ``Ethernet0:3``, a STATUS word
  (``operational``, ``stormed``, ``N/A``) and ``STORM DETECTED/RESTORED`` as ``d/r``;
* ``show queue counters --json`` (queuestat -j): ``{port: {"UC0": {"totalpacket", "totalbytes",
  "droppacket", "dropbytes"}, ..., "time": ...}}``; ``UCn`` is unicast queue n;
* ``show queue wredcounters --json`` (wredstat -j): the same keys with ``ecnmarkedpacket``;
* ``show queue watermark unicast --json`` / ``show priority-group watermark shared --json``
  (watermarkstat -j): ``[{"Port": ..., "UC0": "bytes", ...}]`` / ``[{"Port": ..., "PG0": ...}]``.

Every counter these commands print is relative to the operator's last ``sonic-clear`` (a
per-user cache); deltas handle a clear inside the window (validate.health).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from fabricgen.platforms.getter_kit import Shell
from fabricgen.platforms.health import (
    UNKNOWN,
    PfcByPort,
    PgByPort,
    QueueCounters,
    QueuesByPort,
    WatchdogByPort,
    queue_counters,
)
from fabricgen.platforms.sonic.render import hash_settings

# sonic-utilities' `show` tables and JSON (queue, PG and watchdog keys)
_QUEUE_KEY = re.compile(r"^UC(\d+)$")
_PG_KEY = re.compile(r"^PG(\d+)$")
_WD_QUEUE = re.compile(r"^(\S+):(\d+)$")
STORMED = {"stormed"}


def number(text: Any) -> int:
    """"1,200" -> 1200; "N/A", "" or anything else that is not a count -> -1."""
    s = str(text).strip().replace(",", "")
    return int(s) if s.isdigit() else UNKNOWN


def _tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """tabulate 'simple' tables in ``text``: (header cells, rows of cells), split on 2+ spaces."""
    out: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    i = 0
    while i + 1 < len(lines):
        if set(lines[i + 1].strip()) <= {"-", " "} and lines[i + 1].strip().startswith("-") and lines[i].strip():
            header = re.split(r"\s{2,}", lines[i].strip())
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip():
                rows.append(re.split(r"\s{2,}", lines[i].strip()))
                i += 1
            out.append((header, rows))
        i += 1
    return out


def parse_pfc_counters(text: str) -> PfcByPort:
    """``show pfc counters`` -> {port: {priority: {rx_pause_frames, tx_pause_frames}}}."""
    out: PfcByPort = {}
    for header, rows in _tables(text):
        if header[0] not in ("Port Rx", "Port Tx"):
            continue
        key = "rx_pause_frames" if header[0] == "Port Rx" else "tx_pause_frames"
        prios = [int(h[3:]) if h.startswith("PFC") and h[3:].isdigit() else None for h in header[1:]]
        for row in rows:
            port = out.setdefault(row[0], {})
            for prio, cell in zip(prios, row[1:], strict=False):
                if prio is None:
                    continue
                counters = port.setdefault(prio, {"rx_pause_frames": UNKNOWN, "tx_pause_frames": UNKNOWN})
                counters[key] = number(cell)  # type: ignore[literal-required]
    return out


def parse_pfcwd_stats(text: str) -> WatchdogByPort:
    """``show pfcwd stats`` -> {port: {queue: {status, stormed, storms_detected, storms_restored}}}."""
    out: WatchdogByPort = {}
    for header, rows in _tables(text):
        if header[0] != "QUEUE" or "STORM DETECTED/RESTORED" not in header:
            continue
        status_col, storm_col = header.index("STATUS"), header.index("STORM DETECTED/RESTORED")
        for row in rows:
            m = _WD_QUEUE.match(row[0])
            if not m or len(row) <= max(status_col, storm_col):
                continue
            detected, _, restored = row[storm_col].partition("/")
            status = row[status_col]
            out.setdefault(m.group(1), {})[int(m.group(2))] = {
                "status": status, "stormed": status.lower() in STORMED,
                "storms_detected": number(detected), "storms_restored": number(restored)}
    return out


def _json(text: str, command: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{command}: not JSON ({exc})") from None


def _unicast_queues(data: Any) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(port, queue, counters) of every ``UCn`` entry of queuestat/wredstat JSON."""
    for port, queues in (data.items() if isinstance(data, dict) else ()):
        for key, c in (queues.items() if isinstance(queues, dict) else ()):
            m = _QUEUE_KEY.match(key)
            if m and isinstance(c, dict):
                yield str(port), int(m.group(1)), c


def parse_queue_counters(text: str) -> QueuesByPort:
    """``show queue counters --json`` -> {port: {queue: QueueCounters}} (unicast queues only)."""
    out: QueuesByPort = {}
    for port, q, c in _unicast_queues(_json(text, "show queue counters --json")):
        out.setdefault(port, {})[q] = queue_counters(
            tx_packets=number(c.get("totalpacket")), tx_bytes=number(c.get("totalbytes")),
            dropped_packets=number(c.get("droppacket")))
    return out


def parse_wred_counters(text: str) -> dict[str, dict[int, int]]:
    """``show queue wredcounters --json`` -> {port: {queue: ECN-marked packets}}."""
    out: dict[str, dict[int, int]] = {}
    for port, q, c in _unicast_queues(_json(text, "show queue wredcounters --json")):
        out.setdefault(port, {})[q] = number(c.get("ecnmarkedpacket"))
    return out


def parse_watermarks(text: str, kind: str) -> dict[str, dict[int, int]]:
    """watermarkstat ``-j`` (``kind`` "UC" for queues, "PG" for priority groups) -> {port: {n: bytes}}."""
    key_re = _QUEUE_KEY if kind == "UC" else _PG_KEY
    out: dict[str, dict[int, int]] = {}
    data = _json(text, f"watermark ({kind}) --json")
    for row in (data if isinstance(data, list) else ()):
        if not isinstance(row, dict) or "Port" not in row:
            continue
        for key, value in row.items():
            m = key_re.match(key)
            if m:
                out.setdefault(str(row["Port"]), {})[int(m.group(1))] = number(value)
    return out


def merge_queues(counters: QueuesByPort, ecn: dict[str, dict[int, int]],
                 watermarks: dict[str, dict[int, int]]) -> QueuesByPort:
    """Queue counters with each queue's ECN marks and watermark filled in (-1 where unknown)."""
    out: QueuesByPort = {}
    ports = set(counters) | set(ecn) | set(watermarks)
    for port in ports:
        queues = set(counters.get(port, {})) | set(ecn.get(port, {})) | set(watermarks.get(port, {}))
        for q in queues:
            base: QueueCounters = dict(counters.get(port, {}).get(q) or queue_counters())  # type: ignore[assignment]
            base["ecn_marked_packets"] = ecn.get(port, {}).get(q, UNKNOWN)
            base["watermark_bytes"] = watermarks.get(port, {}).get(q, UNKNOWN)
            out.setdefault(port, {})[q] = base
    return out


def pg_watermarks(shared: dict[str, dict[int, int]]) -> PgByPort:
    return {port: {pg: {"shared_bytes": value} for pg, value in pgs.items()} for port, pgs in shared.items()}


def _show(driver: Shell, command: str, optional: bool = False) -> str | None:
    """A show command on the SONiC host; ``optional``: None when it fails (a command older releases
    lack: its counters read as unknown)."""
    from napalm.base.exceptions import CommandErrorException

    try:
        return driver._check(driver._host_sh(command))
    except CommandErrorException:
        if optional:
            return None
        raise


class SonicHealthGetters:
    """sonic platform: sonic-utilities' show commands on the host."""

    def get_pfc_counters(self: Shell) -> PfcByPort:
        return parse_pfc_counters(_show(self, "show pfc counters") or "")

    def get_queue_counters(self: Shell) -> QueuesByPort:
        counters = parse_queue_counters(_show(self, "show queue counters --json") or "{}")
        wred = _show(self, "show queue wredcounters --json", optional=True)
        marks = _show(self, "show queue watermark unicast --json", optional=True)
        return merge_queues(counters, parse_wred_counters(wred) if wred else {},
                                        parse_watermarks(marks, "UC") if marks else {})

    def get_port_ecn_marked(self) -> dict[str, int]:
        return {}

    def get_pfc_watchdog(self: Shell) -> WatchdogByPort:
        return parse_pfcwd_stats(_show(self, "show pfcwd stats") or "")

    def get_pg_watermarks(self: Shell) -> PgByPort:
        text = _show(self, "show priority-group watermark shared --json", optional=True)
        return pg_watermarks(parse_watermarks(text, "PG")) if text else {}

    def get_ecmp_hash(self: Shell) -> dict[str, str]:
        """The running ConfigDB's hash settings (render.hash_settings): SWITCH_HASH and DEVICE_METADATA type."""
        db = _json(_show(self, "show runningconfiguration all") or "{}", "show runningconfiguration all")
        return hash_settings(db if isinstance(db, dict) else {})
