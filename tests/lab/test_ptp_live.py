"""PTP live (issue 26): the PTP lab (inventory/lab/ptp.yaml: 2 spines, 4 leaves, 8 servers with two NICs, a
grandmaster per scalable unit) runs real linuxptp -- a ptp4l boundary clock on every switch from its rendered
ptp4l.conf, a ptp4l client per server NIC and one per grandmaster host from the configs their NIC scripts
wrote -- with software timestamping over the lab's veths.  `validate --ptp` reads each over SSH with pmc.

Proven, over real ptp4l and pmc:

* every clock settles where the plan put it: the preferred grandmaster's identity everywhere, the planned
  steps removed and parent, every port in the state its planned role gives (SLAVE/UNCALIBRATED or PASSIVE
  toward the grandmaster, MASTER away from it), within the lab's thresholds;
* a wrong domain on one switch is named on that switch (ptp-domain, read by asking pmc in every domain);
* a boundary clock's port down: the client behind it loses the grandmaster, and the findings say so on
  that client and on that port, nowhere else;
* the grandmaster stopped: it is named as not answering, and every clock is named following the standby;
* deploy pushes a switch's ptp4l.conf: a new domain in the intent is a dry run showing only each switch's
  ptp4l.conf diff (hitless) and changing nothing, then a deploy that writes it and restarts ptp4l there
  alone, after which `validate --ptp` reads every switch in the new domain.

What software timestamping cannot prove (sub-microsecond offsets) is in docs/ptp.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, DeployReport, run_deploy
from fabricgen.lab import LabState, node_exec
from fabricgen.lab.ptp import SWITCH_CONF, restart_command, stop_command
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render import manifest
from fabricgen.validate import CHECKS, Outcome, Report, run_validate
from tests.conftest import ROOT
from tests.lab.conftest import fabric_lab

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]
INTENT = ROOT / "inventory" / "lab" / "ptp.yaml"
SETTLE_S = 90.0  # announce every 2 s, 3 missed announces to time a master out, a few BMCA rounds per hop


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(INTENT)


@pytest.fixture(scope="module")
def lab(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    with fabric_lab(plan, tmp_path_factory.mktemp("ptplab")) as state:
        yield state


def ptp(plan: Plan, lab: LabState) -> Report:
    return run_validate(plan, (), lab_dir=lab.workdir, ptp=True)


def until(plan: Plan, lab: LabState, done: Callable[[Report], bool], what: str) -> Report:
    """Read every clock until ``done`` holds (bounded); the last report."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        report = ptp(plan, lab)
        if done(report):
            return report
        assert time.monotonic() < deadline, f"{what} within {SETTLE_S:.0f}s; still failing: {report.failures}"
        time.sleep(2.0)


def failing(report: Report) -> set[tuple[str, str, str]]:
    return {(o.device, o.check, o.item) for o in report.failures}


def healthy(plan: Plan, lab: LabState) -> Report:
    return until(plan, lab, lambda r: not r.failures, "every clock settles as planned")


def test_every_clock_settles_as_planned(plan: Plan, lab: LabState, tmp_path: Path) -> None:
    report = healthy(plan, lab)
    assert plan.ptp is not None
    by = {(o.device, o.check, o.item): o for o in report.outcomes}
    clocks = plan.ptp.clocks
    assert sum(o.check == "ptp-running" for o in report.outcomes) == len(clocks)
    gm_items = [o for o in report.outcomes if o.check == "ptp-grandmaster"]
    assert len(gm_items) == len(clocks) and len({o.actual for o in gm_items}) == 1
    assert gm_items[0].actual.startswith(f"{plan.ptp.grandmaster} (")
    for key, clock in clocks.items():  # steps removed as planned, for every clock
        host, _, nic = key.partition("/")
        assert by[(host, "ptp-steps", nic or "clock")].actual == str(clock.steps_removed)
    ports = [o for o in report.outcomes if o.check == "ptp-port-state"]
    assert len(ports) == sum(len(c.ports) for c in clocks.values())
    upstream_states = {o.actual for o in ports if "(upstream" in o.item}
    assert upstream_states <= {"UNCALIBRATED", "PASSIVE"} and "UNCALIBRATED" in upstream_states
    assert {o.actual for o in ports if "(downstream" in o.item} == {"MASTER"}
    offsets = [o for o in report.outcomes if o.check == "ptp-offset"]
    assert offsets and all(o.ok for o in offsets)
    # the same through the command, its exit code and its Prometheus file (PTP alone: nothing deployed)
    only_ptp = ["validate", "-i", str(INTENT), "--lab-dir", lab.workdir, *(f"--skip={c}" for c in CHECKS)]
    prom = tmp_path / "ptp.prom"
    assert main([*only_ptp, "--ptp", "--format", "prometheus", "-o", str(prom)]) == 0
    text = prom.read_text()
    assert 'fabricgen_ptp_offset_ns{clock="eth0",device="gpu0001"}' in text
    assert 'fabricgen_ptp_mean_path_delay_ns{clock="",device="plab-leaf02"}' in text
    # --health reads the clocks too when the intent has ptp:, and its Prometheus file carries them
    health = tmp_path / "health.prom"
    main([*only_ptp, "--health", "--window", "1", "--format", "prometheus", "-o", str(health)])
    families = {f.name: f for f in text_string_to_metric_families(health.read_text())}
    for family in ("fabricgen_ptp_offset_ns", "fabricgen_ptp_mean_path_delay_ns"):
        clocks_seen = {(s.labels["device"], s.labels["clock"]) for s in families[family].samples}
        assert len(clocks_seen) == len(clocks) - 1  # every clock but the grandmaster has a master to measure
    assert "fabricgen_health_window_seconds" in families  # the lossless health run is there beside it


def test_a_wrong_domain_on_one_switch_is_named(plan: Plan, lab: LabState) -> None:
    healthy(plan, lab)
    spine = "plab-spine01"
    conf = Path(lab.nodes[spine].dir) / "linuxptp" / SWITCH_CONF
    planned = conf.read_text()
    wrong = planned.replace("domainNumber 0\n", "domainNumber 1\n")
    assert wrong != planned
    assert node_exec(lab.workdir, spine, restart_command(Path(lab.nodes[spine].dir), conf_text=wrong)).returncode == 0
    try:
        report = until(plan, lab, lambda r: (spine, "ptp-domain", "clock") in failing(r), "the wrong domain named")
        finding = next(o for o in report.failures if o.check == "ptp-domain")
        assert (finding.device, finding.expected, finding.actual) == (spine, "domain 0", "domain 1")
        assert {o.device for o in report.failures if o.check == "ptp-domain"} == {spine}
        assert (spine, "ptp-grandmaster", "clock") in failing(report)  # alone in domain 1: its own grandmaster
    finally:
        node_exec(lab.workdir, spine, restart_command(Path(lab.nodes[spine].dir), conf_text=planned))


def test_a_boundary_clock_port_down_loses_the_client_behind_it(plan: Plan, lab: LabState) -> None:
    healthy(plan, lab)
    assert plan.ptp is not None
    leaf = plan.ptp.clocks["plab-leaf01"]
    port = next(p for p in leaf.ports if p.peer == "gpu0001")
    client = next(k for k, c in plan.ptp.clocks.items() if c.kind == "client" and k.startswith("gpu0001/")
                  and c.ports[0].peer == "plab-leaf01")
    nic = client.partition("/")[2]
    assert node_exec(lab.workdir, "plab-leaf01", ["ip", "link", "set", port.name, "down"]).returncode == 0
    try:
        report = until(plan, lab, lambda r: ("gpu0001", "ptp-grandmaster", nic) in failing(r),
                       "the client behind the port named")
        lost = next(o for o in report.failures if o.check == "ptp-grandmaster")
        assert lost.actual.startswith(f"{client} (")  # with no master left it is its own grandmaster
        assert ("plab-leaf01", "ptp-port-state", f"{port.name} (downstream, to gpu0001)") in failing(report)
        assert {o.device for o in report.failures} == {"plab-leaf01", "gpu0001"}
        assert {o.item for o in report.failures if o.device == "gpu0001"} <= {nic, f"{nic} (upstream, to plab-leaf01)"}
    finally:
        node_exec(lab.workdir, "plab-leaf01", ["ip", "link", "set", port.name, "up"])


def deployed(plan: Plan, intent: Path, out: Path, lab: LabState, dry_run: bool = False) -> DeployReport:
    assert main(["render", "-i", str(intent), "-o", str(out)]) == 0
    return run_deploy(plan, manifest.load(out, plan), DeployOptions(lab_dir=lab.workdir, dry_run=dry_run))


def test_deploy_pushes_a_new_ptp4l_conf_and_restarts_ptp4l_only_there(plan: Plan, lab: LabState,
                                                                      tmp_path: Path) -> None:
    healthy(plan, lab)
    switches = sorted(plan.switches)
    confs = {sw: Path(lab.nodes[sw].dir) / "linuxptp" / SWITCH_CONF for sw in switches}
    pids = {sw: Path(lab.nodes[sw].dir) / "run" / "ptp4l.pid" for sw in switches}

    def on_nodes() -> dict[str, tuple[str, str]]:
        return {sw: (confs[sw].read_text(), pids[sw].read_text()) for sw in switches}

    # the lab started FRR bare: the first deploy brings its routing; ptp4l.conf is already the build's
    first = deployed(plan, INTENT, tmp_path / "build", lab)
    assert {o.status for o in first.outcomes.values()} == {"changed"}, first.outcomes
    assert not any("ptp4l.conf" in o.diff for o in first.outcomes.values())
    started = on_nodes()
    domain = plan.ptp.domain + 3 if plan.ptp is not None else 3
    intent = tmp_path / "ptp-domain.yaml"
    intent.write_text(INTENT.read_text().replace("  profile: default-1588\n",
                                                 f"  profile: default-1588\n  domain: {domain}\n"))
    moved = load_plan(intent)
    dry = deployed(moved, intent, tmp_path / "moved", lab, dry_run=True)
    for host, o in dry.outcomes.items():
        assert o.status == "changed", (host, o.reason)
        assert o.diff.startswith("--- /etc/linuxptp/fabricgen-ptp4l.conf\n+++ ptp4l.conf\n"), o.diff  # no FRR part
        assert "-domainNumber 0\n" in o.diff and f"+domainNumber {domain}\n" in o.diff
        assert o.impact is not None and o.impact.worst is not None and o.impact.worst.label == "hitless"
    assert on_nodes() == started  # the dry run wrote and restarted nothing
    frr = {sw: (Path(lab.nodes[sw].dir) / "etc-frr" / "frr.conf").stat().st_mtime_ns for sw in switches}
    real = deployed(moved, intent, tmp_path / "moved", lab)
    try:
        assert {o.status for o in real.outcomes.values()} == {"changed"}, real.outcomes
        now = on_nodes()
        for sw in switches:
            assert now[sw][0] == (tmp_path / "moved" / "configs" / sw / "ptp4l.conf").read_text()
            assert now[sw][1] != started[sw][1]  # ptp4l restarted on it
            assert (Path(lab.nodes[sw].dir) / "etc-frr" / "frr.conf").stat().st_mtime_ns == frr[sw]  # FRR untouched
        report = until(moved, lab, lambda r: all((sw, "ptp-domain", "clock") not in failing(r) for sw in switches),
                       "every switch read in the new domain")
        read = {o.device: o for o in report.outcomes if o.check == "ptp-domain"}
        assert all(read[sw].ok and read[sw].actual == f"domain {domain}" for sw in switches)
        # the servers' and grandmasters' clocks are theirs to change (their NIC scripts), never deploy's
        assert {o.actual for o in report.failures if o.check == "ptp-domain"} == {"domain 0"}
        again = deployed(moved, intent, tmp_path / "moved", lab, dry_run=True)
        assert {o.status for o in again.outcomes.values()} == {"unchanged"}
    finally:  # the planned domain again for whatever runs next on this lab (each test waits for it to settle)
        back = deployed(plan, INTENT, tmp_path / "build", lab)
    assert {o.status for o in back.outcomes.values()} == {"changed"}


def test_a_stopped_grandmaster_is_named_and_the_standby_takes_over(plan: Plan, lab: LabState) -> None:
    """Last in this module: the grandmaster stays stopped."""
    healthy(plan, lab)
    assert plan.ptp is not None
    gm = plan.ptp.grandmaster
    nic = plan.ptp.clocks[gm].ports[0].name
    assert node_exec(lab.workdir, gm, stop_command(nic)).returncode == 0

    def standby_everywhere(r: Report) -> bool:
        gms = [o for o in r.outcomes if o.check == "ptp-grandmaster"]
        return bool(gms) and all(o.actual.startswith("gm002 (") for o in gms)

    report = until(plan, lab, standby_everywhere, "every clock following the standby grandmaster")
    running: list[Outcome] = [o for o in report.failures if o.check == "ptp-running"]
    assert [(o.device, o.actual) for o in running] == [(gm, "no ptp4l answers")]
    assert {o.expected for o in report.outcomes if o.check == "ptp-grandmaster"} == {f"{gm} (not answering)"}

