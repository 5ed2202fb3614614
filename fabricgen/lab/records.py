"""Host-wide records of what each lab created, kept outside its workdir.

A lab's workdir usually lives under /tmp and can vanish (pytest keeps only its last few
base temp dirs) while the kernel still holds the lab's namespaces, bridge and host veths.
``lab up`` writes ``<records dir>/<lab name>.json`` before it creates the first namespace
and keeps it current; ``lab down`` removes it.  A lab whose recorded processes have all
exited is dead: ``fabricgen lab prune`` removes exactly what its record lists.  Nothing
without a record is ever removed, and neither is anything of a lab with a live process.

The records dir is /run/fabricgen/labs (gone with the namespaces at reboot; the boot id
guards hosts whose /run survives one), or ``$FABRICGEN_LAB_RECORDS``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fabricgen.lab import netns
from fabricgen.lab.netns import ProcRef
from fabricgen.lab.topology import LabError

RECORDS_ENV = "FABRICGEN_LAB_RECORDS"
DEFAULT_RECORDS_DIR = "/run/fabricgen/labs"
RECORD_VERSION = 2  # version 1 entries held only {"workdir": ...} and list nothing to prune
PRUNE_COMMAND = "fabricgen lab prune"


def records_dir() -> Path:
    return Path(os.environ.get(RECORDS_ENV) or DEFAULT_RECORDS_DIR)


def boot_id() -> str:
    """This boot's id: PIDs and start times of another boot mean nothing."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def object_identity(name: str, kind: str) -> int | None:
    """Kernel identity of a namespace (nsfs inode) or root-namespace link (ifindex); None if absent."""
    if kind == "netns":
        return netns.netns_inode(name)
    try:
        with open(f"/sys/class/net/{name}/ifindex") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return None


@dataclass
class LabRecord:
    """What one lab created on this host, and which processes keep it alive."""

    name: str
    workdir: str
    namespaces: tuple[str, ...]
    bridge: str
    host_links: tuple[str, ...]
    mgmt_subnet: str
    owner: ProcRef | None  # the `lab up` process: counts as the lab's life while phase is "creating"
    phase: str = "creating"  # creating -> up
    boot: str = field(default_factory=boot_id)
    procs: dict[str, ProcRef] = field(default_factory=dict)  # "s1/holder", "s1/bgpd", ...: every lab process
    # name -> inode/ifindex seen right after creation; a same-named object with another identity
    # was made by someone else.  Empty when `lab up` died before it could look.
    identity: dict[str, int] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return records_dir() / f"{self.name}.json"

    @property
    def links(self) -> tuple[str, ...]:
        """Root-namespace interfaces of the lab: host veths first, then the bridge they hang on."""
        return (*self.host_links, self.bridge)

    def objects(self) -> tuple[tuple[str, str], ...]:
        """(name, kind) of everything the lab creates on the host."""
        return (*((ln, "link") for ln in self.links), *((ns, "netns") for ns in self.namespaces))

    def capture_identity(self) -> None:
        """Remember the identity of every object that exists now (call right after creating them)."""
        for name, kind in self.objects():
            ident = object_identity(name, kind)
            if ident is not None:
                self.identity[name] = ident

    def present(self) -> tuple[list[str], list[str]]:
        """(ours, foreign): recorded objects that exist, split by whether they are the ones we made."""
        ours: list[str] = []
        foreign: list[str] = []
        for name, kind in self.objects():
            ident = object_identity(name, kind)
            if ident is None:
                continue
            recorded = self.identity.get(name)
            (ours if recorded is None or recorded == ident else foreign).append(name)
        return ours, foreign

    def creating(self) -> bool:
        """True while the `lab up` that writes this record still runs."""
        return self.phase == "creating" and self.owner is not None and self.owner.alive()

    def lab_pids(self) -> list[int]:
        """The lab's own running processes: recorded ones (same start time) and anything inside its
        namespaces.  None from another boot."""
        if self.boot != boot_id():
            return []
        pids = {p.pid for p in self.procs.values() if p.alive()}
        ours, _ = self.present()
        inodes = [i for i in (netns.netns_inode(ns) for ns in self.namespaces if ns in ours) if i is not None]
        pids.update(pid for pid in netns.pids_in_netns(inodes) if ProcRef.capture(pid))
        return sorted(pids)

    def live_pids(self) -> list[int]:
        """PIDs that keep the lab alive: its own processes, and the `lab up` process while it is creating."""
        pids = self.lab_pids()
        if self.boot == boot_id() and self.creating() and self.owner is not None:
            pids = sorted({*pids, self.owner.pid})
        return pids

    def to_json(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "name": self.name,
            "workdir": self.workdir,
            "phase": self.phase,
            "boot_id": self.boot,
            "owner": self.owner.to_json() if self.owner else None,
            "namespaces": list(self.namespaces),
            "bridge": self.bridge,
            "host_links": list(self.host_links),
            "mgmt_subnet": self.mgmt_subnet,
            "processes": {what: p.to_json() for what, p in self.procs.items()},
            "identity": dict(sorted(self.identity.items())),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LabRecord:
        return cls(
            name=str(data["name"]),
            workdir=str(data["workdir"]),
            namespaces=tuple(str(n) for n in data["namespaces"]),
            bridge=str(data["bridge"]),
            host_links=tuple(str(n) for n in data["host_links"]),
            mgmt_subnet=str(data["mgmt_subnet"]),
            owner=ProcRef.from_json(data["owner"]) if data.get("owner") else None,
            phase=str(data["phase"]),
            boot=str(data["boot_id"]),
            procs={str(what): ProcRef.from_json(p) for what, p in data["processes"].items()},
            identity={str(k): int(v) for k, v in data.get("identity", {}).items()},
        )


# --------------------------------------------------------------------------- the records dir


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Serialise `lab up`'s claim of its names with prune's removals (blocking, host-wide)."""
    directory = records_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fh = open(directory / ".lock", "a")  # noqa: SIM115 - held for the with-block below
    except OSError as exc:
        raise LabError(f"cannot use the lab records dir {directory}: {exc} (fix: run as root, or set "
                       f"${RECORDS_ENV} to a writable dir)") from exc
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def write_record(record: LabRecord) -> None:
    """Atomically (re)write the record; a lab that cannot be recorded must not be built."""
    path = record.path
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(record.to_json(), indent=1) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise LabError(f"cannot write lab record {path}: {exc}; without it a cut-off lab could not be "
                       f"cleaned up (fix: set ${RECORDS_ENV} to a writable dir)") from exc


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_record(name: str) -> LabRecord | None:
    """The record of lab ``name``; None if there is none or it lists nothing (version 1)."""
    data = _read(records_dir() / f"{name}.json")
    if data is None or data.get("version") != RECORD_VERSION:
        return None
    try:
        return LabRecord.from_json(data)
    except (KeyError, TypeError, ValueError):
        return None


def all_records() -> list[LabRecord]:
    """Every readable record, by lab name."""
    try:
        names = sorted(p.stem for p in records_dir().glob("*.json"))
    except OSError:
        return []
    return [rec for rec in map(load_record, names) if rec is not None]


def registered_workdir(name: str) -> Path | None:
    """Workdir of the lab named ``name`` once it is up (version 1 entries count as up)."""
    data = _read(records_dir() / f"{name}.json")
    if data is None or data.get("phase", "up") != "up":
        return None
    workdir = data.get("workdir")
    return Path(workdir) if isinstance(workdir, str) else None


def remove_record(name: str, workdir: str | os.PathLike[str]) -> None:
    """Drop the record of ``name`` if it is the one of the lab in ``workdir``."""
    path = records_dir() / f"{name}.json"
    data = _read(path)
    if data is not None and data.get("workdir") == str(workdir):
        path.unlink(missing_ok=True)


def record_of_workdir(workdir: str | os.PathLike[str]) -> LabRecord | None:
    return next((r for r in all_records() if r.workdir == str(workdir)), None)


# --------------------------------------------------------------------------- explaining and pruning


def _names(items: Sequence[str], most: int = 8) -> str:
    """``a, b, c`` - long lists (a 2x4 lab has 14 namespaces and 15 links) cut after ``most``."""
    if len(items) <= most:
        return ", ".join(items)
    return f"{', '.join(items[:most])} ... ({len(items)} in all)"


def describe_taken(objects: Sequence[str]) -> str:
    """Why each of ``objects`` (names `lab up` needs) is taken, and the command that frees it."""
    parts: list[str] = []
    claimed: set[str] = set()
    for rec in all_records():
        recorded = {name for name, _ in rec.objects()}
        mine = [o for o in objects if o in recorded and o not in claimed]
        if not mine:
            continue
        claimed.update(mine)
        live = rec.live_pids()
        if live:
            parts.append(
                f"{_names(mine)} belong to lab {rec.name!r}, running from {rec.workdir} (live processes "
                f"{_names([str(p) for p in live])}); run `fabricgen lab down --workdir {rec.workdir}` "
                "first, or pick another lab name"
            )
        else:
            gone = "" if Path(rec.workdir).exists() else ", now gone"
            parts.append(
                f"{_names(mine)} were left behind by lab {rec.name!r} (workdir {rec.workdir}{gone}), whose "
                f"processes have all exited: nothing of it runs. `{PRUNE_COMMAND}` removes exactly what "
                f"{rec.path} lists; then run lab up again"
            )
    unrecorded = [o for o in objects if o not in claimed]
    if unrecorded:
        parts.append(
            f"{_names(unrecorded)} already exist but no lab record in {records_dir()} lists them, so "
            "fabricgen did not create them (or did before it kept records) and will not remove them; "
            "check what uses them (`ip netns pids NAME`), remove them by hand (`ip netns del NAME`, "
            "`ip link del NAME`), or pick another lab name"
        )
    return "; ".join(parts)


@dataclass(frozen=True)
class PruneOutcome:
    """What prune did with one record."""

    name: str
    workdir: str
    removed: tuple[str, ...] = ()  # objects deleted
    running: tuple[int, ...] = ()  # live PIDs: the lab was left alone
    foreign: tuple[str, ...] = ()  # same-named objects someone else made since: left alone
    error: str | None = None  # could not remove everything: record kept

    @property
    def pruned(self) -> bool:
        return not self.running and self.error is None


def remove_objects(record: LabRecord) -> PruneOutcome:
    """Delete the record's objects that are still ours, then the record; keep it if any remain."""
    ours, foreign = record.present()
    kinds = dict(record.objects())
    cmds = [f"link del {name}" for name in ours if kinds[name] == "link"]
    cmds += [f"netns del {name}" for name in ours if kinds[name] == "netns"]
    netns.run_ip_batch(cmds, force=True)
    left, _ = record.present()
    base = PruneOutcome(record.name, record.workdir, tuple(o for o in ours if o not in left), foreign=tuple(foreign))
    if left:
        return replace(base, error=f"could not remove {_names(left)}; record kept in {record.path}")
    record.path.unlink(missing_ok=True)
    return base


def prune_stale_labs(names: Collection[str] | None = None) -> list[PruneOutcome]:
    """Remove every dead recorded lab (or only those in ``names``); labs with a live process are kept."""
    outcomes: list[PruneOutcome] = []
    with locked():
        for record in all_records():
            if names is not None and record.name not in names:
                continue
            live = record.live_pids()
            if live:
                outcomes.append(PruneOutcome(record.name, record.workdir, running=tuple(live)))
            else:
                outcomes.append(remove_objects(record))
    return outcomes
