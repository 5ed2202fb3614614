"""The platforms: one folder each (nxos, sonic, frr, eos, host) with its renderer and templates, config facts,
structural check, change rules and drain, and health getters, named by its record in catalog/registry.py.

Shared by them: ``facts`` (the vendor-neutral facts of a rendered config), ``change`` (impact labels and the
diff machinery), ``health`` (what the health getters return), ``owned_sections`` (the sections of a switch
config fabricgen owns), and the number runs below."""

from __future__ import annotations

from collections.abc import Iterable


def runs(values: Iterable[int]) -> list[str]:
    """Sorted, de-duplicated numbers with consecutive runs collapsed: [0, 1, 2, 4] -> ["0-2", "4"].

    The range form both NX-OS (`match dscp 10,12-14`) and SONiC (`Ethernet0|0-2` keys) use.
    """
    nums = sorted(set(values))
    out: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return out


def expand_runs(text: str) -> list[int]:
    """The inverse of `runs`, joined by commas: "1-3,5" -> [1, 2, 3, 5] (ValueError on anything else)."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out
