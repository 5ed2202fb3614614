"""What a running PTP clock says about itself (`validate --ptp`): one shape for every platform, and
linuxptp's reader (Linux + FRR switches, servers' NIC clocks, grandmaster hosts).

Getters return napalm-style typed dicts: ``get_ptp_clocks()`` -> {instance: ClockState}, where the
instance is "" for a switch's one boundary clock and the NIC (ptp4l's uds_address suffix) for each of
a server's clocks.  A value the platform does not show is None (napalm's -1 would be a valid offset).

Clock identities are normalised to 16 lower-case hex digits: linuxptp prints ``6ef402.fffe.0a8b10``,
EOS ``0xcc:1a:a3:ff:ff:c3:bf:eb``, NX-OS ``ec:46:70:ff:fe:01:01:01`` (octets of one digit may drop
their leading zero: ``0x0:1:2:ff:fe:2:aa:bb``).

linuxptp: one ``pmc -u -b 0 -s <uds>`` per clock (linuxptp 3.1 management IDs, `man pmc`):

=====================  ==================================================================
DEFAULT_DATA_SET       clockIdentity, domainNumber, slaveOnly, numberPorts (mode)
CURRENT_DATA_SET       stepsRemoved, offsetFromMaster, meanPathDelay (ns)
PARENT_DATA_SET        parentPortIdentity, grandmasterIdentity
TIME_STATUS_NP         gmPresent, ingress_time (ns of the clock the last Sync arrived by)
PORT_PROPERTIES_NP     per port: portState and the interface name (PORT_DATA_SET has no name)
=====================  ==================================================================

The last sync's age is the host's CLOCK_REALTIME (``date +%s%N`` right after pmc) minus
``ingress_time``: with software timestamping both are the system clock; with a NIC's PHC the
difference is also the PHC's TAI-UTC offset (37 s), so the age is read from the PHC there too.
"""

from __future__ import annotations

import re
import shlex
from typing import TypedDict

from fabricgen.platforms.getter_kit import Shell, once

PTP_GETTERS = ("get_ptp_clocks",)  # fabricgen's own getter (napalm's base driver has none): a driver extension
PMC_QUERIES = ("DEFAULT_DATA_SET", "CURRENT_DATA_SET", "PARENT_DATA_SET", "TIME_STATUS_NP", "PORT_PROPERTIES_NP")
UDS_GLOB = "/var/run/ptp4l*"  # platforms.linuxptp.uds_address: ptp4l (a switch) or ptp4l-<ifname> (a NIC clock)
_RESPONSE = re.compile(r"^\s*(\S+)-(\d+) seq \d+ RESPONSE MANAGEMENT (\w+)\s*$")
_FIELD = re.compile(r"^\s+(\S+)\s+(.*?)\s*$")
_SECTION = re.compile(r"^### (uds|now) ?(\S*)\s*$")


class ClockState(TypedDict):
    """One PTP clock as it runs now."""

    identity: str  # 16 hex digits
    mode: str  # "boundary" | "ordinary" | "client" (slave-only) | "" (not shown)
    domain: int | None
    grandmaster: str  # the grandmaster's identity; its own when it has no master
    parent: str  # the parent clock's identity ("" when not shown)
    steps_removed: int | None
    offset_ns: float | None
    path_delay_ns: float | None
    last_sync_s: float | None  # seconds since the last Sync was received
    gm_present: bool | None
    ports: dict[str, str]  # port -> state in upper case: MASTER, SLAVE, PASSIVE, UNCALIBRATED, LISTENING, ...


def clock_state(**values: object) -> ClockState:
    """A ClockState with everything not given unknown."""
    state: ClockState = {"identity": "", "mode": "", "domain": None, "grandmaster": "", "parent": "",
                         "steps_removed": None, "offset_ns": None, "path_delay_ns": None, "last_sync_s": None,
                         "gm_present": None, "ports": {}}
    state.update(values)  # type: ignore[typeddict-item]
    return state


def identity(text: str) -> str:
    """A clock identity in any vendor's spelling -> 16 lower-case hex digits ("" when it is not one)."""
    raw = text.strip().lower().removeprefix("0x")
    parts = re.split(r"[:\-]", raw) if (":" in raw or "-" in raw) else None
    if parts is not None and len(parts) == 8 and all(re.fullmatch(r"[0-9a-f]{1,2}", p) for p in parts):
        return "".join(p.zfill(2) for p in parts)
    flat = raw.replace(".", "")
    return flat if re.fullmatch(r"[0-9a-f]{16}", flat) else ""


# --------------------------------------------------------------------------- linuxptp (pmc)


def pmc_script(domain: int, uds: str = UDS_GLOB) -> str:
    """Shell: for every ptp4l socket matching ``uds``, a ``### uds <path>`` line and pmc's answers, then
    ``### now <ns>``.  ptp4l answers management messages of its own domain only, so pmc asks in the
    planned ``domain`` first; a clock silent there is asked in every domain at once (0-127, pmc waits
    0.1 s each), so a clock in the wrong domain is named as such rather than as not answering."""
    queries = " ".join(shlex.quote(f"GET {q}") for q in PMC_QUERIES)
    scan = ('for d in $(seq 0 127); do (pmc -u -b 0 -d $d -s "$s" \'GET DEFAULT_DATA_SET\' 2>/dev/null '
            '| grep -q RESPONSE && echo $d) & done; wait')
    return (f'for s in {uds}; do [ -S "$s" ] || continue; echo "### uds $s"; '
            f'out=$(pmc -u -b 0 -d {int(domain)} -s "$s" {queries} 2>&1); '
            'case "$out" in *RESPONSE*) ;; *) d=$( (' + scan + ') | head -n 1); '
            f'[ -n "$d" ] && out=$(pmc -u -b 0 -d "$d" -s "$s" {queries} 2>&1);; esac; '
            'printf "%s\\n" "$out"; done; echo "### now $(date +%s%N)"')


def parse_pmc(text: str, now_ns: int | None) -> ClockState:
    """pmc's answers about one clock (the sections of ``PMC_QUERIES``) -> ClockState."""
    sections: dict[str, dict[str, str]] = {}
    ports: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        m = _RESPONSE.match(line)
        if m:
            if m.group(3) == "PORT_PROPERTIES_NP":
                current = ports.setdefault(m.group(2), {})
            else:
                current = sections.setdefault(m.group(3), {})
            continue
        f = _FIELD.match(line)
        if f and current is not None and not line.startswith("sending:"):
            current[f.group(1)] = f.group(2)
    dds, cds = sections.get("DEFAULT_DATA_SET", {}), sections.get("CURRENT_DATA_SET", {})
    pds, ts = sections.get("PARENT_DATA_SET", {}), sections.get("TIME_STATUS_NP", {})
    if not dds:
        return clock_state()
    slave_only, nports = dds.get("slaveOnly") == "1", _int(dds.get("numberPorts"))
    mode = "client" if slave_only else "boundary" if (nports or 0) > 1 else "ordinary"
    ingress = _int(ts.get("ingress_time"))
    last = round((now_ns - ingress) / 1e9, 3) if ingress and now_ns else None
    return clock_state(
        identity=identity(dds.get("clockIdentity", "")), mode=mode, domain=_int(dds.get("domainNumber")),
        grandmaster=identity(pds.get("grandmasterIdentity", "")),
        parent=identity(pds.get("parentPortIdentity", "").rsplit("-", 1)[0]),
        steps_removed=_int(cds.get("stepsRemoved")), offset_ns=_float(cds.get("offsetFromMaster")),
        path_delay_ns=_float(cds.get("meanPathDelay")), last_sync_s=last,
        gm_present=None if "gmPresent" not in ts else ts["gmPresent"] == "true",
        ports={p["interface"]: p.get("portState", "").upper() for _, p in sorted(ports.items()) if "interface" in p})


def parse_pmc_sections(text: str) -> dict[str, ClockState]:
    """``pmc_script`` output -> {instance: ClockState}: "" for ``/var/run/ptp4l``, the NIC for ptp4l-<nic>.
    A socket that answers nothing reads as a ClockState without identity (ptp4l is not answering)."""
    now = None
    blocks: dict[str, list[str]] = {}
    name = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m and m.group(1) == "now":
            now = _int(m.group(2))
            name = None
        elif m:
            name = instance_of(m.group(2))
            blocks[name] = []
        elif name is not None:
            blocks[name].append(line)
    return {name: parse_pmc("\n".join(lines), now) for name, lines in sorted(blocks.items())}


def instance_of(uds: str) -> str:
    """The clock instance of a ptp4l socket: "" for ptp4l, the NIC of ptp4l-<nic>."""
    base = uds.rsplit("/", 1)[-1]
    return base.split("-", 1)[1] if "-" in base else ""


class LinuxPtpGetters:
    """frr platform: pmc against the switch's ptp4l (the boundary clock, /var/run/ptp4l)."""

    def get_ptp_clocks(self: Shell, domain: int = 0) -> dict[str, ClockState]:
        command = pmc_script(domain)
        return parse_pmc_sections(once(self, command, lambda: self._check(self._host_sh(command))))


def _int(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _float(value: str | None) -> float | None:
    try:
        return float(str(value).strip())
    except ValueError:
        return None
