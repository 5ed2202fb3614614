"""Validate: read live state through nornir/napalm getters and compare it with the plan.

Modules: ``checks`` (pure comparisons on getter-shaped data), ``collect`` (switches via
nornir, servers over SSH), ``output`` (table, JSON, JUnit and ``fabricgen validate``); lossless
health (``--health``): ``health`` (judging counter deltas), ``health_collect`` (the two reads),
``nic`` (servers' live NIC settings), ``health_report`` and ``prometheus`` (its outputs); PTP
(``--ptp``): ``ptp`` (every planned clock read and judged).  The
getters that read the counters belong to each platform (``platforms/<os>/health.py``).

nornir is the ``[deploy]`` extra: the names below are imported when first used, so the other
commands run without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabricgen.validate.checks import (
        CHECKS,
        Outcome,
        Report,
        check_bfd,
        check_bgp,
        check_config,
        check_ecmp,
        check_gpu_output,
        check_hash,
        check_interfaces,
        check_lldp,
        check_mtu,
        check_persisted,
        check_routes,
        check_timers,
        gpu_sample,
        gpu_targets,
    )
    from fabricgen.validate.collect import ping_script, run_validate, server_script
    from fabricgen.validate.output import print_table, register_cli, render_report

__all__ = ["CHECKS", "Outcome", "Report", "check_bfd", "check_bgp", "check_config", "check_ecmp",
           "check_gpu_output", "check_hash", "check_interfaces", "check_lldp", "check_mtu", "check_persisted",
           "check_routes", "check_timers", "gpu_sample", "gpu_targets", "ping_script", "print_table", "register_cli",
           "render_report", "run_validate", "server_script"]
_HOME = {name: "checks" for name in __all__} | {"ping_script": "collect", "run_validate": "collect",
                                                  "server_script": "collect", "print_table": "output",
                                                  "register_cli": "output", "render_report": "output"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'fabricgen.validate' has no attribute {name!r}")
    return getattr(importlib.import_module(f"fabricgen.validate.{_HOME[name]}"), name)
