"""`validate --ptp`: every planned PTP clock as it runs, against the plan's PTP topology and the intent's
thresholds (rules ``ptp-*`` of stage ``ptp`` in catalog/rules.py).

The checks follow ANTA's PTP tests (boundary-clock mode, the expected grandmaster, last sync under a
limit, offset within a limit, port states) and add what the plan knows and ANTA cannot: the steps
removed and the parent of every clock, and each port's role.  Switches are read through their
napalm driver's ``get_ptp_clocks`` (platforms/ptp_state.py and each platform's getter); servers and
grandmaster hosts over SSH with the same pmc script a Linux switch runs.

Port states accepted: a port planned toward the grandmaster is SLAVE or PASSIVE -- or UNCALIBRATED when
the intent asks for software timestamping, because there ptp4l only measures (``free_running 1``) and
its servo never locks, so the port never leaves UNCALIBRATED (docs/ptp.md); a port planned away from
it is MASTER.  Offset, path delay and last sync are judged on every clock that has a master.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from nornir.core.task import Result, Task

from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan, PtpClock, PtpPlan
from fabricgen.platforms.ptp_state import ClockState, parse_pmc_sections, pmc_script
from fabricgen.validate.checks import Outcome

if TYPE_CHECKING:
    from nornir.core import Nornir

    from fabricgen.connect import ConnectionSettings

RULES = ids("ptp")
Readings = dict[str, dict[str, ClockState]]  # host -> {instance: clock} ("" = a switch's boundary clock)
MODE = {"boundary": "boundary", "client": "client", "standby": "", "grandmaster": ""}  # "" = not judged


def expected_states(ptp: PtpPlan, role: str) -> tuple[str, ...]:
    """The port states a port of that planned role may settle in (see the module docstring)."""
    if role == "downstream":
        return ("MASTER",)
    return ("SLAVE", "PASSIVE", "UNCALIBRATED") if ptp.timestamping == "software" else ("SLAVE", "PASSIVE")


def reading_of(key: str, clock: PtpClock, readings: Readings) -> ClockState | None:
    """The live state of one planned clock: a switch's one clock, a server NIC's, a grandmaster host's
    (its clock runs on its one PTP port, so its instance is that port)."""
    host, _, nic = key.partition("/")
    found = readings.get(host, {})
    if nic:
        return found.get(nic)
    if "" in found:
        return found[""]
    port = clock.ports[0].name if clock.ports else ""
    return found.get(port) or (next(iter(found.values())) if len(found) == 1 else None)


def _name(identity: str, names: Mapping[str, str]) -> str:
    return f"{names[identity]} ({identity})" if identity in names else identity or "(none)"


def check_ptp(plan: Plan, readings: Readings, unreachable: Mapping[str, str] | None = None,
              only: set[str] | None = None) -> list[Outcome]:
    """Every planned clock's outcomes; ``unreachable``: host -> why it could not be read at all; ``only``:
    judge the clocks of these hosts (``--limit``/``--role``), still naming grandmasters of all that was read."""
    ptp = plan.ptp
    if ptp is None:
        return []
    unreachable = unreachable or {}
    live = {key: reading_of(key, clock, readings) for key, clock in ptp.clocks.items()}
    names = {s["identity"]: key for key, s in live.items() if s is not None and s["identity"]}
    gm_state = live.get(ptp.grandmaster)
    gm_id = gm_state["identity"] if gm_state is not None else ""
    out: list[Outcome] = []
    for key, clock in ptp.clocks.items():
        host, _, nic = key.partition("/")
        if only is not None and host not in only:
            continue
        item = nic or "clock"
        state = live[key]
        if state is None or not state["identity"]:
            why = unreachable.get(host) or ("no ptp4l answers" if state is None else "ptp4l does not answer pmc")
            out.append(Outcome(host, "ptp-running", item, False, f"a PTP {clock.kind} clock answering", why))
            continue
        out.append(Outcome(host, "ptp-running", item, True, f"a PTP {clock.kind} clock answering", "answering"))
        out += _judge(host, item, clock, state, ptp, gm_id, names)
    return out


def _judge(host: str, item: str, clock: PtpClock, s: ClockState, ptp: PtpPlan, gm_id: str,
           names: Mapping[str, str]) -> list[Outcome]:
    """One answering clock against its planned place and the thresholds."""
    out: list[Outcome] = []

    def add(check: str, what: str, ok: bool, expected: str, actual: str) -> None:
        out.append(Outcome(host, check, what, ok, expected, actual))

    if s["domain"] is not None:
        add("ptp-domain", item, s["domain"] == ptp.domain, f"domain {ptp.domain}", f"domain {s['domain']}")
    if MODE[clock.kind] and s["mode"]:
        add("ptp-mode", item, s["mode"] == MODE[clock.kind], MODE[clock.kind], s["mode"])
    planned_gm = f"{ptp.grandmaster} ({gm_id})" if gm_id else f"{ptp.grandmaster} (not answering)"
    add("ptp-grandmaster", item, bool(gm_id) and s["grandmaster"] == gm_id, planned_gm,
        _name(s["grandmaster"], names))
    if s["steps_removed"] is not None:
        add("ptp-steps", item, s["steps_removed"] == clock.steps_removed, str(clock.steps_removed),
            str(s["steps_removed"]))
    if clock.parents and s["parent"]:
        parents = {i for i, k in names.items() if k.partition("/")[0] in clock.parents}
        add("ptp-parent", item, s["parent"] in parents, "one of " + ", ".join(clock.parents),
            _name(s["parent"], names))
    for port in clock.ports:
        allowed = expected_states(ptp, port.role)
        state = s["ports"].get(port.name, "(no such PTP port)")
        add("ptp-port-state", f"{port.name} ({port.role}, to {port.peer})", state in allowed, " or ".join(allowed),
            state)
    if clock.kind == "grandmaster":
        return out
    if s["last_sync_s"] is not None:
        add("ptp-last-sync", item, s["last_sync_s"] < ptp.last_sync_s, f"under {ptp.last_sync_s} s",
            f"{s['last_sync_s']:.1f} s")
    if s["offset_ns"] is not None:
        add("ptp-offset", item, abs(s["offset_ns"]) <= ptp.offset_ns, f"within +-{ptp.offset_ns} ns",
            f"{s['offset_ns']:.0f} ns")
    if s["path_delay_ns"] is not None:
        add("ptp-path-delay", item, s["path_delay_ns"] <= ptp.path_delay_ns, f"at most {ptp.path_delay_ns} ns",
            f"{s['path_delay_ns']:.0f} ns")
    return out


# --------------------------------------------------------------------------- collection


def read_task(task: Task, domain: int) -> Result:
    """nornir task: one switch's PTP clocks through its driver (``{}`` if the driver has no PTP getter)."""
    device = task.host.get_connection("napalm", task.nornir.config)
    getter = getattr(device, "get_ptp_clocks", None)
    return Result(host=task.host, result=getter(domain=domain) if getter is not None else {})


def collect_ptp(nr: Nornir, plan: Plan, creds: ConnectionSettings, workers: int,
                hosts: bool = True) -> tuple[Readings, dict[str, str]]:
    """Every planned clock's state: the switches of ``nr`` through nornir, and with ``hosts`` the servers'
    and grandmasters' over SSH."""
    from fabricgen.connect import describe, ssh_run

    ptp = plan.ptp
    assert ptp is not None
    planned = {c.hostname for c in ptp.clocks.values()}
    readings: Readings = {}
    unreachable: dict[str, str] = {}
    switches = nr.filter(filter_func=lambda h: h.name in planned)
    results = switches.run(task=read_task, domain=ptp.domain, on_failed=True)
    for host in sorted(results):
        multi = results[host]
        if multi.failed:
            exc = multi[0].exception
            unreachable[host] = describe(exc) if exc is not None else str(multi[0].result)
        else:
            readings[host] = multi[0].result
    servers = [h for h in plan.hosts() if h.name in planned] if hosts else []

    def one(name: str, ip: str) -> tuple[str, Readings | str]:
        try:
            return name, {name: parse_pmc_sections(ssh_run(ip, creds, pmc_script(ptp.domain)))}
        except Exception as exc:  # noqa: BLE001 - an unreachable host is a finding, not a crash
            return name, describe(exc)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for name, got in pool.map(lambda h: one(h.name, h.mgmt_ip), servers):
            if isinstance(got, str):
                unreachable[name] = got
            else:
                readings.update(got)
    return readings, unreachable
