"""The render manifest: what was rendered, from which intent, and whether it was checked.

``render`` writes ``manifest.json`` into its output: the SHA-256 of every file, the hash of
the intent it came from, and whether the checks ran and passed.  ``deploy`` and ``validate``
push and compare exactly those files (never a fresh render), and refuse any file that
changed after the check or was rendered with ``--no-check`` unless ``--force``, naming the
file.  ``fabricgen check`` on a hand-edited build records the new bytes once they pass, so
a reviewed edit is deployable and an unreviewed one is not.

The manifest holds no clock and no absolute path: the same intent renders it byte-identically.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.catalog.registry import platform
from fabricgen.errors import FabricError, Problem
from fabricgen.plan.model import Plan, Switch

MANIFEST = "manifest.json"
VERSION = 1
CONFIGS = "configs"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def intent_sha256(plan: Plan) -> str:
    """Hash of the resolved intent model (not its YAML text: comments and layout do not count)."""
    return plan.settings.intent_sha256


def _files(root: Path) -> Iterable[Path]:
    """Every rendered file under ``root``; dot files and directories (caches, markers) are not output."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and not (dirpath == str(root) and name == MANIFEST):
                yield Path(dirpath, name)


def text_sha256(data: bytes | bytearray) -> str:
    """The hash ``file_sha256`` gives a file holding ``data``: render hashes what it writes while it has it."""
    return hashlib.sha256(data).hexdigest()


def write(root: Path, plan: Plan, checked: bool, known: Mapping[str, str] | None = None) -> Path:
    """Write ``root/manifest.json`` for the files under ``root`` (called by render before its swap).

    ``known``: hashes of files by relative path, taken as they were written; every other file is read.
    """
    known = known or {}
    files: dict[str, str] = {}
    for p in _files(root):
        rel = p.relative_to(root).as_posix()
        files[rel] = known.get(rel) or file_sha256(p)
    doc = {"version": VERSION, "fabric": plan.settings.name, "intent_sha256": intent_sha256(plan),
           "checks": {"ran": checked, "passed": checked}, "files": files}
    path = root / MANIFEST
    _atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return path


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@dataclass
class Build:
    """A rendered output directory and its manifest, as deploy and validate read it."""

    root: Path
    fabric: str
    intent: str
    checks_ran: bool
    files: dict[str, str] = field(default_factory=dict)
    manifest_sha256: str = ""

    @property
    def label(self) -> str:
        """One line naming the build: where, from which intent, checked or not."""
        checked = "checks passed" if self.checks_ran else "rendered with --no-check"
        return (f"build {self.root} (manifest sha256 {self.manifest_sha256[:12]}, intent sha256 "
                f"{self.intent[:12]}, {checked})")

    def config_files(self, sw: Switch) -> dict[str, Path]:
        """The rendered files of one switch, by file name (what its driver takes as a candidate)."""
        prefix = f"{CONFIGS}/{sw.hostname}/"
        return {rel[len(prefix):]: self.root / rel for rel in self.files if rel.startswith(prefix)}

    def problems(self, switches: Iterable[Switch]) -> list[str]:
        """Why these switches' files may not be pushed as they are (empty = fine)."""
        out = []
        if not self.checks_ran:
            out.append(f"{self.root} was rendered with --no-check: its configs were never checked "
                       f"(fix: run `fabricgen render` without --no-check, or `fabricgen check` on it)")
        for sw in switches:
            files = self.config_files(sw)
            if not files:
                out.append(f"{self.root / CONFIGS / sw.hostname}: no rendered config for {sw.hostname} in the "
                           f"manifest (fix: run `fabricgen render`)")
            for _name, path in sorted(files.items()):
                want = self.files[path.relative_to(self.root).as_posix()]
                try:
                    got = file_sha256(path)
                except OSError as exc:
                    out.append(f"{path}: unreadable ({exc.strerror}) (fix: run `fabricgen render`)")
                    continue
                if got != want:
                    out.append(f"{path} changed after it was rendered and checked (sha256 {got[:12]}, manifest "
                               f"{want[:12]}) (fix: run `fabricgen check` on the build to record the reviewed "
                               f"edit, or `fabricgen render` to discard it)")
        return out


def load(root: str | Path, plan: Plan) -> Build:
    """Read ``root/manifest.json``; exit-2 errors when it is missing or belongs to another intent."""
    root = Path(root).resolve()
    path = root / MANIFEST
    try:
        raw = path.read_bytes()
        doc: Any = json.loads(raw)
    except FileNotFoundError:
        raise FabricError(str(path), [Problem("manifest", "no render manifest: this is not a fabricgen build",
                                              f"run `fabricgen render -o {root}` first")]) from None
    except (OSError, ValueError) as exc:
        raise FabricError(str(path), [Problem("manifest", f"unreadable ({exc})",
                                              f"run `fabricgen render -o {root}` again")]) from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("files"), dict):
        raise FabricError(str(path), [Problem("manifest", "not a version-1 fabricgen manifest",
                                              f"run `fabricgen render -o {root}` again")])
    want = intent_sha256(plan)
    if doc.get("fabric") != plan.settings.name or doc.get("intent_sha256") != want:
        raise FabricError(str(path), [Problem(
            "intent_sha256", f"{root} was rendered from another intent (fabric {doc.get('fabric')!r}, intent "
                             f"sha256 {str(doc.get('intent_sha256'))[:12]}; -i gives fabric "
                             f"{plan.settings.name!r}, sha256 {want[:12]})",
            f"run `fabricgen render -i <intent> -o {root}` with the intent you deploy")])
    checks = doc.get("checks") or {}
    return Build(root=root, fabric=str(doc["fabric"]), intent=want,
                 checks_ran=bool(checks.get("ran") and checks.get("passed")),
                 files={str(k): str(v) for k, v in doc["files"].items()},
                 manifest_sha256=hashlib.sha256(raw).hexdigest())


def record_check(root: Path, passed: bool) -> bool:
    """After ``fabricgen check`` of a whole build: record the checked bytes (only when it passed).

    Returns True when the manifest was updated.  A failed check leaves it as it was, so files
    edited since the render stay refused.
    """
    path = root / MANIFEST
    if not passed or not path.is_file():
        return False
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["files"] = {p.relative_to(root).as_posix(): file_sha256(p) for p in _files(root)}
    doc["checks"] = {"ran": True, "passed": True}
    _atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return True


def candidate_config(build: Build, sw: Switch) -> str:
    """The rendered, checked file(s) of ``sw`` in the form its driver takes as a replace candidate."""
    files = build.config_files(sw)
    record = platform(sw.platform)
    if record.candidate == "json-bundle":  # every file in one JSON document keyed by file name (napalm_sonic)
        texts = {name: files[name].read_text(encoding="utf-8") for name in record.files}
        return json.dumps({name: json.loads(text) if name.endswith(".json") else text for name, text in texts.items()},
                          indent=2, sort_keys=True)
    services = [name for name in record.service_files if name in files]
    if services:  # the main file and the service files it renders, keyed by file name (napalm_frr.services)
        return json.dumps({name: files[name].read_text(encoding="utf-8") for name in (record.main_file, *services)},
                          indent=2, sort_keys=True)
    return files[record.main_file].read_text(encoding="utf-8")


def setup_script(build: Build, sw: Switch) -> str:
    """The switch's rendered, checked setup script (its record's `lab_script`: what must exist on the host
    before its config applies, e.g. Linux + FRR's tenant namespaces), "" when it has none."""
    name = platform(sw.platform).lab_script
    path = build.config_files(sw).get(name) if name else None
    return path.read_text(encoding="utf-8") if path is not None else ""
