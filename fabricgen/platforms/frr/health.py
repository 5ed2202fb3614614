"""Lossless counters of a Linux switch port from ``ethtool -S`` (the ``frr`` platform).

A Linux + FRR switch on an NVIDIA Spectrum ASIC runs the in-kernel switchdev driver mlxsw,
whose ``ethtool -S`` names (drivers/net/ethernet/mellanox/mlxsw/spectrum_ethtool.c) are:

* per priority N (0-7): ``rx_pause_prio_N`` / ``tx_pause_prio_N`` (PFC pause frames),
  ``rx_frames_prio_N`` / ``tx_frames_prio_N``, ``rx_octets_prio_N`` / ``tx_octets_prio_N``;
* per traffic class N: ``tc_no_buffer_discard_uc_tc_N`` (unicast drops for want of buffer) and
  ``tc_transmit_queue_tc_N`` (the queue's depth now, in bytes: not a counter);
* per port: ``ecn_marked`` (ECN-marked packets; mlxsw has no per-queue ECN counter).

Linux has no PFC watchdog and ethtool no buffer watermarks: those getters are empty here.
fabricgen plans traffic class = priority, so ``tx_frames_prio_N`` is what queue N sent.

The command output of many ports is one text: each port's ``ethtool -S`` after a
``### <port>`` line (see fabricgen.platforms.frr.health).
"""

from __future__ import annotations

import re
import shlex

from fabricgen.platforms.getter_kit import Shell, once
from fabricgen.platforms.health import UNKNOWN, PfcByPort, PgByPort, QueuesByPort, WatchdogByPort, queue_counters

# `ethtool -S` of mlx5/mlxsw netdevs, one `### <port>` section per port
_PORT = re.compile(r"^### (\S+)\s*$")
_STAT = re.compile(r"^\s+([A-Za-z0-9_.\-\[\]]+):\s+(\d+)\s*$")
_PRIO = re.compile(r"^(rx_pause|tx_pause|tx_frames|tx_octets)_prio_(\d)$")
_TC = re.compile(r"^tc_no_buffer_discard_uc_tc_(\d+)$")


def parse_sections(text: str) -> dict[str, dict[str, int]]:
    """``### port`` + ``ethtool -S`` blocks -> {port: {stat name: value}}."""
    out: dict[str, dict[str, int]] = {}
    port = ""
    for line in text.splitlines():
        m = _PORT.match(line)
        if m:
            port = m.group(1)
            out.setdefault(port, {})
            continue
        m = _STAT.match(line)
        if m and port:
            out[port][m.group(1)] = int(m.group(2))
    return out


def pfc_counters(stats: dict[str, dict[str, int]]) -> PfcByPort:
    out: PfcByPort = {}
    for port, values in stats.items():
        for name, value in values.items():
            m = _PRIO.match(name)
            if m and m.group(1) in ("rx_pause", "tx_pause"):
                c = out.setdefault(port, {}).setdefault(int(m.group(2)),
                                                        {"rx_pause_frames": UNKNOWN, "tx_pause_frames": UNKNOWN})
                c[f"{m.group(1)}_frames"] = value  # type: ignore[literal-required]
    return out


def queue_counters_of(stats: dict[str, dict[str, int]]) -> QueuesByPort:
    out: QueuesByPort = {}
    for port, values in stats.items():
        for name, value in values.items():
            m = _PRIO.match(name)
            tc = _TC.match(name)
            if m and m.group(1) in ("tx_frames", "tx_octets"):
                q = out.setdefault(port, {}).setdefault(int(m.group(2)), queue_counters())
                q["tx_packets" if m.group(1) == "tx_frames" else "tx_bytes"] = value
            elif tc:
                out.setdefault(port, {}).setdefault(int(tc.group(1)), queue_counters())["dropped_packets"] = value
    return out


def port_ecn_marked(stats: dict[str, dict[str, int]]) -> dict[str, int]:
    return {port: values["ecn_marked"] for port, values in stats.items() if "ecn_marked" in values}


ETHTOOL_ALL_PORTS = ('for p in $(ls /sys/class/net); do [ "$p" = lo ] && continue; '
                     'echo "### $p"; ethtool -S "$p" 2>/dev/null; done')


def counters_dir_command(directory: str) -> str:
    """Every file of ``directory`` after a ``### <file name>`` line (the lab's per-port counter files)."""
    return (f'for f in {shlex.quote(directory.rstrip("/"))}/*; do [ -f "$f" ] || continue; '
            'echo "### ${f##*/}"; cat "$f"; done')


# the kernel's ECMP hash sysctls (platforms/frr/render.py kernel_hash); a kernel without one prints nothing for it
KERNEL_HASH_KEYS = tuple(f"net/{family}/fib_multipath_hash_{what}" for family in ("ipv4", "ipv6")
                         for what in ("policy", "fields"))
KERNEL_HASH_COMMAND = ("for k in " + " ".join(KERNEL_HASH_KEYS) + '; do [ -r "/proc/sys/$k" ] && '
                       'echo "$k $(cat "/proc/sys/$k")"; done; true')


def parse_kernel_hash(text: str) -> dict[str, str]:
    """``net/ipv4/fib_multipath_hash_policy 1`` lines -> {"net.ipv4.fib_multipath_hash_policy": "1"}; a value
    in hex (``0x0037``, as some kernels print the fields) is given in decimal, as `kernel_hash` writes it."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in KERNEL_HASH_KEYS:
            try:
                out[parts[0].replace("/", ".")] = str(int(parts[1], 0))
            except ValueError:
                out[parts[0].replace("/", ".")] = parts[1]
    return out


def _port_stats(driver: Shell) -> dict[str, dict[str, int]]:
    directory = driver.optional_args.get("counters_dir")
    command = counters_dir_command(str(directory)) if directory else ETHTOOL_ALL_PORTS
    return parse_sections(once(driver, command, lambda: driver._check(driver._host_sh(command))))


class LinuxHealthGetters:
    """frr platform: ``ethtool -S`` (or the lab's counter files)."""

    def get_pfc_counters(self: Shell) -> PfcByPort:
        return pfc_counters(_port_stats(self))

    def get_queue_counters(self: Shell) -> QueuesByPort:
        return queue_counters_of(_port_stats(self))

    def get_port_ecn_marked(self: Shell) -> dict[str, int]:
        return port_ecn_marked(_port_stats(self))

    def get_pfc_watchdog(self) -> WatchdogByPort:
        """Linux has no PFC watchdog."""
        return {}

    def get_pg_watermarks(self) -> PgByPort:
        return {}

    def get_ecmp_hash(self: Shell) -> dict[str, str]:
        """The kernel's ECMP hash sysctls (the lab's switches forward in the kernel)."""
        return parse_kernel_hash(self._check(self._host_sh(KERNEL_HASH_COMMAND)))
