"""tests/sot/servers.py finds its Pythons on a fresh machine: CI runs with an empty HOME, maybe no $PYENV_ROOT."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sot import servers


def _fake_python(path: Path, prints: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {prints}\n", encoding="utf-8")
    path.chmod(0o755)


def test_python_found_through_pyenv_shims_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "pyenv"
    _fake_python(root / "versions" / "3.12.4" / "bin" / "python3.12", "3.12")
    _fake_python(root / "shims" / "python3.12", "3.11")  # the shim runs the global version: not 3.12
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.delenv("FABRICGEN_PYTHON312", raising=False)
    monkeypatch.setenv("PATH", f"{root / 'shims'}:/usr/bin:/bin")
    assert servers._python("3.12") == str(root / "versions" / "3.12.4" / "bin" / "python3.12")


def test_python_that_does_not_run_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "pyenv"
    _fake_python(root / "shims" / "python3.99", "3.11")  # pyenv's shim for a version it lacks
    (root / "versions").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.delenv("FABRICGEN_PYTHON399", raising=False)
    monkeypatch.setenv("PATH", f"{root / 'shims'}:/usr/bin:/bin")
    with pytest.raises(RuntimeError, match="no Python 3.99 found"):
        servers._python("3.99")
