"""Run every check over a directory of rendered (or hand-edited) configs.

Full check: SONiC YANG (libyang), FRR's own parser (vtysh --dryrun), NX-OS
structure (its indentation tree), then the fabric-wide RoCE invariants, duplicate
addresses and NIC consistency.  The last three are the *fast* checks `render` runs by default.

Scheduling (a 32K-GPU fabric has ~2,000 SONiC, ~500 NX-OS and ~4,000 NIC files):

* one fork-context process pool takes every CPU-bound per-file job: each NX-OS file is
  read and parsed once for both its structural findings and its RoCE facts
  (its analyzer, `check.extract.nxos.analyze_nxos`), then the SONiC files go through libyang (one context, built
  before the fork and shared copy-on-write), then, where the pool would otherwise finish first (the fast
  checks of a large fabric), a share of the SONiC / FRR facts (`_shipped`); a worker also runs the per-device
  RoCE rules of the devices it read, so only the rules between devices wait for this process;
* meanwhile threads in this process drive the vtysh batches (the work is in the
  vtysh processes), and this process extracts the other SONiC / FRR facts, then runs the
  fabric-wide rules as soon as every fact is back, with the NIC scripts checked beside them in children
  forked then, a slice of the servers each, and the address rules in one more (they read the facts
  copy-on-write; the fast checks only: no vtysh thread to fork beside).

Small fabrics (under ~1 s of estimated work) run serially in this process.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.base import pool
from fabricgen.base.findings import Finding
from fabricgen.catalog.registry import load, platform
from fabricgen.plan.model import Plan

# Estimated CPU seconds per file; decide whether a process pool pays off and how to chunk.
_COST_ANALYZE = 0.015  # an NX-OS super spine of 128 ports at 128K GPUs, measured: 15.6 ms
_COST_YANG = 0.025
# Facts extracted in a worker and shipped back cost the worker a pickling and this process an unpickling, as
# fractions of the extraction (SONiC at 128K GPUs, measured: extract 4.9 ms, dumps 2.4 ms, loads 1.0 ms a switch).
_SHIP_DUMP = 0.5
_SHIP_LOAD = 0.2
_POOL_THRESHOLD_S = 1.0
_CHUNK_S = 0.25  # work per pool task: small enough that both workers finish together


class CheckFailed(Exception):
    """Raised by the fast checks inside `render`: the configs break an invariant and are not written."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(f"{len(findings)} check finding(s)")
        self.findings = findings


def files_by_check(plan: Plan, configs: Path) -> dict[str, list[tuple[str, Path]]]:
    """(device, path) of every planned config file that exists, per batch checker of its platform's record
    ("sonic-yang", "frr-parse")."""
    out: dict[str, list[tuple[str, Path]]] = {"sonic-yang": [], "frr-parse": []}
    for sw in plan.switches.values():
        for checker, name in platform(sw.platform).file_checks:
            path = configs / sw.hostname / name
            if path.is_file():
                out.setdefault(checker, []).append((sw.hostname, path))
    return out


# --------------------------------------------------------------------------- pool jobs


@dataclass
class _Work:
    """What the pool workers need (fabricgen.base.pool.shared()): set before forking, read copy-on-write."""

    plan: Plan
    configs: Path
    validator: Any = None  # sonic_yang.SonicYangValidator, when SONiC files are checked
    shapes: Any = None  # sonic_shapes.Shapes over it: each clean ConfigDB shape validated once per process
    structural: bool = True
    skip: frozenset[str] = frozenset()  # structural rules not to run (render leaves out the costly ones)


def _analyze_job(hosts: list[str]) -> tuple[list[Finding], dict[str, Any], dict[str, Any]]:
    """Structural findings, RoCE facts and per-device RoCE findings (`roce.device_groups`) of some hosts whose
    platform has an analyzer (NX-OS), one parse each."""
    work: _Work = pool.shared()
    plan = work.plan
    findings: list[Finding] = []
    facts = {}
    for host in hosts:
        analyze = load(platform(plan.switches[host].platform).analyzer)
        found, facts[host] = analyze(plan, work.configs, host, work.structural, work.skip)
        findings += found
    return findings, facts, _device_groups(work, facts)


def _facts_job(hosts: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """RoCE facts and per-device RoCE findings of some hosts whose platform has no analyzer (SONiC, FRR), in a
    worker: the facts go back for the rules between devices."""
    from fabricgen.check import roce

    work: _Work = pool.shared()
    facts = roce.extract_serial(work.plan, work.configs, hosts)
    return facts, _device_groups(work, facts)


def _device_groups(work: _Work, facts: dict[str, Any]) -> dict[str, Any]:
    from fabricgen.check import roce

    clean: roce.CleanPorts = {}
    return {host: roce.device_groups(work.plan, host, f, work.configs, clean) for host, f in facts.items()}


def _yang_job(paths: list[str]) -> list[list[Finding]]:
    """The findings of each config_db.json."""
    from fabricgen.check.sonic_yang import check_sonic_file
    from fabricgen.platforms.sonic.buffers import device_base

    work: _Work = pool.shared()
    assert work.validator is not None
    plan = work.plan
    out = []
    for p in paths:
        sw = plan.switches.get(Path(p).parent.name)
        out.append(check_sonic_file(work.validator, Path(p), device_base(plan, sw) if sw is not None else None,
                                    work.shapes.validate if work.shapes is not None else None))
    return out


def _shipped(light_cost: float, pool_cost: float, workers: int) -> float:
    """The share of the light hosts' fact extraction to send to the pool, so that this process (the rest of the
    extraction, then unpickling what comes back) and each of the `workers` (their `pool_cost`, the shipped
    extraction and its pickling) finish together: with the workers on as many cores, that is one part in
    workers + 1 of the CPU each.

    With e = light_cost, s = the share, H = pool_cost and n workers: (n + 1) ((1 - s) e + s e LOAD) = H + e +
    s e (DUMP + LOAD), so s = (n e - H) / (e (n + 1 - n LOAD + DUMP)), within 0 and 1."""
    if workers < 2 or light_cost <= 0:
        return 0.0
    share = (workers * light_cost - pool_cost) / (light_cost * (workers + 1 - workers * _SHIP_LOAD + _SHIP_DUMP))
    return min(1.0, max(0.0, share))


def _chunks(items: list[Any], cost: float, workers: int) -> list[list[Any]]:
    """Contiguous slices of about _CHUNK_S of work, at least 4 per worker."""
    if not items:
        return []
    size = max(1, min(int(_CHUNK_S / cost), -(-len(items) // (workers * 4))))
    return [items[i:i + size] for i in range(0, len(items), size)]


# --------------------------------------------------------------------------- driver


@dataclass
class _Jobs:
    analyzed: list[Any] = field(default_factory=list)  # AsyncResult / plain results of _analyze_job
    facts: list[Any] = field(default_factory=list)  # AsyncResult of _facts_job
    yang: list[Any] = field(default_factory=list)
    frr: Future[list[Finding]] | None = None


def _get(result: Any) -> Any:
    return result.get() if hasattr(result, "get") else result


# What `render` leaves to `fabricgen check`, and why: each costs more than the render itself at scale, or
# repeats what the render just did.
RENDER_SKIPS: dict[str, str] = {
    "sonic-yang": "libyang over every config_db.json (~25 ms a file)",
    "frr-parse": "FRR's own parser (vtysh --dryrun) over every frr.conf",
    "eos-avd": "a second pyavd render of every eos.cfg; render itself validated each against Arista's schema",
}


def fast_findings(plan: Plan, configs: Path, hosts: Path, workers: int | None = None,
                  structural: bool = False) -> list[Finding]:
    """Fabric-wide RoCE invariants (every platform) and NIC/switch consistency; with `structural`, also the
    platforms' own structural rules from the same parse, but for the costly ones (`RENDER_SKIPS`)."""
    return _run(plan, Path(configs), Path(hosts), None, full=False, workers=workers, structural=structural)


def run_checks(plan: Plan, configs: Path, hosts: Path | None = None, yang_dir: Path | None = None,
               full: bool = True, workers: int | None = None, cache: bool = True,
               skip: frozenset[str] = frozenset(), yang_shapes: bool = True) -> list[Finding]:
    """Every check (`full`) or the fast ones.  `cache` reuses the SONiC YANG and FRR parser findings of
    files unchanged since the last check (check.cache, in <configs>/../.check-cache).  `skip` names file
    checkers not to run (`yang_unavailable` says why the CLI skips "sonic-yang").  `yang_shapes` runs libyang
    once per clean ConfigDB shape (check.sonic_shapes); False runs it on every file."""
    configs = Path(configs)
    return _run(plan, configs, Path(hosts) if hosts else configs.parent / "hosts", yang_dir, full, workers, cache,
                skip, yang_shapes=yang_shapes)


def unavailable_checks(plan: Plan, configs: Path, yang_dir: Path | None) -> dict[str, str]:
    """The file checkers that cannot run here, each with why and the fix ({} = all that the build needs can)."""
    import shutil

    out: dict[str, str] = {}
    why = yang_unavailable(plan, configs, yang_dir)
    if why is not None:
        out["sonic-yang"] = why
    if files_by_check(plan, Path(configs))["frr-parse"] and not shutil.which("vtysh"):
        out["frr-parse"] = "vtysh not found (fix: install FRR, e.g. apt install frr)"
    return out


def yang_unavailable(plan: Plan, configs: Path, yang_dir: Path | None) -> str | None:
    """Why the SONiC YANG check cannot run here (no models, no libyang), or None when it can or is not needed."""
    if not files_by_check(plan, Path(configs))["sonic-yang"]:
        return None
    from fabricgen.check.yang_models import SonicYangSetupError, resolve_yang_dir

    try:
        import libyang  # noqa: F401 - the binding the check runs on (the `sonic` extra)
    except ImportError:
        return ("libyang is not installed (fix: pip install 'fabricgen[sonic]', which needs the C libyang 2, "
                "e.g. apt install libyang2-dev)")
    try:
        resolve_yang_dir(yang_dir, plan.settings.sonic_release)
    except SonicYangSetupError as exc:
        return str(exc)
    return None


def _yang_salt(root: Path, plan: Plan | None = None) -> str:
    """What a YANG result depends on besides the file: checker code, libyang, the models, and the device
    side it is merged into (the ownership rules, the roles' SKU files)."""
    import _libyang  # noqa: F401 - loads the C libyang, so that _loaded() sees it in every process

    from fabricgen.base import findings
    from fabricgen.catalog import skus
    from fabricgen.check import cache, configdb_to_yang, sonic_shapes, sonic_yang, yang_errors, yang_schema
    from fabricgen.platforms.sonic import buffers as sonic_buffers
    from fabricgen.platforms.sonic import configdb as sonic_configdb

    models = [p for d in ("yang-models", "yang-rendered", "yang-templates") for p in (root / d).glob("*.yang*")]
    hardware = plan.hardware if plan is not None else {}
    sku_files = [Path(hw.sku.source) / "port_config.ini" if Path(hw.sku.source).is_dir() else Path(hw.sku.source)
                 for hw in hardware.values() if hw.sku is not None and Path(hw.sku.source).exists()]
    device = f"{sorted((role, hw.describe()) for role, hw in hardware.items())}"
    checker = [Path(sonic_yang.__file__), Path(yang_schema.__file__), Path(configdb_to_yang.__file__),
               Path(yang_errors.__file__), Path(sonic_shapes.__file__), Path(findings.__file__)]
    return cache.digest([cache.files_digest([*checker,
                                             Path(cache.__file__), Path(sonic_configdb.__file__),
                                             Path(sonic_buffers.__file__), Path(skus.__file__), *sku_files]),
                         device,
                         cache.files_digest(models or root.glob("*.yang")), _library("libyang"), _loaded("libyang.so")])


def _frr_salt() -> str:
    """What an FRR parser result depends on besides the file: checker code, the vtysh binary."""
    import shutil

    from fabricgen.base import findings
    from fabricgen.check import cache, frr_parser, frr_shapes

    vtysh = shutil.which("vtysh") or ""
    return cache.digest([cache.files_digest([Path(frr_parser.__file__), Path(frr_shapes.__file__),
                                             Path(findings.__file__), Path(cache.__file__)]),
                         _stat(Path(vtysh).resolve()) if vtysh else "no vtysh"])


def _library(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return f"{name} ?"


def _stat(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return f"{path} ?"
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def _loaded(soname: str) -> str:
    """Path, size and mtime of a shared library this process loaded (the C libyang behind the binding)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return soname
    paths = sorted({line.split()[-1] for line in maps.splitlines() if soname in line and "/" in line})
    return " ".join(_stat(Path(p)) for p in paths) or soname


def _run(plan: Plan, configs: Path, hosts: Path, yang_dir: Path | None, full: bool,
         workers: int | None, use_cache: bool = False, skip: frozenset[str] = frozenset(),
         structural: bool = False, yang_shapes: bool = True) -> list[Finding]:
    """`_checks`, with the collector it pauses turned back on only once its facts are freed."""
    with pool.collector_restored():
        return _checks(plan, configs, hosts, yang_dir, full, workers, use_cache, skip, structural, yang_shapes)


def _checks(plan: Plan, configs: Path, hosts: Path, yang_dir: Path | None, full: bool, workers: int | None,
            use_cache: bool, skip: frozenset[str], structural: bool, yang_shapes: bool) -> list[Finding]:
    from fabricgen.check import roce
    from fabricgen.check.addresses import check_addresses
    from fabricgen.check.cache import ResultCache, cache_dir
    from fabricgen.check.nic import check_nic_scripts
    from fabricgen.check.ptp import check_ptp
    from fabricgen.check.tenants import check_tenants

    n = workers or os.cpu_count() or 1
    heavy = [h for h, sw in plan.switches.items() if platform(sw.platform).analyzer]
    light = [h for h, sw in plan.switches.items() if not platform(sw.platform).analyzer]
    sonic: list[str] = []
    frr: list[Path] = []
    yang_cache: ResultCache | None = None
    frr_cache: ResultCache | None = None
    yang_done: dict[str, list[Finding]] = {}
    frr_done: dict[str, list[Finding]] = {}
    yang_keys: dict[str, str | None] = {}
    frr_keys: dict[str, str | None] = {}
    work = _Work(plan, configs, structural=full or structural,
                 skip=skip if full else skip | frozenset(RENDER_SKIPS))
    if full:
        from fabricgen.check.sonic_yang import SonicYangValidator
        from fabricgen.check.yang_models import resolve_yang_dir

        files = {checker: ([] if checker in skip else found) for checker, found in
                 files_by_check(plan, configs).items()}
        sonic_all = [str(p) for _, p in files["sonic-yang"]]
        frr_all = [p for _, p in files["frr-parse"]]
        root = resolve_yang_dir(yang_dir, plan.settings.sonic_release) if sonic_all else None
        if use_cache and root is not None:
            yang_cache = ResultCache(cache_dir(configs), "sonic-yang", _yang_salt(root, plan))
        if use_cache and frr_all:
            frr_cache = ResultCache(cache_dir(configs), "frr-parse", _frr_salt())
        yang_done, sonic, yang_keys = _from_cache(yang_cache, sonic_all)
        frr_done, frr_todo, frr_keys = _from_cache(frr_cache, [str(p) for p in frr_all])
        frr = [Path(p) for p in frr_todo]
        if sonic and root is not None:
            work.validator = SonicYangValidator(root)  # built once, before the fork
            if yang_shapes:
                from fabricgen.check.sonic_shapes import Shapes

                work.shapes = Shapes(work.validator)
    for name in {plan.switches[h].platform for h in heavy}:
        load(platform(name).analyzer)  # imported once, before forking

    cost = len(heavy) * _COST_ANALYZE + len(sonic) * _COST_YANG
    light_cost = sum(platform(plan.switches[h].platform).fact_cost_s for h in light)
    pooled = n > 1 and cost + light_cost >= _POOL_THRESHOLD_S
    ship: list[str] = []
    if pooled:  # the last hosts of `light`: the order of `facts` is the plan's again below
        count = round(len(light) * _shipped(light_cost, cost, n))
        light, ship = light[:len(light) - count], light[len(light) - count:]
    jobs = _Jobs()
    with contextlib.ExitStack() as stack:
        if pooled:
            procs = stack.enter_context(pool.forked_pool(n, work))
            # This process now only builds acyclic facts (freed by reference counting), and the
            # collector's full passes over millions of them cost ~1.5 s: off here, after the fork,
            # so the workers keep collecting; `_run` turns it back on once the facts are freed.
            gc.disable()
            jobs.analyzed = [procs.apply_async(_analyze_job, (c,)) for c in _chunks(heavy, _COST_ANALYZE, n)]
            jobs.yang = [procs.apply_async(_yang_job, (c,)) for c in _chunks(sonic, _COST_YANG, n)]
            cost_each = light_cost / max(1, len(light) + len(ship))
            jobs.facts = [procs.apply_async(_facts_job, (c,)) for c in _chunks(ship, cost_each, n)]
        else:
            stack.enter_context(pool.serial(work))
        if frr:  # after the fork: no child inherits a half-started vtysh
            from fabricgen.check.frr_parser import check_frr_configs

            threads = stack.enter_context(ThreadPoolExecutor(max_workers=1))
            jobs.frr = threads.submit(check_frr_configs, frr, workers=n)
        if not pooled:
            jobs.analyzed = [_analyze_job(heavy)]
            jobs.yang = [_yang_job(sonic)] if sonic else []
        facts = roce.extract_serial(plan, configs, light)
        structural_found: list[Finding] = []
        done: dict[str, roce.Groups] = {}  # per-device RoCE findings from the workers
        for job in jobs.analyzed:
            found, part, groups = _get(job)
            structural_found += found
            facts.update(part)
            done.update(groups)
        for job in jobs.facts:
            part, groups = _get(job)
            facts.update(part)
            done.update(groups)
        facts = {h: facts[h] for h in plan.switches if h in facts}
        nic: list[pool.Forked[list[Finding]]] = []
        addresses: pool.Forked[list[Finding]] | None = None
        if pooled and jobs.frr is None:  # the NIC scripts beside the RoCE rules (no vtysh thread to fork beside)
            # in as many children as the pool had workers, each a slice of the servers in order, and the address
            # rules in one more: with this process's rules they keep the cores busy to the end (run after them
            # here, the address rules had one core to themselves, 1.5 s at 128K GPUs)
            servers = plan.hosts()
            size = max(1, -(-len(servers) // n))
            for i in range(0, len(servers), size):
                nic.append(pool.Forked(functools.partial(check_nic_scripts, plan, hosts, facts, servers[i:i + size])))
                stack.callback(nic[-1].close)
            addresses = pool.Forked(functools.partial(check_addresses, plan, facts))
            stack.callback(addresses.close)
        fast = roce.check_facts(plan, facts, configs, done)
        fast += addresses.get() if addresses is not None else check_addresses(plan, facts)
        fast += [f for child in nic for f in child.get()] if nic else check_nic_scripts(plan, hosts, facts)
        fast += check_tenants(plan, configs) + check_ptp(plan, configs)
        yang_done.update(zip(sonic, (found for job in jobs.yang for found in _get(job)), strict=True))
        if jobs.frr is not None:
            fresh: dict[str, list[Finding]] = {str(p): [] for p in frr}
            for f in jobs.frr.result():
                fresh.setdefault(f.file, []).append(f)
            frr_done.update(fresh)
    if not full:
        return structural_found + fast if structural else fast
    yang = _in_order(yang_cache, [str(p) for _, p in files["sonic-yang"]], yang_done, yang_keys)
    frr_findings = _in_order(frr_cache, [str(p) for _, p in files["frr-parse"]], frr_done, frr_keys)
    return yang + frr_findings + structural_found + fast


def _from_cache(cache: Any, paths: list[str]) -> tuple[dict[str, list[Finding]], list[str], dict[str, str | None]]:
    """Findings of the files the cache knows, the files still to check, and the key of each of those."""
    if cache is None:
        return {}, paths, {}
    done: dict[str, list[Finding]] = {}
    todo: list[str] = []
    keys: dict[str, str | None] = {}
    for p in paths:
        key = cache.key(Path(p))
        hit = cache.get(key)
        if hit is None:
            todo.append(p)
            keys[p] = key
        else:
            done[p] = hit
    return done, todo, keys


def _in_order(cache: Any, paths: list[str], done: dict[str, list[Finding]],
              keys: dict[str, str | None]) -> list[Finding]:
    """Every file's findings in file order (plus any not tied to a planned file), remembered in the cache:
    a file checked in this run only if it still has the bytes it had before its check."""
    out = [f for p in paths for f in done.get(p, [])]
    known = set(paths)
    out += [f for p, found in done.items() if p not in known for f in found]
    if cache is not None:
        for p, key in keys.items():
            if key is not None and p in done and cache.key(Path(p)) == key:
                cache.put(key, done[p])
        cache.save()
    return out


def checked_pairs(plan: Plan, full: bool, skip: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(device, rule) pairs that ran, so JUnit shows passing cases too."""
    from fabricgen.check.addresses import RULES as ADDRESS_RULES
    from fabricgen.check.nic import RULES as NIC_RULES
    from fabricgen.check.roce import RULES as ROCE_RULES
    from fabricgen.check.tenants import RULES as TENANT_RULES

    pairs: list[tuple[str, str]] = []
    for sw in plan.switches.values():
        if full:  # exactly the structural checks its platform's record runs (none: none reported)
            pairs += [(sw.hostname, r) for r in platform(sw.platform).rule_ids() if r not in skip]
        pairs += [(sw.hostname, r) for r in (*ROCE_RULES, *ADDRESS_RULES)]
        if plan.tenancy is not None and platform(sw.platform).tenant_extractor:
            pairs += [(sw.hostname, r) for r in TENANT_RULES]
    pairs += [(srv.name, r) for srv in plan.hosts() for r in NIC_RULES]
    return pairs
