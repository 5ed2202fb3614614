"""Every deploy test gets its own fabric locks and journals (fabricgen.deploy.state keys them by fabric, not by
build directory, so tests of the same fabric would otherwise see each other's unfinished runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import STATE_ENV


@pytest.fixture(autouse=True)
def own_deploy_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))
