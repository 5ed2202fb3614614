"""Nornir SimpleInventory (hosts, groups, defaults) derived from the plan.

Inventory is data: platform and management address per switch, role and
platform groups.  Credentials never live in these files; `credentials()`
reads them from the environment (or leaves them to the SSH agent).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from fabricgen.model import Plan

# libyaml's emitter when PyYAML was built with it (10x faster on 30K-host inventories).
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# napalm driver names (nornir-napalm looks a host's platform up as a napalm driver).
NAPALM_DRIVER = {"nxos": "nxos_ssh", "sonic": "sonic", "frr": "frr"}


def hosts(plan: Plan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sw in plan.switches.values():
        out[sw.hostname] = {
            "hostname": sw.mgmt_ip,
            "platform": NAPALM_DRIVER[sw.platform],
            "groups": [sw.role, sw.platform],
            "data": {"role": sw.role, "pod": sw.pod, "plane": sw.plane, "asn": sw.asn, "loopback": sw.loopback,
                     "fabric_platform": sw.platform},
        }
    return out


def groups(plan: Plan) -> dict[str, Any]:
    present_roles = sorted({s.role for s in plan.switches.values()})
    present_platforms = sorted({s.platform for s in plan.switches.values()})
    out: dict[str, Any] = {r: {"data": {"role": r}} for r in present_roles}
    for p in present_platforms:
        out[p] = {"platform": NAPALM_DRIVER[p], "data": {"fabric_platform": p}}
    return out


def defaults(plan: Plan) -> dict[str, Any]:
    return {"data": {"fabric": plan.intent.fabric.name}, "connection_options": {
        "napalm": {"extras": {"optional_args": {}}}}}


def write(plan: Plan, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in (("hosts.yaml", hosts(plan)), ("groups.yaml", groups(plan)),
                       ("defaults.yaml", defaults(plan))):
        text = "---\n" + yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False)
        (directory / name).write_text(text, encoding="utf-8")


def credentials() -> tuple[str | None, str | None]:
    """Username/password from FABRICGEN_USERNAME / FABRICGEN_PASSWORD; None means SSH agent/keys."""
    return os.environ.get("FABRICGEN_USERNAME"), os.environ.get("FABRICGEN_PASSWORD")
