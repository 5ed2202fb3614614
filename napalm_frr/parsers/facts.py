"""get_facts' sources -- ``vtysh -c 'show version'``, the facts probe's ``key=value`` lines, ``/proc/uptime`` --
and the frr_defaults probe (the defaults profile each FRR daemon runs with, which validate compares)."""

from __future__ import annotations

import re

_SHOW_VERSION_RE = re.compile(r"^FRRouting\s+(\S+)\s+\(([^)]*)\)", re.MULTILINE)


def parse_show_version(text: str) -> tuple[str, str]:
    """``vtysh -c 'show version'`` -> (os_version, FRR hostname).

    First line: ``FRRouting 8.4.4 (sw1) on Linux(6.1.0).``
    """
    m = _SHOW_VERSION_RE.search(text)
    if not m:
        return "", ""
    return m.group(1), m.group(2)


def parse_key_values(text: str) -> dict[str, str]:
    """``key=value`` lines (the facts probe prints one per fact); later keys win."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_uptime(text: str) -> float:
    """``/proc/uptime`` first field -> seconds."""
    try:
        return float(text.split()[0])
    except (IndexError, ValueError):
        return -1.0


def parse_frr_defaults(text: str) -> dict[str, str]:
    """``<daemon> [<profile>]`` lines (napalm_frr's frr_defaults probe) -> {daemon: profile or ""}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        if words:
            out[words[0]] = words[1] if len(words) > 1 else ""
    return out
