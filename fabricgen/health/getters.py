"""The lossless-health getters, one mixin per platform, mixed into fabricgen's napalm drivers.

Getters (napalm style, typed dicts from fabricgen.health.models, keyed by port then number):

========================  =======================================================
``get_pfc_counters``      PFC pause frames received/sent per priority
``get_queue_counters``    per egress queue: packets, bytes, drops, ECN marks, watermark
``get_pfc_watchdog``      per watched queue: state, storms detected/restored ({} = none)
``get_pg_watermarks``     per ingress priority group: shared-buffer peak ({} = none)
``get_port_ecn_marked``   ECN marks per port where the platform counts them per port only
``get_pfc_oper``          per port: PFC mode, operational state and CoS bitmap ({} = not shown)
========================  =======================================================

* ``frr`` (Linux + FRR): ``ethtool -S`` of every port (mlxsw names); optional_arg
  ``counters_dir`` reads the same text from one file per port in that directory instead (the
  live lab's counter source: its veths carry no PFC);
* ``sonic``: sonic-utilities' ``show`` commands (fabricgen.health.parse_sonic);
* ``nxos_fabricgen``: napalm's ``cli()`` with ``show queuing interface``,
  ``show queuing pfc-queue detail`` and ``show interface priority-flow-control``
  (fabricgen.health.parse_nxos).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any, Protocol

from fabricgen.health import parse_ethtool, parse_nxos, parse_sonic
from fabricgen.health.models import READ_CACHE, PfcByPort, PfcOperByPort, PgByPort, QueuesByPort, WatchdogByPort

# fabricgen's own getters (napalm's base driver has none of them): driver extensions
HEALTH_GETTERS = ("get_pfc_counters", "get_queue_counters", "get_pfc_watchdog", "get_pg_watermarks",
                  "get_port_ecn_marked", "get_pfc_oper")
ETHTOOL_ALL_PORTS = ('for p in $(ls /sys/class/net); do [ "$p" = lo ] && continue; '
                     'echo "### $p"; ethtool -S "$p" 2>/dev/null; done')


def counters_dir_command(directory: str) -> str:
    """Every file of ``directory`` after a ``### <file name>`` line (the lab's per-port counter files)."""
    return (f'for f in {shlex.quote(directory.rstrip("/"))}/*; do [ -f "$f" ] || continue; '
            'echo "### ${f##*/}"; cat "$f"; done')


class _Shell(Protocol):
    optional_args: dict[str, Any]

    def _check(self, command: str, stdin: str | None = None, timeout: float | None = None) -> str: ...

    def _host_sh(self, command: str) -> str: ...


def once(driver: object, command: str, run: Callable[[], str]) -> str:
    """``run()``, but only once per command within one read (``read_snapshot`` opens a read cache on the
    driver): several getters parse the same output, and a 64-port `show queuing interface` is long."""
    cache = getattr(driver, READ_CACHE, None)
    if cache is None:
        return run()
    if command not in cache:
        cache[command] = run()
    return str(cache[command])


def _port_stats(driver: _Shell) -> dict[str, dict[str, int]]:
    directory = driver.optional_args.get("counters_dir")
    command = counters_dir_command(str(directory)) if directory else ETHTOOL_ALL_PORTS
    return parse_ethtool.parse_sections(once(driver, command, lambda: driver._check(driver._host_sh(command))))


class LinuxHealthGetters:
    """frr platform: ``ethtool -S`` (or the lab's counter files)."""

    def get_pfc_counters(self: _Shell) -> PfcByPort:
        return parse_ethtool.pfc_counters(_port_stats(self))

    def get_queue_counters(self: _Shell) -> QueuesByPort:
        return parse_ethtool.queue_counters_of(_port_stats(self))

    def get_port_ecn_marked(self: _Shell) -> dict[str, int]:
        return parse_ethtool.port_ecn_marked(_port_stats(self))

    def get_pfc_watchdog(self) -> WatchdogByPort:
        """Linux has no PFC watchdog."""
        return {}

    def get_pg_watermarks(self) -> PgByPort:
        return {}


def _show(driver: _Shell, command: str, optional: bool = False) -> str | None:
    """A show command on the SONiC host; ``optional``: None when it fails (a command older releases
    lack: its counters read as unknown)."""
    from napalm.base.exceptions import CommandErrorException

    try:
        return driver._check(driver._host_sh(command))
    except CommandErrorException:
        if optional:
            return None
        raise


class SonicHealthGetters:
    """sonic platform: sonic-utilities' show commands on the host."""

    def get_pfc_counters(self: _Shell) -> PfcByPort:
        return parse_sonic.parse_pfc_counters(_show(self, "show pfc counters") or "")

    def get_queue_counters(self: _Shell) -> QueuesByPort:
        counters = parse_sonic.parse_queue_counters(_show(self, "show queue counters --json") or "{}")
        wred = _show(self, "show queue wredcounters --json", optional=True)
        marks = _show(self, "show queue watermark unicast --json", optional=True)
        return parse_sonic.merge_queues(counters, parse_sonic.parse_wred_counters(wred) if wred else {},
                                        parse_sonic.parse_watermarks(marks, "UC") if marks else {})

    def get_port_ecn_marked(self) -> dict[str, int]:
        return {}

    def get_pfc_watchdog(self: _Shell) -> WatchdogByPort:
        return parse_sonic.parse_pfcwd_stats(_show(self, "show pfcwd stats") or "")

    def get_pg_watermarks(self: _Shell) -> PgByPort:
        text = _show(self, "show priority-group watermark shared --json", optional=True)
        return parse_sonic.pg_watermarks(parse_sonic.parse_watermarks(text, "PG")) if text else {}


class _Cli(Protocol):
    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]: ...


def _cli(driver: _Cli, command: str) -> str:
    return once(driver, command, lambda: str(driver.cli([command])[command]))


class NxosHealthGetters:
    """NX-OS through napalm's ``cli()``."""

    def get_pfc_counters(self: _Cli) -> PfcByPort:
        return parse_nxos.parse_queuing_interface(_cli(self, "show queuing interface"))[0]

    def get_queue_counters(self: _Cli) -> QueuesByPort:
        return parse_nxos.parse_queuing_interface(_cli(self, "show queuing interface"))[1]

    def get_port_ecn_marked(self) -> dict[str, int]:
        return {}

    def get_pfc_watchdog(self: _Cli) -> WatchdogByPort:
        return parse_nxos.parse_pfc_queue_detail(_cli(self, "show queuing pfc-queue detail"))

    def get_pfc_oper(self: _Cli) -> PfcOperByPort:
        return parse_nxos.parse_interface_pfc(_cli(self, "show interface priority-flow-control"))

    def get_pg_watermarks(self) -> PgByPort:
        return {}
