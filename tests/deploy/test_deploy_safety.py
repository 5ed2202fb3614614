"""Deploy what was checked, one change at a time, nothing silently undeployable (no devices needed).

Issue 7 §6 (manifest), issue 8 §1 (lock), §2 (journal), §6 (undeployable settings), and the
route expectations deploy and validate compare with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabricgen.base.outdir import MARKER
from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, DeployRefused, run_deploy
from fabricgen.deploy.state import FabricLock, Journal, Owner, fabric_lock, journal_path
from fabricgen.errors import FabricError
from fabricgen.plan.build import load_plan
from fabricgen.plan.deployable import undeployable
from fabricgen.plan.expect import expected_prefixes
from fabricgen.render import manifest
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"


@pytest.fixture(scope="module")
def plan():  # type: ignore[no-untyped-def]
    return load_plan(LAB)


def render(tmp_path: Path, *extra: str, intent: Path = LAB) -> Path:
    out = tmp_path / "build"
    assert main(["render", "-i", str(intent), "-o", str(out), *extra]) == 0
    return out


# --------------------------------------------------------------------------- manifest (issue 7 §6)


def test_render_writes_a_manifest_of_every_file(tmp_path: Path, plan) -> None:  # type: ignore[no-untyped-def]
    out = render(tmp_path)
    doc = json.loads((out / "manifest.json").read_text())
    assert doc["checks"] == {"ran": True, "passed": True} and doc["fabric"] == "lab"
    assert doc["intent_sha256"] == manifest.intent_sha256(plan)
    files = {p.relative_to(out).as_posix() for p in out.rglob("*")
             if p.is_file() and p.name not in ("manifest.json", MARKER)}  # the marker is not output
    assert set(doc["files"]) == files
    assert doc["files"]["configs/lab-leaf01/frr.conf"] == manifest.file_sha256(out / "configs/lab-leaf01/frr.conf")
    again = render(tmp_path / "again")
    assert (again / "manifest.json").read_bytes() == (out / "manifest.json").read_bytes()  # byte-identical


def test_deploy_refuses_an_edited_file_and_names_it(tmp_path: Path, plan) -> None:  # type: ignore[no-untyped-def]
    build = manifest.load(render(tmp_path), plan)
    conf = build.root / "configs" / "lab-leaf02" / "frr.conf"
    conf.write_text(conf.read_text() + "ip router-id 198.18.0.99\n")
    with pytest.raises(DeployRefused, match=f"{conf} changed after it was rendered and checked"):
        run_deploy(plan, build, DeployOptions(dry_run=True, limit="lab-leaf02"))
    assert build.problems([plan.switches["lab-leaf01"]]) == []  # only the edited file is refused


def test_deploy_refuses_a_no_check_build(tmp_path: Path, plan, capsys) -> None:  # type: ignore[no-untyped-def]
    out = render(tmp_path, "--no-check")
    assert json.loads((out / "manifest.json").read_text())["checks"] == {"ran": False, "passed": False}
    assert main(["deploy", "-i", str(LAB), "-b", str(out), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "deploy refused:" in err and "was rendered with --no-check" in err


def test_deploy_refuses_a_build_of_another_intent(tmp_path: Path, plan) -> None:  # type: ignore[no-untyped-def]
    data = yaml.safe_load(LAB.read_text())
    data["bgp"]["holdtime"] = 9
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(data))
    out = render(tmp_path, intent=other)
    with pytest.raises(FabricError, match="was rendered from another intent"):
        manifest.load(out, plan)
    with pytest.raises(FabricError, match="no render manifest"):
        manifest.load(tmp_path, plan)


def test_check_records_a_reviewed_edit(tmp_path: Path, plan) -> None:  # type: ignore[no-untyped-def]
    out = render(tmp_path)
    conf = out / "configs" / "lab-leaf02" / "frr.conf"
    conf.write_text(conf.read_text().replace("log syslog informational", "log syslog warnings"))
    assert manifest.load(out, plan).problems([plan.switches["lab-leaf02"]])
    assert main(["check", "-i", str(LAB), "--configs", str(out / "configs")]) == 0
    assert manifest.load(out, plan).problems([plan.switches["lab-leaf02"]]) == []


# --------------------------------------------------------------------------- lock and journal (issue 8 §1-2)


def test_lock_names_a_live_holder_and_break_lock_needs_a_dead_one(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock = FabricLock(tmp_path, "lab")
        holder = Owner.me("run-a")
        holder = Owner(**{**holder.__dict__, "pid": other.pid, "pid_start": int(
            Path(f"/proc/{other.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])})
        lock.path.write_text(json.dumps(holder.__dict__))
        mine = Owner.me("run-b")
        with pytest.raises(DeployRefused, match=rf"being deployed by .* pid {other.pid} \(run run-a"):
            FabricLock(tmp_path, "lab").acquire(mine)
        with pytest.raises(DeployRefused, match="being deployed by"):
            FabricLock(tmp_path, "lab").acquire(mine, break_lock=True)  # a live owner is never broken
    finally:
        other.kill()
        other.wait()
    with pytest.raises(DeployRefused, match="whose process is dead.*--break-lock"):
        FabricLock(tmp_path, "lab").acquire(mine)
    taken = FabricLock(tmp_path, "lab")
    assert taken.acquire(mine, break_lock=True) is not None
    assert json.loads(taken.path.read_text())["run"] == "run-b"
    taken.release()
    assert not taken.path.exists()


def test_unfinished_journal_blocks_the_next_deploy(tmp_path: Path, plan) -> None:  # type: ignore[no-untyped-def]
    build = manifest.load(render(tmp_path), plan)
    path = journal_path(plan)
    journal = Journal.start(path, Owner.me("run-x"), str(build.root), build.manifest_sha256, ["lab-leaf01",
                                                                                               "lab-leaf02"])
    journal.set("lab-leaf01", "checked")
    journal.set("lab-leaf02", "committing")
    with pytest.raises(DeployRefused, match=r"did not finish: lab-leaf02 committing.*--resume.*--discard"):
        run_deploy(plan, build, DeployOptions(limit="lab-leaf01"))
    assert not fabric_lock(plan).path.exists()  # a refusal leaves no lock behind


# --------------------------------------------------------------------------- undeployable (issue 8 §6)


def test_qos_on_frr_is_a_plan_warning_and_a_deploy_refusal(tmp_path: Path, plan, capsys) -> None:  # type: ignore[no-untyped-def]
    assert undeployable(plan) == []  # the lab intent asks for nothing its platform cannot do
    data = yaml.safe_load(LAB.read_text())
    data["qos"] = {"ecn": {400: {"min_bytes": 50_000, "max_bytes": 100_000, "probability": 7}}, "mtu": 9000}
    intent = tmp_path / "qos.yaml"
    intent.write_text(yaml.safe_dump(data))
    changed = load_plan(intent)
    found = {(u.setting, u.platform, u.refuse) for u in undeployable(changed)}
    assert found == {("qos.ecn", "frr", True), ("qos.mtu", "frr", False)}
    assert main(["plan", "-i", str(intent)]) == 0
    out = capsys.readouterr()
    assert "warning: qos.ecn is set in the intent, but leaf, spine run platform frr" in out.out + out.err
    build = manifest.load(render(tmp_path, intent=intent), changed)
    with pytest.raises(DeployRefused, match="qos.ecn is set .* platform frr.*--accept-undeployable"):
        run_deploy(changed, build, DeployOptions(dry_run=True))


# --------------------------------------------------------------------------- expected routes


def test_expected_prefixes_per_session(plan) -> None:  # type: ignore[no-untyped-def]
    want = expected_prefixes(plan)
    leaf, spine = plan.switches["lab-leaf01"], plan.switches["lab-spine01"]
    assert leaf.bgp is not None and spine.bgp is not None
    # a leaf announces its loopback and 4 GPU /31s; from a spine it learns the spine's loopback and
    # the other 3 leaves' 5 prefixes each; a spine learns only the leaf's own 5 from each leaf
    assert {want[leaf.hostname, n.ip] for n in leaf.bgp.neighbors} == {1 + 3 * 5}
    assert {want[spine.hostname, n.ip] for n in spine.bgp.neighbors} == {5}


def test_a_resumed_journal_keeps_what_a_half_done_commit_still_needs(tmp_path: Path) -> None:
    """Issue 23 D1: the session reset a timer change owes survives an interrupted run (and a resume
    that is itself interrupted) until the device is checked."""
    path = Journal.path_for(tmp_path, "lab")
    first = Journal.start(path, Owner.me("run-1"), "b", "sha", ["lab-leaf01", "lab-leaf02", "lab-leaf03"])
    first.set("lab-leaf01", "committing", actions=["reset-bgp"])
    first.set("lab-leaf01", "committed")
    first.set("lab-leaf02", "diffed")
    first.set("lab-leaf03", "checked")
    assert Journal.load(path).devices["lab-leaf01"]["actions"] == ["reset-bgp"]  # type: ignore[union-attr]
    second = Journal.start(path, Owner.me("run-2"), "b", "sha", ["lab-leaf01", "lab-leaf02", "lab-leaf03"],
                           Journal.load(path))
    assert second.unsettled("lab-leaf01") == ("committed", ["reset-bgp"])
    assert second.unsettled("lab-leaf02") is None  # never reached its commit: a plain diff decides
    second.set("lab-leaf01", "failed", "unreachable")
    third = Journal.start(path, Owner.me("run-3"), "b", "sha", ["lab-leaf01", "lab-leaf02", "lab-leaf03"],
                          Journal.load(path))
    assert third.unsettled("lab-leaf01") == ("committed", ["reset-bgp"])
    third.set("lab-leaf01", "checked")
    assert third.unsettled("lab-leaf01") is None and "actions" not in third.devices["lab-leaf01"]


# --------------------------------------------------------------------------- one lock per fabric (issue 23 D2)


def live_owner(run: str, proc: subprocess.Popen[bytes]) -> Owner:
    start = int(Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    return Owner(**{**Owner.me(run).__dict__, "pid": proc.pid, "pid_start": start})


def test_one_lock_per_fabric_wherever_its_build_lives(tmp_path: Path, plan) -> None:  # type: ignore[no-untyped-def]
    first = manifest.load(render(tmp_path / "ops-a"), plan)
    second = manifest.load(render(tmp_path / "elsewhere" / "b"), plan)
    assert first.root.parent != second.root.parent
    data = yaml.safe_load(LAB.read_text())
    data["addressing"]["management"] = "198.19.254.0/24"
    grown = tmp_path / "grown.yaml"
    grown.write_text(yaml.safe_dump(data))
    assert fabric_lock(load_plan(grown)).path != fabric_lock(plan).path  # other devices, another fabric
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock = fabric_lock(plan)
        lock.path.parent.mkdir(parents=True, exist_ok=True)
        lock.path.write_text(json.dumps(live_owner("run-a", other).__dict__))
        for build in (first, second):  # neither build's directory matters: the fabric is held
            with pytest.raises(DeployRefused, match=rf"fabric 'lab' is being deployed by .* pid {other.pid}"):
                run_deploy(plan, build, DeployOptions())
    finally:
        other.kill()
        other.wait()


def test_device_locks_are_all_or_nothing(tmp_path: Path, plan, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """One device held by another deploy: no device is committed, and every lock taken is given back."""
    from nornir.core.task import Result

    from fabricgen.base.ssh import DeviceLocked
    from fabricgen.deploy import locking, run

    build = manifest.load(render(tmp_path), plan)
    taken: list[str] = []
    released: list[str] = []
    holder = {"run": "run-other", "owner": "ops@far pid 7", "since": "2026-12-06T00:00:00Z"}

    def lock_task(task, ctx, takeover=None):  # type: ignore[no-untyped-def]
        if task.host.name == "lab-leaf03" and "run-other" not in (takeover or ctx.takeover):
            return Result(host=task.host, result=DeviceLocked("lab-leaf03: locked by another deploy: ops@far", holder))
        taken.append(task.host.name)
        return Result(host=task.host, result=None)

    monkeypatch.setattr(locking, "lock_task", lock_task)
    monkeypatch.setattr(locking, "unlock_task", lambda task, ctx: released.append(task.host.name) or Result(task.host))
    monkeypatch.setattr(run, "deploy_device", lambda task, ctx: pytest.fail("a device was deployed"))
    with pytest.raises(DeployRefused, match="1 device.s. are locked by another deploy; no device was locked or "
                                            "changed:\nlab-leaf03: lab-leaf03: locked by another deploy: ops@far"):
        run_deploy(plan, build, DeployOptions())
    assert sorted(released) == sorted(taken) == sorted(h for h in plan.switches if h != "lab-leaf03")
    assert not fabric_lock(plan).path.exists() and not journal_path(plan).exists()
    # --break-lock: a holder fabricgen cannot see alive is taken over, and the journal says whose it was
    done: list[str] = []

    def deployed(task, ctx):  # type: ignore[no-untyped-def]
        from fabricgen.deploy import report as R

        done.append(task.host.name)
        ctx.phase(task.host.name, "unchanged")
        return Result(host=task.host, result=R.DeviceOutcome(task.host.name, "", R.UNCHANGED))

    monkeypatch.setattr(run, "deploy_device", deployed)
    run_deploy(plan, build, DeployOptions(break_lock=True))
    assert sorted(done) == sorted(plan.switches)
    journal = Journal.load(journal_path(plan))
    assert journal is not None and journal.data["broken_locks"]["devices"] == {"lab-leaf03": holder}


# --------------------------------------------------------------------------- a device silent mid-commit (issue 23 D8)


class SilentMidCommit:
    """A napalm driver stand-in: its config differs from the build until a commit goes in; ``vanish`` makes
    the commit lose the connection after the config went in (as a management link going down would)."""

    def __init__(self, state: dict[str, bool], vanish: bool) -> None:
        self.state, self.vanish = state, vanish

    def get_interfaces(self) -> dict[str, object]:
        return {}

    def get_bgp_neighbors(self) -> dict[str, object]:
        return {"global": {"peers": {}}}

    def get_bgp_neighbors_detail(self) -> dict[str, object]:
        return {}

    def load_replace_candidate(self, config: str = "") -> None:
        pass

    def compare_config(self) -> str:
        return "" if self.state["in"] else "--- running\n+++ candidate\n@@ -1 +1 @@\n-a\n+b\n"

    def discard_config(self) -> None:
        pass

    def commit_config(self) -> None:
        from fabricgen.base.ssh import ConnectionLost

        self.state["in"] = True
        if self.vanish:
            raise ConnectionLost("SSH connection to 198.18.255.13 lost during `frr-reload.py --reload`: no answer "
                                 "for 30s (TCP keepalive and user timeout)")


def test_a_device_silent_mid_commit_is_undetermined_until_resume_reaches_it(
        tmp_path: Path, plan, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The run ends unfinished with the device undetermined and the summary says what --resume does; a resume
    that still cannot reach it keeps it undetermined; one that reaches it settles it (its config is in)."""
    from io import StringIO

    from napalm.base.exceptions import ConnectionException
    from nornir.core.inventory import Host
    from nornir.core.task import Result
    from rich.console import Console

    from fabricgen.deploy import locking
    from fabricgen.deploy import report as R

    build = manifest.load(render(tmp_path), plan)
    victim = "lab-leaf02"
    configs = {h: {"in": False} for h in plan.switches}
    link = {"now": "goes down mid-commit"}

    def connection(host: Host, connection: str, configuration: object) -> SilentMidCommit:
        if host.name == victim and link["now"] == "down":
            raise ConnectionException(f"cannot connect to {host.hostname}: TCP connection timed out")
        return SilentMidCommit(configs[host.name], vanish=host.name == victim and link["now"] != "up")

    monkeypatch.setattr(Host, "get_connection", connection)
    monkeypatch.setattr(locking, "lock_task", lambda task, ctx, takeover=None: Result(host=task.host, result=None))
    monkeypatch.setattr(locking, "unlock_task", lambda task, ctx: Result(host=task.host))
    report = run_deploy(plan, build, DeployOptions(check_timeout=1))
    assert report.hosts(R.UNDETERMINED) == [victim] and report.exit_code == 1
    assert sorted(report.changed) == sorted(h for h in plan.switches if h != victim)
    out = StringIO()
    R.print_report(report, Console(file=out, width=200))
    text = out.getvalue()
    assert f"UNDETERMINED {victim} (" in text and "no answer for 30s" in text
    assert f"undetermined: {victim}: `fabricgen deploy --resume` retries them once they answer" in text
    journal = Journal.load(journal_path(plan))
    assert journal is not None and journal.state == "undetermined" and journal.phase(victim) == "undetermined"
    with pytest.raises(DeployRefused, match=f"did not finish: {victim} undetermined"):
        run_deploy(plan, build, DeployOptions())
    link["now"] = "down"  # resumed while its link is still down: still undetermined, still unfinished
    report = run_deploy(plan, build, DeployOptions(resume=True, check_timeout=1))
    assert list(report.outcomes) == [victim] and report.hosts(R.UNDETERMINED) == [victim]
    assert "still unreachable" in report.outcomes[victim].reason
    assert Journal.load(journal_path(plan)).state == "undetermined"  # type: ignore[union-attr]
    link["now"] = "up"  # back: the config went in before the link went down
    report = run_deploy(plan, build, DeployOptions(resume=True, check_timeout=1))
    assert report.ok and list(report.changed) == [victim]
    assert report.outcomes[victim].notes[0] == "resumed: its config was already in (the interrupted run left it " \
                                               "undetermined)"
    assert Journal.load(journal_path(plan)).state == "done"  # type: ignore[union-attr]


def test_what_leaves_a_config_undetermined() -> None:
    from napalm.base.exceptions import CommandErrorException, CommandTimeoutException, ReplaceConfigException

    from fabricgen.base.ssh import ConfigUndetermined, ConnectionLost
    from fabricgen.deploy.device import undetermined

    assert undetermined(ConnectionLost("gone")) and undetermined(CommandTimeoutException("600 s"))
    assert undetermined(ConfigUndetermined("commit failed AND restoring failed"))
    try:
        try:
            raise ConnectionLost("gone")
        except ConnectionLost as exc:
            raise ReplaceConfigException("cannot install the candidate") from exc
    except ReplaceConfigException as wrapped:
        assert undetermined(wrapped)  # a driver's wrapping keeps the cause
    assert not undetermined(ReplaceConfigException("commit failed, previous config restored: rejected"))
    assert not undetermined(CommandErrorException("vtysh exited 1"))


# --------------------------------------------------------------------------- a full disk (issue 23 D13)


def disk_fills(monkeypatch: pytest.MonkeyPatch, after: int) -> dict[str, int | None]:
    """Every state file write after the first ``after`` fails with ENOSPC (the file is created first, as on a
    full disk); set ``["after"] = None`` to free the disk."""
    import errno

    from fabricgen.deploy import state

    real = state._write_all
    left: dict[str, int | None] = {"after": after}

    def write_all(fd: int, data: bytes) -> None:
        if left["after"] is not None:
            if left["after"] <= 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            left["after"] -= 1
        real(fd, data)

    monkeypatch.setattr(state, "_write_all", write_all)
    return left


def test_a_full_disk_refuses_the_lock_and_leaves_nothing_behind(tmp_path: Path, plan, monkeypatch,  # type: ignore[no-untyped-def]
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from fabricgen.deploy.state import reclaim_temp_files, state_dir

    out = render(tmp_path)
    directory = state_dir()
    directory.mkdir(parents=True)
    dead = directory / f".{fabric_lock(plan).path.stem}.journal.json.{2**22 + 7}.1.tmp"  # a killed writer's
    dead.write_text("")
    disk_fills(monkeypatch, after=0)
    assert main(["deploy", "-i", str(LAB), "-b", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"deploy refused: cannot write {fabric_lock(plan).path}: No space left on device (fix: free space" in err
    assert "Traceback" not in err
    assert list(directory.iterdir()) == []  # no empty lock, no temp file; the dead writer's temp file reclaimed
    assert reclaim_temp_files(directory) == []


def test_a_journal_the_disk_refuses_mid_run_stops_it_with_a_summary(tmp_path: Path, plan, monkeypatch,  # type: ignore[no-untyped-def]
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The lock, the journal's start and six `locked` phases are written, then the disk is full: the device
    about to commit does not (its phase could not be journaled), no other device starts, the summary says
    why, no temp file is left, and once there is space the journal on disk leads to --resume."""
    from nornir.core.inventory import Host
    from nornir.core.task import Result

    from fabricgen.deploy import locking
    from fabricgen.deploy.state import state_dir

    out = render(tmp_path)
    configs = {h: {"in": False} for h in plan.switches}
    monkeypatch.setattr(Host, "get_connection", lambda host, c, cfg: SilentMidCommit(configs[host.name], False))
    monkeypatch.setattr(locking, "lock_task", lambda task, ctx, takeover=None: Result(host=task.host, result=None))
    monkeypatch.setattr(locking, "unlock_task", lambda task, ctx: Result(host=task.host))
    disk = disk_fills(monkeypatch, after=1 + 1 + len(plan.switches) + 1)  # ... and the first device's `diffed`
    assert main(["deploy", "-i", str(LAB), "-b", str(out), "--workers", "1"]) == 1
    text = capsys.readouterr()
    assert "Traceback" not in text.out + text.err
    assert "JOURNAL NOT WRITTEN, the deploy stopped: cannot write " in text.out and "No space left" in text.out
    assert "may lag behind this summary" in text.out
    assert text.out.count("not committed: cannot write") == 1 and text.out.count("not started: the journal") == 5
    assert not any(c["in"] for c in configs.values())  # nothing committed that the journal could not record
    assert sorted(p.name for p in state_dir().iterdir()) == [journal_path(plan).name]  # no lock, no temp file
    disk["after"] = None
    assert main(["deploy", "-i", str(LAB), "-b", str(out)]) == 2
    assert "did not finish" in capsys.readouterr().err
    assert main(["deploy", "-i", str(LAB), "-b", str(out), "--resume"]) == 0
    assert all(c["in"] for c in configs.values())


# --------------------------------------------------------------------------- --accept-undeployable says what (D3)


class LivePorts(SilentMidCommit):
    """Its ports run MTU 9216 whatever the plan says (frr.conf cannot change that)."""

    def __init__(self, state: dict[str, bool], ports: list[str]) -> None:
        super().__init__(state, vanish=False)
        self.ports = ports

    def get_interfaces(self) -> dict[str, object]:
        return {p: {"mtu": 9216} for p in self.ports}


def test_accept_undeployable_lists_per_device_what_it_did_not_deploy(tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 23 D3: it used to exit 0 with "unchanged 6" and never say that ECN and MTU were not deployed."""
    from nornir.core.inventory import Host
    from nornir.core.task import Result

    from fabricgen.deploy import locking

    data = yaml.safe_load(LAB.read_text())
    data["qos"] = {"ecn": {400: {"min_bytes": 50_000, "max_bytes": 100_000, "probability": 7}}, "mtu": 9000}
    intent = tmp_path / "ecn-mtu.yaml"
    intent.write_text(yaml.safe_dump(data))
    out = render(tmp_path, intent=intent)
    plan = load_plan(intent)
    configs = {h: {"in": False} for h in plan.switches}
    monkeypatch.setattr(Host, "get_connection", lambda host, c, cfg: LivePorts(
        configs[host.name], [i.name for i in plan.switches[host.name].interfaces]))
    monkeypatch.setattr(locking, "lock_task", lambda task, ctx, takeover=None: Result(host=task.host, result=None))
    monkeypatch.setattr(locking, "unlock_task", lambda task, ctx: Result(host=task.host))
    argv = ["deploy", "-i", str(intent), "-b", str(out)]
    assert main(argv) == 2  # without it: refused, nothing touched
    assert "qos.ecn is set in the intent" in capsys.readouterr().err and not any(c["in"] for c in configs.values())
    for extra, verb in ((["--dry-run"], "would"), ([], "did")):
        assert main([*argv, "--accept-undeployable", *extra]) == 0
        text = capsys.readouterr().out
        assert f"--accept-undeployable: 6 device(s) {verb} not get everything the intent asks for" in text
        for host, sw in plan.switches.items():
            ecn = next(ln for ln in text.splitlines() if ln.startswith(f"NOT DEPLOYED {host}: qos.ecn"))
            assert "platform frr cannot deploy it" in ecn
            mtu = text.split(f"NOT DEPLOYED {host}: qos.mtu: platform frr cannot set an interface MTU")[1]
            assert f"{sw.interfaces[0].name} mtu 9216 (plan 9000, peer " in mtu.split("NOT DEPLOYED")[0]
    assert all(c["in"] for c in configs.values())  # the rest was deployed


# --------------------------------------------------------------------------- the lab walk-through (issue 23)


def test_deploy_and_validate_say_which_intent_build_and_fabric(tmp_path: Path, plan, monkeypatch,  # type: ignore[no-untyped-def]
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from nornir.core.inventory import Host
    from nornir.core.task import Result

    from fabricgen.deploy import locking
    from fabricgen.validate import collect
    from fabricgen.validate.checks import Outcome, Report

    out = render(tmp_path)
    capsys.readouterr()
    configs = {h: {"in": False} for h in plan.switches}
    monkeypatch.setattr(Host, "get_connection", lambda host, c, cfg: SilentMidCommit(configs[host.name], False))
    monkeypatch.setattr(locking, "lock_task", lambda task, ctx, takeover=None: Result(host=task.host, result=None))
    monkeypatch.setattr(locking, "unlock_task", lambda task, ctx: Result(host=task.host))
    assert main(["deploy", "-i", str(LAB), "-b", str(out), "--dry-run", "--lab-dir", str(tmp_path / "no-lab")]) == 0
    err = capsys.readouterr().err
    build = manifest.load(out, plan)
    assert err.startswith(f"dry run of intent {LAB} (fabric 'lab': 6 switches, 8 servers, at their management "
                          f"addresses)\n  would push {build.label}\n")
    assert not any(c["in"] for c in configs.values())

    def reads(plan, checks, limit, role, workers, say=None, **kw):  # type: ignore[no-untyped-def]
        progress = collect.Progress(say, 2)
        progress.tick("lab-leaf01 read (0.4s)")
        progress.tick("lab-leaf02 read (0.5s)")
        return Report([Outcome("lab-leaf01", "bgp", "sessions", True, "up", "up")])

    monkeypatch.setattr(collect, "run_validate", reads)
    assert main(["validate", "-i", str(LAB), "-b", str(out), "--lab-dir", str(tmp_path / "no-lab")]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"validating intent {LAB} (fabric 'lab': 6 switches, 8 servers, at their management "
                          f"addresses)\n  against {build.label}\n")
    assert "[1/2] lab-leaf01 read (0.4s)\n[2/2] lab-leaf02 read (0.5s)" in err
