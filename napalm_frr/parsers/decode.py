"""What every parser here decodes with: JSON that names the command it came from (iproute2's ``-j`` lists of a
tenant VRF are decoded by ``fabricgen.napalm_kit.ip_json``, shared with validate's reader), lldpd's collapsed
one-element arrays, numbers that may be missing, MAC addresses and names in natural order."""

from __future__ import annotations

import json
import re
from typing import Any

from napalm.base.helpers import mac as _napalm_mac


def load_json(text: str, what: str) -> Any:
    """json.loads with an error that says which command produced the bad text."""
    text = text.strip()
    if not text:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: output is not JSON ({exc}): {text[:200]!r}") from exc


def as_list(value: Any) -> list[Any]:
    """lldpd's JSON writer emits a bare object when there is one element and a list otherwise."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


_NUM_RE = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[Any, ...]:
    """Ethernet8 sorts before Ethernet16."""
    return tuple(int(p) if p.isdigit() else p for p in _NUM_RE.split(name))


def format_mac(value: str) -> str:
    if not value:
        return ""
    try:
        return str(_napalm_mac(value))
    except Exception:  # noqa: BLE001 - napalm raises AddrFormatError for odd link types
        return value


def to_int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default
