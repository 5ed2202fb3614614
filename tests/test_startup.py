"""Start-up: a command imports only what it uses.  `fabricgen --version` loads no third-party library at all,
`--help` none of the heavy ones, and a render of a small fabric none that render does not need: the command line
registers only the stage command it names (fabricgen.cli.STAGE_COMMANDS), so no other stage's module is loaded.
Asserted by the modules a subprocess loaded, not by time (the machine may be shared)."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fabricgen.cli import CORE_COMMANDS, STAGE_COMMANDS, build_parser
from tests.conftest import ROOT

HEAVY = ("pyavd", "napalm", "nornir", "netmiko", "paramiko", "libyang", "_libyang", "igraph", "scipy")

PROBE = r"""
import json, sys
from fabricgen.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:  # argparse's --help
    code = exc.code
tops = {m.split(".")[0] for m in sys.modules}
print(json.dumps(sorted(tops | {m for m in sys.modules if m.startswith("fabricgen.")})), file=sys.stderr)
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


OTHER_STAGES = ("fabricgen.analyze", "fabricgen.deploy", "fabricgen.validate", "fabricgen.lab", "fabricgen.sot",
                "fabricgen.connect", "fabricgen.check.cli", "fabricgen.catalog.cli")


def test_small_render_imports_no_heavy_library(tmp_path: Path) -> None:
    mods = loaded("render", "-i", str(ROOT / "inventory" / "lab" / "fabric.yaml"), "-o", str(tmp_path / "out"))
    assert (tmp_path / "out" / "plan.json").is_file()
    assert not mods & {*HEAVY, "numpy"}, mods
    assert not {m for m in mods if m.startswith(OTHER_STAGES)}, "render loaded another stage's modules"


def test_plan_imports_no_other_stage() -> None:
    mods = loaded("plan", "-i", str(ROOT / "inventory" / "lab" / "fabric.yaml"))
    assert not mods & {*HEAVY, "numpy"}, mods
    assert not {m for m in mods if m.startswith(OTHER_STAGES)}, "plan loaded another stage's modules"


def _commands(stage: str | None = None, argv: list[str] | None = None) -> dict[str, str]:
    """Top-level command -> its full help, from the whole parser or from the one built for `argv`."""
    parser = build_parser(argv)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p.format_help() for name, p in sub.choices.items()}


def test_stage_map_names_what_each_module_registers() -> None:
    """STAGE_COMMANDS is the list of what every module's register_cli adds, in `--help` order."""
    registered: dict[str, str] = {}
    for module in dict.fromkeys(STAGE_COMMANDS.values()):
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register_cli(sub)
        registered |= dict.fromkeys(sub.choices, module)
    assert list(registered.items()) == list(STAGE_COMMANDS.items())
    assert list(_commands()) == [*CORE_COMMANDS, *STAGE_COMMANDS]


@pytest.mark.parametrize("command", [*CORE_COMMANDS, *STAGE_COMMANDS])
def test_lazy_parser_is_the_whole_parser_for_its_command(command: str) -> None:
    """The parser a command line gets parses its command exactly as the whole one does (same help, options and
    nested commands), and still lists every command (usage, "invalid choice")."""
    whole = _commands()
    for argv in ([command, "--help"], ["--debug", command], ["--sonic-platform", "x", command, "-i", "y"]):
        lazy = _commands(argv=argv)
        assert list(lazy) == list(whole)
        assert lazy[command] == whole[command], argv


def test_help_or_unknown_command_registers_everything() -> None:
    whole = _commands()
    for argv in (["--help"], [], ["bogus"], ["-h", "render"]):
        assert _commands(argv=argv) == whole, argv
