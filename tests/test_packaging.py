"""The wheel is the product: built from this checkout, installed into a fresh venv that sees only the
declared core dependencies, it renders the example from outside the checkout, byte-identically.

The fresh venv gets the wheel (no extras) and, through one .pth line, a directory holding only the
distributions fabricgen's metadata requires without extras (resolved from the installed metadata,
recursively).  It runs in an empty directory with an empty HOME and no FABRICGEN_* variables, as a
new user's would: so a template or SKU record left out of the wheel, an undeclared import on the
render path, or a path into the checkout (or beside it) fails here.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from fabricgen.render.build import render_all
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

NORNIR_FILES = {"defaults.yaml", "groups.yaml", "hosts.yaml"}
INTENTS = sorted(p for p in (ROOT / "inventory").rglob("*.yaml") if p.name not in NORNIR_FILES)
_NAME = re.compile(r"^[A-Za-z0-9._-]+")


def _requirements(dist: metadata.Distribution) -> list[str]:
    """Names of what a distribution requires without extras (environment markers evaluated)."""
    from packaging.requirements import Requirement

    out = []
    for spec in dist.requires or []:
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(req.name)
    return out


def core_closure() -> list[metadata.Distribution]:
    """fabricgen's core dependencies and theirs, as installed here."""
    seen: dict[str, metadata.Distribution] = {}
    todo = _requirements(metadata.distribution("fabricgen"))
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        dist = seen[key] = metadata.distribution(name)
        todo += _requirements(dist)
    return list(seen.values())


def link_distributions(dists: list[metadata.Distribution], target: Path) -> None:
    """Symlink each distribution's top-level files (packages, modules, .libs, dist-info) into `target`."""
    target.mkdir()
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops):
            src = base / top
            if src.exists() and not (target / top).exists():
                (target / top).symlink_to(src)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # from the files git tracks (or would), not the checkout as is: setuptools reuses a checkout's build/lib,
    # which still holds modules that have since moved or gone
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             check=True, capture_output=True).stdout
    source = tmp_path_factory.mktemp("source")
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(source)], check=True, cwd=out)
    (whl,) = out.glob("fabricgen-*.whl")
    return whl


def test_wheel_ships_every_template_and_driver_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {p.relative_to(ROOT).as_posix() for p in (ROOT / "fabricgen" / "platforms").rglob("templates/*.j2")}
    assert templates and templates <= names
    for pkg in ("napalm_frr", "napalm_sonic", "napalm_nxos_fabricgen", "napalm_eos_fabricgen"):
        assert f"{pkg}/__init__.py" in names
    # napalm community layout: napalm_<os>/<os>.py holds the driver; what NX-OS and EOS share stays fabricgen's;
    # fabricgen/drivers is gone, no copy or shim left in it
    assert {"napalm_frr/frr.py", "napalm_frr/parsers/bgp.py", "napalm_frr/config.py", "napalm_sonic/sonic.py",
            "napalm_sonic/parsers.py", "napalm_nxos_fabricgen/nxos.py", "napalm_eos_fabricgen/eos.py",
            "fabricgen/platforms/owned_sections.py"} <= names
    assert not [n for n in names if n.startswith("fabricgen/drivers/")]
    assert not [n for n in names if n.startswith(("tests/", "bench/", "inventory/", "tools/"))]
    facts = ROOT / "fabricgen" / "catalog" / "sonic_facts"
    shipped = {p.relative_to(ROOT).as_posix() for p in facts.rglob("*.json")}
    assert "fabricgen/catalog/sonic_facts/skus/Mellanox-SN5600-O128.json" in shipped and shipped <= names


def test_installed_wheel_renders_every_example_as_a_new_user(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True)
    deps = tmp_path / "core-deps"
    link_distributions(core_closure(), deps)
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "core-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    work = tmp_path / "elsewhere"
    home = tmp_path / "home"
    work.mkdir()
    home.mkdir()
    # a new user's environment: no FABRICGEN_* variable, an empty HOME (no cache), nothing beside `work`
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    where = subprocess.run([str(py), "-c", "import fabricgen, jinja2; print(fabricgen.__file__)"], cwd=work, env=env,
                           check=True, capture_output=True, text=True).stdout.strip()
    assert where.startswith(str(site)), where  # the installed copy, not the checkout
    for absent in ("napalm", "nornir", "libyang", "netmiko", "paramiko"):  # extras are not needed to render
        r = subprocess.run([str(py), "-c", f"import {absent}"], cwd=work, env=env, capture_output=True)
        assert r.returncode != 0, f"{absent} is importable in the core-only venv"
    version = subprocess.run([str(venv / "bin" / "fabricgen"), "--version"], cwd=work, env=env, capture_output=True,
                             text=True)
    assert version.returncode == 0 and version.stdout.startswith("fabricgen "), version.stderr
    from fabricgen.plan.build import load_plan

    for source in INTENTS:
        name = source.relative_to(ROOT / "inventory").as_posix().replace("/", "-").removesuffix(".yaml")
        intent = work / f"{name}.yaml"
        shutil.copy(source, intent)
        done = subprocess.run([str(venv / "bin" / "fabricgen"), "render", "-i", str(intent), "-o", f"build-{name}"],
                              cwd=work, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{source}: {done.stdout}{done.stderr}"
        assert "warning" not in done.stderr.lower() or source.name != "fabric.yaml", done.stderr
        here = tmp_path / f"here-{name}"
        render_all(load_plan(intent), here)  # this checkout, from the same shipped facts
        assert digest(work / f"build-{name}" / "configs") == digest(here / "configs"), source
        assert digest(work / f"build-{name}" / "hosts") == digest(here / "hosts"), source


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}
