"""`validate --health` live: real FRR switches and real SSH, lab counters, emulated ConnectX NICs.

The lab's veths carry no PFC, so each lab switch keeps one counter file per port in the shape
`ethtool -S` gives a Spectrum port (fabricgen.lab.lossless_counters); each server's NIC settings
are what its rendered script told the ConnectX stand-ins (fabricgen.lab.nic_emulation).  Proven:

* the healthy lab passes `validate --health` (every check, every server's NIC) and the Prometheus
  file it writes carries every port's counters;
* counter faults raised between the two reads - a pause storm, drops on the lossless queue, the
  CNP priority paused, ECN marking a third of the RoCE packets - and two NIC faults - DSCP trust
  lost, the `roceOptimized` CNP DSCP 4 - are each named, and nothing else: getter -> delta ->
  limit -> finding -> Prometheus, over SSH.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fabricgen.cli import main
from fabricgen.connect import connection_settings, nornir_for
from fabricgen.deploy import DeployOptions, run_deploy
from fabricgen.lab import LabState
from fabricgen.lab.lossless_counters import LAB_COUNTERS_DIR, bump, host_dir
from fabricgen.lab.nic_emulation import STUB_LOG, emulated_nics, nic_state_file
from fabricgen.plan.model import Plan
from fabricgen.render import manifest
from fabricgen.render.manifest import Build
from fabricgen.validate import Report, run_validate
from fabricgen.validate import health_collect as health
from fabricgen.validate.prometheus import render
from tests.lab.conftest import LAB_INTENT, fabric_lab

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]
CONVERGE_S = 60.0



@pytest.fixture(scope="module")
def plan(lab_plan: Plan) -> Plan:
    return lab_plan


@pytest.fixture(scope="module")
def build(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The lab's build, rendered and checked as `fabricgen render` does."""
    out = tmp_path_factory.mktemp("render") / "build"
    assert main(["render", "-i", str(LAB_INTENT), "-o", str(out)]) == 0
    return manifest.load(out, plan)


@pytest.fixture(scope="module")
def lab(plan: Plan, build: Build, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    with fabric_lab(plan, tmp_path_factory.mktemp("lab")) as state:
        report = run_deploy(plan, build, DeployOptions(lab_dir=state.workdir))
        assert report.ok, report
        deadline = time.monotonic() + CONVERGE_S
        while run_validate(plan, ("bgp", "ecmp", "routes"), lab_dir=state.workdir).failures:
            assert time.monotonic() < deadline, f"BGP did not converge within {CONVERGE_S:.0f}s"
            time.sleep(1.0)
        yield state


def counters(lab: LabState, switch: str) -> Path:
    return host_dir(Path(lab.nodes[switch].dir) / "run")


def node_file(lab: LabState, node: str, inside: str) -> Path:
    return Path(lab.nodes[node].dir) / inside.removeprefix("/")


def test_healthy_lab_passes_validate_health(plan: Plan, lab: LabState, build: Build, tmp_path: Path) -> None:
    for sw in plan.switches.values():  # one counter file per cabled port, as ethtool -S shows it
        assert sorted(p.name for p in counters(lab, sw.hostname).iterdir()) == sorted(i.name for i in sw.interfaces)
    prom = tmp_path / "fabricgen.prom"
    rc = main(["validate", "-i", str(LAB_INTENT), "-b", str(build.root), "--lab-dir", lab.workdir, "--health",
               "--window", "2", "--format", "prometheus", "-o", str(prom)])
    families = {f.name: f for f in text_string_to_metric_families(prom.read_text())}
    failed = [s for s in families["fabricgen_validate_failure"].samples]
    assert rc == 0 and failed == [], failed
    assert families["fabricgen_validate_ok"].samples[0].value == 1
    checked = {s.labels["check"]: s.value for s in families["fabricgen_validate_checked"].samples}
    nics = sum(len(s.nics) for s in plan.servers)
    for check in ("nic-trust", "nic-pfc-mask", "nic-roce-dscp", "nic-ecn", "nic-cnp-dscp"):
        assert checked[check] == nics
    for rule in ("counters", "pfc-pause", "pfc-lossy", "lossless-drops", "cnp-drops", "ecn-share"):
        assert checked[rule] == len(plan.switches)
    pauses = {(s.labels["device"], s.labels["port"]) for s in families["fabricgen_pfc_pause_frames"].samples}
    assert pauses == {(sw.hostname, i.name) for sw in plan.switches.values() for i in sw.interfaces}
    windows = [s.value for s in families["fabricgen_health_window_seconds"].samples]
    assert len(windows) == len(plan.switches) and min(windows) >= 2


def test_injected_faults_are_each_named(plan: Plan, lab: LabState) -> None:
    leaves, spine = plan.by_role("leaf"), plan.by_role("spine")[0]
    storm = (leaves[0].hostname, leaves[0].interfaces[0].name)
    drops = (leaves[1].hostname, leaves[1].interfaces[1].name)
    cnp = (spine.hostname, spine.interfaces[0].name)
    ecn = (leaves[2].hostname, leaves[2].interfaces[4].name)
    creds = connection_settings(plan, lab.workdir)
    nr = nornir_for(plan, creds, driver_args={"counters_dir": LAB_COUNTERS_DIR})
    try:
        pending = health.first_read(nr, plan, window=2)
        bump(counters(lab, storm[0]), storm[1], {"tx_pause_prio_3": 100_000})
        bump(counters(lab, drops[0]), drops[1], {"tc_no_buffer_discard_uc_tc_3": 17})
        bump(counters(lab, cnp[0]), cnp[1], {"rx_pause_prio_6": 3})
        bump(counters(lab, ecn[0]), ecn[1], {"tx_frames_prio_3": 90_000, "ecn_marked": 30_000})
        # two servers' NICs changed behind their scripts' backs
        srv_a, srv_b = plan.servers[0], plan.servers[1]
        node_file(lab, srv_a.name, nic_state_file(STUB_LOG, srv_a.nics[0].ifname, "trust")).write_text("pcp\n")
        nic_b = sorted(srv_b.nics, key=lambda n: (n.nic, n.port))
        dev_b = emulated_nics([(n.ifname, n.ip) for n in nic_b])[0].rdma_dev
        node_file(lab, srv_b.name, nic_state_file(STUB_LOG, dev_b, "firmware")).write_text(
            "CNP_DSCP_P1=4\nCNP_802P_PRIO_P1=6\nROCE_CC_PRIO_MASK_P1=255\n")
        outcomes, run = health.finish(pending, nr, plan, creds, workers=10, servers=True)
    finally:
        nr.close_connections(on_failed=True)
    found = {(f.device, f.rule, f.port, f.number, f.counter, f.delta) for s in run.switches for f in s.findings}
    assert found == {
        (*storm[:1], "pfc-pause", storm[1], 3, "tx_pause_frames", 100_000),
        (*drops[:1], "lossless-drops", drops[1], 3, "dropped_packets", 17),
        (*cnp[:1], "pfc-lossy", cnp[1], 6, "rx_pause_frames", 3),
        (*ecn[:1], "ecn-share", ecn[1], 3, "ecn_marked_packets", 30_000),
    }
    nic = [o for o in outcomes if o.check.startswith("nic-")]
    assert len(nic) == 5 * sum(len(s.nics) for s in plan.servers)
    assert [o for o in nic if o.actual.startswith("unverified")] == []  # the stand-ins answer over SSH
    nic_failures = {(o.device, o.check, o.actual) for o in nic if not o.ok}
    assert nic_failures == {(srv_a.name, "nic-trust", "trust pcp"),
                            (srv_b.name, "nic-cnp-dscp", "CNP_DSCP_P1=4, CNP_802P_PRIO_P1=6")}
    storm_outcome = next(o for o in outcomes if o.check == "pfc-pause" and not o.ok)
    assert storm_outcome.device == storm[0] and storm[1] in storm_outcome.item and "priority 3" in storm_outcome.item
    assert "100000 in" in storm_outcome.actual and "at most 600 per minute" in storm_outcome.expected
    text = render(Report(outcomes, health=run), run)
    deltas = {(s.labels["device"], s.labels["rule"], s.labels["port"]): s.value
              for f in text_string_to_metric_families(text) if f.name == "fabricgen_health_finding_delta"
              for s in f.samples}
    assert deltas[(storm[0], "pfc-pause", storm[1])] == 100_000
    assert deltas[(ecn[0], "ecn-share", ecn[1])] == 30_000
    assert any(a.startswith("NCCL_IB_TC=106") for a in run.advice)


def test_validate_health_fails_on_a_fault(plan: Plan, lab: LabState, build: Build) -> None:
    """The NIC faults above are still there: health alone names just them, the command exits 1."""
    report = run_validate(plan, (), lab_dir=lab.workdir, health_window=1)
    assert {(o.device, o.check) for o in report.failures} == {(plan.servers[0].name, "nic-trust"),
                                                              (plan.servers[1].name, "nic-cnp-dscp")}
    assert main(["validate", "-i", str(LAB_INTENT), "-b", str(build.root), "--lab-dir", lab.workdir, "--health",
                 "--window", "1"]) == 1
