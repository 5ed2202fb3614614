"""Where `check` finds the SONiC YANG models, how `make sonic-yang` fetches them, and SONiC's own sample."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fabricgen.check import yang_models
from fabricgen.check.sonic_yang import SonicYangValidator
from fabricgen.check.yang_models import (
    ENV_VAR,
    MODELS_PATH,
    SonicYangSetupError,
    cache_dir,
    fetch,
    fetched_commit,
    find_models,
    locate,
    sample_config_db,
)
from tests.conftest import ROOT, missing

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def fake_models(path: Path) -> Path:
    (path / "yang-models").mkdir(parents=True)
    (path / "yang-models" / "sonic-port.yang").write_text("module sonic-port {}\n", encoding="utf-8")
    return path


@pytest.fixture()
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Three model folders, one per place looked at; nothing set in the environment yet."""
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return {"arg": fake_models(tmp_path / "arg"), "env": fake_models(tmp_path / "env"),
            "cache": fake_models(cache_dir())}


def test_lookup_order_argument_env_cache(places: dict[str, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, str(places["env"]))
    assert find_models(places["arg"]) == places["arg"]
    assert find_models(None) == places["env"]
    monkeypatch.delenv(ENV_VAR)
    source, found = locate()
    assert (source.source, found) == ("cache", places["cache"])
    assert places["cache"] == tmp_path / "xdg" / "fabricgen" / f"sonic-yang-models-{yang_models.PINNED_COMMIT[:12]}"
    shutil.rmtree(places["cache"])
    with pytest.raises(SonicYangSetupError, match="make sonic-yang") as exc:
        find_models()  # nothing beside the checkout is looked at: a user has nothing there
    assert "cache" in str(exc.value) and "shared" not in str(exc.value)


def test_named_folder_without_models_is_an_error_not_a_fallback(places: dict[str, Path], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SonicYangSetupError, match="from --sonic-yang"):
        find_models(empty)
    monkeypatch.setenv(ENV_VAR, str(empty))
    with pytest.raises(SonicYangSetupError, match=f"from \\${ENV_VAR}"):
        find_models()
    assert find_models(places["arg"]) == places["arg"]  # an explicit folder wins over the environment


def test_a_sonic_buildimage_checkout_is_found_by_its_models_path(places: dict[str, Path], tmp_path: Path) -> None:
    checkout = tmp_path / "sonic-buildimage"
    fake_models(checkout / MODELS_PATH)
    assert find_models(checkout) == checkout / MODELS_PATH


# --------------------------------------------------------------------------- fetch (a local stand-in for GitHub)


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture()
def upstream(tmp_path: Path) -> tuple[str, str]:
    """A repository shaped like sonic-buildimage, serving by commit id and with blob filters like GitHub does."""
    repo = tmp_path / "upstream"
    fake_models(repo / MODELS_PATH)
    (repo / MODELS_PATH / "tests" / "files").mkdir(parents=True)
    (repo / MODELS_PATH / "tests" / "files" / "sample_config_db.json").write_text("{}\n", encoding="utf-8")
    (repo / "platform").mkdir()
    (repo / "platform" / "big.bin").write_bytes(b"x" * 4096)  # outside the sparse path: never checked out
    git("init", "-q", cwd=repo)
    for key, value in (("user.email", "t@example.invalid"), ("user.name", "t"),
                       ("uploadpack.allowFilter", "true"), ("uploadpack.allowAnySHA1InWant", "true")):
        git("config", key, value, cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "pinned", cwd=repo)
    pinned = git("rev-parse", "HEAD", cwd=repo)
    (repo / MODELS_PATH / "yang-models" / "sonic-later.yang").write_text("module sonic-later {}\n")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "later", cwd=repo)  # the branch moved on: the pin must still win
    return f"file://{repo}", pinned


@needs_git
def test_fetch_takes_the_pinned_commit_sparse(upstream: tuple[str, str], tmp_path: Path) -> None:
    url, pinned = upstream
    dest = tmp_path / "cache" / "models"
    found = fetch(dest, url, pinned)
    assert found == dest / MODELS_PATH and find_models(dest) == found
    assert sorted(p.name for p in (found / "yang-models").iterdir()) == ["sonic-port.yang"]
    assert not (dest / "platform").exists()
    assert fetched_commit(dest) == pinned and git("rev-parse", "HEAD", cwd=dest) == pinned
    assert sample_config_db(found) == found / "tests" / "files" / "sample_config_db.json"
    assert [p.name for p in dest.parent.iterdir()] == ["models"]  # no scratch folder left behind
    assert fetch(dest, url, pinned) == found  # already there: nothing to do


@needs_git
def test_fetch_never_replaces_what_it_did_not_make(upstream: tuple[str, str], tmp_path: Path) -> None:
    url, pinned = upstream
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SonicYangSetupError, match="was not made by a fetch"):
        fetch(dest, url, pinned)
    assert (dest / "notes.txt").read_text(encoding="utf-8") == "keep me"


@needs_git
def test_failed_fetch_leaves_the_previous_models(upstream: tuple[str, str], tmp_path: Path) -> None:
    url, pinned = upstream
    dest = tmp_path / "models"
    fetch(dest, url, pinned)
    with pytest.raises(SonicYangSetupError, match="git fetch"):
        fetch(dest, url, "0" * 40)
    assert fetched_commit(dest) == pinned and (dest / MODELS_PATH / "yang-models" / "sonic-port.yang").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "upstream"]


def test_makefile_target_runs_the_fetch() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    rule = makefile.split("\nsonic-yang:", 1)[1].split("\n\n", 1)[0]
    assert "-m fabricgen.check.yang_models fetch" in rule
    shared_readme = ROOT.parent / "shared" / "sonic-yang-models" / "README.md"
    if shared_readme.is_file():  # the offline copy and the fetch are the same commit
        assert yang_models.PINNED_COMMIT in shared_readme.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- SONiC's own sample


# What our validator reports on SONiC's sample_config_db.json, and why that is intended.
KNOWN_DEVIATIONS = {
    # SONiC's loader sets tables without a model aside (sonic_yang_ext "tablesWithOutYang") and
    # stores them unchecked; fabricgen reports them, since nothing would validate them on the switch.
    "SAMPLE_CONFIG_DB_UNKNOWN": [("/UNKNOWN_TABLE", "table UNKNOWN_TABLE not covered")],
}


def test_sonic_sample_config_db_conforms(sonic_yang_models: Path) -> None:
    """SONiC's own sample configs (the models' test data) pass, apart from the deviations listed above."""
    sample = sample_config_db(sonic_yang_models)
    if sample is None:
        missing(f"{sonic_yang_models}: SONiC's sample_config_db.json is not there")
    configs = json.loads(sample.read_text(encoding="utf-8"))
    assert {"SAMPLE_CONFIG_DB_JSON", *KNOWN_DEVIATIONS} <= set(configs)
    assert len(configs["SAMPLE_CONFIG_DB_JSON"]) > 150  # the full sample: most tables SONiC has
    validator = SonicYangValidator(sonic_yang_models)
    for name, config_db in configs.items():
        found = [(f.location, f.message) for f in validator.validate(config_db, name, str(sample))]
        expected = KNOWN_DEVIATIONS.get(name, [])
        assert len(found) == len(expected), (name, found)
        for (loc, msg), (want_loc, want_msg) in zip(found, expected, strict=True):
            assert loc == want_loc and msg.startswith(want_msg), (name, loc, msg)


def test_string_leaf_lists_use_sonic_separators(sonic_yang_models: Path) -> None:
    """NTP src_intf is a leaf-list that config_db holds as "a;b" (SONiC's own exception to ",")."""
    validator = SonicYangValidator(sonic_yang_models)
    db = {"MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up"}},
          "LOOPBACK_INTERFACE": {"Loopback0": {}},
          "NTP": {"global": {"src_intf": "eth0;Loopback0"}}}
    assert validator.validate(db, "d", "f") == []
    db["NTP"]["global"]["src_intf"] = "eth0;Loopback9"
    (finding,) = validator.validate(db, "d", "f")
    assert finding.location == "/NTP/global/src_intf" and "Loopback9" in finding.message


def test_the_intents_sonic_release_picks_that_releases_models(sonic_yang_models: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """platforms.sonic_release: 202411 -> check validates with <models>/202411 where present and says so; without
    them it uses the pinned master models and says which release's it did not find and how to fetch them."""
    import yaml

    from fabricgen.check.cli import cmd_check
    from fabricgen.check.yang_models import release_models
    from fabricgen.cli import build_parser, main

    base = tmp_path / "models"
    shutil.copytree(sonic_yang_models, base, symlinks=True)
    data = yaml.safe_load((ROOT / "inventory" / "fabric.yaml").read_text(encoding="utf-8"))
    data["platforms"]["sonic_release"] = "202411"
    intent = tmp_path / "fabric.yaml"
    intent.write_text(yaml.safe_dump(data), encoding="utf-8")
    assert main(["render", "-i", str(intent), "-o", str(tmp_path / "build")]) == 0

    fallback = release_models(base, "202411")
    assert fallback.path == base and fallback.release == "" and fallback.wanted == "202411"
    assert "release 202411's models not found" in fallback.describe()
    assert "make sonic-yang RELEASE=202411" in fallback.describe()

    shutil.copytree(sonic_yang_models, base / "202411", symlinks=True)
    used = release_models(base, "202411")
    assert used.path == base / "202411" and used.describe().startswith("SONiC YANG models of release 202411")
    args = build_parser().parse_args(["check", "-i", str(intent), "--configs", str(tmp_path / "build" / "configs"),
                                      "--sonic-yang", str(base), "--no-cache"])
    capsys.readouterr()
    assert cmd_check(args) == 0
    assert f"sonic-yang: SONiC YANG models of release 202411 ({base / '202411'})" in capsys.readouterr().err
    with pytest.raises(Exception, match="sonic_release"):
        from fabricgen.intent.model import Intent

        Intent.model_validate({**data, "platforms": {**data["platforms"], "sonic_release": "2024-11"}})
