"""Intent loading: schema errors name the YAML path and line; malformed YAML never raises raw."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.errors import FabricError
from fabricgen.intent.model import load_intent
from tests.conftest import EXAMPLE, small_intent, write_intent


def test_example_loads() -> None:
    intent, lines = load_intent(EXAMPLE)
    assert intent.servers.count * intent.servers.gpus_per_server == 256
    assert intent.servers.nic_speed == 400
    assert lines[("servers", "count")] > 1


def test_speed_and_ratio_spellings(tmp_path: Path) -> None:
    data = small_intent(servers__nic_speed=400, topology__oversubscription="3:2")
    data["switch_models"]["leaf"]["port_speed"] = "400g"
    intent, _ = load_intent(write_intent(tmp_path, data))
    assert intent.servers.nic_speed == 400 and intent.switch_models.leaf.port_speed == 400
    assert intent.topology.ratio("leaf") == pytest.approx(1.5) and intent.topology.ratio("spine") == 1.0


def _error(tmp_path: Path, text: str) -> FabricError:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FabricError) as info:
        load_intent(path)
    return info.value


def test_malformed_yaml_names_line(tmp_path: Path) -> None:
    err = _error(tmp_path, "fabric:\n  name: x\nservers: [1, 2\n")
    assert "malformed YAML" in str(err)
    assert err.problems[0].line is not None
    assert str(tmp_path / "bad.yaml") in str(err)


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    err = _error(tmp_path, "fabric:\n  name: a\n  name: b\n")
    assert "duplicate key 'name'" in str(err)
    assert err.problems[0].line == 3


def test_not_a_mapping(tmp_path: Path) -> None:
    assert "must be a YAML mapping" in str(_error(tmp_path, "- 1\n- 2\n"))


def test_missing_file() -> None:
    with pytest.raises(FabricError) as info:
        load_intent("/nonexistent/fabric.yaml")
    assert "cannot read intent file" in str(info.value)


def test_schema_errors_name_path_line_and_fix(tmp_path: Path) -> None:
    data = small_intent(servers__nic_speed="300G", topology__bogus=1)
    path = write_intent(tmp_path, data)
    with pytest.raises(FabricError) as info:
        load_intent(path)
    by_path = {p.path: p for p in info.value.problems}
    assert "servers.nic_speed" in by_path and "300G is not a NIC speed" in by_path["servers.nic_speed"].message
    assert by_path["servers.nic_speed"].line == path.read_text().splitlines().index("  nic_speed: 300G") + 1
    assert by_path["topology.bogus"].message == "unknown field"
    assert "remove it" in by_path["topology.bogus"].hint


def test_missing_required_field(tmp_path: Path) -> None:
    data = small_intent()
    del data["addressing"]["gpu"]
    with pytest.raises(FabricError) as info:
        load_intent(write_intent(tmp_path, data))
    assert [p.path for p in info.value.problems] == ["addressing.gpu"]
    assert info.value.problems[0].message == "required field is missing"


@pytest.mark.parametrize(
    ("override", "path", "text"),
    [
        ({"bgp__holdtime": 5, "bgp__keepalive": 3}, "bgp.holdtime", "holdtime 5 must be at least 3 x keepalive"),
        ({"ecmp__hash_fields": ["src-ip", "dst-ip"]}, "ecmp.hash_fields", "l4-src-port"),
        ({"topology__oversubscription": "1:2"}, "topology.oversubscription", "below 1:1"),
        ({"fabric__name": "Bad_Name"}, "fabric.name", "is 'B', which is not allowed"),
        ({"qos__ecn": {400: {"min_bytes": 9000, "max_bytes": 8000, "probability": 5}}}, "qos.ecn.400.min_bytes",
         "below max"),
        ({"topology__tiers": 3}, "switch_models.super_spine", "super_spine is missing"),
    ],
)
def test_field_rules(tmp_path: Path, override: dict, path: str, text: str) -> None:
    with pytest.raises(FabricError) as info:
        load_intent(write_intent(tmp_path, small_intent(**override)))
    problems = info.value.problems
    assert any(p.path == path and text in p.message for p in problems), problems
