"""Linux + FRR facts: addresses and BGP from frr.conf (no QoS, no MTU in its config)."""

from __future__ import annotations

from pathlib import Path

from fabricgen.plan.model import Plan
from fabricgen.platforms.facts import DeviceFacts, read_config, scan_frr
from fabricgen.platforms.linuxptp import CONF_FILE
from fabricgen.platforms.ptp_facts import PtpFacts, read_ptp4l

FRR_CONF = "frr.conf"
PTP_CONF = CONF_FILE  # the file platforms/frr/render.py writes


def extract_frr(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """Linux + FRR switch: addresses and BGP from frr.conf; no QoS, no MTU in its config."""
    f = DeviceFacts(host, "frr")
    text = read_config(f, configs, FRR_CONF)
    if text is not None:
        scan_frr(text.splitlines(), f, with_interfaces=True)
    return f


def ptp_frr(configs: Path, host: str) -> PtpFacts | None:
    """The boundary clock's ptp4l.conf (None: the switch has none)."""
    return read_ptp4l(configs / host / PTP_CONF)
