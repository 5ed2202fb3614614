"""The live NetBox and Nautobot servers tests/sot/servers.py starts: found, waited for, emptied.

`.ci/run` starts them in the background before the suite (`servers.py up --background`), so their
migrations overlap the other tests; the live SoT tests run last (see pytest_collection_modifyitems)
and wait for state.json to say ready, at most $FABRICGEN_SOT_WAIT seconds (default 2400), then fail
naming the server's log.  Without servers they skip locally and fail under CI
($FABRICGEN_REQUIRE_SHARED / $CI), like every test whose platform data is missing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import missing, shared_required
from tests.sot import servers

LIVE = "sot_live"


@dataclass(frozen=True)
class Server:
    name: str  # "netbox" | "nautobot"
    url: str
    token_file: Path

    @property
    def token(self) -> str:
        return self.token_file.read_text(encoding="utf-8").strip()

    @property
    def env(self) -> str:
        return f"FABRICGEN_{self.name.upper()}_TOKEN_FILE"


def wait_for(name: str) -> Server:
    """The server once ready; skip (locally) or fail (CI) when it was never started; fail when it broke."""
    limit = float(os.environ.get("FABRICGEN_SOT_WAIT", "2400"))
    deadline = time.monotonic() + limit
    while True:
        state = servers.read_state().get(name, {})
        status = state.get("status")
        if status == "ready":
            return Server(name, state["url"], Path(state["token_file"]))
        if status in (None, "down"):
            missing(f"{name} is not running (start it: make sot-servers; state {servers.STATE})")
        if status == "failed":
            pytest.fail(f"{name} failed to start: {state.get('error')}", pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail(f"{name} not ready after {limit:.0f} s (status {status}); see {servers.STATE}/{name}.log:\n"
                        f"{servers.tail(servers.STATE / f'{name}.log')}", pytrace=False)
        time.sleep(5)


@pytest.fixture(scope="session")
def netbox_server() -> Server:
    return wait_for("netbox")


@pytest.fixture(scope="session")
def nautobot_server() -> Server:
    return wait_for("nautobot")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Live SoT tests last: the servers migrate while the rest of the suite runs."""
    live = [i for i in items if i.get_closest_marker(LIVE)]
    if live:
        rest = [i for i in items if not i.get_closest_marker(LIVE)]
        items[:] = rest + live


__all__ = ["LIVE", "Server", "shared_required", "wait_for"]
