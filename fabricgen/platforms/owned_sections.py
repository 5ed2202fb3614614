"""What the NX-OS and EOS deploy drivers (``napalm_nxos_fabricgen``, ``napalm_eos_fabricgen``) share:
a candidate that replaces only fabricgen's sections.

Both drivers build the candidate the same way -- read the build, refuse an empty one, read the
switch's running config, keep every section fabricgen does not own as the switch printed it -- and
both shut the ports the plan leaves free, except a port the switch has put in service itself.
The vendor's own words (what puts a port in service, how a section is named) stay in each driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from napalm.base.exceptions import ReplaceConfigException

from fabricgen.plan.model import TIERS

RUNNING_SIDE = "running (fabricgen-owned sections)"
# A port description fabricgen writes: a planned port's `<tier>:<peer>:<port>`, or a free port's `unused: ...`.
FABRICGEN_DESCRIPTION = re.compile(rf"^description (unused: |({'|'.join(TIERS)}):)")
UNUSED_DESCRIPTION = re.compile(r"^description unused: ")

Sides = list[tuple[str, str, list[str], list[str]]]


def rendered_config(filename: str | None, config: str | None) -> str:
    """The build napalm's `load_replace_candidate` was given (a file or the text); an empty build
    would own nothing and is refused."""
    if filename:
        config = Path(filename).read_text(encoding="utf-8")
    if not config or not config.strip():
        raise ReplaceConfigException("load_replace_candidate needs a non-empty rendered config")
    return config


def sides(diff: str, running: list[str], build: list[str], build_label: str) -> Sides | None:
    """The owned sections' two sides of a non-empty diff, for deploy's impact labels (fabricgen.deploy.impact)."""
    return [(RUNNING_SIDE, build_label, running, build)] if diff else None


def shut_as_unused(build_lines: Iterable[str]) -> bool:
    """The build shuts this port as one the plan leaves free."""
    return any(UNUSED_DESCRIPTION.match(ln.strip()) for ln in build_lines)


def in_service_by_switch(running_lines: Iterable[str], in_service: re.Pattern[str]) -> bool:
    """The switch has put this port in service itself: a line `in_service` matches (an address, a
    VRF, a channel-group ... in the vendor's words) under a description fabricgen did not write."""
    lines = [ln.strip() for ln in running_lines]
    return any(in_service.match(ln) for ln in lines) and not any(FABRICGEN_DESCRIPTION.match(ln) for ln in lines)


def kept_notes(ports: Iterable[str]) -> str:
    """The diff's note for every free port left as the switch has it."""
    return "".join(f"# left as the switch has it: interface {name} is in service there, the plan leaves it unused\n"
                   for name in ports)
