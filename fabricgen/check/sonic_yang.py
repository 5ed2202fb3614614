"""Validate SONiC config_db.json files against SONiC's own YANG models (libyang).

Why: SONiC only rejects a bad config_db entry at runtime (or silently ignores it), so a
generated fabric must pass the same YANG models that `config apply-patch` / GCU use
before it ever reaches a switch.

How, one concern per module:

* check.yang_models finds (or fetches) the models of the pinned SONiC commit;
* check.yang_schema loads every module into ONE libyang context per process, so must/when
  expressions that reach into other modules (mostly DEVICE_METADATA) are evaluated, and
  indexes the config_db tables the models define;
* check.configdb_to_yang translates native config_db into YANG-JSON instance data, typed
  per leaf as RFC 7951 wants, remembering where each entry came from;
* check.yang_errors turns libyang's first error into a finding at its config_db JSON
  pointer and drops the offending node, so the loop here parses again and gets further;
* check.sonic_shapes validates each distinct ConfigDB shape once (and says why that is exact).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from fabricgen.base.findings import Finding
from fabricgen.catalog.rules import ids
from fabricgen.check.configdb_to_yang import ConfigDbToYang
from fabricgen.check.yang_errors import LoopState, YangErrorLocator
from fabricgen.check.yang_models import resolve_yang_dir
from fabricgen.check.yang_schema import build_tables, load_context, quiet_libyang_log

(RULE,) = ids("config", "sonic-yang")
MAX_ERRORS_PER_FILE = 200
# Below this many files a process pool costs more (one context per worker) than it saves.
_POOL_MIN_FILES = 16


class SonicYangValidator:
    """One libyang context with every SONiC module; validate many config_db dicts with it."""

    def __init__(self, yang_dir: Path | None = None) -> None:
        self.yang_dir = resolve_yang_dir(yang_dir)
        self.ctx = load_context(self.yang_dir)
        self.tables = build_tables(self.ctx)
        self._to_yang = ConfigDbToYang(self.ctx, self.tables)
        self._errors = YangErrorLocator(self.ctx, self.tables)

    def validate(self, config_db: dict[str, Any], device: str, file: str) -> list[Finding]:
        """All YANG errors of one config_db, each located by JSON pointer into config_db."""
        if not isinstance(config_db, dict):
            return [Finding(device, file, "", RULE, "config_db must be a JSON object of tables")]
        quiet_libyang_log()
        conv = self._to_yang.convert(config_db)
        out = [Finding(device, file, loc, RULE, msg, sev) for loc, msg, sev in conv.findings]
        state = LoopState()
        for _ in range(MAX_ERRORS_PER_FILE):
            err = self._errors.first_error(conv.data) if conv.data else None
            if err is None:
                break
            report, progressed = self._errors.resolve(conv, state, *err)
            out.extend(Finding(device, file, loc, RULE, msg) for loc, msg in report)
            if not progressed:
                break
        else:
            out.append(Finding(device, file, "", RULE, f"more than {MAX_ERRORS_PER_FILE} YANG errors; stopped here"))
        return out


def device_name(config_db: Any, path: Path | str) -> str:
    """Hostname from DEVICE_METADATA.localhost, else the file's directory name."""
    meta = config_db.get("DEVICE_METADATA") if isinstance(config_db, dict) else None
    local = meta.get("localhost") if isinstance(meta, dict) else None
    host = local.get("hostname") if isinstance(local, dict) else None
    if isinstance(host, str) and host:
        return host
    return Path(path).resolve().parent.name or str(path)


_WORKER: SonicYangValidator | None = None


def _worker_init(yang_dir: str) -> None:
    global _WORKER
    _WORKER = SonicYangValidator(Path(yang_dir))


def check_sonic_file(validator: SonicYangValidator, path: Path, base: dict[str, Any] | None = None,
                     validate: Callable[[Any, str, str], list[Finding]] | None = None) -> list[Finding]:
    """Every finding of one config_db.json file (unreadable, not JSON, or YANG).

    `validate` replaces `validator.validate`: check.sonic_shapes.Shapes.validate runs libyang once per clean
    ConfigDB shape (that module says why a file of a clean shape then has exactly no findings).

    With `base` (the device-owned part: platforms.sonic_buffers.device_base) the file is fabricgen's
    part of a ConfigDB: what is validated is the merge of the two, as the SONiC driver pushes it
    (platforms.sonic_configdb.merge_owned); a table or field the device owns is a finding.
    """
    try:
        text = path.read_text()
    except OSError as exc:
        return [Finding(device_name(None, path), str(path), "", RULE, f"cannot read: {exc.strerror}")]
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        return [Finding(device_name(None, path), str(path), f"L{exc.lineno}", RULE, f"not valid JSON: {exc.msg}")]
    if base is not None and isinstance(config, dict):
        from fabricgen.platforms.sonic.configdb import OwnershipError, merge_owned

        try:
            config = merge_owned(base, config, check_references=False)  # libyang resolves the leafrefs
        except OwnershipError as exc:
            return [Finding(device_name(config, path), str(path), "", RULE, f"not deployable on the device: {exc}")]
    return (validate or validator.validate)(config, device_name(config, path), str(path))


def _check_in_worker(path: str) -> list[Finding]:
    assert _WORKER is not None
    return check_sonic_file(_WORKER, Path(path))


def check_sonic_configs(paths: list[Path], yang_dir: Path | None = None, workers: int | None = None) -> list[Finding]:
    """Validate many config_db.json files; one libyang context per worker process.

    `workers=None` uses every CPU once there are enough files to pay for the extra
    contexts (~0.35 s each); `workers=1` stays in this process.
    """
    root = resolve_yang_dir(yang_dir)
    if not paths:
        return []
    n = workers if workers is not None else (os.cpu_count() or 1)
    if workers is None and len(paths) < _POOL_MIN_FILES:
        n = 1
    n = max(1, min(n, len(paths)))
    if n == 1:
        validator = SonicYangValidator(root)
        return [f for p in paths for f in check_sonic_file(validator, Path(p))]
    chunk = max(1, min(64, len(paths) // (n * 4)))
    with ProcessPoolExecutor(max_workers=n, initializer=_worker_init, initargs=(str(root),)) as pool:
        results = pool.map(_check_in_worker, [str(p) for p in paths], chunksize=chunk)
        return [f for batch in results for f in batch]
