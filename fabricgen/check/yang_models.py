"""Where the SONiC YANG models come from: one pinned upstream commit, found or fetched.

`find_models` looks, in this order, at

1. the folder passed in (`fabricgen check --sonic-yang DIR`),
2. ``$FABRICGEN_SONIC_YANG``,
3. the cache that `fetch` fills (``make sonic-yang``; ``$XDG_CACHE_HOME/fabricgen/`` or ``~/.cache/fabricgen/``).

A folder named by 1 or 2 must hold models (a wrong path is an error, not a silent fallback);
3 is used when present.  Any of them may be a sonic-yang-models folder or a
sonic-buildimage checkout holding ``src/sonic-yang-models``.

`fetch` clones only what the check needs from sonic-buildimage at `PINNED_COMMIT`: depth 1,
no blobs but those of ``src/sonic-yang-models`` (sparse checkout), into a scratch folder that
replaces the cache folder only once the commit and the models are verified.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fabricgen.base.outdir import swap_in

ENV_VAR = "FABRICGEN_SONIC_YANG"
SONIC_BUILDIMAGE_URL = "https://github.com/sonic-net/sonic-buildimage.git"
PINNED_COMMIT = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"  # the SONiC facts' commit too (tools/sonic_fetch.py)
MODELS_PATH = "src/sonic-yang-models"
MARKER = ".fabricgen-fetch.json"  # written by `fetch`: only a folder holding it is ever replaced


class SonicYangSetupError(Exception):
    """The YANG models cannot be found or loaded; the check cannot run at all."""


@dataclass(frozen=True)
class Candidate:
    source: str  # how the user names it: "--sonic-yang", "$FABRICGEN_SONIC_YANG", "cache"
    path: Path
    required: bool  # named explicitly: must hold models


def cache_dir() -> Path:
    """Where `fetch` puts the pinned models (the commit is in the name, so a new pin fetches afresh)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "fabricgen" / f"sonic-yang-models-{PINNED_COMMIT[:12]}"


def models_in(path: Path) -> Path | None:
    """The sonic-yang-models folder at `path` (itself, or src/sonic-yang-models of a checkout), else None."""
    for candidate in (path, path / MODELS_PATH):
        if (candidate / "yang-models").is_dir() or any(candidate.glob("sonic-*.yang")):
            return candidate
    return None


def candidates(explicit: Path | str | None = None) -> list[Candidate]:
    """Every place looked at, in lookup order."""
    out: list[Candidate] = []
    if explicit is not None and str(explicit):
        out.append(Candidate("--sonic-yang", Path(explicit).expanduser(), True))
    if os.environ.get(ENV_VAR):
        out.append(Candidate(f"${ENV_VAR}", Path(os.environ[ENV_VAR]).expanduser(), True))
    out.append(Candidate("cache", cache_dir(), False))
    return out


def find_models(explicit: Path | str | None = None) -> Path:
    """The models folder to use (see the module docstring); SonicYangSetupError naming every place tried."""
    return locate(explicit)[1]


def locate(explicit: Path | str | None = None) -> tuple[Candidate, Path]:
    """The place the models were found and their folder."""
    tried = candidates(explicit)
    for c in tried:
        found = models_in(c.path)
        if found is not None:
            return c, found
        if c.required:
            raise SonicYangSetupError(
                f"{c.path}: no SONiC YANG models there (from {c.source}) (fix: point it at a folder holding "
                f"yang-models/*.yang, or at {MODELS_PATH}/yang-models/ of a sonic-buildimage checkout)")
    where = ", ".join(f"{c.source} ({c.path})" for c in tried)
    raise SonicYangSetupError(
        f"SONiC YANG models not found (looked at {where}) (fix: run `make sonic-yang` (or "
        f"`python -m fabricgen.check.yang_models fetch`) to fetch them, or pass --sonic-yang DIR / set {ENV_VAR} "
        "to a sonic-yang-models folder)")


@dataclass(frozen=True)
class ReleaseModels:
    """The models `check` uses for a plan's SONiC release, and how to say so."""

    path: Path
    release: str  # the release whose models these are; "" = the pinned commit's (master)
    wanted: str  # the release the intent names ("" = none)
    looked: tuple[Path, ...] = ()  # where the wanted release's models were looked for, when not found

    def describe(self) -> str:
        if self.release:
            return f"SONiC YANG models of release {self.release} ({self.path})"
        pinned = f"SONiC YANG models of master {PINNED_COMMIT[:10]} ({self.path})"
        if not self.wanted:
            return pinned
        return (f"{pinned}: release {self.wanted}'s models not found (looked at "
                f"{', '.join(str(p) for p in self.looked)}; fix: `make sonic-yang RELEASE={self.wanted}`, or put "
                f"them in <models folder>/{self.wanted})")


def release_cache_dir(release: str) -> Path:
    """Where `fetch --release` puts one release's models."""
    return cache_dir().parent / f"sonic-yang-models-{release}"


def for_release(base: Path, release: str | None) -> ReleaseModels:
    """The models of `release` where present: a `<release>` folder in the models folder `base` (or beside it,
    `sonic-yang-models-<release>`), or the release's cache; else `base` itself, the pinned commit's."""
    if not release:
        return ReleaseModels(base, "", "")
    looked = (base / release, base.parent / f"sonic-yang-models-{release}", release_cache_dir(release))
    for place in looked:
        found = models_in(place)
        if found is not None:
            return ReleaseModels(found, release, release)
    return ReleaseModels(base, "", release, looked)


def resolve_yang_dir(yang_dir: Path | str | None = None, release: str | None = None) -> Path:
    """The models folder: `yang_dir` if given, else $FABRICGEN_SONIC_YANG, else the fetched cache; within it,
    `release`'s models where present (`for_release`).  SonicYangSetupError if none holds models."""
    return release_models(yang_dir, release).path


def release_models(yang_dir: Path | str | None = None, release: str | None = None) -> ReleaseModels:
    """Which models the check uses for a SONiC release, and where the release's own were looked for."""
    return for_release(find_models(yang_dir), release)


def sample_config_db(models: Path) -> Path | None:
    """SONiC's own sample_config_db.json beside the models (upstream layout or a copy's samples/), if present."""
    for path in (models / "tests" / "files" / "sample_config_db.json", models / "samples" / "sample_config_db.json"):
        if path.is_file():
            return path
    return None


# --------------------------------------------------------------------------- fetch


def _git(*args: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise SonicYangSetupError("git is not installed: it is needed to fetch the SONiC YANG models "
                                  "(fix: install git, e.g. apt install git)") from None
    if done.returncode != 0:
        raise SonicYangSetupError(f"git {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()} "
                                  "(fix: check network access to github.com, or fetch on another machine and "
                                  "pass --sonic-yang DIR)")
    return done.stdout.strip()


def fetched_commit(dest: Path) -> str | None:
    """The commit a previous `fetch` put at `dest`, None if `dest` is not such a folder."""
    try:
        return str(json.loads((dest / MARKER).read_text(encoding="utf-8"))["commit"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def fetch(dest: Path | None = None, url: str = SONIC_BUILDIMAGE_URL, commit: str = PINNED_COMMIT) -> Path:
    """Put src/sonic-yang-models of `url` at `commit` into `dest` (default: the cache); returns the models folder.

    Nothing is written at `dest` until the fetched commit and its models check out.  An existing `dest`
    is only replaced if an earlier fetch made it (it holds MARKER); anything else there is left alone.
    """
    dest = Path(dest) if dest is not None else cache_dir()
    if fetched_commit(dest) == commit and (found := models_in(dest)) is not None:
        return found
    if dest.exists() and (not dest.is_dir() or (any(dest.iterdir()) and fetched_commit(dest) is None)):
        raise SonicYangSetupError(f"{dest}: exists and was not made by a fetch of the SONiC YANG models "
                                  "(fix: pass another folder, or move this one away)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        _git("init", "-q", str(scratch))
        _git("remote", "add", "origin", url, cwd=scratch)
        _git("sparse-checkout", "set", MODELS_PATH, cwd=scratch)
        _git("fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", commit, cwd=scratch)
        _git("-c", "advice.detachedHead=false", "checkout", "-q", "FETCH_HEAD", cwd=scratch)
        head = _git("rev-parse", "HEAD", cwd=scratch)
        if head != commit:
            raise SonicYangSetupError(f"{url}: fetched {head}, wanted {commit} (fix: fetch again; if it repeats, "
                                      "the remote rewrote its history: report it)")
        if models_in(scratch) is None:
            raise SonicYangSetupError(f"{url} at {commit}: no {MODELS_PATH}/yang-models there (fix: fetch from "
                                      "sonic-buildimage itself, or pass --sonic-yang DIR)")
        (scratch / MARKER).write_text(json.dumps({"url": url, "commit": commit, "path": MODELS_PATH}) + "\n",
                                      encoding="utf-8")
        scratch.chmod(0o755)  # mkdtemp makes it 0700
        swap_in(scratch, dest)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    found = models_in(dest)
    assert found is not None
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m fabricgen.check.yang_models",
                                description="Fetch or locate the pinned SONiC YANG models.")
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help=f"sparse-clone {MODELS_PATH} of sonic-buildimage at {PINNED_COMMIT[:12]}")
    f.add_argument("--dest", type=Path, default=None, help=f"target folder (default {cache_dir()})")
    f.add_argument("--url", default=SONIC_BUILDIMAGE_URL)
    f.add_argument("--release", default=None,
                   help="a SONiC release branch (202411): its head's models, into their own cache folder")
    w = sub.add_parser("where", help="print the models folder `fabricgen check` would use, and why")
    w.add_argument("--sonic-yang", default=None)
    args = p.parse_args(argv)
    try:
        if args.cmd == "fetch" and args.release:
            head = _git("ls-remote", args.url, f"refs/heads/{args.release}").split()
            if not head:
                raise SonicYangSetupError(f"{args.url} has no branch {args.release} (fix: name a SONiC release "
                                          "branch, e.g. 202411)")
            print(fetch(args.dest or release_cache_dir(args.release), args.url, head[0]))
        elif args.cmd == "fetch":
            print(fetch(args.dest, args.url))
        else:
            source, found = locate(args.sonic_yang)
            print(f"{found}  (from {source.source})")
    except SonicYangSetupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
