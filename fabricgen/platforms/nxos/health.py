"""NX-OS lossless counters from CLI text (napalm's ``cli()`` over nxos_ssh).

Shapes (tests/validate/health/samples/nxos/ say where each sample comes from):

* ``show queuing interface``: per port an ``Egress Queuing for EthernetX/Y`` part with one
  ``QOS GROUP n`` box per qos-group (rows ``Tx Pkts``, ``Tx Byts``, ``WRED/AFD & Tail Drop Pkts``
  - ``WRED & Tail Drop Pkts`` on older releases -, ``ECN Pkts`` where the release counts ECN
  marks, ``Q Depth Byts``, ``WD & Tail Drop Pkts``; columns Unicast | Multicast), then an
  ``Ingress Queuing for EthernetX/Y`` part whose ``PFC Statistics`` table gives, per PFC CoS,
  TxPause/RxPause state and TxCount/RxCount frames;
* ``show queuing pfc-queue detail``: per port ``EthernetX/Y Interface PFC watchdog: [Enabled]``,
  then per watched qos-group ``| QOS GROUP n [state] PFC [YES] PFC-COS [c]`` and a stats box
  whose ``Shutdown`` and ``Restored`` rows count storms detected and restored.

* ``show interface priority-flow-control``: per port ``Mode`` (Auto/On/Off), ``Oper(VL bmap)``
  (``On (8)``: operational, with the bitmap of PFC-enabled CoS), ``RxPPP`` and ``TxPPP`` totals.

fabricgen plans qos-group = traffic class = PFC CoS, so the qos-group number is the queue.
"""

from __future__ import annotations

import re

from fabricgen.platforms.getter_kit import Cli, once
from fabricgen.platforms.health import (
    UNKNOWN,
    PfcByPort,
    PfcOperByPort,
    PgByPort,
    QueuesByPort,
    WatchdogByPort,
    queue_counters,
)

# NX-OS `show queuing interface`, `show queuing pfc-queue detail`, `show interface priority-flow-control`
_SECTION = re.compile(r"^(Egress|Ingress) Queuing for (\S+)")
_QOS_GROUP = re.compile(r"^\|\s*QOS GROUP (\d+)\s*\|")
_ROW = re.compile(r"^\|\s*(?P<label>[^|]+?)\s*\|\s*(?P<uc>\d+|N/A)?\s*\|\s*(?P<mc>\d+|N/A)?\s*\|\s*$")
_PFC_COS = re.compile(r"^\s*(?P<cos>\d)\s+\S+\s+(?:Active|Inactive)\s+(?P<tx>\d+)"
                      r"\s+(?:Active|Inactive)\s+(?P<rx>\d+)\s*$")
_WD_PORT = re.compile(r"^(\S+) Interface PFC watchdog: \[(\w+)\]")
_WD_GROUP = re.compile(r"^\|\s*QOS GROUP (\d+) \[([^\]]+)\]")
_WD_ROW = re.compile(r"^\|\s*(Shutdown|Restored)\s*\|\s*(\d+)\s*\|")
# a qos-group in one of these states is in a PFC storm: its queue is stopped and drops or forwards
_STORM_WORDS = ("shut", "drop", "stuck", "storm")

_PFC_PORT = re.compile(r"^(?P<port>\S+)\s+(?P<mode>Auto|On|Off)\s+(?P<oper>On|Off)\s*(?:\((?P<bmap>\w+)\))?"
                       r"\s+(?P<rx>\d+)\s+(?P<tx>\d+)\s*$", re.IGNORECASE)
# `show ip load-sharing`: "Universal-id (Random Seed): N", "Load-share mode : address ...", "Rotate: N"
_LOAD_SHARING = (("universal-id", re.compile(r"^\s*Universal-id(?: \(Random Seed\))?\s*:\s*(\d+)", re.I)),
                 ("load-share mode", re.compile(r"^\s*Load-share mode\s*:\s*(.+?)\s*$", re.I)),
                 ("rotate", re.compile(r"^\s*Rotate\s*:\s*(\d+)", re.I)))
DROP_ROWS = ("WRED/AFD & Tail Drop Pkts", "WRED & Tail Drop Pkts", "WD & Tail Drop Pkts")


def _count(text: str | None) -> int:
    return int(text) if text and text.isdigit() else UNKNOWN


def parse_queuing_interface(text: str) -> tuple[PfcByPort, QueuesByPort]:
    """``show queuing interface`` -> (PFC frames per CoS, egress counters per qos-group)."""
    pfc: PfcByPort = {}
    queues: QueuesByPort = {}
    port = ""
    group: int | None = None
    for line in text.splitlines():
        m = _SECTION.match(line.strip())
        if m:
            port, group = m.group(2), None
            continue
        if not port:
            continue
        m = _QOS_GROUP.match(line.strip())
        if m:
            group = int(m.group(1))
            queues.setdefault(port, {}).setdefault(group, queue_counters(dropped_packets=0))
            continue
        m = _ROW.match(line.strip())
        if m and group is not None:
            q = queues[port][group]
            label, value = m.group("label"), _count(m.group("uc"))
            if label == "Tx Pkts":
                q["tx_packets"] = value
            elif label == "Tx Byts":
                q["tx_bytes"] = value
            elif label == "ECN Pkts":
                q["ecn_marked_packets"] = value
            elif label in DROP_ROWS and value != UNKNOWN:
                q["dropped_packets"] += value
            continue
        m = _PFC_COS.match(line)
        if m:
            group = None
            pfc.setdefault(port, {})[int(m.group("cos"))] = {
                "rx_pause_frames": int(m.group("rx")), "tx_pause_frames": int(m.group("tx"))}
    return pfc, queues


def parse_pfc_queue_detail(text: str) -> WatchdogByPort:
    """``show queuing pfc-queue detail`` -> {port: {qos-group: WatchdogCounters}}."""
    out: WatchdogByPort = {}
    port = ""
    group: int | None = None
    for raw in text.splitlines():
        line = raw.strip()
        m = _WD_PORT.match(line)
        if m:
            port, group = m.group(1), None
            continue
        m = _WD_GROUP.match(line)
        if m and port:
            group = int(m.group(1))
            state = m.group(2).strip()
            out.setdefault(port, {})[group] = {
                "status": state, "stormed": any(w in state.lower() for w in _STORM_WORDS),
                "storms_detected": UNKNOWN, "storms_restored": UNKNOWN}
            continue
        m = _WD_ROW.match(line)
        if m and port and group is not None:
            key = "storms_detected" if m.group(1) == "Shutdown" else "storms_restored"
            out[port][group][key] = int(m.group(2))  # type: ignore[literal-required]
    return out


def parse_interface_pfc(text: str) -> PfcOperByPort:
    """``show interface priority-flow-control`` -> {port: {mode, oper, vl_bitmap, rx_ppp, tx_ppp}}."""
    out: PfcOperByPort = {}
    for line in text.splitlines():
        m = _PFC_PORT.match(line.strip())
        if m:
            bmap = m.group("bmap")
            out[m.group("port")] = {
                "mode": m.group("mode"), "oper": m.group("oper").lower() == "on",
                "vl_bitmap": int(bmap, 16) if bmap and all(c in "0123456789abcdefABCDEF" for c in bmap) else UNKNOWN,
                "rx_ppp": int(m.group("rx")), "tx_ppp": int(m.group("tx"))}
    return out


def parse_ip_load_sharing(text: str) -> dict[str, str]:
    """``show ip load-sharing`` -> {"load-share mode": ..., "rotate": ..., "universal-id": ...} (what it prints)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        for key, pattern in _LOAD_SHARING:
            m = pattern.match(line)
            if m and key not in out:
                out[key] = " ".join(m.group(1).split())
    return out


def _cli(driver: Cli, command: str) -> str:
    return once(driver, command, lambda: str(driver.cli([command])[command]))


class NxosHealthGetters:
    """NX-OS through napalm's ``cli()``."""

    def get_pfc_counters(self: Cli) -> PfcByPort:
        return parse_queuing_interface(_cli(self, "show queuing interface"))[0]

    def get_queue_counters(self: Cli) -> QueuesByPort:
        return parse_queuing_interface(_cli(self, "show queuing interface"))[1]

    def get_port_ecn_marked(self) -> dict[str, int]:
        return {}

    def get_pfc_watchdog(self: Cli) -> WatchdogByPort:
        return parse_pfc_queue_detail(_cli(self, "show queuing pfc-queue detail"))

    def get_pfc_oper(self: Cli) -> PfcOperByPort:
        return parse_interface_pfc(_cli(self, "show interface priority-flow-control"))

    def get_pg_watermarks(self) -> PgByPort:
        return {}

    def get_ecmp_hash(self: Cli) -> dict[str, str]:
        """The ECMP hash as the switch runs it (``show ip load-sharing``)."""
        return parse_ip_load_sharing(_cli(self, "show ip load-sharing"))
