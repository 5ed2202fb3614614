"""The lossless-health getters: what they return (napalm style: typed dicts keyed by port, then by number),
the helpers every platform's getter mixin shares, and the read of one switch (`read_snapshot`).

========================  =======================================================
``get_pfc_counters``      PFC pause frames received/sent per priority
``get_queue_counters``    per egress queue: packets, bytes, drops, ECN marks, watermark
``get_pfc_watchdog``      per watched queue: state, storms detected/restored ({} = none)
``get_pg_watermarks``     per ingress priority group: shared-buffer peak ({} = none)
``get_port_ecn_marked``   ECN marks per port where the platform counts them per port only
``get_pfc_oper``          per port: PFC mode, operational state and CoS bitmap ({} = not shown)
========================  =======================================================

* ``frr`` (Linux + FRR): ``ethtool -S`` of every port (mlxsw names); optional_arg
  ``counters_dir`` reads the same text from one file per port in that directory instead (the
  live lab's counter source: its veths carry no PFC);
* ``sonic``: sonic-utilities' ``show`` commands (fabricgen.platforms.sonic.health);
* ``nxos_fabricgen``: napalm's ``cli()`` with ``show queuing interface``,
  ``show queuing pfc-queue detail`` and ``show interface priority-flow-control``
  (fabricgen.platforms.nxos.health).


Every getter is keyed by the device's own port name, then by PFC priority, queue or priority
group (fabricgen plans traffic class = PFC priority = queue = PG, and NX-OS qos-group = TC).
A counter a platform does not report is ``-1`` (napalm's convention for unsupported counters);
a getter of a feature the platform lacks returns ``{}``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypedDict

UNKNOWN = -1
READ_CACHE = "_fabricgen_health_read"  # driver attribute holding one read's command outputs (getters.once)


class PfcCounters(TypedDict):
    """PFC pause frames of one priority on one port."""

    rx_pause_frames: int
    tx_pause_frames: int


class QueueCounters(TypedDict):
    """One egress queue of one port."""

    tx_packets: int
    tx_bytes: int
    dropped_packets: int
    ecn_marked_packets: int
    watermark_bytes: int  # shared-buffer peak since it was last cleared (a gauge, not a counter)


class WatchdogCounters(TypedDict):
    """The PFC watchdog of one lossless queue."""

    status: str  # the platform's word: "operational", "stormed", "Active", "Shutdown", ...
    stormed: bool  # the queue is in a storm now (stopped, dropping or forwarding past PFC)
    storms_detected: int
    storms_restored: int


class PgWatermark(TypedDict):
    """Ingress priority group buffer peak of one port."""

    shared_bytes: int


class PfcOper(TypedDict):
    """PFC of one port as a whole: configured mode, whether it is operational, total pause frames."""

    mode: str  # "On", "Auto", "Off"
    oper: bool
    vl_bitmap: int  # PFC-enabled CoS bits as operational (bit n = CoS n), -1 when not shown
    rx_ppp: int
    tx_ppp: int


PfcByPort = dict[str, dict[int, PfcCounters]]
PfcOperByPort = dict[str, PfcOper]
QueuesByPort = dict[str, dict[int, QueueCounters]]
WatchdogByPort = dict[str, dict[int, WatchdogCounters]]
PgByPort = dict[str, dict[int, PgWatermark]]


def queue_counters(tx_packets: int = UNKNOWN, tx_bytes: int = UNKNOWN, dropped_packets: int = UNKNOWN,
                   ecn_marked_packets: int = UNKNOWN, watermark_bytes: int = UNKNOWN) -> QueueCounters:
    return {"tx_packets": tx_packets, "tx_bytes": tx_bytes, "dropped_packets": dropped_packets,
            "ecn_marked_packets": ecn_marked_packets, "watermark_bytes": watermark_bytes}


@dataclass
class Snapshot:
    """One read of every health getter of one switch."""

    device: str
    platform: str
    taken: float = field(default_factory=time.monotonic)
    pfc: PfcByPort = field(default_factory=dict)
    queues: QueuesByPort = field(default_factory=dict)
    watchdog: WatchdogByPort = field(default_factory=dict)
    pg_watermarks: PgByPort = field(default_factory=dict)
    port_ecn_marked: dict[str, int] = field(default_factory=dict)  # where ECN marks are counted per port only
    pfc_oper: PfcOperByPort = field(default_factory=dict)  # where the platform shows PFC's operational state
    supported: bool = True  # False: the driver has no health getters (nothing to judge)


def read_snapshot(device: object, name: str, platform: str) -> Snapshot:
    """Call every health getter the driver has; a getter it lacks reads as ``{}``."""
    def call(getter: str) -> Any:
        fn = getattr(device, getter, None)
        return fn() if fn is not None else {}

    snap = Snapshot(name, platform, supported=hasattr(device, "get_pfc_counters"))
    if not snap.supported:
        return snap
    setattr(device, READ_CACHE, {})
    try:
        snap.pfc = call("get_pfc_counters")
        snap.queues = call("get_queue_counters")
        snap.watchdog = call("get_pfc_watchdog")
        snap.pg_watermarks = call("get_pg_watermarks")
        snap.port_ecn_marked = call("get_port_ecn_marked")
        snap.pfc_oper = call("get_pfc_oper")
    finally:
        setattr(device, READ_CACHE, None)
    snap.taken = time.monotonic()
    return snap


# fabricgen's own getters (napalm's base driver has none of them): driver extensions
HEALTH_GETTERS = ("get_pfc_counters", "get_queue_counters", "get_pfc_watchdog", "get_pg_watermarks",
                  "get_port_ecn_marked", "get_pfc_oper")
