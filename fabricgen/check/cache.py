"""Per-file result cache for the expensive file checks (SONiC YANG, FRR parser).

A file's findings are stored whole (an empty list for a clean file, every finding of a
broken one) under the SHA-256 of its path and bytes, in ``<configs>/../.check-cache/<checker>.json``.
The cache file also records a *salt*: a hash of everything else the result depends on (the
checker's own source files, the validating library's version, the YANG models' contents,
vtysh's identity).  A different salt discards the whole file, so a cached result is only
ever reused for the same bytes checked by the same code against the same models.

Only this run's files are written back, so the cache never grows beyond one fabric.  A file
that cannot be read gets no key and is always checked.  `fabricgen check --no-cache` skips it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from fabricgen.base.findings import Finding

DIRNAME = ".check-cache"
FORMAT = 1


def cache_dir(configs: Path) -> Path:
    return Path(configs).resolve().parent / DIRNAME


def digest(parts: Iterable[bytes | str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def files_digest(paths: Iterable[Path]) -> str:
    """Hash of the names and contents of some files (source files, YANG models)."""
    parts: list[bytes | str] = []
    for p in sorted(Path(x) for x in paths):
        parts += [p.name, p.read_bytes() if p.is_file() else b"<missing>"]
    return digest(parts)


class ResultCache:
    """Findings per file for one checker, valid for one salt."""

    def __init__(self, root: Path, checker: str, salt: str) -> None:
        self.path = Path(root) / f"{checker}.json"
        self.salt = f"{FORMAT}:{salt}"
        self.old: dict[str, list[list[str]]] = {}
        self.new: dict[str, list[list[str]]] = {}
        self.hits = 0
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("salt") == self.salt and isinstance(data.get("files"), dict):
            self.old = data["files"]

    @staticmethod
    def key(path: Path) -> str | None:
        """SHA-256 of the path and the bytes of a file; None when it cannot be read (always checked)."""
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        return digest([str(path), data])

    def get(self, key: str | None) -> list[Finding] | None:
        if key is None:
            return None
        rows = self.old.get(key)
        if rows is None:
            return None
        try:
            found = [Finding(r[0], r[1], r[2], r[3], r[4], "warning" if r[5] == "warning" else "error") for r in rows]
        except (IndexError, TypeError):
            return None
        self.new[key] = rows
        self.hits += 1
        return found

    def put(self, key: str | None, findings: list[Finding]) -> None:
        if key is not None:
            self.new[key] = [[f.device, f.file, f.location, f.rule, f.message, f.severity] for f in findings]

    def save(self) -> None:
        """Write this run's entries (atomically; a cache that cannot be written is only a slower next run)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.path.name, dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"salt": self.salt, "files": self.new}, out, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError:
            pass
