"""Every rendered FRR config declares its platform's `frr defaults` profile exactly once (issue 23 D4).

FRR reads `frr defaults` only when a daemon starts, and a config that names two profiles leaves it to
chance which one a daemon gets; `validate` (frr-defaults) then compares each live daemon with this line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabricgen.catalog.registry import platform
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.render.build import environment, render_switch
from tests.conftest import EXAMPLE, EXAMPLES, ROOT, without_skus

INTENTS = [EXAMPLE, *EXAMPLES, *sorted((ROOT / "inventory" / "lab").glob("*.yaml"))]


@pytest.mark.parametrize("name", ["frr", "sonic"])
@pytest.mark.parametrize("path", INTENTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_example_declares_frr_defaults_once(path: Path, name: str) -> None:
    data = without_skus(yaml.safe_load(path.read_text(encoding="utf-8")))  # another platform's SKUs name no ports
    roles = data.get("platforms") or {}
    data["platforms"] = {role: name for role in (*roles, "leaf", "spine")}
    data.get("ecmp", {}).pop("adaptive_routing", None)  # neither renders it: plan would refuse it
    if name == "sonic":
        data.pop("ptp", None)  # SONiC renders no PTP: plan would refuse it (the frr run covers those intents)
    plan = build_plan(Intent.model_validate(data))
    profile = platform(name).frr_defaults
    assert profile == "datacenter"
    env = environment()
    for sw in [*plan.by_role("leaf")[:2], *plan.by_role("spine")[:1]]:
        text = render_switch(sw, plan, env)["frr.conf"]
        assert [ln for ln in text.splitlines() if "frr defaults" in ln] == [f"frr defaults {profile}"], sw.hostname
