"""Host-wide lab records: a cut-off run is explained by `lab up` and cleared by `lab prune`.

The pure tests check liveness and the messages on records whose objects do not exist.
The live test cuts a real lab off (SIGKILL, workdir deleted, namespaces left behind) and
shows that `lab up` names the dead lab and the command, that `lab prune` removes exactly
that lab while a live lab and unrecorded namespaces stay, and that the next `lab up` works.
Every test points $FABRICGEN_LAB_RECORDS at its own directory.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.lab import (
    LabError,
    LabInterface,
    LabLink,
    LabNode,
    LabTopology,
    lab_down,
    lab_status,
    lab_up,
    prune_stale_labs,
)
from fabricgen.lab import netns as ln
from fabricgen.lab import records as rec
from fabricgen.lab.netns import ProcRef

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "records"
    monkeypatch.setenv(rec.RECORDS_ENV, str(path))
    return path


def small_topology(workdir: str, name: str, third_octet: int) -> LabTopology:
    """A switch and a server on one cable, management in 198.18.<third_octet>.0/24."""
    mgmt = f"198.18.{third_octet}"
    return LabTopology(
        name=name,
        nodes=(
            LabNode("s1", "switch", f"{mgmt}.11"),
            LabNode("h1", "server", f"{mgmt}.21", interfaces=(LabInterface("eth0", ("198.19.7.1/31",)),)),
        ),
        links=(LabLink("h1", "eth0", "s1", "Ethernet0"),),
        mgmt_subnet=f"{mgmt}.0/24",
        workdir=workdir,
    )


def fake_record(name: str, workdir: str = "/nonexistent/fabricgen-test", **kw: object) -> rec.LabRecord:
    """A record of objects that do not exist on this host."""
    fields: dict[str, object] = {
        "namespaces": (f"{name}-s1", f"{name}-h1"),
        "bridge": f"{name}-mgmt",
        "host_links": (f"fgzz{name[-4:]}m0", f"fgzz{name[-4:]}m1"),
        "mgmt_subnet": "198.18.240.0/24",
        "owner": None,
        "phase": "up",
    }
    fields.update(kw)
    return rec.LabRecord(name=name, workdir=workdir, **fields)  # type: ignore[arg-type]


def me() -> ProcRef:
    ref = ProcRef.capture(os.getpid())
    assert ref is not None
    return ref


# --------------------------------------------------------------------------- pure tests


def test_record_round_trips_through_json(records: Path) -> None:
    record = fake_record("fgu1", procs={"s1/holder": me()}, identity={"fgu1-s1": 4026532000})
    rec.write_record(record)
    assert (records / "fgu1.json").exists()
    loaded = rec.load_record("fgu1")
    assert loaded == record
    assert json.loads((records / "fgu1.json").read_text())["processes"] == {"s1/holder": me().to_json()}


def test_liveness_follows_pid_and_start_time(records: Path) -> None:
    alive = fake_record("fgu2", procs={"s1/holder": me()})
    assert alive.live_pids() == [os.getpid()]
    reused = fake_record("fgu2", procs={"s1/holder": ProcRef(os.getpid(), me().start + 1)})  # same PID, another process
    assert reused.live_pids() == []
    other_boot = fake_record("fgu2", procs={"s1/holder": me()}, boot="0" * 36)
    assert other_boot.live_pids() == []


def test_lab_up_process_keeps_a_lab_alive_only_while_creating(records: Path) -> None:
    creating = fake_record("fgu3", owner=me(), phase="creating")
    assert creating.live_pids() == [os.getpid()]
    assert fake_record("fgu3", owner=me(), phase="up").live_pids() == []
    assert fake_record("fgu3", owner=me(), phase="failed").live_pids() == []
    crashed = fake_record("fgu3", owner=ProcRef(os.getpid(), me().start + 1), phase="creating")
    assert crashed.live_pids() == []


def test_taken_names_are_explained_by_their_record(records: Path) -> None:
    rec.write_record(fake_record("fgu4"))
    rec.write_record(fake_record("fgu5", workdir=str(records), procs={"s1/holder": me()}))
    text = rec.describe_taken(["fgu4-s1", "fgu4-mgmt", "fgu5-h1", "stranger-ns"])
    assert ("fgu4-s1, fgu4-mgmt were left behind by lab 'fgu4' (workdir /nonexistent/fabricgen-test, now gone), "
            "whose processes have all exited") in text
    assert f"`fabricgen lab prune` removes exactly what {records / 'fgu4.json'} lists" in text
    assert f"fgu5-h1 belong to lab 'fgu5', running from {records} (live processes {os.getpid()})" in text
    assert f"`fabricgen lab down --workdir {records}`" in text
    assert f"stranger-ns already exist but no lab record in {records} lists them" in text
    assert "will not remove them" in text


def test_prune_drops_dead_records_keeps_live_and_unversioned(records: Path) -> None:
    rec.write_record(fake_record("fgu6"))
    rec.write_record(fake_record("fgu7", procs={"s1/holder": me()}))
    (records / "old.json").write_text('{"workdir": "/tmp/somewhere"}\n')  # version 1: lists nothing
    outcomes = {o.name: o for o in prune_stale_labs()}
    assert set(outcomes) == {"fgu6", "fgu7"}
    assert outcomes["fgu6"].pruned and outcomes["fgu6"].removed == ()
    assert not (records / "fgu6.json").exists()
    assert outcomes["fgu7"].running == (os.getpid(),) and not outcomes["fgu7"].pruned
    assert (records / "fgu7.json").exists()
    assert (records / "old.json").read_text() == '{"workdir": "/tmp/somewhere"}\n'


def test_registered_workdir_only_once_up(records: Path) -> None:
    rec.write_record(fake_record("fgu8", workdir="/w/a", phase="creating"))
    assert rec.registered_workdir("fgu8") is None
    rec.write_record(fake_record("fgu8", workdir="/w/a", phase="up"))
    assert rec.registered_workdir("fgu8") == Path("/w/a")
    (records / "old.json").write_text('{"workdir": "/w/b"}\n')
    assert rec.registered_workdir("old") == Path("/w/b")
    rec.remove_record("fgu8", "/w/other")  # another lab's workdir: not ours to drop
    assert (records / "fgu8.json").exists()
    rec.remove_record("fgu8", "/w/a")
    assert not (records / "fgu8.json").exists()


def test_prune_cli_names_what_it_did(records: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rec.write_record(fake_record("fgu9"))
    rec.write_record(fake_record("fgu10", procs={"s1/holder": me()}))
    assert main(["lab", "prune", "fgu10"]) == 1  # asked by name, but it runs
    out = capsys.readouterr().out
    assert f"kept lab 'fgu10' (/nonexistent/fabricgen-test): running, processes {os.getpid()}" in out
    assert main(["lab", "prune", "nosuchlab"]) == 1
    assert f"no record of lab 'nosuchlab' in {records}" in capsys.readouterr().out
    assert main(["lab", "prune"]) == 0  # every dead one; a running one is reported, not an error
    out = capsys.readouterr().out
    assert "pruned dead lab 'fgu9' (workdir /nonexistent/fabricgen-test): nothing left to remove" in out
    assert "kept lab 'fgu10'" in out
    assert sorted(p.name for p in records.glob("*.json")) == ["fgu10.json"]


# --------------------------------------------------------------------------- live: a cut-off run

CUT_OFF_RUN = """
import sys, time
from fabricgen.lab import lab_up
from tests.lab.test_lab_records import small_topology
lab_up(small_topology(sys.argv[1], sys.argv[2], int(sys.argv[3])))
print("up", flush=True)
time.sleep(600)
"""


def start_and_cut_off(workdir: Path, name: str, third_octet: int) -> rec.LabRecord:
    """Bring a lab up in a child process, then SIGKILL the child and every process of the lab."""
    child = subprocess.Popen(
        [sys.executable, "-c", CUT_OFF_RUN, str(workdir), name, str(third_octet)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ),
    )  # fmt: skip
    try:
        assert child.stdout is not None
        ready, _, _ = select.select([child.stdout], [], [], 60)
        line = child.stdout.readline() if ready else b""
        assert line == b"up\n", (line, child.stderr.read() if child.poll() is not None and child.stderr else "")
        record = rec.load_record(name)
        assert record is not None and record.phase == "up"
        assert {"s1/holder", "s1/bgpd", "s1/sshd", "h1/holder", "h1/lldpd"} <= set(record.procs)
    finally:
        child.kill()  # the cut-off: no finally, no lab_down in the child
        child.wait()
    for _ in range(3):  # everything we started in the lab, by PID and start time; rescan for forks
        inodes = [i for i in (ln.netns_inode(ns) for ns in record.namespaces) if i is not None]
        procs = {p for p in record.procs.values() if p.alive()}
        procs |= {p for p in map(ProcRef.capture, ln.pids_in_netns(inodes)) if p is not None}
        if not procs:
            break
        for proc in procs:
            if proc.alive():
                os.kill(proc.pid, signal.SIGKILL)
        time.sleep(0.2)
    assert record.live_pids() == []
    return record


@pytest.fixture
def bystanders() -> Iterator[list[str]]:
    """Namespaces fabricgen did not create (names this test made, removed at the end)."""
    made: list[str] = []
    yield made
    for name in made:
        subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def add_netns(made: list[str], name: str) -> None:
    subprocess.run(["ip", "netns", "add", name], check=True)
    made.append(name)
    ln.run_ip_batch(["address add 127.0.0.2/8 dev lo", "link set lo up"], netns=name)


@pytest.mark.lab
def test_cut_off_lab_is_explained_then_pruned_exactly(
    lab_host: None, records: Path, tmp_path: Path, bystanders: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tag = os.getpid() % 100000
    dead_name, live_name, squat_name = f"fgk{tag}", f"fgl{tag}", f"fgq{tag}"
    dead_dir, live_dir = tmp_path / "dead", tmp_path / "live"
    try:
        dead = start_and_cut_off(dead_dir, dead_name, 250)
        shutil.rmtree(dead_dir)  # like pytest removing old base temp dirs
        assert set(dead.namespaces) <= ln.list_netns() and all(ln.link_exists(x) for x in dead.links)

        # lab up over the leftovers: names the dead lab, its gone workdir and the command
        with pytest.raises(LabError) as exc:
            lab_up(small_topology(str(tmp_path / "again"), dead_name, 250))
        text = str(exc.value)
        assert f"{', '.join(dead.namespaces)}, {', '.join(dead.links)} were left behind by lab {dead_name!r}" in text
        assert f"(workdir {dead_dir}, now gone), whose processes have all exited" in text
        assert f"`fabricgen lab prune` removes exactly what {records / (dead_name + '.json')} lists" in text
        assert not (tmp_path / "again" / "state.json").exists()

        # same picture for a lab of another name on the dead lab's management subnet
        with pytest.raises(LabError, match=rf"198\.18\.250\.254/24 on {dead.bridge}: {dead.bridge} were left behind"):
            lab_up(small_topology(str(tmp_path / "other"), f"fgo{tag}", 250))

        # namespaces without a record: one in our naming scheme, one outside it
        add_netns(bystanders, f"{squat_name}-s1")
        add_netns(bystanders, f"bystander{tag}")
        with pytest.raises(LabError, match=rf"{squat_name}-s1 already exist but no lab record in .* lists them"):
            lab_up(small_topology(str(tmp_path / "squat"), squat_name, 248))

        live = lab_up(small_topology(str(live_dir), live_name, 249))
        try:
            live_procs = live.all_procs()
            assert main(["lab", "prune"]) == 0
            out = capsys.readouterr().out
            assert f"pruned dead lab {dead_name!r} (workdir {dead_dir}): " in out
            assert f"kept lab {live_name!r} ({live_dir}): running" in out
            assert squat_name not in out and "bystander" not in out

            # exactly the dead lab went: its objects and record; the rest is untouched
            assert not set(dead.namespaces) & ln.list_netns()
            assert not any(ln.link_exists(x) for x in dead.links)
            assert not (records / f"{dead_name}.json").exists()
            assert set(bystanders) <= ln.list_netns()
            assert set(live.namespaces) <= ln.list_netns() and all(p.alive() for p in live_procs)
            assert lab_status(live_dir).healthy
            assert main(["lab", "prune", live_name]) == 1
            assert f"kept lab {live_name!r}" in capsys.readouterr().out
            assert lab_status(live_dir).healthy

            # and the dead lab's name and subnet are free again
            again = lab_up(small_topology(str(tmp_path / "again"), dead_name, 250))
            try:
                assert lab_status(again.workdir).healthy
            finally:
                lab_down(again.workdir)
            assert not (records / f"{dead_name}.json").exists()
        finally:
            lab_down(live_dir)
        assert not set(live.namespaces) & ln.list_netns()
        assert not (records / f"{live_name}.json").exists()
    finally:
        lab_down(dead_dir)  # a no-op unless this test failed before prune: then its record says what to remove


@pytest.mark.lab
def test_lab_down_of_a_running_lab_whose_workdir_vanished(lab_host: None, records: Path, tmp_path: Path) -> None:
    name = f"fgv{os.getpid() % 100000}"
    state = lab_up(small_topology(str(tmp_path / "lab"), name, 247))
    procs = state.all_procs()
    shutil.rmtree(tmp_path / "lab")  # state.json gone, the lab still runs
    try:
        assert main(["lab", "prune", name]) == 1  # running: prune will not touch it
        assert set(state.namespaces) <= ln.list_netns()
        lab_down(tmp_path / "lab")  # the record names the processes and objects
    finally:
        if (records / f"{name}.json").exists():
            lab_down(tmp_path / "lab")
        ln.terminate(procs)  # even if the record went missing: the processes this test started, by PID
    assert not [p.pid for p in procs if p.alive()]
    assert not set(state.namespaces) & ln.list_netns()
    assert not ln.link_exists(state.bridge) and not any(ln.link_exists(n.host_link) for n in state.nodes.values())
    assert not (records / f"{name}.json").exists()
