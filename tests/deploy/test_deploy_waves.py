"""Staged rollout (issue 12 §3) without devices: wave rules, auto waves, waves files, drain configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.deploy import drain
from fabricgen.deploy.waves import Topology, auto_waves, load_waves, violations
from fabricgen.errors import FabricError
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"


@pytest.fixture(scope="module")
def lab() -> Plan:
    return load_plan(LAB)


def test_auto_waves_of_the_lab(lab: Plan) -> None:
    waves = auto_waves(lab, lab.switches)
    assert [w.hosts for w in waves] == [["lab-spine01"], ["lab-spine02"], ["lab-leaf01", "lab-leaf03"],
                                        ["lab-leaf02", "lab-leaf04"]]
    assert [w.note for w in waves] == ["spine", "spine", "leaf", "leaf"]
    for w in waves:
        assert violations(lab, w.hosts) == []
    # only what changes is placed; a canary goes first, alone
    canary = auto_waves(lab, ["lab-spine01", "lab-spine02", "lab-leaf02"], canary="lab-leaf02")
    assert [w.hosts for w in canary] == [["lab-leaf02"], ["lab-spine01"], ["lab-spine02"]]
    assert canary[0].note == "canary (leaf)"


def test_no_server_loses_two_rails_and_no_spine_group_two_switches(lab: Plan) -> None:
    topo = Topology.of(lab)
    server = lab.servers[0]
    leaves = sorted({n.leaf for n in server.nics})
    assert len(leaves) == 2
    found = violations(lab, leaves, topo)
    assert any(f"server {server.name} would lose 2 rails at once" in v for v in found)
    spines = violations(lab, ["lab-spine01", "lab-spine02"], topo)
    assert "lab-spine01, lab-spine02 serve the same switches (one switch per spine group per wave)" in spines
    assert any("lab-leaf01 would lose 2 of its 2 uplink switches" in v and "at most 1" in v for v in spines)
    assert violations(lab, ["lab-spine01", "lab-leaf01"], topo)[0].startswith("mixes tiers")


def test_a_quarter_of_the_uplinks_rounded_up(example_plan: Plan) -> None:
    """The example fabric: 8 spines in one group; the group rule (one) is stricter than ⌈8/4⌉ = 2."""
    spines = [s.hostname for s in example_plan.by_role("spine")]
    found = violations(example_plan, spines[:2])
    assert any("serve the same switches" in v for v in found)
    assert not any("would lose 2 of its 8 uplink switches" in v for v in found)  # 2 <= ⌈8/4⌉
    three = violations(example_plan, spines[:3])
    assert any("would lose 3 of its 8 uplink switches" in v and "at most 2 (a quarter, rounded up)" in v
               for v in three)
    waves = auto_waves(example_plan, example_plan.switches)
    assert all(len(w.hosts) == 1 for w in waves if w.note == "spine")


def test_three_tier_one_spine_per_pod_and_one_super_spine_per_group() -> None:
    plan = load_plan(ROOT / "inventory" / "examples" / "three-tier.yaml")
    waves = auto_waves(plan, plan.switches)
    for w in waves:
        assert violations(plan, w.hosts) == []
    assert waves[0].note == "super-spine"
    spine_waves = [w for w in waves if w.note == "spine"]
    first = spine_waves[0].hosts
    assert len({plan.switches[h].pod for h in first}) == len(first) > 1  # one spine of every pod at a time
    placed = [h for w in waves for h in w.hosts]
    assert sorted(placed) == sorted(plan.switches)


def test_waves_file_is_checked_with_lines(lab: Plan, tmp_path: Path) -> None:
    good = tmp_path / "waves.yaml"
    good.write_text("waves:\n  - [lab-spine01]\n  - [lab-spine02]\n  - [lab-leaf01, lab-leaf03, lab-leaf02]\n")
    with pytest.raises(FabricError) as err:
        load_waves(good, lab, ["lab-spine01", "lab-leaf04"])
    text = str(err.value)
    assert f"{good}:4: waves.2: wave 3 server" in text and "would lose 2 rails at once" in text
    assert "(fix: split the wave)" in text
    assert "does not place lab-leaf04, which this deploy changes" in text
    bad = tmp_path / "bad.yaml"
    bad.write_text("waves:\n  - [lab-spine01, nosuch]\n  - [lab-spine01]\n")
    with pytest.raises(FabricError) as err:
        load_waves(bad, lab, [])
    text = str(err.value)
    assert f"{bad}:2: waves.0.1: 'nosuch' is not a switch of the plan" in text
    assert f"{bad}:3: waves.1.0: lab-spine01 is already in wave 1" in text
    ok = tmp_path / "ok.yaml"
    ok.write_text("- [lab-spine02]\n- [lab-spine01]\n")
    assert [w.hosts for w in load_waves(ok, lab, ["lab-spine01"])] == [["lab-spine02"], ["lab-spine01"]]


# --------------------------------------------------------------------------- drain


def test_drain_lines_per_platform(lab: Plan) -> None:
    frr = (ROOT / "tests" / "golden" / "ai256-leaf01" / "frr.conf").read_text()
    on = drain.drained("frr", frr)
    assert "router bgp 4200000000\n bgp graceful-shutdown\n" in on
    assert drain.drained("frr", on, on=False) == frr
    assert drain.drained("frr", on) == on  # idempotent
    nxos = (ROOT / "tests" / "golden" / "ai256-spine01" / "nxos.cfg").read_text()
    assert "\n  graceful-shutdown activate\n" in drain.drained("nxos", nxos)
    bundle = json.dumps({"config_db.json": {"DEVICE_METADATA": {"localhost": {}}}, "frr.conf": frr})
    sonic = json.loads(drain.drained("sonic", bundle))
    assert " bgp graceful-shutdown" in sonic["frr.conf"] and sonic["config_db.json"]["DEVICE_METADATA"]


def test_a_linux_switch_with_ptp_pushes_ptp4l_conf_beside_frr_conf(tmp_path: Path) -> None:
    """The record's service files go into the candidate (a bundle keyed by file name) only where rendered; a
    drain changes its frr.conf alone."""
    from fabricgen.api import build_plan, render
    from fabricgen.render.manifest import candidate_config, load

    plan = build_plan(ROOT / "inventory" / "lab" / "ptp.yaml")
    render(plan, tmp_path / "build", check=False, workers=1)
    build = load(tmp_path / "build", plan)
    leaf = plan.switches["plab-leaf01"]
    bundle = json.loads(candidate_config(build, leaf))
    files = build.config_files(leaf)
    assert bundle == {"frr.conf": files["frr.conf"].read_text(), "ptp4l.conf": files["ptp4l.conf"].read_text()}
    assert "tenants.sh" not in bundle and "Generated by fabricgen" in bundle["ptp4l.conf"].splitlines()[0]
    on = json.loads(drain.drained("frr", candidate_config(build, leaf)))
    assert " bgp graceful-shutdown" in on["frr.conf"] and on["ptp4l.conf"] == bundle["ptp4l.conf"]
    no_ptp = build_plan(ROOT / "inventory" / "lab" / "fabric.yaml")
    render(no_ptp, tmp_path / "plain", check=False, workers=1)
    sw = next(iter(no_ptp.switches.values()))
    assert candidate_config(load(tmp_path / "plain", no_ptp), sw).startswith("frr defaults")  # frr.conf as it is


def test_every_switch_platform_drains_through_its_record() -> None:
    from fabricgen.catalog.registry import PLATFORMS

    assert {name for name, r in PLATFORMS.items() if drain.can_drain(name)} == {
        name for name, r in PLATFORMS.items() if r.kind == "switch"}
    assert not drain.can_drain("host")


def test_nxos_drain_is_one_owned_command() -> None:
    from napalm_nxos_fabricgen.nxos import plan_change

    nxos = (ROOT / "tests" / "golden" / "ai256-spine01" / "nxos.cfg").read_text()
    change = plan_change(nxos, drain.drained("nxos", nxos))
    assert [c.strip() for c in change.commands] == ["router bgp 4200100000", "graceful-shutdown activate"]


def test_receivers_honour_graceful_shutdown(lab: Plan) -> None:
    """Every FRR config fabricgen renders sets LOCAL_PREF 0 on routes carrying GRACEFUL_SHUTDOWN."""
    from fabricgen.render.build import environment, render_switch

    for sw in lab.switches.values():
        text = render_switch(sw, lab, environment())["frr.conf"]
        assert "bgp community-list standard GSHUT seq 5 permit graceful-shutdown" in text
        assert "route-map RM-IMPORT permit 10\n match community GSHUT\n set local-preference 0\nexit\n" in text
        assert "route-map RM-IMPORT permit 20\nexit\n" in text


def test_traffic_has_moved_when_only_own_prefixes_remain(lab: Plan) -> None:
    spine = lab.switches["lab-spine01"]
    peers = drain.neighbors(lab, spine)
    assert [p.host for p in peers] == ["lab-leaf01", "lab-leaf02", "lab-leaf03", "lab-leaf04"]
    leaf01 = peers[0]
    assert len(leaf01.via) == 2  # two cables spine01 <-> leaf01
    own = drain.own_prefixes(spine)
    assert own == {f"{spine.loopback}/32"}
    via = sorted(leaf01.via)

    def hop(nh: str, selected: bool = True) -> dict[str, object]:
        return {"next_hop": nh, "selected_next_hop": selected, "protocol": "bgp"}

    routes = {f"{spine.loopback}/32": [hop(via[0])], "198.18.0.5/32": [hop(via[0]), hop("198.18.16.2")]}
    assert drain.routes_still_via(routes, leaf01.via, own) == ["198.18.0.5/32"]
    routes["198.18.0.5/32"] = [hop(via[0], selected=False), hop("198.18.16.2")]
    assert drain.routes_still_via(routes, leaf01.via, own) == []
    leaf = lab.switches["lab-leaf01"]
    assert {p for p in drain.own_prefixes(leaf) if p.endswith("/31")}  # a leaf's servers stay behind it


# --------------------------------------------------------------------------- the rollout (devices faked)


@pytest.fixture(scope="module")
def lab_build(lab: Plan, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from fabricgen.cli import main
    from fabricgen.render import manifest

    out = tmp_path_factory.mktemp("wavebuild") / "build"
    assert main(["render", "-i", str(LAB), "-o", str(out)]) == 0
    return manifest.load(out, lab)


def test_drain_refuses_a_platform_whose_record_has_none(lab: Plan, lab_build,  # type: ignore[no-untyped-def]
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """--drain names the missing capability instead of deploying undrained."""
    from dataclasses import replace

    from fabricgen.catalog import registry
    from fabricgen.deploy import DeployOptions, DeployRefused, run_deploy

    records = dict(registry.PLATFORMS)
    records["frr"] = replace(records["frr"], drain="")
    monkeypatch.setattr(registry, "PLATFORMS", records)
    with pytest.raises(DeployRefused, match="platform frr has no graceful shutdown in its record"):
        run_deploy(lab, lab_build, DeployOptions(drain=True, dry_run=True))


def waves_of(done: list[str], sizes: list[int]) -> list[list[str]]:
    """The committed devices cut into consecutive waves of these sizes (each sorted)."""
    out, i = [], 0
    for n in sizes:
        out.append(sorted(done[i:i + n]))
        i += n
    assert i == len(done), done
    return out


def fake_devices(monkeypatch: pytest.MonkeyPatch, failing: str = "", validate: str = "") -> list[str]:
    """Every device 'changes' (a one-line FRR timers diff); ``failing`` fails its commit; returns the
    devices the real (not dry) runs committed, in order."""
    from nornir.core.task import Result

    from fabricgen.deploy import locking, phases, run
    from fabricgen.deploy import report as R
    from fabricgen.deploy.state import CHECKED, FAILED

    batches: list[str] = []
    diff = "--- running\n+++ candidate\n@@ -1,2 +1,2 @@\n router bgp 1\n- timers bgp 1 3\n+ timers bgp 2 6\n"

    def deploy_device(task, ctx):  # type: ignore[no-untyped-def]
        host = task.host.name
        impact = phases.impact(ctx.plan.switches[host], phases.Diff(diff))
        if ctx.opts.dry_run:
            return Result(host=task.host, result=R.DeviceOutcome(host, "", R.CHANGED, diff=diff, impact=impact))
        batches.append(host)
        ok = host != failing
        ctx.phase(host, CHECKED if ok else FAILED)
        out = R.DeviceOutcome(host, "", R.CHANGED if ok else R.FAILED, diff=diff, impact=impact,
                              reason="" if ok else "commit failed: boom\nsecond line")
        return Result(host=task.host, result=out)

    monkeypatch.setattr(run, "deploy_device", deploy_device)
    monkeypatch.setattr(locking, "lock_task", lambda task, ctx, takeover=None: Result(host=task.host, result=None))
    monkeypatch.setattr(locking, "unlock_task", lambda task, ctx: Result(host=task.host))
    monkeypatch.setattr(run, "validate_between", lambda plan, ctx, wave: validate)
    return batches


def test_rollout_stops_at_the_first_failed_wave(lab: Plan, lab_build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from fabricgen.deploy import DeployOptions, run_deploy
    from fabricgen.deploy.state import Journal, journal_path

    batches = fake_devices(monkeypatch, failing="lab-leaf01")
    report = run_deploy(lab, lab_build, DeployOptions(waves="auto", canary="lab-spine02"))
    waves = [["lab-spine02"], ["lab-spine01"], ["lab-leaf01", "lab-leaf03"], ["lab-leaf02", "lab-leaf04"]]
    assert report.waves is not None and [w.hosts for w in report.waves] == waves
    assert waves_of(batches, [1, 1, 2]) == waves[:3]  # the 4th wave never started
    assert report.stopped == "wave 3: lab-leaf01: failed: commit failed: boom\nsecond line"
    assert report.outcomes["lab-leaf02"].status == "interrupted"
    assert report.outcomes["lab-leaf02"].reason.startswith("not started: the rollout stopped (wave 3: lab-leaf01")
    assert report.exit_code == 1
    journal = Journal.load(journal_path(lab))
    # every device was locked before any commit
    assert journal is not None and journal.unfinished and journal.phase("lab-leaf04") == "locked"
    # --resume runs only what is left, in wave order
    batches = fake_devices(monkeypatch)
    resumed = run_deploy(lab, lab_build, DeployOptions(waves="auto", resume=True))
    assert resumed.ok and waves_of(batches, [1, 2]) == [["lab-leaf01"], ["lab-leaf02", "lab-leaf04"]]


def test_a_fabric_that_does_not_validate_stops_the_rollout_unless_the_operator_goes_on(
        lab: Plan, lab_build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from fabricgen.deploy import DeployOptions, run_deploy

    batches = fake_devices(monkeypatch, validate="after wave 1 (lab-spine01) the fabric does not validate: x")
    stopped = run_deploy(lab, lab_build, DeployOptions(waves="auto", discard=True))
    assert batches == ["lab-spine01"]
    assert stopped.stopped.startswith("after wave 1 (lab-spine01) the fabric does not validate")
    asked: list[str] = []
    batches = fake_devices(monkeypatch, validate="after wave N: no")
    went_on = run_deploy(lab, lab_build, DeployOptions(waves="auto", discard=True, pause_on_failure=True,
                                                       ask=lambda q: asked.append(q) or True))
    assert len(batches) == 6 and len(asked) == 3 and went_on.stopped.endswith("(the operator went on)")


def test_max_impact_refuses_before_anything_changes(lab: Plan, lab_build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from fabricgen.deploy import DeployOptions, DeployRefused, run_deploy

    batches = fake_devices(monkeypatch)
    with pytest.raises(DeployRefused, match=r"changes above --max-impact hitless on 6 device\(s\); nothing was "
                                            r"changed[\s\S]*lab-leaf01: bgp-reset\n  candidate @@ -1,2 \+1,2 @@ "
                                            r"\[bgp-reset\]"):
        run_deploy(lab, lab_build, DeployOptions(max_impact="hitless", discard=True))
    assert batches == []  # the preview only: nothing committed


def test_dry_run_prints_the_wave_plan(lab: Plan, lab_build, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from fabricgen.cli import main

    fake_devices(monkeypatch)
    assert main(["deploy", "-i", str(LAB), "-b", str(lab_build.root), "--dry-run", "--waves", "auto"]) == 0
    out = capsys.readouterr().out
    assert "rollout plan: 4 wave(s)" in out and "lab-leaf01, lab-leaf03" in out
    assert "fabric-wide impact: bgp-reset" in out


def test_health_is_judged_between_waves(lab: Plan, lab_build, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """BGP, ECMP, routes and lossless health after each wave: the window is the intent's unless --wave-health
    says otherwise (0 skips it), and a health finding stops the rollout naming the port."""
    import io
    import threading

    from rich.console import Console

    from fabricgen import validate
    from fabricgen.deploy import DeployOptions, context, rollout
    from fabricgen.deploy.waves import Wave
    from fabricgen.validate import Outcome, Report

    calls: list[tuple[tuple[str, ...], float | None]] = []
    storm = Outcome("lab-leaf01", "pfc-pause", "Ethernet0 prio 3", False, "<= 6000/min", "90000/min")

    def fake_validate(plan, checks, health_window=None, **kw):  # type: ignore[no-untyped-def]
        calls.append((checks, health_window))
        return Report([storm] if health_window else [])

    monkeypatch.setattr(validate, "run_validate", fake_validate)

    def between(**opts: object) -> str:
        ctx = context.RunContext(lab, lab_build, DeployOptions(wave_timeout=0, **opts), threading.Event(),  # type: ignore[arg-type]
                                 Console(file=io.StringIO()), 1)
        return rollout.validate_between(lab, ctx, Wave(1, ["lab-spine01"]))

    reason = between()
    assert calls[-1] == (("bgp", "ecmp", "routes"), float(lab.health.window_seconds))
    assert reason == ("after wave 1 (lab-spine01) the fabric does not validate: lab-leaf01 pfc-pause "
                      "Ethernet0 prio 3: expected <= 6000/min, got 90000/min")
    between(wave_health=2.5)
    assert calls[-1][1] == 2.5
    assert between(wave_health=0) == "" and calls[-1][1] is None
