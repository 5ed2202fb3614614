"""Pure parsers for the SONiC command outputs SonicDriver reads (FRR and lldpd inside SONiC's
containers print what they print on Linux: napalm_frr.parsers reads those)."""

from __future__ import annotations

import json
from typing import Any


def parse_sonic_show_version(text: str) -> dict[str, str]:
    """SONiC ``show version`` header (``Key: value`` lines before ``Docker images:``)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip().startswith("Docker images"):
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith(" "):
            out.setdefault(key.strip(), value.strip())
    return out


def pretty_json(value: Any) -> str:
    """The canonical text both sides of a config_db diff are rendered to."""
    return json.dumps(value, indent=4, sort_keys=True) + "\n"


def parse_checkpoints(text: str) -> list[str]:
    """``config list-checkpoints`` prints a JSON list of names (older builds: one name per line)."""
    text = text.strip()
    if not text:
        return []
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return [line.strip() for line in text.splitlines() if line.strip()]
    return [str(x) for x in data] if isinstance(data, list) else []
