"""The lab switches' lossless counters: one file per port, in the text `ethtool -S` prints.

The lab's veths carry no PFC, so a lab switch cannot count pauses, queue drops or ECN marks.
Instead every switch keeps one file per cabled port under its own /run
(``LAB_COUNTERS_DIR``), in exactly the shape and with the counter
names `ethtool -S` shows for a port of an NVIDIA Spectrum switch under Linux's mlxsw driver
(fabricgen.platforms.frr.health).  The frr driver reads those files instead of `ethtool -S`
when `validate` targets a lab, over the same SSH; fault tests raise counters with :func:`bump`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

LAB_COUNTERS_DIR = "/run/fabricgen-counters"  # inside every lab switch (its own /run)
PRIORITIES = range(8)
TRAFFIC_CLASSES = range(8)


def zero_stats() -> dict[str, int]:
    """A port's counters in mlxsw's order, all zero (what a freshly cabled port shows)."""
    stats = {"ecn_marked": 0}
    for prio in PRIORITIES:
        for name in ("rx_octets_prio", "rx_frames_prio", "tx_octets_prio", "tx_frames_prio", "rx_pause_prio",
                     "rx_pause_duration_prio", "tx_pause_prio", "tx_pause_duration_prio"):
            stats[f"{name}_{prio}"] = 0
    for tc in TRAFFIC_CLASSES:
        stats[f"tc_transmit_queue_tc_{tc}"] = 0
        stats[f"tc_no_buffer_discard_uc_tc_{tc}"] = 0
    return stats


def render(stats: dict[str, int]) -> str:
    return "NIC statistics:\n" + "".join(f"     {name}: {value}\n" for name, value in stats.items())


def parse(text: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\w+):\s+(\d+)\s*$", text, re.MULTILINE)}


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)  # the driver reads the old file or the new one, never half of one


def host_dir(node_run: Path) -> Path:
    """LAB_COUNTERS_DIR of a node as the host sees it (``node_run``: the node's /run on the host)."""
    return node_run / LAB_COUNTERS_DIR.removeprefix("/run/")


def write_zero(directory: Path, ports: Iterable[str]) -> None:
    """One all-zero counter file per port (``directory`` is the node's LAB_COUNTERS_DIR, seen from the host)."""
    directory.mkdir(parents=True, exist_ok=True)
    for port in ports:
        _write(directory / port, render(zero_stats()))


def bump(directory: Path, port: str, increments: dict[str, int]) -> dict[str, int]:
    """Add ``increments`` to counters of one port's file; returns the new counters."""
    path = directory / port
    stats = parse(path.read_text())
    for name, value in increments.items():
        if name not in stats:
            raise KeyError(f"{path} has no counter {name!r} (counters: {', '.join(stats)})")
        stats[name] += value
    _write(path, render(stats))
    return stats
