"""Start-up: a command imports only what it uses.  `fabricgen --version` loads no third-party library at all,
`--help` none of the heavy ones, and a render of a small FRR fabric none that render does not need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

HEAVY = ("pyavd", "napalm", "nornir", "netmiko", "paramiko", "libyang", "_libyang", "igraph", "scipy")

PROBE = r"""
import json, sys
from fabricgen.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # argparse's --help
    code = exc.code
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def loaded(*argv: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_version_imports_no_library() -> None:
    mods = loaded("--version")
    assert not mods & {*HEAVY, "numpy", "pydantic", "jinja2", "yaml", "rich", "orjson"}, mods


def test_help_imports_no_heavy_library() -> None:
    mods = loaded("--help")
    assert not mods & {*HEAVY, "pydantic", "jinja2", "yaml", "orjson"}, mods


@pytest.mark.parametrize("command", ["check", "lab", "deploy", "validate", "analyze", "sot", "platforms"])
def test_sub_command_help_imports_no_heavy_library(command: str) -> None:
    assert not loaded(command, "--help") & set(HEAVY)


def test_small_render_imports_no_heavy_library(tmp_path: Path) -> None:
    mods = loaded("render", "-i", str(ROOT / "inventory" / "lab" / "fabric.yaml"), "-o", str(tmp_path / "out"))
    assert (tmp_path / "out" / "plan.json").is_file()
    assert not mods & set(HEAVY), mods
