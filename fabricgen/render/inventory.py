"""Nornir SimpleInventory (hosts, groups, defaults) derived from the plan.

Inventory is data: platform and management address per switch, role and
platform groups.  Credentials never live in these files;
`nornir_inventory.connection_settings` reads them from the environment (or the
lab's key) when deploy and validate connect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fabricgen.catalog.registry import platform
from fabricgen.plan.model import Plan

# libyaml's emitter when PyYAML was built with it (10x faster on 30K-host inventories).
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)



def napalm_driver(name: str) -> str:
    """The napalm driver of a platform (nornir-napalm looks a host's platform up as a napalm driver)."""
    return platform(name).napalm_driver


def hosts(plan: Plan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sw in plan.switches.values():
        out[sw.hostname] = {
            "hostname": sw.mgmt_ip,
            "platform": napalm_driver(sw.platform),
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
        out[p] = {"platform": napalm_driver(p), "data": {"fabric_platform": p}}
    return out


def defaults(plan: Plan) -> dict[str, Any]:
    return {"data": {"fabric": plan.settings.name}, "connection_options": {
        "napalm": {"extras": {"optional_args": {}}}}}


def write(plan: Plan, directory: Path, host_defaults: dict[str, Any] | None = None) -> list[Path]:
    """hosts.yaml, groups.yaml and defaults.yaml (`host_defaults` replaces the plan's defaults)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in (("hosts.yaml", hosts(plan)), ("groups.yaml", groups(plan)),
                       ("defaults.yaml", defaults(plan) if host_defaults is None else host_defaults)):
        text = "---\n" + yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False)
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
