"""render replaces only what it made, atomically, one render at a time (issue 7 §1).

Each test reproduces one way render used to destroy data (`-o .` in a checkout, `-o` the
intent's directory, `-o FILE`, a plain render deleting the lab's state, scratch left behind by
a failure, two renders colliding) and asserts the new outcome: exit 2 naming the directory,
the problem and the fix, with nothing written or deleted, or a clean replacement.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.base import outdir
from fabricgen.cli import DEFAULT_OUT, build_parser, main
from fabricgen.errors import FabricError
from fabricgen.lab.engine import DEFAULT_LAB_DIR
from fabricgen.plan.build import load_plan
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"
render = importlib.import_module("fabricgen.render.build")  # the module (fabricgen.render is the API function)


def snapshot(root: Path) -> dict[str, str]:
    """Every file and directory under root (dot files and .git included), with file contents."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "(fix: " in err
    return err


def scratch_left(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if outdir.SCRATCH in p.name]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout holding a copy of the lab intent, like a user's fabric repository."""
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    shutil.copy(LAB, repo / "inventory" / "fabric.yaml")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


# --------------------------------------------------------------------------- refusals


def test_output_dot_in_a_checkout_is_refused(checkout: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Was: `-o .` deleted the checkout, .git included."""
    monkeypatch.chdir(checkout)
    before = snapshot(checkout)
    for force in ([], ["--force"]):
        err = refused(["render", "-i", "inventory/fabric.yaml", "-o", ".", *force], capsys)
        assert "git checkout" in err and "-o" in err
    assert snapshot(checkout) == before
    monkeypatch.chdir(checkout / "inventory")  # the current directory, and any parent of it
    for target in (".", ".."):
        err = refused(["render", "-i", "fabric.yaml", "-o", target, "--force"], capsys)
        assert "current directory" in err or "git checkout" in err
    assert snapshot(checkout) == before


def test_output_the_intents_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was: `-o` the intent's own directory deleted the intent."""
    intents = tmp_path / "intents"
    intents.mkdir()
    shutil.copy(LAB, intents / "fabric.yaml")
    before = snapshot(tmp_path)
    for target in (intents, tmp_path):  # the directory and every parent of it, even with --force
        err = refused(["render", "-i", str(intents / "fabric.yaml"), "-o", str(target), "--force"], capsys)
        assert "holds the intent" in err and str(target) in err
    assert snapshot(tmp_path) == before


def test_output_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was: `-o FILE` turned the file into a directory."""
    victim = tmp_path / "notes.txt"
    victim.write_text("mine\n")
    err = refused(["render", "-i", str(LAB), "-o", str(victim), "--force"], capsys)
    assert "is a file, not a directory" in err and str(victim) in err
    assert victim.read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_root_and_fabricgens_own_tree_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert "root directory" in refused(["render", "-i", str(LAB), "-o", "/", "--force"], capsys)
    err = refused(["render", "-i", str(LAB), "-o", str(ROOT / "fabricgen"), "--force"], capsys)
    assert "fabricgen's own installation" in err


def test_a_directory_render_did_not_make_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work\n")
    err = refused(["render", "-i", str(LAB), "-o", str(out)], capsys)
    assert str(out) in err and outdir.MARKER in err and "--force" in err
    assert snapshot(out) == {"thesis.tex": hashlib.sha256(b"years of work\n").hexdigest()}
    assert main(["render", "-i", str(LAB), "-o", str(out), "--force"]) == 0  # the user says so
    assert (out / outdir.MARKER).is_file() and not (out / "thesis.tex").exists()


def test_new_empty_and_own_directories_are_rendered(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for target in (tmp_path / "new" / "build", empty, empty):  # the last: its own output, replaced
        assert main(["render", "-i", str(LAB), "-o", str(target)]) == 0
        assert (target / outdir.MARKER).read_text() == outdir.MARKER_TEXT
        assert (target / "manifest.json").is_file()
        assert oct(target.stat().st_mode & 0o777) == oct(0o755)
    assert snapshot(tmp_path / "new" / "build") == snapshot(empty)  # byte-identical, marker included
    assert scratch_left(tmp_path) == [] and scratch_left(tmp_path / "new") == []


# --------------------------------------------------------------------------- the lab's state


def test_plain_render_keeps_the_lab_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Was: a plain `fabricgen render` deleted build/lab/ (the lab's state and SSH key)."""
    lab_default = build_parser().parse_args(["lab", "down"]).workdir
    assert Path(lab_default) == DEFAULT_LAB_DIR
    assert not Path(lab_default).resolve().is_relative_to(Path(DEFAULT_OUT).resolve()), "lab outside the output"
    monkeypatch.chdir(tmp_path)
    lab = tmp_path / DEFAULT_LAB_DIR
    lab.mkdir(parents=True)
    (lab / "state.json").write_text("{}\n")
    (lab / "id_ed25519").write_text("key\n")
    before = snapshot(lab)
    for _ in range(2):
        assert main(["render", "-i", str(LAB)]) == 0
        assert snapshot(lab) == before
    assert (tmp_path / DEFAULT_OUT / "manifest.json").is_file()
    # an old-layout build/ with a lab inside (no marker: made before this fabricgen) is refused, kept
    old = tmp_path / "old"
    (old / "lab").mkdir(parents=True)
    (old / "lab" / "state.json").write_text("{}\n")
    assert "no .fabricgen-output" in refused(["render", "-i", str(LAB), "-o", "old"], capsys)
    assert (old / "lab" / "state.json").read_text() == "{}\n"


def test_the_state_directory_is_refused_even_with_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`.fabricgen/` (the lab's key and state, deploy's journal), what holds it and what is in it."""
    ops = tmp_path / "ops"
    lab = ops / DEFAULT_LAB_DIR
    lab.mkdir(parents=True)
    (lab / "state.json").write_text("{}\n")
    before = snapshot(ops)
    for target in (ops, ops / outdir.STATE_DIR, lab, lab / "build"):
        err = refused(["render", "-i", str(LAB), "-o", str(target), "--force"], capsys)
        assert outdir.STATE_DIR in err
    assert snapshot(ops) == before


# --------------------------------------------------------------------------- failures and the swap


def test_failure_mid_render_keeps_old_output_and_leaves_no_scratch(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: a failure after the swap started left scratch directories behind."""
    out = tmp_path / "build"
    plan = load_plan(LAB)
    render.render_all(plan, out, workers=1)
    before = snapshot(out)
    real = render.render_switch
    calls = []

    def flaky(sw, plan, env=None):  # type: ignore[no-untyped-def]
        calls.append(sw.hostname)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C halfway through the switches
        return real(sw, plan, env)

    monkeypatch.setattr(render, "render_switch", flaky)
    with pytest.raises(KeyboardInterrupt):
        render.render_all(plan, out, workers=1)
    assert snapshot(out) == before and scratch_left(tmp_path) == []
    monkeypatch.setattr(render, "render_switch", real)

    def no_rename(*_: object) -> None:
        raise OSError(16, "Device or resource busy")

    monkeypatch.setattr(outdir.os, "rename", no_rename)  # the swap itself fails (a mount point, say)
    with pytest.raises(FabricError, match="cannot be replaced: Device or resource busy"):
        render.render_all(plan, out, workers=1)
    assert snapshot(out) == before and scratch_left(tmp_path) == []


def test_killed_renders_scratch_is_removed_by_the_next(tmp_path: Path) -> None:
    out = tmp_path / "build"
    stale = tmp_path / f".build{outdir.SCRATCH}dead1234"  # what a SIGKILLed render leaves
    (stale / "configs").mkdir(parents=True)
    (stale / outdir.MARKER).write_text(outdir.MARKER_TEXT)
    empty = tmp_path / f".build{outdir.SCRATCH}dead5678"  # killed right after mkdtemp
    empty.mkdir()
    foreign = tmp_path / f".build{outdir.SCRATCH}notours"  # same name, not a render's: left alone
    foreign.mkdir()
    (foreign / "data").write_text("x")
    assert main(["render", "-i", str(LAB), "-o", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["build", foreign.name])


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2-exchange", "fallback"])
def test_swap_keeps_a_complete_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool) -> None:
    """Was: a moment when the target did not exist.  With RENAME_EXCHANGE it exists at every step."""
    target, scratch = tmp_path / "build", tmp_path / "scratch"
    for d, text in ((target, "old"), (scratch, "new")):
        d.mkdir()
        (d / "f").write_text(text)
    seen: list[str] = []
    real_rename, real_exchange = os.rename, outdir._renameat2_exchange

    def rename(a: object, b: object) -> None:
        try:
            real_rename(a, b)  # type: ignore[arg-type]
        finally:
            seen.append((target / "f").read_text() if target.exists() else "MISSING")

    def swap(a: Path, b: Path) -> bool:
        done = exchange and real_exchange(a, b)
        seen.append((target / "f").read_text())
        return done

    monkeypatch.setattr(outdir.os, "rename", rename)
    monkeypatch.setattr(outdir, "_renameat2_exchange", swap)
    outdir.swap_in(scratch, target)
    assert (target / "f").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["build"]
    if exchange:
        assert seen == ["old", "new"]  # the plain rename refused (not empty), then one exchange
    else:
        assert seen[-1] == "new" and "MISSING" in seen  # documented window of the fallback


@pytest.mark.slow
def test_concurrent_renders_into_one_directory(tmp_path: Path) -> None:
    """Was: two renders into one directory could crash in the cleanup.  Now they take turns."""
    out = tmp_path / "build"
    argv = [sys.executable, "-m", "fabricgen.cli", "render", "-i", str(LAB), "-o", str(out)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
    assert [rc for rc, _ in results] == [0, 0, 0], results
    assert all("Traceback" not in err for _, err in results)
    single = tmp_path / "single"
    assert main(["render", "-i", str(LAB), "-o", str(single)]) == 0
    assert snapshot(out) == snapshot(single)
    assert scratch_left(tmp_path) == []
