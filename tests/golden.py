"""Golden files of the example fabric: a reviewed rendering of one switch per platform/role and one host.

`python -m tests.golden --update` (or `make golden`) rewrites them; review the diff
line by line against ../shared/reference/roce-fabric-vendor-reference.md before committing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fabricgen.plan.build import load_plan
from fabricgen.platforms.host.render import nic_script
from fabricgen.render.build import environment, render_switch
from tests.conftest import EXAMPLE, ROOT

GOLDEN = Path(__file__).resolve().parent / "golden"
SWITCHES = ("ai256-leaf01", "ai256-spine01")
SERVERS = ("gpu0001",)


def rendered() -> dict[str, str]:
    """Relative golden path -> text, rendered now from the example intent."""
    plan = load_plan(EXAMPLE)
    env = environment()
    out: dict[str, str] = {}
    for host in SWITCHES:
        for name, text in render_switch(plan.switches[host], plan, env).items():
            out[f"{host}/{name}"] = text
    assert plan.qos is not None
    for srv in plan.servers:
        if srv.name in SERVERS:
            out[f"hosts/{srv.name}.sh"] = nic_script(srv, plan)
    return out


def update() -> None:
    for rel, text in rendered().items():
        path = GOLDEN / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
    else:
        print(__doc__)
