"""Arista EOS deploy through napalm's own ``eos`` driver (eAPI, config sessions), owned sections only.

napalm's EOS replace opens a config session, sends ``rollback clean-config`` and then the
candidate: a full replace.  fabricgen's ``eos.cfg`` is a partial config (no users, AAA,
management API, management VRF, boot or logging), so this driver hands napalm a candidate that
is the device's running config with only the sections fabricgen owns replaced by the rendered
ones.  Owned: the routing model, ``hostname``, the global ``qos map`` lines, the PFC-watchdog defaults,
``port-channel load-balance``, ``ip routing`` / ``ipv6 unicast-routing``, ``router bfd``,
``router bgp``, and by name the interfaces, ``qos profile``\\ s, prefix-lists and route-maps the
build defines (never ``Management1``).  Everything else is sent back exactly as the device
printed it, so the session can never remove it.

* **ports the plan leaves free** are shut and described unused -- unless the switch has put the
  port in service itself (an address, VRF, channel-group, switchport mode or encapsulation under a
  description that is not fabricgen's): such a port stays as the switch has it, and the diff says so.

* ``compare_config`` is EOS's own ``show session-config named <session> diffs``;
  ``last_changes`` holds the owned sections' diff (running -> build) computed here.
* ``commit_config`` is napalm's: ``copy startup-config flash:rollback-0``, the session commit,
  ``write memory`` -- saved = running.  A line EOS rejects fails the load and aborts the session
  (nothing was applied).  ``rollback()`` (deploy's failed post-check) is napalm's ``configure
  replace flash:rollback-0`` + ``write memory``.

Platform name ``eos_fabricgen`` (package ``napalm_eos_fabricgen``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from napalm.eos.eos import EOSDriver

from fabricgen.napalm_kit import (
    EOS_DRAIN,
    RUNNING_SIDE,
    ConfigLine,
    EosPtpGetters,
    in_service_by_switch,
    kept_notes,
    parse_tree,
    rendered_config,
    shut_as_unused,
    sides,
)

OWNED_ALWAYS = re.compile(r"^(service routing protocols model |hostname |qos map (dscp|traffic-class) |"
                          r"priority-flow-control pause watchdog (default|action) |"
                          r"port-channel load-balance trident fields ip |(no )?ip routing$|"
                          r"(no )?ipv6 unicast-routing$|router bfd$|router bgp )")
NEVER_OWNED = re.compile(r"^(interface Management\d|username |aaa |management |enable |boot |vrf instance |"
                         r"logging |ntp |snmp-server |daemon |event-handler |end$)")
# The drain's section (fabricgen's EOS drain: maintenance mode of the whole switch): owned only while the
# switch's `maintenance` section is absent or exactly that block, so a maintenance setup of the switch's
# own (profiles, other units) is never touched; a drain then does not apply there, and deploy's drain
# wait says so when the traffic does not move.
MAINTENANCE = ("maintenance", "")
_NAMED = re.compile(r"^(interface|qos profile|ip prefix-list|ipv6 prefix-list|route-map) (\S+)")
# What puts a port in service, in EOS's words (`vrf NAME`, older `vrf forwarding NAME`).
_IN_SERVICE = re.compile(r"^(ip address|ipv6 address|vrf|channel-group|switchport (access|trunk|mode)|encapsulation) ")


def section_key(text: str) -> tuple[str, str] | None:
    m = _NAMED.match(text)
    return (m.group(1), m.group(2)) if m else None


@dataclass
class OwnedChange:
    """What a deploy would do to one EOS switch."""

    candidate: str  # the running config with the owned sections replaced by the build's
    names: set[tuple[str, str]] = field(default_factory=set)  # the by-name sections the build owns
    diff: str = ""  # owned sections, running -> build
    rendered: list[str] = field(default_factory=list)  # the owned sections as rendered, canonical order
    running: list[str] = field(default_factory=list)  # the owned sections as the switch runs them
    kept: list[str] = field(default_factory=list)  # free in the plan, in service on the switch: left alone


def _sections(text: str) -> list[tuple[ConfigLine, list[str]]]:
    """Top-level sections with their verbatim lines (comments and `end` dropped)."""
    lines = text.splitlines()
    roots = parse_tree(lines)
    out = []
    for i, node in enumerate(roots):
        stop = roots[i + 1].line - 1 if i + 1 < len(roots) else len(lines)
        body = [ln.rstrip() for ln in lines[node.line - 1:stop] if ln.strip() and not ln.strip().startswith("!")]
        out.append((node, body))
    return out


def is_owned(text: str, names: set[tuple[str, str]]) -> bool:
    if text == "maintenance":
        return MAINTENANCE in names
    if NEVER_OWNED.match(text):
        return False
    if OWNED_ALWAYS.match(text):
        return True
    key = section_key(text)
    return key is not None and key in names


def owned_lines(text: str, names: set[tuple[str, str]]) -> list[str]:
    """The owned sections of a config, in a canonical order (by first line): where EOS prints a
    section says nothing about the config."""
    owned = [body for node, body in _sections(text) if is_owned(node.text, names)]
    return [ln for body in sorted(owned, key=lambda b: b[0].strip()) for ln in body]


def in_service_elsewhere(running: list[tuple[ConfigLine, list[str]]],
                         built: list[tuple[ConfigLine, list[str]]]) -> list[str]:
    """Ports the build shuts as free that the switch has put in service itself (see the module docstring)."""
    have = {node.text: body for node, body in running}
    return [key[1] for node, body in built
            if (key := section_key(node.text)) is not None and key[0] == "interface" and shut_as_unused(body)
            and node.text in have and in_service_by_switch(have[node.text][1:], _IN_SERVICE)]


def plan_change(running: str, rendered: str) -> OwnedChange:
    """The candidate: the device's own sections as it printed them, then every owned section as built."""
    built, have = _sections(rendered), _sections(running)
    names = {k for node, _ in built if (k := section_key(node.text)) is not None and not NEVER_OWNED.match(node.text)}
    kept = in_service_elsewhere(have, built)
    names -= {("interface", name) for name in kept}
    theirs = next((body for node, body in have if node.text == "maintenance"), None)
    if theirs is None or tuple(theirs) == EOS_DRAIN:
        names.add(MAINTENANCE)
    keep = [ln for node, body in have if not is_owned(node.text, names) and node.text != "end" for ln in body]
    add = [ln for node, body in built if is_owned(node.text, names) for ln in body]
    before, after = owned_lines(running, names), owned_lines(rendered, names)
    diff = "".join(difflib.unified_diff([ln + "\n" for ln in before], [ln + "\n" for ln in after],
                                        RUNNING_SIDE, "build"))
    if diff:
        diff += kept_notes(kept)
    return OwnedChange("\n".join(keep + add) + "\n", names, diff, after, before, kept)


class EosDriver(EosPtpGetters, EOSDriver):
    """napalm ``eos`` (eAPI config sessions) with owned-section candidates."""

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        super().__init__(hostname, username, password, timeout=timeout, optional_args=optional_args)
        self.change: OwnedChange | None = None
        self._owned_names: set[tuple[str, str]] = set()
        self.last_changes = ""
        self.last_sides: list[tuple[str, str, list[str], list[str]]] | None = None

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        config = rendered_config(filename, config)
        running = self.get_config(retrieve="running")["running"]
        self.change = plan_change(running, config)
        self._owned_names = self.change.names
        self.last_changes = self.change.diff
        self.last_sides = sides(self.change.diff, self.change.running, self.change.rendered, "build")
        super().load_replace_candidate(config=self.change.candidate)

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen's EOS driver replaces owned sections (load_replace_candidate)")

    def discard_config(self) -> None:
        super().discard_config()
        self.change = None

    def fabricgen_persisted_diff(self) -> str:
        """Owned sections of the startup config vs the build ("" = a reboot keeps the build)."""
        if self.change is None:
            return ""
        startup = owned_lines(self.get_config(retrieve="startup")["startup"], self.change.names)
        return "".join(difflib.unified_diff([ln + "\n" for ln in startup], [ln + "\n" for ln in self.change.rendered],
                                            "startup (fabricgen-owned sections)", "build"))

    def fabricgen_verify(self) -> tuple[list[str], list[str]]:
        """After a commit: saved = running for every owned section."""
        config = self.get_config(retrieve="all")
        startup, running = owned_lines(config["startup"], self._owned_names), owned_lines(config["running"],
                                                                                          self._owned_names)
        if startup == running:
            return [], []
        diff = "".join(difflib.unified_diff([ln + "\n" for ln in startup], [ln + "\n" for ln in running],
                                            "startup", "running"))
        return [], [f"the startup config differs from the running config:\n{diff}"]
