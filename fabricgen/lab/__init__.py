"""Live lab engine: a LabTopology becomes namespaces, veth cables, FRR, sshd and lldpd on this host.

No containers: each node is a network namespace plus a holder process owning its own
UTS (hostname) and mount namespace, in which per-node directories are bind-mounted over
/etc/frr, /run and /var/log/frr.  Inside a node (over SSH as root with the lab key) plain
``vtysh``, ``/usr/lib/frr/frr-reload.py`` and ``lldpcli`` behave as on a real FRR box.

The names below are imported when first used (the engine pulls in the host renderer and more), so that
`fabricgen --help` and commands that never start a lab do not load it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabricgen.lab.engine import (
        LabState,
        LabStatus,
        NodeState,
        NodeStatus,
        lab_down,
        lab_status,
        lab_up,
        node_exec,
    )
    from fabricgen.lab.records import PruneOutcome, prune_stale_labs
    from fabricgen.lab.topology import (
        LabError,
        LabInterface,
        LabLink,
        LabNode,
        LabRoute,
        LabRule,
        LabTopology,
        linux_ifname,
        validate_topology,
    )

_HOME = {
    **dict.fromkeys(("LabState", "LabStatus", "NodeState", "NodeStatus", "lab_down", "lab_status", "lab_up",
                     "node_exec"), "engine"),
    **dict.fromkeys(("PruneOutcome", "prune_stale_labs"), "records"),
    **dict.fromkeys(("LabError", "LabInterface", "LabLink", "LabNode", "LabRoute", "LabRule", "LabTopology",
                     "linux_ifname", "validate_topology"), "topology"),
}

__all__ = [
    "LabError",
    "LabInterface",
    "LabLink",
    "LabNode",
    "LabRoute",
    "LabRule",
    "LabState",
    "LabStatus",
    "LabTopology",
    "NodeState",
    "NodeStatus",
    "PruneOutcome",
    "lab_down",
    "lab_status",
    "lab_up",
    "linux_ifname",
    "node_exec",
    "prune_stale_labs",
    "validate_topology",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'fabricgen.lab' has no attribute {name!r}")
    return getattr(importlib.import_module(f"fabricgen.lab.{_HOME[name]}"), name)
