"""fabricgen: one declarative intent -> every config of a lossless RoCEv2 AI back-end fabric.

The pipeline is visible in the package layout (docs/architecture.md draws it; each stage imports
only the stages below it):

    intent/      the YAML intent, read defensively and validated (pydantic)
    plan/        topology, underlay, QoS, ECMP, physical layer -> a resolved, vendor-neutral Plan
    platforms/   per platform: renderer + templates, config facts, impact rules and drain, health getters
    render/      Plan -> a checked, hashed build directory (configs, NIC scripts, plan.json, cabling)
    check/       rendered configs vs the vendors' schemas and parsers and the RoCE invariants
    analyze/     ECMP collisions, failure impact, PFC deadlock, predicted from the plan
    lab/         the live lab of network namespaces running a plan
    validate/    live state and lossless health vs the plan
    deploy/      nornir + napalm push of the build (dry-run diffs, impact, waves, drain, resume)
    catalog/     platform records and hardware models every stage reads; base/: shared utilities

As a library, the stages are four functions (fabricgen/api.py), imported on first use so that
`import fabricgen` stays cheap:

    plan = fabricgen.build_plan(fabricgen.load_intent("inventory/fabric.yaml"))
    fabricgen.render(plan, "build")
    findings = fabricgen.check(plan, "build/configs")

`fabricgen.render` and `fabricgen.check` are those functions; the packages of the same names are
imported as usual (`from fabricgen.render.build import render_all`).
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabricgen.api import build_plan, check, load_intent, render
    from fabricgen.check.run import CheckFailed
    from fabricgen.errors import FabricError

__version__ = "0.1.0"
__all__ = ["CheckFailed", "FabricError", "__version__", "build_plan", "check", "load_intent", "render"]

_LAZY = {"load_intent": "fabricgen.api", "build_plan": "fabricgen.api", "render": "fabricgen.api",
         "check": "fabricgen.api", "FabricError": "fabricgen.errors", "CheckFailed": "fabricgen.check.run"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fabricgen' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


class _Package(types.ModuleType):
    """Importing the package fabricgen.render (or fabricgen.check) would bind it over the API
    function of the same name; keep the function (the submodule stays in sys.modules)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
