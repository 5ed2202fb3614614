"""Golden files of the example fabric: a reviewed rendering of one switch per platform/role and one host; and
the digest of every file a whole render writes, for every shipped intent and a mid-size fabric (digests.json).

`python -m tests.golden --update` (or `make golden`) rewrites them; review the diff
line by line against ../shared/reference/roce-fabric-vendor-reference.md before committing.  A change meant
to be output-neutral (a speed-up) must leave digests.json as it is: tests/render/test_golden.py compares.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from fabricgen.plan.build import load_plan
from fabricgen.platforms.host.render import nic_script
from fabricgen.render import manifest
from fabricgen.render.build import environment, render_all, render_switch
from tests.conftest import EXAMPLE, EXAMPLES, ROOT

GOLDEN = Path(__file__).resolve().parent / "golden"
SWITCHES = ("ai256-leaf01", "ai256-spine01")
SERVERS = ("gpu0001",)
DIGESTS = GOLDEN / "digests.json"
# every intent the repository ships, and a mid-size 3-tier fabric (~1M config lines)
DIGEST_INTENTS = (EXAMPLE, *EXAMPLES, *sorted((ROOT / "inventory" / "lab").glob("*.yaml")), GOLDEN / "mid-4k.yaml")


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


def output_digest(intent: Path) -> str:
    """sha256 over (path, sha256) of every file `fabricgen render --no-check` writes for the intent, named by
    its path in the repository (warnings in plan.json quote it), so the digest is the same in any checkout."""
    with tempfile.TemporaryDirectory(prefix="fabricgen-digest-") as tmp, contextlib.chdir(ROOT):
        render_all(load_plan(intent.relative_to(ROOT)), Path(tmp, "out"), workers=1)
        files = json.loads(Path(tmp, "out", manifest.MANIFEST).read_text(encoding="utf-8"))["files"]
    return hashlib.sha256(json.dumps(sorted(files.items())).encode()).hexdigest()


def digests() -> dict[str, str]:
    """Intent path (relative to the repository) -> its output digest."""
    return {path.relative_to(ROOT).as_posix(): output_digest(path) for path in DIGEST_INTENTS}


def update() -> None:
    for rel, text in rendered().items():
        path = GOLDEN / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    DIGESTS.write_text(json.dumps(digests(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DIGESTS.relative_to(ROOT)}")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
    else:
        print(__doc__)
