"""The example fabric renders exactly the reviewed golden files."""

from __future__ import annotations

import difflib

import pytest

from tests.golden import GOLDEN, rendered

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
    assert on_disk == set(CURRENT)
