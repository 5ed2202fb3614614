"""Counter deltas between two reads, judged against the intent's ``health:`` limits.

Pure functions: (plan, switch, two Snapshots, limits) -> findings.  Only planned ports are
judged; the plan says which priorities are lossless, which queue carries RoCE and which CNPs
(fabricgen plans traffic class = PFC priority = queue).  Every failure names the device, port,
priority or queue, counter, delta, window and limit.

Rules: the ``health`` ids of catalog/rules.py, which says what fails each.

A counter that went backwards in the window was cleared (SONiC's ``sonic-clear``) or the
device restarted: its value then counts since the reset, a lower bound, and the finding says so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fabricgen.catalog.rules import ids
from fabricgen.plan.model import HealthLimits, QosPolicy, Switch
from fabricgen.platforms.health import UNKNOWN, Snapshot
from fabricgen.validate.checks import Outcome

RULES = ids("health")  # catalog/rules.py documents each
STATES = ("oper", "status")  # findings about a state, not a counter delta


@dataclass(frozen=True)
class Delta:
    value: int
    reset: bool = False  # the counter went backwards: ``value`` counts since the reset (a lower bound)


def delta(before: int | None, after: int | None) -> Delta | None:
    """after - before; None when either read is unknown."""
    if before is None or after is None or before == UNKNOWN or after == UNKNOWN:
        return None
    if after < before:
        return Delta(after, reset=True)
    return Delta(after - before)


@dataclass(frozen=True)
class Finding:
    """One counter over its limit."""

    device: str
    rule: str
    port: str
    unit: str  # "priority" or "queue"
    number: int
    counter: str
    delta: int
    window: float
    limit: str
    detail: str = ""
    reset: bool = False

    def outcome(self) -> Outcome:
        if self.rule == "counters":
            return Outcome(self.device, self.rule, self.port, False, self.limit, self.detail)
        what = f"{self.port} {self.unit} {self.number} {self.counter}"
        if self.counter in STATES:  # a state now, not a count over the window
            return Outcome(self.device, self.rule, what, False, self.limit, self.detail)
        actual = f"{self.delta} in {self.window:.1f} s window"
        if self.detail:
            actual += f" ({self.detail})"
        if self.reset:
            actual += " (the counter was reset during the window: at least this many)"
        return Outcome(self.device, self.rule, what, False, self.limit, actual)


def per_minute(value: int, window: float) -> float:
    return value * 60.0 / window if window > 0 else float(value)


@dataclass
class SwitchHealth:
    """The verdict on one switch: findings, plus one passing outcome per rule that was judged."""

    device: str
    findings: list[Finding]
    judged: dict[str, int]  # rule -> planned ports it was judged on
    window: float
    notes: list[str]  # what its counters could not show (the rules not judged)

    def outcomes(self) -> list[Outcome]:
        out = [f.outcome() for f in self.findings]
        failed = {f.rule for f in self.findings}
        for rule in RULES:
            if rule in self.judged and rule not in failed:
                out.append(Outcome(self.device, rule, f"{self.judged[rule]} planned port(s)", True,
                                   "within limits", f"within limits over {self.window:.1f} s"))
        return out


def judge_switch(sw: Switch, qos: QosPolicy, limits: HealthLimits, before: Snapshot, after: Snapshot) -> SwitchHealth:
    """Every rule on every planned port of ``sw`` (see the module docstring)."""
    window = max(after.taken - before.taken, 1e-3)
    if not after.supported:
        return SwitchHealth(sw.hostname, [], {}, window,
                            [f"lossless counters are not read on platform {after.platform} yet: nothing judged"])
    lossless = set(qos.lossless_tcs)
    lossless_queues = {qos.tc_to_queue[tc] for tc in lossless}
    roce_q, cnp_q, cnp_prio = qos.tc_to_queue[qos.roce_tc], qos.tc_to_queue[qos.cnp_tc], qos.cnp_tc
    findings: list[Finding] = []
    judged: dict[str, int] = {}
    missing: list[str] = []

    here: set[str] = set()  # the rules judged on the current port

    def seen(rule: str) -> None:
        here.add(rule)

    def fail(rule: str, port: str, unit: str, number: int, counter: str, d: Delta, limit: str,
             detail: str = "") -> None:
        findings.append(Finding(sw.hostname, rule, port, unit, number, counter, d.value, window, limit, detail,
                                d.reset))

    for itf in sw.interfaces:
        for rule in here:
            judged[rule] = judged.get(rule, 0) + 1
        here.clear()
        port = itf.name
        pfc_a, queues_a = after.pfc.get(port), after.queues.get(port)
        if pfc_a is None and queues_a is None:
            missing.append(port)
            continue
        seen("counters")
        pfc_b, queues_b = before.pfc.get(port, {}), before.queues.get(port, {})
        # --- PFC pause frames per priority
        for prio, now in sorted((pfc_a or {}).items()):
            was = pfc_b.get(prio)
            for counter, before_n, after_n in (
                    ("rx_pause_frames", was["rx_pause_frames"] if was else None, now["rx_pause_frames"]),
                    ("tx_pause_frames", was["tx_pause_frames"] if was else None, now["tx_pause_frames"])):
                d = delta(before_n, after_n)
                if d is None:
                    continue
                if prio in lossless:
                    seen("pfc-pause")
                    rate = per_minute(d.value, window)
                    if rate > limits.max_pause_per_minute:
                        fail("pfc-pause", port, "priority", prio, counter, d,
                             f"at most {limits.max_pause_per_minute} per minute",
                             f"{rate:.0f} per minute: a pause storm" if rate > 10 * max(1, limits.max_pause_per_minute)
                             else f"{rate:.0f} per minute")
                else:
                    seen("pfc-lossy")
                    if d.value > 0:
                        what = "the CNP priority" if prio == cnp_prio else "a priority that is not lossless"
                        fail("pfc-lossy", port, "priority", prio, counter, d, f"0 ({what} is never paused)",
                             "PFC frames on it: a peer pauses a class the plan keeps lossy")
        # --- queues: drops and ECN marks
        for q, now_q in sorted((queues_a or {}).items()):
            was_q = queues_b.get(q)
            drops = delta(was_q["dropped_packets"] if was_q else None, now_q["dropped_packets"])
            if drops is not None and q in lossless_queues:
                seen("lossless-drops")
                if drops.value > limits.max_lossless_drops:
                    fail("lossless-drops", port, "queue", q, "dropped_packets", drops,
                         f"at most {limits.max_lossless_drops} per window", "drops on a lossless queue")
            if drops is not None and q == cnp_q:
                seen("cnp-drops")
                if drops.value > limits.max_cnp_drops:
                    fail("cnp-drops", port, "queue", q, "dropped_packets", drops,
                         f"at most {limits.max_cnp_drops} per window", "lost CNPs: senders do not slow down")
            marks = delta(was_q["ecn_marked_packets"] if was_q else None, now_q["ecn_marked_packets"])
            if marks is not None and q != roce_q:
                seen("ecn-queue")
                if marks.value > 0:
                    fail("ecn-queue", port, "queue", q, "ecn_marked_packets", marks,
                         f"0 (ECN marks belong on the RoCE queue {roce_q} only)",
                         "ECN configured on the wrong queue, or RoCE classified into this one")
        # --- ECN share of the RoCE queue (per-queue marks, else the port's)
        roce_now, roce_was = (queues_a or {}).get(roce_q), queues_b.get(roce_q)
        sent = delta(roce_was["tx_packets"] if roce_was else None, roce_now["tx_packets"] if roce_now else None)
        marks = delta(roce_was["ecn_marked_packets"] if roce_was else None,
                      roce_now["ecn_marked_packets"] if roce_now else None)
        scope = ""
        if marks is None:
            marks = delta(before.port_ecn_marked.get(port), after.port_ecn_marked.get(port))
            scope = " (ECN marks counted per port)"
        if sent is not None and marks is not None:
            seen("ecn-share")
            if sent.value >= limits.ecn_min_packets and marks.value > limits.max_ecn_marked_share * sent.value:
                share = marks.value / sent.value
                fail("ecn-share", port, "queue", roce_q, "ecn_marked_packets", marks,
                     f"at most {limits.max_ecn_marked_share:.0%} of the RoCE queue's packets",
                     f"{share:.1%} of {sent.value} packets{scope}: congestion every window")
        # --- PFC operational on the port, for the lossless priorities
        oper = after.pfc_oper.get(port)
        if oper is not None:
            seen("pfc-oper")
            missing_cos = [tc for tc in sorted(lossless) if oper["vl_bitmap"] != UNKNOWN
                           and not oper["vl_bitmap"] >> tc & 1]
            if not oper["oper"] or missing_cos:
                what = "PFC is operationally off" if not oper["oper"] else \
                    f"PFC is not operational on priority {', '.join(map(str, missing_cos))}"
                fail("pfc-oper", port, "priority", min(lossless), "oper", Delta(0), "PFC on",
                     f"{what} (mode {oper['mode']}): the lossless class is lossy on this port")
        # --- PFC watchdog
        for q, wd in sorted(after.watchdog.get(port, {}).items()):
            seen("pfc-watchdog")
            was_wd = before.watchdog.get(port, {}).get(q)
            detected = delta(was_wd["storms_detected"] if was_wd else None, wd["storms_detected"])
            restored = delta(was_wd["storms_restored"] if was_wd else None, wd["storms_restored"])
            if detected is not None and per_minute(detected.value, window) > limits.max_watchdog_storms_per_minute:
                flapping = restored is not None and restored.value > 0 and detected.value > 0
                rate = per_minute(detected.value, window)
                detail = (f"flapping: {detected.value} storm(s) detected and {restored.value} restored, "
                          f"{rate:.0f} per minute" if flapping and restored is not None
                          else f"{rate:.0f} storm(s) per minute")
                fail("pfc-watchdog", port, "queue", q, "storms_detected", detected,
                     f"at most {limits.max_watchdog_storms_per_minute} per minute", detail)
            elif wd["stormed"]:
                fail("pfc-watchdog", port, "queue", q, "status", Delta(0), "not in a storm",
                     f"the watchdog holds the queue in a storm now (status {wd['status']})")
    for rule in here:
        judged[rule] = judged.get(rule, 0) + 1
    if missing:
        findings.insert(0, Finding(sw.hostname, "counters", ", ".join(missing), "priority", -1, "all", 0, window,
                                   "counters on every planned port",
                                   f"no PFC or queue counters read from {len(missing)} planned port(s)"))
    return SwitchHealth(sw.hostname, findings, judged, window, gaps(after))


def gaps(snap: Snapshot) -> list[str]:
    """What this switch's counters could not show, so the rules that need it were not judged."""
    from fabricgen.catalog.registry import capabilities

    out = []
    if not any(snap.watchdog.values()):
        why = "the platform has no PFC watchdog" if not capabilities(snap.platform).pfc_watchdog \
            else "no queue is watched"
        out.append(f"no PFC watchdog counters ({why}): pfc-watchdog not judged")
    if not any(q["ecn_marked_packets"] >= 0 for queues in snap.queues.values() for q in queues.values()):
        how = "counted per port only: ecn-share uses the port's count" if snap.port_ecn_marked \
            else "not shown: ecn-share not judged"
        out.append(f"ECN marks per queue not shown (ecn-queue not judged); ECN marks {how}")
    return out


def all_outcomes(results: Iterable[SwitchHealth]) -> list[Outcome]:
    return [o for r in results for o in r.outcomes()]
