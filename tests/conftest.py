"""Shared fixtures: the example intent and small intent dicts to mutate."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "inventory" / "fabric.yaml"
EXAMPLES = sorted((ROOT / "inventory" / "examples").glob("*.yaml"))


def small_intent(**overrides: Any) -> dict[str, Any]:
    """A 4-server, 2-tier rail-optimized fabric on 16-port switches; every address in 198.18.0.0/15."""
    data: dict[str, Any] = {
        "fabric": {"name": "t"},
        "servers": {"count": 4, "gpus_per_server": 4, "nics_per_server": 4, "nic_speed": "400G"},
        "switch_models": {"leaf": {"ports": 16, "port_speed": "400G"}, "spine": {"ports": 16, "port_speed": "400G"}},
        "platforms": {"leaf": "sonic", "spine": "nxos"},
        "topology": {"tiers": 2, "rail_optimized": True, "scalable_unit": 4, "spines": 4},
        "addressing": {"loopbacks": "198.18.0.0/24", "p2p": "198.18.16.0/22", "gpu": "198.18.32.0/22",
                       "management": "198.19.254.0/24"},
    }
    return copy.deepcopy(override(data, **overrides))


def override(data: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """Set nested keys of an intent dict: ``topology__spines=4`` sets data["topology"]["spines"]."""
    for dotted, value in overrides.items():
        node = data
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return data


def write_intent(tmp_path: Path, data: dict[str, Any], name: str = "fabric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def example_plan():  # type: ignore[no-untyped-def]
    from fabricgen.plan import load_plan

    return load_plan(EXAMPLE)
