"""The third side of `sot diff --lldp FILE`: what the live fabric's LLDP shows, from `fabricgen validate`.

FILE is the JSON report of `fabricgen validate --format json -o FILE`: its LLDP failures name every
planned port whose neighbour is another device or port, or none; every other planned port was seen
where the plan puts it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabricgen.errors import FabricError
from fabricgen.plan.model import Plan


def read_lldp(path: str | Path) -> dict[str, str]:
    """"device:port" -> what LLDP saw there ("peer:port", or "no neighbour") for every mis-seen port."""
    source = str(path)
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FabricError.single(source, "", f"cannot read the validate report ({type(exc).__name__})",
                                 "pass the file `fabricgen validate --format json -o FILE` wrote") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("failures"), list):
        raise FabricError.single(source, "failures", "not a `fabricgen validate --format json` report",
                                 "pass the file `fabricgen validate --format json -o FILE` wrote")
    seen: dict[str, str] = {}
    for f in doc["failures"]:
        if not isinstance(f, dict) or f.get("check") != "lldp":
            continue
        port = str(f.get("item", "")).split(" -> ")[0]
        actual = str(f.get("actual", ""))
        if actual.startswith("no LLDP neighbor"):
            seen[f"{f.get('device')}:{port}"] = "no neighbour"
        else:
            name, _, rest = actual.partition(" ")
            seen[f"{f.get('device')}:{port}"] = f"{name}:{rest.split(' (')[0]}"
    return seen


def three_way(plan: Plan, sot_cables: dict[str, str], live: dict[str, str]) -> list[str]:
    """One line per switch port where the plan, the source of truth and the live fabric do not all agree.

    `sot_cables` maps "device:port" to the far end(s) the source of truth records (absent: no cable there).
    """
    lines: list[str] = []
    for sw in plan.switches.values():
        for itf in sw.interfaces:
            here = f"{sw.hostname}:{itf.name}"
            planned = f"{itf.peer_device}:{itf.peer_interface}"
            sot = sot_cables.get(here, "")
            if planned in sot.split("+"):
                sot = planned
            seen = live.get(here, planned)
            if planned == sot == seen:
                continue
            verdict = _verdict(planned, sot or "no cable", seen)
            lines.append(f"{here}: plan {planned}, source of truth {sot or 'no cable'}, live {seen} ({verdict})")
    return lines


def _verdict(plan: str, sot: str, live: str) -> str:
    if sot == live:
        return "the source of truth matches the fabric, the plan does not: recable, or change the intent"
    if plan == live:
        return "the fabric is as planned: the source of truth is wrong (push --apply fixes it)"
    if plan == sot:
        return "miscabled: the fabric differs from the plan and the source of truth"
    return "all three differ"


def sot_far_ends(found_cables: dict[str, Any]) -> dict[str, str]:
    """"device:port" -> the far end(s) its cable in the source of truth joins ("a+b" for a breakout cable)."""
    out: dict[str, str] = {}
    for f in found_cables.values():
        a, b = tuple(f.fields.get("a", ())), tuple(f.fields.get("b", ()))
        for here, there in ((a, b), (b, a)):
            for end in here:
                out[end] = "+".join(there)
    return out
