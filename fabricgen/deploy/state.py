"""One change at a time, and a record of how far it got: the fabric lock and the deploy journal.

Both are keyed by the fabric's identity - its name plus its switches (hostname and management
address) - never by where its build lives, so two builds of one fabric in different directories
share them (issue 23 D2).  They live in ``$FABRICGEN_STATE_DIR/deploy/`` (default
``$XDG_STATE_HOME/fabricgen/deploy/``, else ``~/.local/state/fabricgen/deploy/``):

* ``<fabric>-<id>.lock`` - created with O_EXCL for the whole deploy; holds its owner (user, host,
  PID and the PID's start time, run id, start time, command).  A second deploy is refused
  with the holder's name.  ``--break-lock`` takes over a lock whose owner is dead (or runs on
  another host, where fabricgen cannot tell); ``--resume`` takes over the lock of the run it
  resumes once that run's process is gone.
* ``<fabric>-<id>.journal.json`` - each device's phase (pending, locked, diffed, [draining, drained,]
  committing, committed, [undraining,] checked / unchanged, rolling_back, rolled_back, failed,
  interrupted, undetermined), rewritten
  atomically at every transition.  A journal whose run did not finish makes the next
  ``deploy`` refuse to start until ``--resume`` (continue it) or ``--discard`` (forget it).
  From ``committing`` on, a device's entry also holds the ``actions`` its change needs after
  the reload (``reset-bgp``: new keepalive/hold time apply only to re-established sessions);
  a resumed run carries them, with the phase the device was left in (``resumed_phase``), so a
  device whose config already went in still gets its sessions reset (issue 23 D1).
  ``undetermined`` is a device that went silent mid-commit (or whose failed commit could not be
  undone): the run ends unfinished, and ``--resume`` re-diffs it once it answers, taking over the
  device lock the run left on it (issue 23 D8).

Devices carry a lock of their own (see the drivers), taken for every selected device before any
commit, all or nothing, so two machines, or two fabric identities sharing switches, cannot
collide either.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import secrets
import socket
import sys
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabricgen.plan.model import Plan

STATE_ENV = "FABRICGEN_STATE_DIR"

# Journal phases.  A device in DONE_PHASES needs nothing more; every other phase is work left.
PENDING, LOCKED, DIFFED, COMMITTING, COMMITTED = "pending", "locked", "diffed", "committing", "committed"
CHECKED, UNCHANGED, ROLLING_BACK, ROLLED_BACK = "checked", "unchanged", "rolling_back", "rolled_back"
FAILED, INTERRUPTED = "failed", "interrupted"
# The device went silent mid-commit (or a failed commit could not be undone): its config is unknown.  Not
# done, so the journal stays unfinished and --resume retries it once it answers (issue 23 D8).
UNDETERMINED = "undetermined"
DRAINING, DRAINED, UNDRAINING = "draining", "drained", "undraining"  # --drain (fabricgen.deploy.drain)
DONE_PHASES = frozenset({CHECKED, UNCHANGED})
# Phases in which the device may hold a config that is neither the old nor the new one (a drained
# switch left behind is re-diffed by --resume, and its drain line removed with the rest).
UNSETTLED_PHASES = frozenset({COMMITTING, COMMITTED, ROLLING_BACK, DRAINING, DRAINED, UNDRAINING, UNDETERMINED})
# What a committed change still needs once its config is in (journaled with COMMITTING; see module doc).
RESET_BGP = "reset-bgp"


class DeployRefused(Exception):
    """A deploy that must not start (lock held, unfinished journal, ...); exit 2, nothing touched."""


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_run_id() -> str:
    return f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def _pid_start(pid: int) -> int | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()
    return int(fields[19]) if fields[0] not in "ZX" else None


@dataclass(frozen=True)
class Owner:
    """Who runs a deploy: enough to name them and to tell whether they still run."""

    run: str
    user: str
    host: str
    pid: int
    pid_start: int
    started: str
    command: str

    @classmethod
    def me(cls, run: str) -> Owner:
        pid = os.getpid()
        return cls(run=run, user=getpass.getuser(), host=socket.gethostname(), pid=pid,
                   pid_start=_pid_start(pid) or 0, started=now_iso(), command=" ".join(sys.argv[:1] + sys.argv[1:]))

    @classmethod
    def from_json(cls, data: Any) -> Owner | None:
        try:
            return cls(**{k: data[k] for k in cls.__dataclass_fields__})
        except (KeyError, TypeError):
            return None

    def alive(self) -> bool | None:
        """True/False on this host; None when the owner runs on another host (cannot tell)."""
        if self.host != socket.gethostname():
            return None
        return _pid_start(self.pid) == self.pid_start

    def describe(self) -> str:
        return (f"{self.user}@{self.host} pid {self.pid} (run {self.run}, since {self.started}: "
                f"{self.command})")


def state_dir() -> Path:
    """Where fabric locks and journals live (see module doc)."""
    env = os.environ.get(STATE_ENV)
    if env:
        return Path(env).expanduser() / "deploy"
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return base / "fabricgen" / "deploy"


def fabric_key(plan: Plan) -> str:
    """``<fabric>-<12 hex>``: the fabric name and a digest of its switches (hostname, management address)."""
    devices = sorted(f"{sw.hostname} {sw.mgmt_ip}" for sw in plan.switches.values())
    return f"{plan.settings.name}-{hashlib.sha256(chr(10).join(devices).encode()).hexdigest()[:12]}"


def journal_path(plan: Plan) -> Path:
    return Journal.path_for(state_dir(), fabric_key(plan))


def fabric_lock(plan: Plan) -> FabricLock:
    return FabricLock(state_dir(), plan.settings.name, fabric_key(plan))


class StateUnwritable(DeployRefused):
    """The fabric lock or the journal could not be written (disk full, read-only, ...); what was half
    written is removed."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_new(path: Path, text: str, exclusive: bool = False) -> None:
    """Create ``path`` (O_EXCL when ``exclusive``: FileExistsError if it exists) holding ``text``; on any
    failure nothing is left behind (no empty or partial file) and StateUnwritable names the file."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        try:
            _write_all(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        path.unlink(missing_ok=True)
        raise _unwritable(path, exc) from None


def _unwritable(path: Path, exc: OSError) -> StateUnwritable:
    return StateUnwritable(f"cannot write {path}: {exc.strerror or exc} (fix: free space or make "
                           f"{path.parent} writable - ${STATE_ENV} moves it - then run the deploy again)")


def _atomic_write(path: Path, text: str) -> None:
    """Write a temp file beside ``path``, then rename it over ``path``: readers see the old or the new text."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    _write_new(tmp, text)
    try:
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _unwritable(path, exc) from None


_TEMP_RE = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")


def reclaim_temp_files(directory: Path) -> list[Path]:
    """Remove the temp files of writers that no longer run (a deploy killed mid-write); returns them."""
    gone = []
    for path in directory.glob(".*.tmp"):
        m = _TEMP_RE.match(path.name)
        if m and int(m.group(1)) != os.getpid() and not Path(f"/proc/{m.group(1)}").exists():
            path.unlink(missing_ok=True)
            gone.append(path)
    return gone


class FabricLock:
    """The fabric-wide deploy lock (see module doc)."""

    def __init__(self, directory: Path, fabric: str, key: str | None = None) -> None:
        self.path = directory / f"{key or fabric}.lock"
        self.fabric = fabric
        self.owner: Owner | None = None

    def holder(self) -> Owner | None:
        try:
            return Owner.from_json(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def acquire(self, me: Owner, break_lock: bool = False, takeover_run: str | None = None) -> Owner | None:
        """Take the lock; return the dead owner it was taken over from (None if it was free).

        Raises DeployRefused naming the holder when the lock is held.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _unwritable(self.path.parent, exc) from None
        reclaim_temp_files(self.path.parent)
        for _ in range(3):
            try:
                _write_new(self.path, json.dumps(asdict(me)) + "\n", exclusive=True)
            except FileExistsError:
                holder = self.holder()
                if holder is None:  # being written right now, or garbage: look once more
                    if self._stale_unreadable():
                        self._steal()
                    continue
                alive = holder.alive()
                own_dead_run = takeover_run is not None and holder.run == takeover_run and alive is False
                if alive is True:
                    raise DeployRefused(
                        f"fabric {self.fabric!r} is being deployed by {holder.describe()}; lock {self.path} "
                        f"(fix: wait for that deploy to finish, then run yours)") from None
                if not (break_lock or own_dead_run):
                    state = "is dead" if alive is False else "runs on another host"
                    raise DeployRefused(
                        f"fabric {self.fabric!r} is locked by {holder.describe()}, whose process {state}; lock "
                        f"{self.path} (fix: `fabricgen deploy --break-lock` to take it over once you are sure "
                        f"that deploy no longer runs)") from None
                if self._steal():
                    taken = self._create(me)
                    if taken:
                        return holder
                continue
            self.owner = me
            return None
        raise DeployRefused(f"could not take the deploy lock {self.path}: another deploy raced for it "
                            "(fix: run the deploy again once the other one has finished)")

    def _stale_unreadable(self) -> bool:
        try:
            import time

            return time.time() - self.path.stat().st_mtime > 5
        except OSError:
            return False

    def _steal(self) -> bool:
        """Move the old lock away; only one contender's rename succeeds."""
        try:
            os.rename(self.path, self.path.with_name(f".{self.path.name}.broken.{os.getpid()}"))
        except FileNotFoundError:
            return False
        for old in self.path.parent.glob(f".{self.path.name}.broken.*"):
            old.unlink(missing_ok=True)
        return True

    def _create(self, me: Owner) -> bool:
        try:
            _write_new(self.path, json.dumps(asdict(me)) + "\n", exclusive=True)
        except FileExistsError:
            return False
        self.owner = me
        return True

    def release(self) -> None:
        holder = self.holder()
        if self.owner is not None and holder is not None and holder.run == self.owner.run:
            self.path.unlink(missing_ok=True)
        self.owner = None


class Journal:
    """Per-device phases of one deploy run, on disk after every change (see module doc)."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data
        self._lock = threading.Lock()

    @staticmethod
    def path_for(directory: Path, key: str) -> Path:
        return directory / f"{key}.journal.json"

    @classmethod
    def load(cls, path: Path) -> Journal | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise DeployRefused(f"deploy journal {path} is unreadable ({exc}) (fix: inspect the devices, then "
                                f"`fabricgen deploy --discard`)") from None
        if not isinstance(data, dict) or not isinstance(data.get("devices"), dict):
            raise DeployRefused(f"deploy journal {path} is not a fabricgen journal (fix: `fabricgen deploy "
                                f"--discard`)")
        return cls(path, data)

    @classmethod
    def start(cls, path: Path, owner: Owner, build: str, manifest_sha256: str, hosts: list[str],
              resumed: Journal | None = None) -> Journal:
        devices: dict[str, dict[str, Any]] = {h: {"phase": PENDING, "at": now_iso(), "reason": ""} for h in hosts}
        if resumed is not None:
            for host, entry in resumed.devices.items():
                if entry.get("phase") in DONE_PHASES:
                    devices[host] = dict(entry)
                elif host in devices:
                    # left mid-change (by this run or one it resumed): what it still needs survives
                    was = entry.get("resumed_phase") or entry.get("phase")
                    if was in UNSETTLED_PHASES:
                        devices[host].update(resumed_phase=was, actions=list(entry.get("actions") or []))
        data = {"version": 1, "run": owner.run, "owner": asdict(owner), "build": build,
                "manifest_sha256": manifest_sha256, "started": owner.started, "state": "running",
                "resumed_from": resumed.run if resumed is not None else None, "devices": devices}
        journal = cls(path, data)
        journal.save()
        return journal

    @property
    def run(self) -> str:
        return str(self.data.get("run", ""))

    @property
    def state(self) -> str:
        return str(self.data.get("state", ""))

    @property
    def devices(self) -> dict[str, dict[str, Any]]:
        devices: dict[str, dict[str, Any]] = self.data["devices"]
        return devices

    def phase(self, host: str) -> str:
        return str(self.devices.get(host, {}).get("phase", PENDING))

    @property
    def unfinished(self) -> bool:
        return self.state != "done"

    def owner(self) -> Owner | None:
        return Owner.from_json(self.data.get("owner"))

    def save(self) -> None:
        """Raises StateUnwritable (nothing half-written left) when the disk refuses; ``data`` keeps the news."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _unwritable(self.path.parent, exc) from None
        _atomic_write(self.path, json.dumps(self.data, indent=1, sort_keys=True) + "\n")

    def set(self, host: str, phase: str, reason: str = "", actions: list[str] | None = None) -> None:
        """Record ``host``'s phase; ``actions`` (from COMMITTING on) and the resumed phase stay in its
        entry until it is done."""
        with self._lock:
            old = self.devices.get(host, {})
            entry: dict[str, Any] = {"phase": phase, "at": now_iso(), "reason": reason}
            if phase not in DONE_PHASES:
                for key in ("resumed_phase", "actions"):
                    if key in old:
                        entry[key] = old[key]
                if actions is not None:
                    entry["actions"] = sorted(set(entry.get("actions", [])) | set(actions))
            self.devices[host] = entry
            self.save()

    def record_broken_locks(self, fabric: Owner | None, devices: dict[str, dict[str, Any]]) -> None:
        """``--break-lock``: whose locks this run took over (the fabric lock's dead owner, device locks)."""
        with self._lock:
            self.data["broken_locks"] = {"at": now_iso(), "fabric": asdict(fabric) if fabric else None,
                                         "devices": devices}
            self.save()

    def unsettled(self, host: str) -> tuple[str, list[str]] | None:
        """(phase, actions) a resumed run left ``host`` in, when that run may have changed its config;
        None when it had not started committing."""
        entry = self.devices.get(host, {})
        was = entry.get("resumed_phase")
        if was not in UNSETTLED_PHASES:
            return None
        return str(was), [str(a) for a in entry.get("actions") or []]

    def finish(self, state: str) -> None:
        with self._lock:
            self.data["state"] = state
            self.data["finished"] = now_iso()
            self.save()

    def summary(self) -> str:
        """``leaf01 committing, leaf02 pending, ...`` for the hosts with work left."""
        left = [f"{h} {e.get('phase')}" for h, e in sorted(self.devices.items()) if e.get("phase") not in DONE_PHASES]
        return ", ".join(left) or "nothing"
