"""`validate --format prometheus`: counters and verdicts in the Prometheus text exposition format.

For node_exporter's textfile collector: write the output to ``<dir>/fabricgen.prom`` (``--output``
renames it into place, so the collector never reads half a file).  prometheus_client's own
generator writes the text, so names, label escaping and HELP/TYPE lines follow the format.
Counters are the raw values of the second read (Prometheus computes rates); the window's findings
and every check's pass/fail count are gauges.  Same input, same text: families and samples are
sorted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from fabricgen.platforms.health import UNKNOWN
from fabricgen.platforms.ptp_state import ClockState
from fabricgen.validate.checks import Report

if TYPE_CHECKING:
    from fabricgen.validate.health_collect import HealthRun

PREFIX = "fabricgen"


class _Families:
    """A prometheus_client collector that yields families built beforehand."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        return iter(self.families)


def _counter(name: str, doc: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(f"{PREFIX}_{name}", doc, labels=labels)


def _gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", doc, labels=labels)


def _health_families(run: HealthRun) -> list[Metric]:
    pfc = _counter("pfc_pause_frames", "PFC pause frames per port, priority and direction",
                   ["device", "port", "priority", "direction"])
    q_pkts = _counter("queue_packets", "Packets sent by an egress queue", ["device", "port", "queue"])
    q_drop = _counter("queue_dropped_packets", "Packets dropped by an egress queue", ["device", "port", "queue"])
    q_ecn = _counter("queue_ecn_marked_packets", "ECN-marked packets of an egress queue", ["device", "port", "queue"])
    q_wm = _gauge("queue_watermark_bytes", "Shared-buffer peak of an egress queue", ["device", "port", "queue"])
    pg_wm = _gauge("pg_watermark_bytes", "Shared-buffer peak of an ingress priority group", ["device", "port", "pg"])
    port_ecn = _counter("port_ecn_marked_packets", "ECN-marked packets of a port (platforms that count per port)",
                        ["device", "port"])
    wd = _counter("pfc_watchdog_storms", "PFC watchdog storms per queue", ["device", "port", "queue", "event"])
    wd_now = _gauge("pfc_watchdog_stormed", "1 while the PFC watchdog holds the queue in a storm",
                    ["device", "port", "queue"])
    window = _gauge("health_window_seconds", "Seconds between the two counter reads", ["device"])
    finding = _gauge("health_finding_delta", "A counter over its limit: its delta over the window",
                     ["device", "rule", "port", "unit", "number", "counter"])
    for dev in sorted(run.snapshots):
        snap = run.snapshots[dev]
        for port in sorted(snap.pfc):
            for prio, c in sorted(snap.pfc[port].items()):
                for direction in ("rx", "tx"):
                    value = c["rx_pause_frames" if direction == "rx" else "tx_pause_frames"]
                    if value != UNKNOWN:
                        pfc.add_metric([dev, port, str(prio), direction], value)
        for port in sorted(snap.queues):
            for q, qc in sorted(snap.queues[port].items()):
                labels = [dev, port, str(q)]
                for family, value in ((q_pkts, qc["tx_packets"]), (q_drop, qc["dropped_packets"]),
                                      (q_ecn, qc["ecn_marked_packets"]), (q_wm, qc["watermark_bytes"])):
                    if value != UNKNOWN:
                        family.add_metric(labels, value)
        for port in sorted(snap.pg_watermarks):
            for pg, pgc in sorted(snap.pg_watermarks[port].items()):
                if pgc["shared_bytes"] != UNKNOWN:
                    pg_wm.add_metric([dev, port, str(pg)], pgc["shared_bytes"])
        for port, value in sorted(snap.port_ecn_marked.items()):
            port_ecn.add_metric([dev, port], value)
        for port in sorted(snap.watchdog):
            for q, w in sorted(snap.watchdog[port].items()):
                for event, value in (("detected", w["storms_detected"]), ("restored", w["storms_restored"])):
                    if value != UNKNOWN:
                        wd.add_metric([dev, port, str(q), event], value)
                wd_now.add_metric([dev, port, str(q)], 1 if w["stormed"] else 0)
    for sh in sorted(run.switches, key=lambda s: s.device):
        window.add_metric([sh.device], round(sh.window, 3))
        for f in sh.findings:
            finding.add_metric([f.device, f.rule, f.port, f.unit, str(f.number), f.counter], f.delta)
    return [pfc, q_pkts, q_drop, q_ecn, q_wm, pg_wm, port_ecn, wd, wd_now, window, finding]


def _ptp_families(readings: dict[str, dict[str, ClockState]]) -> list[Metric]:
    """Every PTP clock's offset, mean path delay, steps removed and sync age (a clock that does not show
    one, or a grandmaster, has no offset, delay or age sample); ``clock`` is "" for a switch's boundary
    clock, the NIC for a server's."""
    labels = ["device", "clock"]
    families = {
        "offset_ns": _gauge("ptp_offset_ns", "PTP offset from master in nanoseconds", labels),
        "path_delay_ns": _gauge("ptp_mean_path_delay_ns", "PTP mean path delay in nanoseconds", labels),
        "steps_removed": _gauge("ptp_steps_removed", "PTP steps removed from the grandmaster", labels),
        "last_sync_s": _gauge("ptp_last_sync_seconds", "Seconds since the last PTP Sync from the master", labels),
    }
    for dev in sorted(readings):
        for clock, state in sorted(readings[dev].items()):
            for key, family in families.items():
                if state["steps_removed"] == 0 and key != "steps_removed":
                    continue  # a grandmaster has no master to measure against
                value = state.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    family.add_metric([dev, clock], float(value))
    return list(families.values())


def render(report: Report, run: HealthRun | None = None) -> str:
    """The whole report (and the health run's counters, if any) as Prometheus text."""
    ok = _gauge("validate_ok", "1 when every check passed", [])
    ok.add_metric([], 1 if report.ok else 0)
    checked = _gauge("validate_checked", "Outcomes per check", ["check"])
    failed = _gauge("validate_failed", "Failed outcomes per check", ["check"])
    failure = _gauge("validate_failure", "1 per failed outcome", ["device", "check", "item"])
    for check in sorted({o.check for o in report.outcomes}):
        items = [o for o in report.outcomes if o.check == check]
        checked.add_metric([check], len(items))
        failed.add_metric([check], sum(1 for o in items if not o.ok))
    for o in sorted(report.failures, key=lambda o: (o.device, o.check, o.item)):
        failure.add_metric([o.device, o.check, o.item], 1)
    families: list[Metric] = [ok, checked, failed, failure]
    if run is not None:
        families += _health_families(run)
    if report.ptp:
        families += _ptp_families(report.ptp)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(families))
    return generate_latest(registry).decode("utf-8")
