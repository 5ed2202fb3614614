"""The operator's workflow against the live lab, in order, over real SSH to real FRR.

lab up -> deploy --dry-run changes nothing -> deploy -> validate passes -> a second deploy
is a no-op -> faults, each reported precisely: a fabric link down, two cables swapped,
one switch unreachable during deploy, a commit FRR rejects, bgpd stopped on a spine
-> lab down leaves nothing behind.  The tests share one lab and run in file order.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, DeployRefused, DeployReport, run_deploy
from fabricgen.lab import LabState, lab_down, node_exec
from fabricgen.lab.engine import DEFAULT_LAB_DIR
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.frr.render import kernel_hash
from fabricgen.render import manifest
from fabricgen.render.manifest import Build
from fabricgen.validate import Outcome, gpu_sample, run_validate
from tests.lab.conftest import fabric_lab

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]

ROOT = Path(__file__).resolve().parents[2]
LAB_INTENT = ROOT / "inventory" / "lab" / "fabric.yaml"
CONVERGE_S = 60.0


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(LAB_INTENT)


def render(intent: Path, out: Path) -> Path:
    assert main(["render", "-i", str(intent), "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def build(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Build:
    return manifest.load(render(LAB_INTENT, tmp_path_factory.mktemp("render") / "build"), plan)


def deploy(plan: Plan, build: Build, lab: LabState, **opts: object) -> DeployReport:
    return run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir, **opts))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def operator_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The operator's working directory: the lab's state sits where `fabricgen lab up` puts it by default."""
    return tmp_path_factory.mktemp("operator")


@pytest.fixture(scope="module")
def lab(plan: Plan, operator_dir: Path) -> Iterator[LabState]:
    with fabric_lab(plan, operator_dir / DEFAULT_LAB_DIR) as state:
        yield state


def running(lab: LabState, node: str) -> str:
    out = node_exec(lab.workdir, node, ["vtysh", "-c", "show running-config"])
    assert out.returncode == 0, out.stderr
    return out.stdout


def sh(lab: LabState, node: str, *argv: str) -> None:
    out = node_exec(lab.workdir, node, list(argv))
    assert out.returncode == 0, f"{node}: {' '.join(argv)}: {out.stderr}"


def failures(plan: Plan, lab: LabState, checks: tuple[str, ...]) -> list[Outcome]:
    return run_validate(plan, checks, lab_dir=lab.workdir).failures


def wait_for(predicate: Callable[[], bool], timeout: float = CONVERGE_S, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(1.0)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")


def wait_healthy(plan: Plan, lab: LabState, checks: tuple[str, ...] = ("bgp", "ecmp")) -> None:
    wait_for(lambda: not failures(plan, lab, checks), what=f"{'/'.join(checks)} to pass")


def cli_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    rc = main(argv)
    return rc, json.loads(capsys.readouterr().out)


# --------------------------------------------------------------------------- the happy path


def test_dry_run_shows_diffs_and_changes_nothing(plan: Plan, lab: LabState, build: Build, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    before = {h: running(lab, h) for h in plan.switches}
    monkeypatch.chdir(tmp_path)  # the lab is found from any working directory (no --lab-dir)
    assert main(["deploy", "-i", str(LAB_INTENT), "-b", str(build.root), "--dry-run"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert f"would push build {build.root} (manifest sha256 {build.manifest_sha256[:12]}" in out
    for host, sw in plan.switches.items():
        assert host in out
        assert f"+router bgp {sw.asn}" in out
    assert "would change" in out and "dry run: nothing was changed" in out
    assert {h: running(lab, h) for h in plan.switches} == before


def test_plain_render_keeps_the_lab(plan: Plan, lab: LabState, build: Build, operator_dir: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 7: a plain `fabricgen render` used to delete build/lab/, the lab's state and SSH key."""
    monkeypatch.chdir(operator_dir)
    state = {p.name: p.read_bytes() for p in Path(lab.workdir).iterdir() if p.is_file()}
    for _ in range(2):
        assert main(["render", "-i", str(LAB_INTENT)]) == 0  # default -o build/, beside the lab
    assert {p.name: p.read_bytes() for p in Path(lab.workdir).iterdir() if p.is_file()} == state
    capsys.readouterr()
    assert main(["lab", "status", "-i", str(LAB_INTENT)]) == 0  # found at its default place
    status = capsys.readouterr().out
    assert all(host in status for host in plan.switches)
    assert main(["deploy", "-i", str(LAB_INTENT), "-b", "build", "--dry-run"]) == 0
    assert "would push build" in capsys.readouterr().out


def test_deploy_then_validate_passes(plan: Plan, lab: LabState, build: Build,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deploy", "-i", str(LAB_INTENT), "-b", str(build.root), "--lab-dir", lab.workdir]) == 0
    capsys.readouterr()
    wait_healthy(plan, lab, ("bgp", "ecmp", "routes"))
    rc, report = cli_json(["validate", "-i", str(LAB_INTENT), "-b", str(build.root), "--format", "json"], capsys)
    assert report["failures"] == [] and report["ok"] and rc == 0
    # 32 sessions x (state, timers, BFD, routes), 12 leaf pairs, 48 ports x (LLDP + interface), 32 links' MTU,
    # 6 configs running and saved and their FRR daemons' `frr defaults`, 6 kernels' IPv4 and IPv6 hash policy, and
    # the sampled GPU pings: 16 leaf pairs + 8 leaf -> spine + the NICs that sourced none of those (25 instead of
    # --full's 8 servers x 2 NICs x 7 peers = 112)
    sample = gpu_sample(plan)
    pings = sum(len(p) for p in sample.pings.values())
    assert pings == 25 and report["coverage"] == sample.coverage
    assert report["checked"] == 32 * 4 + 12 + 48 + 48 + 32 + 6 * 3 + 6 * 2 + pings


def test_kernel_hash_policy_changed_on_a_switch_is_named(plan: Plan, lab: LabState) -> None:
    """The lab set every switch's kernel to hash as the plan says (the 5-tuple: policy 1); a spine put back
    to the kernel default (addresses only) is named by `validate`'s hash rule, on that spine alone."""
    spine = plan.by_role("spine")[0].hostname
    want = kernel_hash(plan.settings.hash_fields)
    assert want["net.ipv4.fib_multipath_hash_policy"] == "1"
    assert not failures(plan, lab, ("hash",))
    sh(lab, spine, "sh", "-c", "echo 0 > /proc/sys/net/ipv4/fib_multipath_hash_policy")
    try:
        found = failures(plan, lab, ("hash",))
        assert [(f.device, f.item, f.expected, f.actual) for f in found] == [
            (spine, "net.ipv4.fib_multipath_hash_policy", "1", "0")]
    finally:
        sh(lab, spine, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/fib_multipath_hash_policy")
    assert not failures(plan, lab, ("hash",))


def test_second_deploy_reports_no_changes(plan: Plan, lab: LabState, build: Build) -> None:
    from napalm_frr.config import canonical_lines, unified_diff

    report = deploy(plan, build, lab)
    assert report.ok and report.changed == {} and sorted(report.unchanged) == sorted(plan.switches)
    for host, sw in plan.switches.items():  # a no-op is an empty diff, textually too (FRR's order)
        rendered = build.config_files(sw)["frr.conf"].read_text()
        assert unified_diff(canonical_lines(running(lab, host)), canonical_lines(rendered), "running", "build") == ""


# --------------------------------------------------------------------------- faults


def test_fabric_link_down_is_reported(plan: Plan, lab: LabState) -> None:
    leaf = plan.switches["lab-leaf01"]
    up = next(i for i in leaf.interfaces if i.tier == "leaf_spine")
    sh(lab, leaf.hostname, "ip", "link", "set", up.name, "down")
    try:
        wait_for(lambda: any(f.check == "bgp" for f in failures(plan, lab, ("bgp",))), what="BGP to notice")
        found = failures(plan, lab, ("bgp", "interfaces", "lldp", "ecmp"))
        keys = {(f.device, f.check, f.item.split()[0]) for f in found}
        assert (leaf.hostname, "interfaces", up.name) in keys
        assert (leaf.hostname, "bgp", up.peer_ipv4) in keys
        assert (up.peer_device, "bgp", up.ipv4.split("/")[0]) in keys
        assert (leaf.hostname, "lldp", up.name) in keys
        iface = next(f for f in found if f.device == leaf.hostname and f.check == "interfaces")
        assert "down" in iface.actual
        ecmp = [f for f in found if f.check == "ecmp" and f.device == leaf.hostname]
        assert ecmp and all(f.actual == "3 next hops" and f.expected == "4 next hops" for f in ecmp)
    finally:
        sh(lab, leaf.hostname, "ip", "link", "set", up.name, "up")
    wait_healthy(plan, lab)


def test_swapped_cables_are_reported_on_both_ends(plan: Plan, lab: LabState) -> None:
    """gpu0001's two rail cables swapped: each rail leaf sees the other NIC."""
    srv = "gpu0001"
    nic0, nic1 = plan.servers[0].nics[0], plan.servers[0].nics[1]
    rename = [["ip", "link", "set", "eth0", "down"], ["ip", "link", "set", "eth1", "down"],
              ["ip", "link", "set", "eth0", "name", "swap0"], ["ip", "link", "set", "eth1", "name", "eth0"],
              ["ip", "link", "set", "swap0", "name", "eth1"], ["ip", "link", "set", "eth0", "up"],
              ["ip", "link", "set", "eth1", "up"]]
    for argv in rename:
        sh(lab, srv, *argv)
    try:
        def miscabled() -> list[Outcome]:
            return [f for f in failures(plan, lab, ("lldp",)) if "miscabled" in f.actual]

        wait_for(lambda: len(miscabled()) == 2, timeout=30, what="LLDP to show the swap")
        got = {(f.device, f.item.split()[0]): f for f in miscabled()}
        a = got[nic0.leaf, nic0.leaf_port]
        b = got[nic1.leaf, nic1.leaf_port]
        assert a.expected == f"{srv} eth0" and a.actual.startswith(f"{srv} eth1")
        assert b.expected == f"{srv} eth1" and b.actual.startswith(f"{srv} eth0")
    finally:
        for argv in rename:  # the same renames undo the swap
            sh(lab, srv, *argv)
    wait_for(lambda: not failures(plan, lab, ("lldp",)), timeout=30, what="LLDP to recover")


def test_unreachable_switch_fails_alone(plan: Plan, lab: LabState, build: Build, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    data = yaml.safe_load(LAB_INTENT.read_text())
    data["bgp"]["bfd"]["min_tx_ms"] = 150  # a change for every switch
    changed_intent = tmp_path / "fabric.yaml"
    changed_intent.write_text(yaml.safe_dump(data))
    changed = render(changed_intent, tmp_path / "build")
    dead = "lab-spine02"
    sh(lab, dead, "ip", "link", "set", "mgmt0", "down")
    try:
        rc = main(["deploy", "-i", str(changed_intent), "-b", str(changed), "--check-timeout", "30"])
        captured = capsys.readouterr()
        out = captured.out
        assert rc == 1
        # one line: device, address, reason; no traceback without --debug
        failed = [ln for ln in out.splitlines() if ln.startswith(f"FAILED {dead} ")]
        assert failed == [f"FAILED {dead} ({plan.switches[dead].mgmt_ip}): unreachable: ConnectionException: "
                          f"cannot connect to {plan.switches[dead].mgmt_ip}: TCP connection to device failed."]
        assert "Traceback" not in out + captured.err
        for host in plan.switches:
            if host != dead:
                assert "  transmit-interval 150\n" in running(lab, host), host
    finally:
        sh(lab, dead, "ip", "link", "set", "mgmt0", "up")
    report = deploy(plan, build, lab)  # back to the lab intent
    assert report.ok and set(report.changed) == set(plan.switches) - {dead}
    wait_healthy(plan, lab)


def test_rejected_commit_leaves_previous_config(plan: Plan, lab: LabState, build: Build, tmp_path: Path) -> None:
    victim = "lab-leaf02"
    before = {h: running(lab, h) for h in plan.switches}
    edited = tmp_path / "build"
    shutil.copytree(build.root, edited)
    conf = edited / "configs" / victim / "frr.conf"
    # Valid syntax (vtysh --dryrun accepts it) that bgpd refuses: a peer-group that does not exist,
    # plus a harmless-looking change that must not survive either.
    conf.write_text(conf.read_text().replace(" timers bgp", " neighbor 198.18.16.250 peer-group NOPE\n timers bgp", 1)
                    .replace("description lab-spine01", "description CHANGED", 1))
    hand_edited = manifest.load(edited, plan)
    with pytest.raises(DeployRefused, match=f"{conf} changed after it was rendered and checked"):
        deploy(plan, hand_edited, lab)
    report = deploy(plan, hand_edited, lab, check_timeout=20, force=True)
    assert list(report.failed) == [victim]
    assert "ReplaceConfigException" in report.failed[victim]
    assert "previous config restored" in report.failed[victim]
    after = {h: running(lab, h) for h in plan.switches}
    assert after == before
    assert not failures(plan, lab, ("bgp",))


def test_bgpd_stopped_on_a_spine(plan: Plan, lab: LabState) -> None:
    spine = "lab-spine01"
    bgpd = lab.nodes[spine].daemons["bgpd"]
    os.kill(bgpd.pid, signal.SIGTERM)
    wait_for(lambda: any(f.device != spine and f.check == "bgp" for f in failures(plan, lab, ("bgp",))),
             what="leaves to lose their spine01 sessions")
    found = failures(plan, lab, ("bgp", "ecmp"))
    on_spine = [f for f in found if f.device == spine]
    assert on_spine and all(f.check in ("bgp", "reachability") for f in on_spine)
    lost = {(f.device, f.item.split()[0]) for f in found if f.check == "bgp" and f.device != spine}
    # every leaf session towards spine01 is reported down, by the planned peer address
    expected = {(leaf.hostname, itf.peer_ipv4) for leaf in plan.by_role("leaf")
                for itf in leaf.interfaces if itf.peer_device == spine}
    assert lost == expected
    assert all(f.actual == "down" for f in found if f.check == "bgp" and f.device != spine)


def test_lab_down_leaves_nothing(plan: Plan, lab: LabState) -> None:
    pids = [p.pid for p in lab.all_procs()]
    lab_down(lab.workdir)
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert not [n for n in netns.split() if n.startswith(f"{plan.settings.name}-")]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    # by name: another lab may run beside this one (tests/conftest.py LAB_GROUPS), and its bridge may end the same
    assert lab.bridge not in {line.split(":")[1].strip().split("@")[0] for line in links.splitlines()}
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    assert alive == []
