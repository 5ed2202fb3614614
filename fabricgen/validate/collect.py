"""Live collection: switches through nornir/napalm getters, servers over SSH, then the pure checks.

Switch configs are compared with the checked build (its manifest), never with a fresh
render.  Every SSH connection verifies host keys (fabricgen.base.ssh).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nornir.core.task import Result, Task

from fabricgen.catalog.registry import load, platform
from fabricgen.plan.model import Plan, Server, Switch
from fabricgen.render.manifest import Build
from fabricgen.validate.checks import (
    CHECKS,
    LinkEnd,
    Outcome,
    Report,
    check_bfd,
    check_bgp,
    check_config,
    check_ecmp,
    check_frr_defaults,
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
    server_mtus,
)
from fabricgen.validate.tenants import (
    DEFAULT_VRF,
    TenantSample,
    check_switch_tenants,
    check_tenant_output,
    tenant_sample,
    tenant_subnets,
    vrf_of,
)

if TYPE_CHECKING:
    from napalm.base import NetworkDriver

    from fabricgen.connect import ConnectionSettings


@dataclass
class SwitchData:
    outcomes: list[Outcome]
    mtus: dict[LinkEnd, int]


def _compare_with_build(device: NetworkDriver, candidate: str) -> tuple[str, str | None]:
    """(running-vs-build diff, saved-vs-build diff or None when the driver cannot tell)."""
    device.load_replace_candidate(config=candidate)
    try:
        running = device.compare_config()
        persisted = getattr(device, "fabricgen_persisted_diff", None)
        saved = persisted() if persisted is not None else None
    finally:
        device.discard_config()
    return running, saved


class Progress:
    """``[n/total] what`` through ``say`` as each device is read: validate reads for seconds, and says so."""

    def __init__(self, say: Callable[[str], None], total: int) -> None:
        self.say, self.total, self.done = say, total, 0
        self.lock = threading.Lock()

    def tick(self, what: str) -> None:
        with self.lock:
            self.done += 1
            self.say(f"[{self.done}/{self.total}] {what}")


def collect_switch(task: Task, plan: Plan, checks: tuple[str, ...], build: Build | None,
                   expected: dict[str, dict[str, int]], subnets: dict[str, str] | None = None,
                   progress: Progress | None = None) -> Result:
    """nornir task: read every getter the checks need from one switch and compare."""
    from fabricgen.connect import failed_result

    start = time.monotonic()
    try:
        return _collect_switch(task, plan, checks, build, expected, subnets)
    except Exception as exc:  # noqa: BLE001 - an unreadable switch is a reachability finding, not a traceback
        return failed_result(task.host, exc)
    finally:
        if progress is not None:
            progress.tick(f"{task.host.name} read ({time.monotonic() - start:.1f}s)")


def _collect_switch(task: Task, plan: Plan, checks: tuple[str, ...], build: Build | None,
                    expected: dict[str, dict[str, int]], subnets: dict[str, str] | None) -> Result:
    from fabricgen.render.manifest import candidate_config

    sw = plan.switches[task.host.name]
    device = task.host.get_connection("napalm", task.nornir.config)
    out: list[Outcome] = []
    mtus: dict[LinkEnd, int] = {}
    bgp = device.get_bgp_neighbors() if {"bgp", "routes"} & set(checks) else {}
    if "bgp" in checks:
        out += check_bgp(sw, bgp)
    if "routes" in checks:
        out += check_routes(sw, bgp, expected.get(sw.hostname, {}))
    if "timers" in checks:
        out += check_timers(sw, device.get_bgp_neighbors_detail())
    profile = platform(sw.platform).frr_defaults
    if "frr-defaults" in checks and profile and hasattr(device, "fabricgen_frr_defaults"):
        out += check_frr_defaults(sw, profile, device.fabricgen_frr_defaults())
    if "bfd" in checks and hasattr(device, "get_bfd_peers"):
        out += check_bfd(sw, device.get_bfd_peers())
    if "ecmp" in checks and sw.role == "leaf":
        out += check_ecmp(plan, sw, route_table(device, plan, sw))
    if "hash" in checks:
        out += hash_outcomes(plan, sw, device)
    if "lldp" in checks:
        out += check_lldp(plan, sw, device.get_lldp_neighbors_detail())
    if {"interfaces", "mtu"} & set(checks):
        interfaces = device.get_interfaces()
        mtus = {(sw.hostname, name): int(d["mtu"]) for name, d in interfaces.items() if d.get("mtu")}
        if "interfaces" in checks:
            out += check_interfaces(sw, interfaces, device.get_interfaces_ip())
    if "tenants" in checks and plan.tenancy is not None:
        reader = platform(sw.platform).tenant_reader
        if reader:
            out += check_switch_tenants(plan, sw, load(reader)(device), subnets)
    if build is not None and {"config", "persisted"} & set(checks):
        running, saved = _compare_with_build(device, candidate_config(build, sw))
        if "config" in checks:
            out += check_config(sw, running)
        if "persisted" in checks:
            out += check_persisted(sw, saved)
    return Result(host=task.host, result=SwitchData(out, mtus))


def _ip(address: str) -> str:
    return address.split("/")[0]


def hash_outcomes(plan: Plan, sw: Switch, device: NetworkDriver) -> list[Outcome]:
    """The switch's live ECMP hash against the plan's, where its record says what to expect and its driver
    can read it (nothing on a platform that cannot, e.g. EOS)."""
    from fabricgen.catalog.registry import load, platform

    hook = platform(sw.platform).live_hash
    read = getattr(device, "get_ecmp_hash", None)
    if not hook or read is None:
        return []
    return check_hash(sw, load(hook)(plan, sw), read())


def hash_coverage(plan: Plan, hosts: list[str]) -> list[str]:
    """A coverage line per platform whose switches' hash `validate` cannot read back (no ``live_hash`` in its
    record), so an unread hash is said, not silently passed."""
    from fabricgen.catalog.registry import platform

    unread: dict[str, int] = {}
    for host in hosts:
        name = plan.switches[host].platform
        if not platform(name).live_hash:
            unread[name] = unread.get(name, 0) + 1
    return [f"ECMP hash: not read back on {n} {name} switch(es) (fabricgen has no reader for {name})"
            for name, n in sorted(unread.items())]


def server_script(pairs: list[tuple[str, str, str]], mtu: int) -> str:
    """The NICs' link state, then per pair a full-size don't-fragment ping (and a small one when it fails)."""
    size = max(0, mtu - 28)  # ICMP payload: MTU minus the IPv4 (20) and ICMP (8) headers
    pings = [f"if ping -c1 -W1 -M do -s {size} -I {s} {d} >/dev/null 2>&1; then echo OK {s} {d}; "
             f"elif ping -c1 -W1 -I {s} {d} >/dev/null 2>&1; then echo SMALL {s} {d}; else echo FAIL {s} {d}; fi"
             for s, d, _ in pairs]
    return "; ".join(["echo '### links'", "ip -j link show", "echo", "echo '### pings'", *pings])


def ping_script(pairs: list[tuple[str, str, str]]) -> str:
    """Small pings only (kept for callers that do not check MTU)."""
    return "; ".join(f"if ping -c1 -W1 -I {s} {d} >/dev/null 2>&1; then echo OK {s} {d}; else echo FAIL {s} {d}; fi"
                     for s, d, _ in pairs)


def server_mtu(plan: Plan, srv: Server) -> int:
    """The MTU planned on the leaf ports the server's NICs are cabled to (the smallest of them)."""
    ports = {(sw.hostname, itf.name): itf.mtu for sw in plan.switches.values() for itf in sw.interfaces}
    return min((ports.get((nic.leaf, nic.leaf_port), plan.settings.mtu) for nic in srv.nics),
               default=plan.settings.mtu)


def route_table(device: NetworkDriver, plan: Plan, sw: Switch) -> dict[str, Any]:
    """The switch's routes to every loopback, in one read: ``get_route_to(<loopback pool>, longer=True)``.

    A driver without ``longer`` is asked per leaf loopback instead (one command per other leaf)."""
    pool = str(plan.settings.pools.loopbacks)
    try:
        return dict(device.get_route_to(destination=pool, longer=True))
    except (NotImplementedError, TypeError):
        table: dict[str, Any] = {}
        for other in plan.by_role("leaf"):
            if other.hostname != sw.hostname:
                prefix = f"{other.loopback}/32"
                table.update(device.get_route_to(destination=prefix))
        return table


def collect_servers(plan: Plan, creds: ConnectionSettings, workers: int, full: bool = False,
                    tenants: TenantSample | None = None) -> tuple[list[Outcome], dict[LinkEnd, int], list[str]]:
    """From every server over SSH: its NICs' MTU, and the GPU pings (`gpu_sample`, or every pair with
    ``full``) at the planned MTU, don't fragment; and what the pings covered.  With tenants the GPU pings
    keep to pairs of one VRF (the others must fail: ``tenants``, validate --tenants's pings, checks them)."""
    from fabricgen.connect import describe, ssh_run

    sample = None if full else gpu_sample(plan)
    owner = vrf_of(plan)
    vrfs = {_ip(nic.ip): owner[srv.name, nic.ifname] for srv in plan.servers for nic in srv.nics}

    def one(srv: Server) -> tuple[list[Outcome], dict[LinkEnd, int]]:
        pairs = gpu_targets(plan, srv) if sample is None else sample.pings.get(srv.name, [])
        # a destination that is no NIC is a switch loopback: the underlay, the default VRF
        pairs = [p for p in pairs if vrfs.get(p[0]) == vrfs.get(p[1], DEFAULT_VRF)]
        probes = tenants.pings.get(srv.name, []) if tenants is not None else []
        mtu = server_mtu(plan, srv)
        try:
            output = ssh_run(srv.mgmt_ip, creds, server_script([*pairs, *((p.src, p.dst, p.label) for p in probes)],
                                                               mtu))
        except Exception as exc:  # noqa: BLE001 - an unreachable server is a finding, not a crash
            return [Outcome(srv.name, "gpu", "ssh", False, f"reachable over SSH at {srv.mgmt_ip}",
                            describe(exc))], {}
        found = check_gpu_output(srv, pairs, output, mtu) + check_tenant_output(srv, probes, output, mtu)
        return found, server_mtus(srv, output)

    outcomes: list[Outcome] = []
    mtus: dict[LinkEnd, int] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for found, live in pool.map(one, plan.servers):
            outcomes += found
            mtus.update(live)
    coverage = sample.coverage if sample is not None else [
        f"GPU pings: every pair ({sum(1 for o in outcomes if o.item != 'ssh')}, --full)"]
    return outcomes, mtus, coverage


def run_validate(plan: Plan, checks: tuple[str, ...] = CHECKS, limit: str | None = None, role: str | None = None,
                 workers: int = 10, build: Build | None = None, lab_dir: str | None = None,
                 known_hosts: str | None = None, full: bool = False, health_window: float | None = None,
                 ptp: bool = False, say: Callable[[str], None] | None = None) -> Report:
    """Validate the live fabric against the plan (and ``build`` for config/persisted); GPU pings sampled
    (`checks.gpu_sample`) unless ``full``.  ``say``: progress lines (each switch as it is read, the
    servers' pings), for a terminal that would otherwise show nothing for seconds.

    ``health_window``: also judge lossless health (fabricgen.health): two counter reads that many
    seconds apart around the other checks, and the servers' live NIC settings.

    ``ptp``: also read every planned PTP clock and judge it (fabricgen.validate.ptp); its offsets and
    path delays go to the report (and to Prometheus).
    """
    from fabricgen.connect import connection_settings, describe, lab_state, nornir_for, select
    from fabricgen.lab.lossless_counters import LAB_COUNTERS_DIR
    from fabricgen.plan.expect import expected_prefixes
    from fabricgen.validate import health_collect as health

    report = Report()
    creds = connection_settings(plan, lab_dir, known_hosts)
    # the lab's veths carry no PFC: its switches keep their counters in per-port files instead
    driver_args: dict[str, Any] = {"read_only": True}  # validate compares candidates, never writes them
    if lab_state(plan, lab_dir) is not None:
        driver_args["counters_dir"] = LAB_COUNTERS_DIR
    nr = select(nornir_for(plan, creds, workers=workers, driver_args=driver_args), limit, role)
    expected: dict[str, dict[str, int]] = {}
    if "routes" in checks:
        for (host, ip), count in expected_prefixes(plan).items():
            expected.setdefault(host, {})[ip] = count
    whole_fabric = not limit and not role
    try:
        pending = health.first_read(nr, plan, health_window) if health_window is not None else None
        progress = Progress(say, len(nr.inventory.hosts)) if say is not None else None
        results = nr.run(task=collect_switch, plan=plan, checks=checks, build=build, expected=expected,
                         subnets=tenant_subnets(plan) if "tenants" in checks else None, progress=progress,
                         on_failed=True)
        if pending is not None:
            found, report.health = health.finish(pending, nr, plan, creds, workers, servers=whole_fabric)
            report.add(found)
        if ptp and plan.ptp is not None:
            from fabricgen.validate.ptp import check_ptp, collect_ptp

            readings, unreachable = collect_ptp(nr, plan, creds, workers, hosts=whole_fabric)
            report.ptp = readings
            report.add(check_ptp(plan, readings, unreachable, only=set(readings) | set(unreachable)))
    finally:
        nr.close_connections(on_failed=True)
    mtus: dict[LinkEnd, int] = {}
    if "hash" in checks:
        report.coverage += hash_coverage(plan, sorted(results))
    for host in sorted(results):
        multi = results[host]
        if multi.failed:
            exc = multi[0].exception
            report.add([Outcome(host, "reachability", "napalm", False,
                                f"device answers getters at {plan.switches[host].mgmt_ip}",
                                describe(exc) if exc is not None else str(multi[0].result))])
        else:
            data: SwitchData = multi[0].result
            report.add(data.outcomes)
            mtus.update(data.mtus)
    if whole_fabric and ({"gpu", "mtu", "tenants"} & set(checks)) and plan.servers:
        probes = tenant_sample(plan) if "tenants" in checks and plan.tenancy is not None else None
        if say is not None:
            say(f"reading {len(plan.servers)} servers' NICs and pinging between their GPUs ...")
        outcomes, server_live, coverage = collect_servers(plan, creds, workers, full, probes)
        report.add(o for o in outcomes if o.check == "tenants")
        if probes is not None:
            report.coverage += probes.coverage
        outcomes = [o for o in outcomes if o.check != "tenants"]
        if "gpu" in checks:
            report.add(outcomes)
            report.coverage += coverage
        elif any(o.item == "ssh" for o in outcomes):
            report.add(o for o in outcomes if o.item == "ssh")
        mtus.update(server_live)
    if "mtu" in checks:
        report.add(check_mtu(plan, mtus, None if whole_fabric else set(results)))
    if "tenants" in checks and plan.tenancy is not None:
        unread = sorted({sw.platform for h, sw in plan.switches.items() if h in results
                         and not platform(sw.platform).tenant_reader})
        read = sum(1 for h in results if platform(plan.switches[h].platform).tenant_reader)
        report.coverage.append(f"tenant VRFs read back on {read}/{len(results)} switches"
                               + (f" (no tenant reader yet: {', '.join(unread)})" if unread else ""))
    return report
