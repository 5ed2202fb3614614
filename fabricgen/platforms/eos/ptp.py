"""EOS PTP state from ``show ptp`` JSON (eAPI through napalm's ``cli(encoding="json")``), for `validate --ptp`.

The keys read are those ANTA's PTP tests read and its unit data records (aristanetworks/anta,
anta/tests/ptp.py and tests/units/anta_tests/test_ptp.py): ``ptpMode`` (``ptpBoundaryClock``),
``ptpClockSummary`` (``clockIdentity``, ``gmClockIdentity``, ``offsetFromMaster``, ``meanPathDelay``,
``stepsRemoved``, ``lastSyncTime`` and ``currentPtpSystemTime`` in seconds) and ``ptpIntfSummaries``
(per interface, ``ptpIntfVlanSummaries[].portState``: ``psMaster``, ``psSlave``, ``psPassive``,
``psDisabled``, ...).  ``show ptp`` shows neither the domain nor the parent clock: those stay unknown.
"""

from __future__ import annotations

from typing import Any

from fabricgen.platforms.ptp_state import ClockState, clock_state, identity

MODES = {"ptpBoundaryClock": "boundary", "ptpOrdinaryClock": "ordinary", "ptpDisabled": "disabled"}


def _state(word: str) -> str:
    """``psMaster`` -> ``MASTER``."""
    return word.removeprefix("ps").upper() if word else ""


def parse_eos_show_ptp(doc: dict[str, Any]) -> ClockState:
    """``show ptp`` (JSON) -> ClockState."""
    summary = doc.get("ptpClockSummary") or {}
    ports: dict[str, str] = {}
    for name, intf in sorted((doc.get("ptpIntfSummaries") or {}).items()):
        vlans = intf.get("ptpIntfVlanSummaries") or [{}]
        ports[name] = _state(str(vlans[0].get("portState", "")))
    last = None
    if "lastSyncTime" in summary and "currentPtpSystemTime" in summary:
        last = float(summary["currentPtpSystemTime"]) - float(summary["lastSyncTime"])

    def num(key: str) -> float | None:
        return float(summary[key]) if key in summary else None

    steps = summary.get("stepsRemoved")
    mode = str(doc.get("ptpMode", ""))
    return clock_state(identity=identity(str(summary.get("clockIdentity", ""))), mode=MODES.get(mode, mode),
                       grandmaster=identity(str(summary.get("gmClockIdentity", ""))),
                       steps_removed=int(steps) if steps is not None else None, offset_ns=num("offsetFromMaster"),
                       path_delay_ns=num("meanPathDelay"), last_sync_s=last, ports=ports)


class EosPtpGetters:
    """EOS through eAPI: one boundary clock."""

    def get_ptp_clocks(self, domain: int = 0) -> dict[str, ClockState]:
        """``domain`` is unused: ``show ptp`` shows the one clock."""
        out = self.cli(["show ptp"], encoding="json")  # type: ignore[attr-defined]
        return {"": parse_eos_show_ptp(out["show ptp"])}
