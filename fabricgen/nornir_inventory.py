"""A small nornir inventory plugin that builds hosts straight from the plan.

Inventory is data: the same hosts/groups that `render` writes to
`build/inventory/`, built in memory so deploy and validate always target the
plan they push.  Credentials come from the environment or the lab's key, never
from files in the repository.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nornir import InitNornir
from nornir.core import Nornir
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

from fabricgen.inventory import NAPALM_DRIVER
from fabricgen.model import Plan

LAB_WORKDIR = Path("build/lab")


def lab_key(plan: Plan, workdir: Path = LAB_WORKDIR) -> str | None:
    """The lab's SSH key when a lab of this fabric runs from `workdir`."""
    state = workdir / "state.json"
    try:
        data = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("name") != plan.intent.fabric.name:
        return None
    key = data.get("key_file")
    return str(key) if key else None


def connection_settings(plan: Plan, lab_workdir: Path = LAB_WORKDIR) -> dict[str, Any]:
    """Username, password and key: FABRICGEN_USERNAME / _PASSWORD / _SSH_KEY, else the lab key as root."""
    key = os.environ.get("FABRICGEN_SSH_KEY") or lab_key(plan, lab_workdir)
    user = os.environ.get("FABRICGEN_USERNAME") or ("root" if key else None)
    return {"username": user, "password": os.environ.get("FABRICGEN_PASSWORD"), "key_file": key}


class PlanInventory:
    """nornir inventory plugin: one host per switch of the plan, grouped by role and platform."""

    def __init__(self, plan: Plan, lab_workdir: str = str(LAB_WORKDIR), timeout: int = 30) -> None:
        self.plan = plan
        self.lab_workdir = Path(lab_workdir)
        self.timeout = timeout

    def load(self) -> Inventory:
        creds = connection_settings(self.plan, self.lab_workdir)
        optional: dict[str, Any] = {}
        if creds["key_file"]:
            optional.update(key_file=creds["key_file"], use_keys=True)
        defaults = Defaults(username=creds["username"], password=creds["password"], connection_options={
            "napalm": ConnectionOptions(extras={"timeout": self.timeout, "optional_args": optional}),
            "netmiko": ConnectionOptions(extras={"key_file": creds["key_file"], "use_keys": bool(creds["key_file"]),
                                                 "timeout": self.timeout}),
        })
        groups = Groups()
        for role in sorted({s.role for s in self.plan.switches.values()}):
            groups[role] = Group(name=role, data={"role": role}, defaults=defaults)
        hosts = Hosts()
        for sw in self.plan.switches.values():
            hosts[sw.hostname] = Host(
                name=sw.hostname, hostname=sw.mgmt_ip, platform=NAPALM_DRIVER[sw.platform],
                groups=ParentGroups([groups[sw.role]]), defaults=defaults,
                data={"role": sw.role, "fabric_platform": sw.platform, "asn": sw.asn, "loopback": sw.loopback},
            )
        return Inventory(hosts=hosts, groups=groups, defaults=defaults)


InventoryPluginRegister.register("FabricgenPlanInventory", PlanInventory)


def nornir_for(plan: Plan, workers: int = 10, lab_workdir: str = str(LAB_WORKDIR)) -> Nornir:
    return InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": max(1, workers)}},
        inventory={"plugin": "FabricgenPlanInventory", "options": {"plan": plan, "lab_workdir": lab_workdir}},
        logging={"enabled": False},
    )
