"""NX-OS PTP state from CLI text (napalm's ``cli()`` over nxos_ssh), for `validate --ptp`.

Commands and the shapes read (tests/validate/ptp/samples/nxos/ say where each recorded output comes from):

* ``show ptp brief``: the ``Port  State`` table (``Eth1/41  Slave``); ports are spelled ``EthX/Y`` there,
  ``EthernetX/Y`` in the config and the plan;
* ``show ptp clock``: ``PTP Device Type : boundary-clock``, ``Clock Identity``, ``Clock Domain``,
  ``Offset From Master``, ``Mean Path Delay``, ``Steps removed`` (``label : value`` lines);
* ``show ptp parent``: ``Parent Clock Identity:`` and ``Grandmaster Clock Identity:`` (the labels
  Cisco's output uses and PTP-Walker's NX-OS parser reads), identities as ``ec:46:70:ff:fe:01:01:01``
  (ptp_state.identity also takes unpadded octets).  Its sample is assembled, not recorded (the file says
  from what): read by label, so neither line order nor indentation matters.

NX-OS shows no time since the last Sync in these commands (``show ptp corrections`` lists the SUP time
of each correction, not the clock's now), so ``last_sync_s`` stays unknown and validate does not judge it.
"""

from __future__ import annotations

import re

from fabricgen.platforms.getter_kit import Cli
from fabricgen.platforms.ptp_state import ClockState, clock_state, identity

COMMANDS = ("show ptp brief", "show ptp clock", "show ptp parent")
_PORT = re.compile(r"^\s*(Eth\S+|Po\d+)\s+([A-Za-z-]+)\s*$")
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ()]*?)\s*:\s*(\S.*?)\s*$")
MODES = {"boundary-clock": "boundary", "ordinary-clock": "ordinary"}


def long_port(name: str) -> str:
    """``Eth1/41`` -> ``Ethernet1/41`` (the plan's spelling); ``Po10`` -> ``port-channel10``."""
    if name.startswith("Eth") and not name.startswith("Ethernet"):
        return "Ethernet" + name[3:]
    return "port-channel" + name[2:] if name.startswith("Po") else name


def _labels(text: str) -> dict[str, str]:
    return {m.group(1).lower(): m.group(2) for m in map(_LABEL.match, text.splitlines()) if m}


def parse_nxos_ptp(brief: str, clock: str, parent: str) -> ClockState:
    """The three outputs -> ClockState."""
    c, p = _labels(clock), _labels(parent)
    ports = {long_port(m.group(1)): m.group(2).upper() for m in map(_PORT.match, brief.splitlines()) if m}

    def num(key: str) -> int | None:
        m = re.match(r"-?\d+", c.get(key, ""))
        return int(m.group(0)) if m else None

    offset, delay = num("offset from master"), num("mean path delay")
    return clock_state(identity=identity(c.get("clock identity", "")),
                       mode=MODES.get(c.get("ptp device type", ""), c.get("ptp device type", "")),
                       domain=num("clock domain"), grandmaster=identity(p.get("grandmaster clock identity", "")),
                       parent=identity(p.get("parent clock identity", "")), steps_removed=num("steps removed"),
                       offset_ns=None if offset is None else float(offset),
                       path_delay_ns=None if delay is None else float(delay), ports=ports)


class NxosPtpGetters:
    """NX-OS through napalm's ``cli()``: one boundary clock."""

    def get_ptp_clocks(self: Cli, domain: int = 0) -> dict[str, ClockState]:
        """``domain`` is unused: NX-OS shows its one clock in every domain."""
        out = self.cli(list(COMMANDS))
        return {"": parse_nxos_ptp(*(str(out.get(c, "")) for c in COMMANDS))}
