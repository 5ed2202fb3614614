"""Service config files a Linux + FRR switch takes beside frr.conf: linuxptp's ``ptp4l.conf``.

A candidate with service files is one JSON document keyed by file name (``{"frr.conf": "...",
"ptp4l.conf": "..."}``, fabricgen's ``render.manifest.candidate_config``); plain FRR text is frr.conf alone
and leaves every service file as it is.  Each service file goes to a file of its own on the device, which
fabricgen owns: one that exists without fabricgen's mark in its first line is never overwritten.  Its daemon
(a systemd unit) is restarted only when the file changed -- ptp4l reads its config only when it starts
(linuxptp 3.1 has no reload) -- and must still be active a moment later, or the previous file goes back.

=======================  ======================================  =======================================
optional_args            default                                 what
=======================  ======================================  =======================================
``ptp4l_config_path``    ``/etc/linuxptp/fabricgen-ptp4l.conf``  where ``ptp4l.conf`` goes
``ptp4l_service``        ``fabricgen-ptp4l``                     the unit running ``ptp4l -f`` on it
``service_settle``       1                                       seconds a restarted unit must stay up
=======================  ======================================  =======================================
"""

from __future__ import annotations

import json
import posixpath
import shlex
from dataclasses import dataclass
from typing import Any

from napalm.base.exceptions import ReplaceConfigException

from fabricgen.napalm_kit import PTP4L_CONF, PTP4L_DEVICE_CONF, PTP4L_GENERATED, PTP4L_SERVICE

FRR_CONF = "frr.conf"


@dataclass(frozen=True, slots=True)
class ServiceFile:
    """A rendered file a daemon reads, and where it goes on the device."""

    name: str  # the rendered file: its key in a candidate bundle
    path_option: str  # the optional_args key of its device path
    path: str  # its default device path
    service_option: str  # the optional_args key of its systemd unit
    service: str  # the default unit, restarted when the file changes
    mark: str  # in the first line of every file fabricgen writes there: what makes it fabricgen's


SERVICE_FILES = {PTP4L_CONF: ServiceFile(PTP4L_CONF, "ptp4l_config_path", PTP4L_DEVICE_CONF, "ptp4l_service",
                                         PTP4L_SERVICE, PTP4L_GENERATED)}


@dataclass(frozen=True, slots=True)
class DeviceFile:
    """A file fabricgen installs on the device and the files it keeps beside it, named alike for frr.conf
    and every service file (a dead run's leftovers are found by these names)."""

    path: str

    @property
    def rollback(self) -> str:
        """The file before the last commit that changed it; empty: there was none."""
        return f"{self.path}.rollback"

    @property
    def staging(self) -> str:
        """The new file, copied beside the old one and then moved over it (one rename: never half-written)."""
        return f"{self.path}.fabricgen-new"

    @property
    def previous(self) -> str:
        """The file as it was on disk before the last commit (frr.conf: running and startup may differ)."""
        return f"{self.path}.fabricgen-prev"


@dataclass(frozen=True, slots=True)
class Placed(DeviceFile):
    """A service file as one driver places it: its device path and unit (optional_args applied)."""

    spec: ServiceFile
    service: str


@dataclass
class Candidate:
    """One service file of a loaded candidate: its text, the device's (None: absent) and its upload."""

    placed: Placed
    text: str
    device: str | None
    upload: str  # the uploaded copy ("" while read-only)

    @property
    def changed(self) -> bool:
        return self.device != self.text


def placed(args: dict[str, Any]) -> dict[str, Placed]:
    return {name: Placed(path=str(args.get(spec.path_option, spec.path)), spec=spec,
                         service=str(args.get(spec.service_option, spec.service)))
            for name, spec in SERVICE_FILES.items()}


def split_candidate(text: str) -> tuple[str, dict[str, str]]:
    """frr.conf text and the service files of a candidate (plain FRR text: none)."""
    if not text.lstrip().startswith("{"):  # FRR config never starts with "{"
        return text, {}
    try:
        bundle = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplaceConfigException(f"a candidate bundle must be JSON {{{FRR_CONF!r}: ..., ...}}: {exc}") from exc
    if not isinstance(bundle, dict) or not isinstance(bundle.get(FRR_CONF), str):
        raise ReplaceConfigException(f"a candidate bundle needs {FRR_CONF!r} as text")
    unknown = sorted(set(bundle) - {FRR_CONF} - set(SERVICE_FILES))
    if unknown:
        raise ReplaceConfigException(f"a candidate bundle holds files this driver does not place: {', '.join(unknown)} "
                                     f"(it places {', '.join([FRR_CONF, *sorted(SERVICE_FILES)])})")
    sides = {name: value for name, value in bundle.items() if name != FRR_CONF}
    bad = sorted(name for name, value in sides.items() if not isinstance(value, str) or not value.strip())
    if bad:
        raise ReplaceConfigException(f"{', '.join(bad)}: empty or not text in the candidate bundle")
    return bundle[FRR_CONF], sides


def read_command(p: Placed) -> str:
    """Prints "absent", or "present" and the file."""
    q = shlex.quote(p.path)
    return f"if [ -e {q} ]; then echo present; cat {q}; else echo absent; fi"


def parse_read(out: str) -> str | None:
    state, _, text = out.partition("\n")
    return text if state.strip() == "present" else None


def refuse_foreign(hostname: str, p: Placed, device: str | None) -> None:
    """A file at the service file's path that fabricgen did not write is never overwritten."""
    if device is None or p.spec.mark in device.partition("\n")[0]:
        return
    raise ReplaceConfigException(
        f"{hostname}: {p.path} exists and fabricgen did not write it (its first line lacks {p.spec.mark!r}); "
        f"nothing changed (fix: move that file away, or set optional_args {p.spec.path_option} to a file of "
        f"fabricgen's own)")


def install_command(p: Placed, upload: str) -> str:
    """Keep the current file as the rollback point (empty: none), then put the upload in its place atomically."""
    q, rb, new = shlex.quote(p.path), shlex.quote(p.rollback), shlex.quote(p.staging)
    d = shlex.quote(posixpath.dirname(p.path) or "/")
    return (f"set -e; mkdir -p {d}; if [ -e {q} ]; then cp -p {q} {rb}; else : > {rb}; fi; "
            f"cp {shlex.quote(upload)} {new}; chmod 644 {new}; mv -f {new} {q}")


def restart_command(p: Placed, settle: float) -> str:
    """Restart the unit and require it still active ``settle`` seconds later (ptp4l exits on a bad config)."""
    s = shlex.quote(p.service)
    return f"systemctl restart {s} && sleep {settle:g} && systemctl is-active --quiet {s}"


def restore_command(p: Placed) -> str:
    """Put the rollback point back: the previous file and its daemon restarted, or no file and the daemon stopped."""
    q, rb, s = shlex.quote(p.path), shlex.quote(p.rollback), shlex.quote(p.service)
    return (f"if [ -s {rb} ]; then cp -p {rb} {q} && systemctl restart {s}; "
            f"else rm -f {q} && {{ systemctl stop {s} || true; }}; fi")
