"""Recorded-output transport for driver tests (napalm's mocked-driver idea, per command).

A case directory holds ``commands.json``::

    {"<exact command string>": [{"stdout": "<file>", "stderr": "<file>", "exit_status": 0}, ...]}

Each command maps to the list of its responses in the order the device gave them
(a command run twice - ``frr-reload.py --test`` before and after a reload - has two);
the last response repeats.  ``stdout``/``stderr`` name files relative to the case
directory (``stdout_text``/``stderr_text`` give the text inline); an upload response
can say ``"stdout_sha256_of_stdin": "<path>"`` to answer with the digest of what was sent.
A command that is not in the map fails the test, and every command sent is kept in
``commands`` (with its stdin in ``stdins``) so tests assert the exact sequence.

``RecordingTransport`` wraps a live transport and writes such a directory, plus
``sequence.json`` (the ordered commands), so recorded outputs come from a real device.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path
from typing import Any

from fabricgen.base.ssh import CommandResult, Transport


class UnexpectedCommand(AssertionError):
    pass


class FakeTransport:
    def __init__(self, case_dir: Path, extra: dict[str, list[dict[str, Any]]] | None = None) -> None:
        self.case_dir = case_dir
        index_file = case_dir / "commands.json"
        self.responses: dict[str, list[dict[str, Any]]] = (
            json.loads(index_file.read_text(encoding="utf-8")) if index_file.exists() else {})
        if extra:
            self.responses.update(extra)
        self.used: dict[str, int] = {}
        self.commands: list[str] = []
        self.stdins: list[str | None] = []
        self.closed = False

    def _text(self, resp: dict[str, Any], key: str) -> str:
        if f"{key}_text" in resp:
            return str(resp[f"{key}_text"])
        name = resp.get(key)
        return (self.case_dir / name).read_text(encoding="utf-8") if name else ""

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: threading.Event | None = None) -> CommandResult:
        self.commands.append(command)
        self.stdins.append(stdin)
        if command not in self.responses:
            raise UnexpectedCommand(f"no recorded output for command: {command!r}")
        queue = self.responses[command]
        i = self.used.get(command, 0)
        self.used[command] = i + 1
        resp = queue[min(i, len(queue) - 1)]
        stdout = self._text(resp, "stdout")
        if resp.get("stdout_sha256_of_stdin"):  # an upload: `cat > f && sha256sum f` of what was sent
            stdout = f"{hashlib.sha256((stdin or '').encode()).hexdigest()}  {resp['stdout_sha256_of_stdin']}\n"
        return CommandResult(command, stdout, self._text(resp, "stderr"), int(resp.get("exit_status", 0)))

    def is_alive(self) -> bool:
        return not self.closed

    def close(self) -> None:
        self.closed = True


def _slug(command: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "_", command).strip("_")
    return s[:60] or "cmd"


class RecordingTransport:
    """Pass commands to ``inner`` and remember every exchange; ``save()`` writes a case dir."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.exchanges: list[CommandResult] = []

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: threading.Event | None = None) -> CommandResult:
        res = self.inner.run(command, stdin=stdin, timeout=timeout, cancel=cancel)
        self.exchanges.append(res)
        return res

    def is_alive(self) -> bool:
        return self.inner.is_alive()

    def close(self) -> None:
        self.inner.close()

    def save(self, case_dir: Path) -> None:
        case_dir.mkdir(parents=True, exist_ok=True)
        for old in case_dir.glob("[0-9][0-9][0-9]-*"):
            old.unlink()
        index: dict[str, list[dict[str, Any]]] = {}
        for n, res in enumerate(self.exchanges, 1):
            entry: dict[str, Any] = {"exit_status": res.exit_status}
            for key, text in (("stdout", res.stdout), ("stderr", res.stderr)):
                if text:
                    name = f"{n:03d}-{_slug(res.command)}.{'out' if key == 'stdout' else 'err'}"
                    (case_dir / name).write_text(text, encoding="utf-8")
                    entry[key] = name
            index.setdefault(res.command, []).append(entry)
        (case_dir / "commands.json").write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
        (case_dir / "sequence.json").write_text(
            json.dumps([r.command for r in self.exchanges], indent=2) + "\n", encoding="utf-8")
        self.exchanges = []
