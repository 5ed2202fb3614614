"""Small fabrics for the analyses, every address in 198.18.0.0/15."""

from __future__ import annotations

from typing import Any

from fabricgen.analyze.fabric import Fabric, from_plan
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from tests.conftest import small_intent


def two_su(**over: Any) -> dict[str, Any]:
    """8 servers in 2 scalable units of 4: 8 rail leaves (8 down, 8 up), 4 spines, 2 cables per leaf-spine pair."""
    return small_intent(servers__count=8, **over)


def fabric_of(data: dict[str, Any]) -> Fabric:
    return from_plan(build_plan(Intent.model_validate(data)))
