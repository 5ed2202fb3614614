"""Run every check over a directory of rendered (or hand-edited) configs.

Full check: SONiC YANG (libyang), FRR's own parser (vtysh --dryrun), NX-OS
structure (ciscoconfparse2), then the fabric-wide RoCE invariants and NIC
consistency.  The last two are the *fast* checks `render` runs by default.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

from fabricgen.check.findings import Finding
from fabricgen.model import Plan

YANG_ENV = "FABRICGEN_SONIC_YANG"


class CheckFailed(Exception):
    """Raised by the fast checks inside `render`: the configs break an invariant and are not written."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(f"{len(findings)} check finding(s)")
        self.findings = findings


def default_yang_dir() -> Path | None:
    """$FABRICGEN_SONIC_YANG, else the shared copy beside the project (../shared/sonic-yang-models)."""
    if os.environ.get(YANG_ENV):
        return Path(os.environ[YANG_ENV])
    here = Path(__file__).resolve().parents[2]
    candidate = here.parent / "shared" / "sonic-yang-models"
    return candidate if candidate.is_dir() else None


def files_by_platform(plan: Plan, configs: Path) -> dict[str, list[tuple[str, Path]]]:
    """(device, path) of every planned config file that exists, per file kind."""
    out: dict[str, list[tuple[str, Path]]] = {"config_db.json": [], "frr.conf": [], "nxos.cfg": []}
    for sw in plan.switches.values():
        names = {"nxos": ["nxos.cfg"], "sonic": ["config_db.json", "frr.conf"], "frr": ["frr.conf"]}[sw.platform]
        for name in names:
            path = configs / sw.hostname / name
            if path.is_file():
                out[name].append((sw.hostname, path))
    return out


_PLAN: Plan | None = None


def _nxos_chunk(items: list[tuple[str, str]]) -> list[Finding]:
    from fabricgen.check.nxos import check_nxos_config

    return [f for device, path in items for f in check_nxos_config(Path(path), device, _PLAN)]


def _parallel(func: Callable[[list[tuple[str, str]]], list[Finding]], items: list[tuple[str, str]],
              workers: int) -> list[Finding]:
    if workers <= 1 or len(items) < 8:
        return func(items)
    size = max(1, -(-len(items) // (workers * 4)))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return [f for part in pool.map(func, chunks) for f in part]


def fast_findings(plan: Plan, configs: Path, hosts: Path, workers: int | None = None) -> list[Finding]:
    """Fabric-wide RoCE invariants (every platform) and NIC/switch consistency."""
    from fabricgen.check.nic import check_nic_scripts
    from fabricgen.check.roce import check_facts, extract_facts

    facts = extract_facts(plan, configs, list(plan.switches), workers=workers)
    return check_facts(plan, facts, configs) + check_nic_scripts(plan, hosts, facts)


def run_checks(plan: Plan, configs: Path, hosts: Path | None = None, yang_dir: Path | None = None,
               full: bool = True, workers: int | None = None) -> list[Finding]:
    global _PLAN
    workers = workers or os.cpu_count() or 1
    hosts = hosts or configs.parent / "hosts"
    findings: list[Finding] = []
    if full:
        from fabricgen.check.frr_parser import check_frr_configs
        from fabricgen.check.sonic_yang import check_sonic_configs

        files = files_by_platform(plan, configs)
        sonic = [p for _, p in files["config_db.json"]]
        if sonic:
            findings += check_sonic_configs(sonic, yang_dir or default_yang_dir(), workers=None)
        frr = [p for _, p in files["frr.conf"]]
        if frr:
            findings += check_frr_configs(frr, workers=workers)
        _PLAN = plan
        try:
            findings += _parallel(_nxos_chunk, [(d, str(p)) for d, p in files["nxos.cfg"]], workers)
        finally:
            _PLAN = None
    findings += fast_findings(plan, configs, hosts, workers)
    return findings


def checked_pairs(plan: Plan, full: bool) -> list[tuple[str, str]]:
    """(device, rule) pairs that ran, so JUnit shows passing cases too."""
    from fabricgen.check.nic import RULES as NIC_RULES
    from fabricgen.check.nxos import RULES as NXOS_RULES
    from fabricgen.check.roce import RULES as ROCE_RULES

    pairs: list[tuple[str, str]] = []
    for sw in plan.switches.values():
        if full:
            if sw.platform == "sonic":
                pairs += [(sw.hostname, "sonic-yang"), (sw.hostname, "frr-parse")]
            elif sw.platform == "frr":
                pairs.append((sw.hostname, "frr-parse"))
            else:
                pairs += [(sw.hostname, r) for r in NXOS_RULES]
        pairs += [(sw.hostname, r) for r in ROCE_RULES]
    pairs += [(srv.name, r) for srv in plan.servers for r in NIC_RULES]
    return pairs
