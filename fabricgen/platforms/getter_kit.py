"""How a platform's health getters read a switch: the two kinds of driver they run on, and one read cache.

Each platform's getter mixin (platforms/<os>/health.py) runs its commands through `once`, so the
getters of one read (`health.read_snapshot`) share each command's output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fabricgen.platforms.health import READ_CACHE


class Shell(Protocol):
    """A driver that runs commands on the switch's Linux host (frr, sonic)."""

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


class Cli(Protocol):
    """A driver with napalm's cli() (nxos_fabricgen)."""

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]: ...
