"""A small nornir inventory plugin that builds hosts straight from the plan.

Inventory is data: the same hosts/groups that `render` writes to
`build/inventory/`, built in memory so deploy and validate always target the
plan they push.  Credentials come from the environment or the lab's key, never
from files in the repository.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nornir import InitNornir
from nornir.core import Nornir
from nornir.core.filter import F
from nornir.core.inventory import (
    ConnectionOptions,
    Defaults,
    Group,
    Groups,
    Host,
    Hosts,
    Inventory,
    ParentGroups,
)
from nornir.core.plugins.inventory import InventoryPluginRegister
from nornir.core.task import Result

from fabricgen.base.ssh import KNOWN_HOSTS_ENV, default_known_hosts
from fabricgen.errors import FabricError
from fabricgen.plan.model import Plan
from fabricgen.render.inventory import napalm_driver

if TYPE_CHECKING:
    from fabricgen.lab.engine import LabState



def lab_state(plan: Plan, lab_dir: str | Path | None = None) -> LabState | None:
    """The running lab of this fabric: in ``lab_dir`` if given, else wherever ``lab up`` registered it,
    else in the default lab directory.

    The lab's state file names its fabric; a lab of another fabric is never used, and one named by
    ``lab_dir`` is refused (FabricError) when it is another fabric's or lacks a switch of the plan at its
    management address: never SSH to addresses of a fabric the user did not mean.
    """
    from fabricgen.lab.engine import DEFAULT_LAB_DIR, LabState, registered_lab
    from fabricgen.lab.topology import LabError

    workdir = Path(lab_dir) if lab_dir is not None else registered_lab(plan.settings.name) or DEFAULT_LAB_DIR
    try:
        state = LabState.load(workdir)
    except LabError:
        return None
    if state is None:
        return None
    source = str(workdir / "state.json")
    if state.name != plan.settings.name:
        if lab_dir is None:
            return None
        raise FabricError.single(source, "--lab-dir", f"the lab in {workdir} runs fabric {state.name!r}, and this "
                                 f"intent is fabric {plan.settings.name!r}: its switches are not in that lab",
                                 "-i the intent `fabricgen lab up` started that lab with (the lab's: "
                                 "inventory/lab/fabric.yaml), or `fabricgen lab up -i` this one")
    stray = [f"{sw.hostname} {sw.mgmt_ip}" for sw in plan.switches.values()
             if sw.hostname not in state.nodes or state.nodes[sw.hostname].mgmt_ip != sw.mgmt_ip]
    if stray:
        more = f" and {len(stray) - 3} more" if len(stray) > 3 else ""
        raise FabricError.single(source, "addressing.management", f"the intent's switches {', '.join(stray[:3])}"
                                 f"{more} are no nodes of the lab of fabric {state.name!r} in {workdir} (the intent "
                                 f"changed after `lab up`); no SSH is tried to addresses the lab does not have",
                                 "`fabricgen lab down`, then `fabricgen lab up` with this intent")
    return state


def target(plan: Plan, lab_dir: str | Path | None = None) -> str:
    """What deploy and validate will talk to, for their first line: the fabric, its switches and, when it
    runs as a lab, which lab (raises FabricError as lab_state does)."""
    from fabricgen.lab.engine import DEFAULT_LAB_DIR, LabState
    from fabricgen.lab.topology import LabError

    lab = lab_state(plan, lab_dir)
    where = f"the lab in {lab.workdir}" if lab is not None else "their management addresses"
    if lab is None and lab_dir is None:  # `lab up` without -i, then deploy without -i: say whose lab runs here
        try:
            other = LabState.load(DEFAULT_LAB_DIR)
        except LabError:
            other = None
        if other is not None:
            where += (f"; the lab in {DEFAULT_LAB_DIR} runs fabric {other.name!r}, not this one (-i the intent "
                      f"`lab up` used to deploy to it)")
    return f"fabric {plan.settings.name!r}: {len(plan.switches)} switches, {len(plan.servers)} servers, at {where}"


@dataclass(frozen=True)
class ConnectionSettings:
    """How every device and server is logged in to, and which SSH host keys are trusted (never printed:
    the password stays out of repr and logs)."""

    username: str | None
    password: str | None = field(default=None, repr=False)
    key_file: str | None = None
    known_hosts: str = ""


def connection_settings(plan: Plan, lab_dir: str | Path | None = None,
                        known_hosts: str | Path | None = None) -> ConnectionSettings:
    """How to log in and which host keys to trust.

    Credentials: FABRICGEN_USERNAME / _PASSWORD / _SSH_KEY, else the lab's key as root.
    known_hosts: ``known_hosts`` (``--known-hosts``), else $FABRICGEN_KNOWN_HOSTS, else the
    lab's own known_hosts when a lab of this fabric runs, else ~/.ssh/known_hosts.
    """
    lab = lab_state(plan, lab_dir)
    key = os.environ.get("FABRICGEN_SSH_KEY") or (lab.key_file if lab else None)
    user = os.environ.get("FABRICGEN_USERNAME") or ("root" if key else None)
    if known_hosts is None:
        if os.environ.get(KNOWN_HOSTS_ENV):
            known_hosts = os.environ[KNOWN_HOSTS_ENV]
        elif lab is not None:
            known_hosts = lab.known_hosts
        else:
            known_hosts = default_known_hosts()
    return ConnectionSettings(user, os.environ.get("FABRICGEN_PASSWORD"), key, str(known_hosts))


class PlanInventory:
    """nornir inventory plugin: one host per switch of the plan, grouped by role and platform."""

    def __init__(self, plan: Plan, settings: ConnectionSettings, timeout: int = 30,
                 driver_args: dict[str, Any] | None = None) -> None:
        self.plan = plan
        self.settings = settings
        self.timeout = timeout
        self.driver_args = driver_args or {}

    def load(self) -> Inventory:
        creds = self.settings
        optional: dict[str, Any] = {"known_hosts": creds.known_hosts, **self.driver_args}
        if creds.key_file:
            optional.update(key_file=creds.key_file, use_keys=True)
        defaults = Defaults(username=creds.username, password=creds.password, connection_options={
            "napalm": ConnectionOptions(extras={"timeout": self.timeout, "optional_args": optional}),
            "netmiko": ConnectionOptions(extras={"key_file": creds.key_file, "use_keys": bool(creds.key_file),
                                                 "timeout": self.timeout, "ssh_strict": True,
                                                 "alt_host_keys": True, "alt_key_file": creds.known_hosts}),
        })
        groups = Groups()
        for role in sorted({s.role for s in self.plan.switches.values()}):
            groups[role] = Group(name=role, data={"role": role}, defaults=defaults)
        hosts = Hosts()
        for sw in self.plan.switches.values():
            hosts[sw.hostname] = Host(
                name=sw.hostname, hostname=sw.mgmt_ip, platform=napalm_driver(sw.platform),
                groups=ParentGroups([groups[sw.role]]), defaults=defaults,
                data={"role": sw.role, "fabric_platform": sw.platform, "asn": sw.asn, "loopback": sw.loopback},
            )
        return Inventory(hosts=hosts, groups=groups, defaults=defaults)


InventoryPluginRegister.register("FabricgenPlanInventory", PlanInventory)


def nornir_for(plan: Plan, settings: ConnectionSettings, workers: int = 10,
               driver_args: dict[str, Any] | None = None) -> Nornir:
    """nornir over the plan's switches; ``settings`` from :func:`connection_settings`."""
    return InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": max(1, workers)}},
        inventory={"plugin": "FabricgenPlanInventory",
                   "options": {"plan": plan, "settings": settings, "driver_args": driver_args or {}}},
        logging={"enabled": False},
    )


def failed_result(host: Host, exc: Exception) -> Result:
    """A task's failure as nornir's own failed Result.  Raised instead, nornir logs it with its traceback
    (ERROR, on stderr through Python's last-resort handler): validate printed one per switch for an
    unknown host key (issue 23 D7).  The caller reads ``exception``; tracebacks stay for --debug."""
    return Result(host=host, result=describe(exc), failed=True, exception=exc)


def select(nr: Nornir, limit: str | None = None, role: str | None = None) -> Nornir:
    """The hosts of --limit (names) or --role; ValueError names a --limit host the plan does not have."""
    if limit:
        names = {h.strip() for h in limit.split(",") if h.strip()}
        unknown = names - set(nr.inventory.hosts)
        if unknown:
            raise ValueError(f"--limit names hosts that are not in the plan: {', '.join(sorted(unknown))} "
                             "(fix: name switches of this intent, as `fabricgen plan --format json` lists them)")
        nr = nr.filter(F(name__any=sorted(names)))
    if role:
        nr = nr.filter(F(role=role))
    return nr


def describe(exc: BaseException) -> str:
    """The whole reason: exception type and every line of its text."""
    from fabricgen.base.ssh import HostKeyError

    text = str(exc).strip()
    if isinstance(exc, HostKeyError):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def ssh_run(host: str, creds: ConnectionSettings, command: str, timeout: float = 60.0) -> str:
    """One command on its own SSH exec channel (no shell prompt games), host key verified; returns stdout."""
    from pathlib import Path

    from fabricgen.base.ssh import connect

    with connect(host, creds.username, creds.password, creds.key_file, Path(creds.known_hosts),
                 timeout=20) as client:
        _, stdout, _ = client.exec_command(command, timeout=timeout)
        return str(stdout.read().decode(errors="replace"))
