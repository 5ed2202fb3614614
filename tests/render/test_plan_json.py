"""plan.json's encoder (msgspec) writes the bytes orjson wrote before it, on every example plan and on odd values."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from fabricgen.base.templating import to_compact_json_file
from fabricgen.plan.build import load_plan
from fabricgen.render.summary import plan_dict
from tests.conftest import EXAMPLE, EXAMPLES

_ORJSON = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE


def _orjson_plan(plan_value: dict[str, object], qos: object) -> bytes:
    """plan.json as orjson wrote it: the QoS policy as the plan holds it, its maps keyed by integers."""
    return orjson.dumps(plan_value | {"qos": qos}, option=_ORJSON)


@pytest.mark.parametrize("intent", [EXAMPLE, *EXAMPLES], ids=lambda p: Path(p).name)
def test_plan_json_bytes_are_orjsons(intent: Path) -> None:
    plan = load_plan(intent)
    value = plan_dict(plan)
    assert plan.qos is not None and any(isinstance(k, int) for k in plan.qos.dscp_to_tc)
    assert bytes(to_compact_json_file(value)) == _orjson_plan(value, plan.qos)


@dataclasses.dataclass(slots=True)
class _Row:
    name: str
    length: float
    tags: dict[str, int]
    nested: list[object]


@pytest.mark.parametrize("value", [
    "a\x00\x1f\x7f\u2028\u2029\"\\/é😀",
    [0.1, 3.0, -0.0, 1e-7, 2.5e-300, 123456789.123, 9.999e15],
    [2**63 - 1, -(2**63), True, False, None],
    {"b": 1, "a": [1, {"z": None, "y": (1, 2)}], "": {}},
    _Row("Ethernet1/1", 3.5, {"z": 1, "a": 2}, [_Row("x", 0.0, {}, [])]),
])
def test_odd_values_encode_as_orjson_did(value: object) -> None:
    assert bytes(to_compact_json_file(value)) == orjson.dumps(value, option=_ORJSON)


def test_integer_keys_are_refused_not_misordered() -> None:
    """msgspec sorts string keys only: an integer-keyed dict must not slip through unsorted."""
    with pytest.raises(TypeError):
        to_compact_json_file({10: 1, 2: 2})
