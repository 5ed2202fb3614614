"""Validate: read live state through nornir/napalm getters and compare it with the plan.

Expectations come only from the plan; each comparison is a small pure function
from (plan, switch, getter output) to results, so every check is testable with
recorded getter data.  Every failure names device, check, expected and actual.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any
from xml.etree import ElementTree as ET

from nornir.core.task import Result, Task
from rich.console import Console
from rich.table import Table

from fabricgen.model import Plan, Server, Switch

CHECKS = ("bgp", "ecmp", "lldp", "interfaces", "config", "gpu")


@dataclass(frozen=True)
class Outcome:
    device: str
    check: str
    item: str
    ok: bool
    expected: str = ""
    actual: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and not self.failures

    def add(self, items: Iterable[Outcome]) -> None:
        self.outcomes.extend(items)


# --------------------------------------------------------------------------- pure comparisons


def check_bgp(sw: Switch, bgp: dict[str, Any]) -> list[Outcome]:
    """Every planned session Established with the planned peer and ASN; no unplanned sessions."""
    assert sw.bgp is not None
    peers = bgp.get("global", {}).get("peers", {})
    out: list[Outcome] = []
    planned = {n.ip: n for n in sw.bgp.neighbors}
    for ip, n in planned.items():
        item = f"{ip} ({n.peer_device})"
        p = peers.get(ip)
        if p is None:
            out.append(Outcome(sw.hostname, "bgp", item, False, f"session to AS{n.remote_asn} Established",
                               "no such session configured"))
        elif int(p.get("remote_as", 0)) != n.remote_asn:
            out.append(Outcome(sw.hostname, "bgp", item, False, f"AS{n.remote_asn}", f"AS{p.get('remote_as')}"))
        elif not p.get("is_up"):
            out.append(Outcome(sw.hostname, "bgp", item, False, "Established", "down"))
        else:
            out.append(Outcome(sw.hostname, "bgp", item, True, "Established", "Established"))
    for ip in sorted(set(peers) - set(planned)):
        out.append(Outcome(sw.hostname, "bgp", ip, False, "no session (not in plan)",
                           f"session to AS{peers[ip].get('remote_as')}"))
    return out


def expected_ecmp(plan: Plan, sw: Switch) -> int:
    from fabricgen.underlay import equal_cost_paths

    assert sw.bgp is not None
    return min(sw.bgp.maximum_paths, equal_cost_paths(plan.facts["design"], "leaf"))


def check_ecmp(plan: Plan, sw: Switch, routes: dict[str, Any]) -> list[Outcome]:
    """`routes` maps each other leaf's loopback /32 to napalm get_route_to output."""
    want = expected_ecmp(plan, sw)
    out = []
    for other in plan.by_role("leaf"):
        if other.hostname == sw.hostname or other.plane != sw.plane:
            continue
        prefix = f"{other.loopback}/32"
        paths = [r for r in routes.get(prefix, {}).get(prefix, []) if r.get("current_active", True)]
        hops = len({(r.get("next_hop"), r.get("outgoing_interface")) for r in paths})
        out.append(Outcome(sw.hostname, "ecmp", f"{prefix} ({other.hostname})", hops == want,
                           f"{want} next hops", f"{hops} next hops"))
    return out


def check_lldp(plan: Plan, sw: Switch, lldp: dict[str, list[dict[str, Any]]]) -> list[Outcome]:
    """The neighbor on every planned port is the planned device and port; names both ends."""
    out = []
    for itf in sw.interfaces:
        item = f"{itf.name} -> {itf.peer_device}:{itf.peer_interface}"
        seen = lldp.get(itf.name) or []
        if not seen:
            out.append(Outcome(sw.hostname, "lldp", item, False, f"{itf.peer_device} {itf.peer_interface}",
                               "no LLDP neighbor (cable missing or link down)"))
            continue
        n = seen[0]
        name = str(n.get("remote_system_name", "")).split(".")[0]
        port = str(n.get("remote_port", "")) or str(n.get("remote_port_description", ""))
        ok = name == itf.peer_device and port == itf.peer_interface
        out.append(Outcome(sw.hostname, "lldp", item, ok, f"{itf.peer_device} {itf.peer_interface}",
                           f"{name} {port}" + ("" if ok else " (miscabled)")))
    return out


def _diff_text(diff: dict[str, Any], prefix: str = "") -> list[str]:
    """Flatten a napalm compliance diff into "field: expected X, got Y" phrases."""
    out = [f"{prefix}{key} missing" for key in diff.get("missing", [])]
    for key, item in diff.get("present", {}).items():
        if item.get("complies"):
            continue
        if item.get("nested"):
            out += _diff_text(item["diff"], f"{prefix}{key} ")
        elif key == "is_up" and item.get("actual_value") is False:
            out.append(f"{prefix}down")
        else:
            out.append(f"{prefix}{key}: expected {item.get('expected_value')}, got {item.get('actual_value')}")
    return out


def check_interfaces(sw: Switch, interfaces: dict[str, Any], ips: dict[str, Any]) -> list[Outcome]:
    """Planned ports up with the planned MTU and /31, compared with napalm's own compliance logic."""
    from napalm.base.validate import compare

    want = {i.name: {"is_up": True, "mtu": i.mtu,
                     "ipv4": {i.ipv4.split("/")[0]: {"prefix_length": int(i.ipv4.split("/")[1])}}}
            for i in sw.interfaces}
    live = {name: {**data, "ipv4": ips.get(name, {}).get("ipv4", {})} for name, data in interfaces.items()}
    report = compare(want, live)
    out = []
    for itf in sw.interfaces:
        expected = f"up, mtu {itf.mtu}, {itf.ipv4}"
        if itf.name in report.get("missing", []):
            out.append(Outcome(sw.hostname, "interfaces", itf.name, False, expected, "missing"))
            continue
        item = report["present"][itf.name]
        problems = [] if item["complies"] else _diff_text(item["diff"])
        out.append(Outcome(sw.hostname, "interfaces", itf.name, not problems, expected,
                           "; ".join(problems) or expected))
    return out


def check_config(sw: Switch, diff: str) -> list[Outcome]:
    """Running config equals the rendered one (QoS/PFC/ECN on NX-OS/SONiC; BGP and policy on FRR)."""
    if not diff.strip():
        return [Outcome(sw.hostname, "config", "running vs rendered", True, "no drift", "no drift")]
    lines = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    return [Outcome(sw.hostname, "config", "running vs rendered", False, "no drift",
                    f"{len(lines)} line(s) differ: " + "; ".join(lines[:5]))]


def gpu_targets(plan: Plan, src: Server) -> list[tuple[str, str, str]]:
    """(source NIC ip, destination ip, label) pairs: every NIC to one NIC on every *other* rail of other servers."""
    pairs = []
    for nic in src.nics:
        for dst in plan.servers:
            if dst.name == src.name:
                continue
            for other in dst.nics:
                if other.rail != nic.rail and other.plane == nic.plane:
                    pairs.append((nic.ip.split("/")[0], other.ip.split("/")[0],
                                  f"{src.name}:{nic.ifname} -> {dst.name}:{other.ifname}"))
                    break
    return pairs


def check_gpu_output(src: Server, pairs: list[tuple[str, str, str]], output: str) -> list[Outcome]:
    ok = {tuple(line.split()[1:3]) for line in output.splitlines() if line.startswith("OK ")}
    return [Outcome(src.name, "gpu", label, (s, d) in ok, "reachable", "reachable" if (s, d) in ok
                    else "unreachable") for s, d, label in pairs]


# --------------------------------------------------------------------------- live collection


def collect_switch(task: Task, plan: Plan, checks: tuple[str, ...]) -> Result:
    """nornir task: read every getter the checks need from one switch and compare."""
    from fabricgen.deploy import candidate_config

    sw = plan.switches[task.host.name]
    device = task.host.get_connection("napalm", task.nornir.config)
    out: list[Outcome] = []
    if "bgp" in checks:
        out += check_bgp(sw, device.get_bgp_neighbors())
    if "ecmp" in checks and sw.role == "leaf":
        routes = {}
        for other in plan.by_role("leaf"):
            if other.hostname != sw.hostname:
                prefix = f"{other.loopback}/32"
                routes[prefix] = device.get_route_to(destination=prefix)
        out += check_ecmp(plan, sw, routes)
    if "lldp" in checks:
        out += check_lldp(plan, sw, device.get_lldp_neighbors_detail())
    if "interfaces" in checks:
        out += check_interfaces(sw, device.get_interfaces(), device.get_interfaces_ip())
    if "config" in checks:
        device.load_replace_candidate(config=candidate_config(sw, plan))
        try:
            diff = device.compare_config()
        finally:
            device.discard_config()
        out += check_config(sw, diff)
    return Result(host=task.host, result=out)


def ping_script(pairs: list[tuple[str, str, str]]) -> str:
    lines = [f"if ping -c1 -W1 -I {s} {d} >/dev/null 2>&1; then echo OK {s} {d}; else echo FAIL {s} {d}; fi"
             for s, d, _ in pairs]
    return "; ".join(lines)


def ssh_run(host: str, creds: dict[str, Any], command: str, timeout: float = 60.0) -> str:
    """One command on its own SSH exec channel (no shell prompt games); returns stdout."""
    import paramiko

    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  # noqa: S507 - lab/servers keys are not pinned
    try:
        client.connect(host, username=creds["username"], password=creds["password"], key_filename=creds["key_file"],
                       look_for_keys=not creds["key_file"], allow_agent=True, timeout=20)
        _, stdout, _ = client.exec_command(command, timeout=timeout)
        return str(stdout.read().decode(errors="replace"))
    finally:
        client.close()


def collect_gpu(plan: Plan, workers: int) -> list[Outcome]:
    """Ping across rails from every server over SSH: source-routed out of each NIC, to other rails."""
    from concurrent.futures import ThreadPoolExecutor

    from fabricgen.nornir_inventory import connection_settings

    creds = connection_settings(plan)

    def one(srv: Server) -> list[Outcome]:
        pairs = gpu_targets(plan, srv)
        try:
            output = ssh_run(srv.mgmt_ip, creds, ping_script(pairs))
        except Exception as exc:  # noqa: BLE001 - an unreachable server is a finding, not a crash
            return [Outcome(srv.name, "gpu", "ssh", False, "reachable over SSH", f"{type(exc).__name__}: {exc}")]
        return check_gpu_output(srv, pairs, output)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return [o for res in pool.map(one, plan.servers) for o in res]


def run_validate(plan: Plan, checks: tuple[str, ...] = CHECKS, limit: str | None = None, role: str | None = None,
                 workers: int = 10, lab_workdir: str = "build/lab") -> Report:
    from fabricgen.deploy import select
    from fabricgen.nornir_inventory import nornir_for

    report = Report()
    nr = select(nornir_for(plan, workers=workers, lab_workdir=lab_workdir), limit, role)
    try:
        results = nr.run(task=collect_switch, plan=plan, checks=checks, on_failed=True)
    finally:
        nr.close_connections(on_failed=True)
    for host in sorted(results):
        multi = results[host]
        if multi.failed:
            exc = multi[0].exception
            first = (str(exc).strip().splitlines() or [""])[0]
            report.add([Outcome(host, "reachability", "napalm", False, "device answers getters",
                                f"{type(exc).__name__}: {first}")])
        else:
            report.add(multi[0].result)
    if "gpu" in checks and not limit and not role:
        report.add(collect_gpu(plan, workers))
    return report


# --------------------------------------------------------------------------- output


def render_report(report: Report, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"ok": report.ok, "failures": [asdict(o) for o in report.failures],
                           "checked": len(report.outcomes)}, indent=2, sort_keys=True) + "\n"
    if fmt == "junit":
        suites = ET.Element("testsuites", name="fabricgen validate")
        by_check: dict[str, list[Outcome]] = {}
        for o in report.outcomes:
            by_check.setdefault(o.check, []).append(o)
        for check, items in sorted(by_check.items()):
            suite = ET.SubElement(suites, "testsuite", name=check, tests=str(len(items)),
                                  failures=str(sum(1 for o in items if not o.ok)))
            for o in items:
                case = ET.SubElement(suite, "testcase", classname=f"{check}.{o.device}", name=o.item)
                if not o.ok:
                    ET.SubElement(case, "failure", message=f"expected {o.expected}, got {o.actual}")
        return ET.tostring(suites, encoding="unicode") + "\n"
    raise ValueError(fmt)


def print_table(report: Report, con: Console) -> None:
    summary = Table(title="validation")
    for col in ("check", "passed", "failed"):
        summary.add_column(col, justify="left" if col == "check" else "right")
    for check in sorted({o.check for o in report.outcomes}):
        items = [o for o in report.outcomes if o.check == check]
        bad = sum(1 for o in items if not o.ok)
        summary.add_row(check, str(len(items) - bad), str(bad))
    con.print(summary)
    if report.failures:
        t = Table(title="failures")
        for col in ("device", "check", "item", "expected", "actual"):
            t.add_column(col)
        for o in report.failures:
            t.add_row(o.device, o.check, o.item, o.expected, o.actual)
        con.print(t)
    con.print("PASS" if report.ok else f"FAIL: {len(report.failures)} failure(s)")


def cmd_validate(args: argparse.Namespace) -> int:
    from fabricgen.plan import load_plan

    plan = load_plan(args.intent)
    checks = tuple(c for c in CHECKS if c not in set(args.skip or []))
    report = run_validate(plan, checks, args.limit, args.role, args.workers)
    if args.format == "table":
        print_table(report, Console(highlight=False, soft_wrap=True))
    else:
        sys.stdout.write(render_report(report, args.format))
    return 0 if report.ok else 1


def register_cli(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="compare live BGP, ECMP, LLDP, interfaces, config and GPU reachability "
                                        "with the plan")
    p.add_argument("-i", "--intent", default="inventory/fabric.yaml")
    p.add_argument("--format", choices=["table", "json", "junit"], default="table")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--limit", help="comma-separated hostnames")
    scope.add_argument("--role", choices=["leaf", "spine", "super_spine"])
    p.add_argument("--skip", action="append", choices=list(CHECKS), help="skip a check (repeatable)")
    p.add_argument("--workers", type=int, default=10)
    p.set_defaults(func=cmd_validate)

