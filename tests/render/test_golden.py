"""The example fabric renders exactly the reviewed golden files, and every shipped intent and a mid-size fabric
render byte for byte what they rendered when the digests were recorded."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.golden import DIGEST_INTENTS, DIGESTS, GOLDEN, output_digest, rendered

CURRENT = rendered()


@pytest.mark.parametrize("rel", sorted(CURRENT))
def test_matches_golden(rel: str) -> None:
    path = GOLDEN / rel
    assert path.exists(), f"missing golden file {rel}: run `make golden` and review it"
    want = path.read_text(encoding="utf-8")
    if CURRENT[rel] != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), CURRENT[rel].splitlines(True), "golden", "now"))
        pytest.fail(f"{rel} differs from its golden file (run `make golden` if intended):\n{diff[:4000]}")


def test_every_golden_file_is_still_rendered() -> None:
    on_disk = {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file()}
    assert on_disk - {DIGESTS.name, "mid-4k.yaml"} == set(CURRENT)


@pytest.mark.parametrize("intent", DIGEST_INTENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_whole_render_is_byte_identical(intent: Path) -> None:
    """Every file of a whole render (configs, NIC scripts, plan.json, cabling, inventory) hashes as recorded:
    a speed-up must not change one byte (`make golden` re-records after a reviewed output change)."""
    want = json.loads(DIGESTS.read_text(encoding="utf-8"))
    rel = intent.relative_to(ROOT).as_posix()
    assert rel in want, f"no digest recorded for {rel}: run `make golden` and review the change"
    assert output_digest(intent) == want[rel], f"the render of {rel} changed (run `make golden` if intended)"
