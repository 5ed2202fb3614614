"""What a rendered config says about PTP: the domain, the PTP ports and the event DSCP (for `fabricgen check`).

Each platform with a PTP boundary clock names a reader in its registry record (`ptp_reader`); the check
(check/ptp.py) compares what the files say with the plan's PTP topology.  Two shapes cover every platform
fabricgen renders: an indented CLI (NX-OS, EOS: a global `ptp domain N` and a per-interface line) and
linuxptp's ini-style ptp4l.conf (`[global]` keys and one `[port]` section per port).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(slots=True)
class PtpFacts:
    """The PTP lines of one device's config; locations are "L<n>" of `file`."""

    file: str
    domain: int | None = None
    domain_loc: str = ""
    dscp: int | None = None  # event messages; None: the config does not set one
    dscp_loc: str = ""
    ports: dict[str, str] = field(default_factory=dict)  # PTP port -> loc of the line enabling it


def read_cli(path: Path, domain: str, port_line: str, dscp: str = "") -> PtpFacts | None:
    """An indented CLI config: `domain` and `dscp` match top-level lines (group 1: the number), `port_line`
    is the exact sub-line of an `interface X` block that puts X in PTP.  None: the file is missing."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    facts = PtpFacts(path.name)
    dom, dsc = re.compile(domain), re.compile(dscp) if dscp else None
    interface = ""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.startswith(" "):
            interface = line[len("interface "):].strip() if line.startswith("interface ") else ""
            m = dom.fullmatch(line.rstrip())
            if m:
                facts.domain, facts.domain_loc = int(m.group(1)), f"L{n}"
            m = dsc.fullmatch(line.rstrip()) if dsc is not None else None
            if m:
                facts.dscp, facts.dscp_loc = int(m.group(1)), f"L{n}"
        elif interface and line.rstrip() == port_line:
            facts.ports[interface] = f"L{n}"
    return facts


def read_ptp4l(path: Path) -> PtpFacts | None:
    """linuxptp's ptp4l.conf: domainNumber and dscp_event of [global], every other [section] a port."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    facts = PtpFacts(path.name)
    section = ""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            if section not in ("global", "unicast_master_table"):
                facts.ports[section] = f"L{n}"
            continue
        key, _, value = line.partition(" ")
        if section == "global" and key == "domainNumber" and value.strip().isdigit():
            facts.domain, facts.domain_loc = int(value), f"L{n}"
        elif section == "global" and key == "dscp_event" and value.strip().isdigit():
            facts.dscp, facts.dscp_loc = int(value), f"L{n}"
    return facts
