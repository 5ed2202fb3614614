"""Every string of the intent is checked for where it goes (issue 7 §2).

Each field gets a path traversal, a newline that would inject a config line and a
control character; each must be rejected by `fabricgen render` with exit 2, a
message naming the field and its line, and nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabricgen.cli import main
from fabricgen.errors import FabricError
from fabricgen.intent.model import load_intent
from tests.conftest import small_intent, write_intent

TRAVERSAL = "../../../../tmp/x-"
INJECTIONS = {
    "newline": "ai\nusername evil password 0 x role network-admin",
    "trailing-newline": "ai256\n",
    "carriage-return": "ai\rshutdown",
    "escape": "ai\x1b[2J",
    "nul": "ai\x00",
    "tab": "ai\tx",
    "line-separator": "ai\u2028shutdown",
}

# (field path, where the intent puts it, values that must be refused there)
LABELS = ["fabric.name", "servers.name_prefix"]
TEXTS = ["fabric.description", "switch_models.leaf.model", "switch_models.spine.model",
         "switch_models.super_spine.model"]
MACS = ["ecmp.adaptive_routing.mac_address"]


def _with(field: str, value: Any) -> dict[str, Any]:
    data = small_intent()
    if field.startswith("switch_models.super_spine"):
        data["switch_models"]["super_spine"] = {"ports": 16, "port_speed": "400G"}
    node = data
    *parents, leaf = field.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return data


def _cases() -> list[tuple[str, str]]:
    cases = [(f, v) for f in LABELS + TEXTS + MACS for v in INJECTIONS]
    cases += [(f, "traversal") for f in LABELS + MACS]
    return cases


@pytest.mark.parametrize(("field", "kind"), _cases(), ids=lambda x: str(x))
def test_string_field_rejects_injection(tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
                                        kind: str) -> None:
    value = TRAVERSAL if kind == "traversal" else INJECTIONS[kind]
    path = write_intent(tmp_path, _with(field, value))
    out = tmp_path / "out"
    assert main(["render", "-i", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f": {field}: " in err and "(fix: " in err, err
    assert not out.exists() and not (Path("/tmp") / "x-0001.sh").exists()
    with pytest.raises(FabricError) as info:
        load_intent(path)
    assert [p.path for p in info.value.problems] == [field]
    assert info.value.problems[0].line is not None


@pytest.mark.parametrize("field", TEXTS)
def test_text_fields_take_ordinary_descriptions(tmp_path: Path, field: str) -> None:
    text = "64x400G TH5/Spectrum-4 class (rev. 2), 'A' & \"B\""
    intent, _ = load_intent(write_intent(tmp_path, _with(field, text)))
    obj: Any = intent
    for key in field.split("."):
        obj = getattr(obj, key)
    assert obj == text


@pytest.mark.parametrize("field", TEXTS)
def test_text_fields_are_length_capped(tmp_path: Path, field: str) -> None:
    with pytest.raises(FabricError) as info:
        load_intent(write_intent(tmp_path, _with(field, "x" * 129)))
    assert "more than 128" in str(info.value)


@pytest.mark.parametrize(("field", "value", "ok"), [
    *[("servers.name_prefix", v, ok) for v, ok in (
        ("gpu", True), ("gpu-", True), ("rack7-gpu", True), ("0gpu", True),
        ("-gpu", False), ("GPU", False), ("gpu_", False), ("gpu.", False), ("", False), ("g" * 33, False))],
    *[("fabric.name", v, ok) for v, ok in (
        ("ai256", True), ("a", True), ("a-b", True), ("ai256-", False), ("Ai256", False), ("ai.256", False))],
    *[("ecmp.adaptive_routing.mac_address", v, ok) for v, ok in (
        ("00:cc:cc:cc:cc:cc", True), ("02:00:00:00:00:01", True), ("01:00:5e:00:00:01", False),
        ("00:cc:cc:cc:cc", False), ("00-cc-cc-cc-cc-cc", False), ("00:cc:cc:cc:cc:cg", False))],
])
def test_string_syntax(tmp_path: Path, field: str, value: str, ok: bool) -> None:
    path = write_intent(tmp_path, _with(field, value))
    if not ok:
        with pytest.raises(FabricError):
            load_intent(path)
        return
    obj: Any = load_intent(path)[0]
    for key in field.split("."):
        obj = getattr(obj, key)
    assert obj == value


def test_mac_address_is_normalised(tmp_path: Path) -> None:
    intent, _ = load_intent(write_intent(tmp_path, _with("ecmp.adaptive_routing.mac_address", "00:CC:cc:cc:cc:CC")))
    assert intent.ecmp.adaptive_routing.mac_address == "00:cc:cc:cc:cc:cc"


def test_render_writes_only_under_output(tmp_path: Path) -> None:
    """Defence in depth: a name that escaped the model still cannot leave -o."""
    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import build_plan
    from fabricgen.render.build import render_all

    plan = build_plan(Intent.model_validate(small_intent()))
    first = next(iter(plan.switches))
    plan.switches["../../escape"] = plan.switches.pop(first)  # the name render makes a directory of
    out = tmp_path / "a" / "out"
    with pytest.raises(FabricError) as info:
        render_all(plan, out, checks=None)
    assert "../../escape" in str(info.value)
    assert not out.exists() and not (tmp_path / "escape").exists()
    assert [p.name for p in (tmp_path / "a").iterdir()] == []
