"""NX-OS deploy that cannot cut a switch off: napalm's ``nxos_ssh`` transport, owned-section candidates.

napalm's own ``nxos_ssh`` replace is ``rollback running-config file <candidate>``: a full
replace, and fabricgen's ``nxos.cfg`` is a partial config (no boot variable, management VRF
route, users, AAA, NTP, logging, SNMP or CoPP).  This driver keeps napalm's driver for the
connection and every getter, and replaces the config workflow:

* **candidate** = the device's running config with only the sections fabricgen owns replaced
  by the rendered ones (hier_config's NX-OS model gives the hierarchy).  Owned: the
  interfaces the plan names (never ``mgmt0``), the class-maps and policy-maps it names,
  ``system qos``, ``router bgp``, the route-maps and prefix-lists it names, ``hardware
  profile dlb``, ``ip load-sharing``, global BFD and PFC-watchdog lines, ``hostname``, and the
  ``feature`` lines it needs (added, never removed).  Everything else stays as it is.
* **compare_config** = a unified diff of the owned sections only; ``last_changes`` holds the
  exact commands (hier_config's remediation, running -> candidate) the commit will send.
* **ports the plan leaves unused** are shut and described unused -- unless the switch has put the
  port in service itself (an address, VRF, channel-group or switchport mode under a description
  that is not fabricgen's): such a port is left as it is, and the diff says so.
* **reload-pending sections**: a change to ``hardware profile dlb`` takes effect only after a
  reload (the platform record's capability); the diff and the deploy report say so.
* **breakouts** (``interface breakout module 1 port ... map ...``) are not owned: changing one
  reloads those ports and drops their config, so a build whose breakouts differ from the
  switch's is refused before anything is sent (`BreakoutMismatch`), naming the ports.
* **commit_config** = ``checkpoint fabricgen-<UTC time>``, the remediation commands in config
  mode, ``copy running-config startup-config``.  A command NX-OS rejects rolls the switch back
  to the checkpoint.  ``rollback()`` (deploy's failed post-check) returns to that checkpoint
  and saves again, so saved = running after every commit and rollback.

Nothing outside the owned sections is ever sent, so boot, management, users and AAA can
never be removed.  Host keys are verified (fabricgen.base.ssh).  Platform name ``nxos_fabricgen``.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hier_config import Host
from hier_config.options import options_for
from napalm.base.exceptions import ReplaceConfigException
from napalm.nxos_ssh.nxos_ssh import NXOSSSHDriver

from fabricgen.napalm_kit import (
    RUNNING_SIDE,
    ConfigUndetermined,
    NxosHealthGetters,
    NxosPtpGetters,
    capabilities,
    expand_runs,
    in_service_by_switch,
    kept_notes,
    known_hosts_option,
    netmiko_connect,
    rendered_config,
    shut_as_unused,
    sides,
)

# Top-level sections fabricgen owns outright (whatever their name), and by-name sections.
OWNED_ALWAYS = (
    re.compile(r"^hostname "),
    re.compile(r"^system qos$"),
    re.compile(r"^router bgp "),
    re.compile(r"^hardware profile dlb$"),
    re.compile(r"^ip load-sharing "),
    re.compile(r"^bfd interval "),
    re.compile(r"^priority-flow-control watch-dog-interval "),
    re.compile(r"^priority-flow-control (watch-dog interval|watch-dog shutdown-multiplier|auto-restore multiplier) "),
)
NEVER_OWNED = re.compile(r"^(interface mgmt\d+|vrf context management|boot |username |aaa |tacacs|radius|ntp |"
                         r"logging |snmp-server |copp |line )")
# What names a section: the kind and the name, e.g. ("route-map", "RM-REDIST-DIRECT").
_NAMED = (
    (re.compile(r"^interface (\S+)$"), "interface"),
    (re.compile(r"^class-map type \S+ (?:match-any |match-all )?(\S+)$"), "class-map"),
    (re.compile(r"^policy-map type \S+ (\S+)$"), "policy-map"),
    (re.compile(r"^route-map (\S+) "), "route-map"),
    (re.compile(r"^ip prefix-list (\S+) "), "ip prefix-list"),
    (re.compile(r"^ipv6 prefix-list (\S+) "), "ipv6 prefix-list"),
)
# Remediation order: objects before what references them, removals of objects after.
ORDERING = [
    {"lineage": [{"startswith": ["feature "]}], "order": 100},
    {"lineage": [{"startswith": ["ip prefix-list", "ipv6 prefix-list", "class-map "]}], "order": 200},
    {"lineage": [{"startswith": ["route-map ", "policy-map "]}], "order": 300},
    {"lineage": [{"startswith": ["system qos"]}], "order": 400},
    {"lineage": [{"startswith": ["no route-map ", "no policy-map "]}], "order": 800},
    {"lineage": [{"startswith": ["no ip prefix-list", "no ipv6 prefix-list", "no class-map "]}], "order": 900},
]
# An unused port the switch put in service itself (not under a fabricgen description) is the switch's.
_IN_SERVICE = re.compile(r"^(ip address|ipv6 address|vrf member|channel-group|switchport (access|trunk|mode)|"
                         r"encapsulation) ")
_DLB = "hardware profile dlb"  # adaptive routing: reload-pending when it changes (registry capabilities)
_BREAKOUT = re.compile(r"^interface breakout module (\d+) port (\S+) map (\S+)$")
# NX-OS answers a rejected config line with one of these (napalm's nxos merge checks the first).
REJECTED = re.compile(r"^\s*(% Invalid|Invalid command|% Incomplete|% Ambiguous|ERROR:|Syntax error)", re.M)


def _section_key(text: str) -> tuple[str, str] | None:
    for pattern, kind in _NAMED:
        m = pattern.match(text)
        if m:
            return kind, m.group(1)
    return None


def _options() -> dict[str, Any]:
    opts = dict(options_for("nxos"))
    opts["ordering"] = list(opts.get("ordering", [])) + ORDERING
    return opts


def parse(text: str) -> Any:
    """NX-OS config text -> hier_config tree (comments, version and boot lines are not config)."""
    host = Host("fabricgen", "nxos", _options())
    host.load_running_config(text)
    return host.running_config


def _render(children: Iterable[Any]) -> list[str]:
    out = []
    for child in children:
        out.append(child.cisco_style_text())
        out += _render(child.children)
    return out


def _owned_sorted(tree: Any, names: set[tuple[str, str]]) -> list[str]:
    """Owned sections in a canonical order (by their first line): NX-OS keeps a section where it
    was first created, so where it sits says nothing about the config."""
    sections = [c for c in tree.children if is_owned(c.text, names, list(OWNED_ALWAYS))]
    return _render(sorted(sections, key=lambda c: c.text))


@dataclass
class OwnedChange:
    """What a deploy would do to one NX-OS switch."""

    candidate: str  # the running config with the owned sections replaced
    commands: list[str] = field(default_factory=list)  # remediation, in order, indented for config mode
    diff: str = ""  # unified diff of the owned sections, running -> rendered
    names: set[tuple[str, str]] = field(default_factory=set)  # the by-name sections the build owns
    rendered: list[str] = field(default_factory=list)  # the owned sections as rendered
    kept: list[str] = field(default_factory=list)  # unused in the plan, in service on the switch: left alone
    notes: list[str] = field(default_factory=list)  # what the operator must do after the commit (a reload)
    running: list[str] = field(default_factory=list)  # the owned sections as the switch runs them


def owned(rendered: Any) -> tuple[set[tuple[str, str]], list[re.Pattern[str]]]:
    """The by-name sections the rendered config defines, and the always-owned patterns."""
    names = set()
    for child in rendered.children:
        if NEVER_OWNED.match(child.text):
            continue
        key = _section_key(child.text)
        if key is not None:
            names.add(key)
    return names, list(OWNED_ALWAYS)


def is_owned(text: str, names: set[tuple[str, str]], always: list[re.Pattern[str]]) -> bool:
    if NEVER_OWNED.match(text):
        return False
    if any(p.match(text) for p in always):
        return True
    key = _section_key(text)
    return key is not None and key in names


class BreakoutMismatch(ReplaceConfigException):
    """The build breaks ports out differently from the switch: a change a deploy must not make."""


def breakouts(tree: Any) -> dict[tuple[int, int], str]:
    """(module, port) -> breakout map of every `interface breakout` line of a config tree."""
    out: dict[tuple[int, int], str] = {}
    for child in tree.children:
        if m := _BREAKOUT.match(child.text):
            for port in expand_runs(m.group(2)):
                out[int(m.group(1)), port] = m.group(3)
    return out


def check_breakouts(running: Any, rendered: Any) -> None:
    """Refuse a build whose breakouts differ from the switch's (see the module docstring)."""
    have, want = breakouts(running), breakouts(rendered)
    if have == want:
        return
    diffs = [f"port {m}/{p}: {have.get((m, p), 'whole')} -> {want.get((m, p), 'whole')}"
             for m, p in sorted(set(have) | set(want)) if have.get((m, p)) != want.get((m, p))]
    raise BreakoutMismatch(
        f"the build breaks out ports differently from the switch ({'; '.join(diffs[:4])}"
        f"{f' and {len(diffs) - 4} more' if len(diffs) > 4 else ''}): changing a breakout reloads those ports and "
        "drops their config, so deploy does not; set the breakouts by hand in a maintenance window "
        "(`interface breakout module 1 port <range> map <map>` / `no interface breakout ...`), then deploy")


def plan_change(running_text: str, rendered_text: str) -> OwnedChange:
    """The candidate (running with owned sections replaced), its remediation and the owned diff;
    BreakoutMismatch when the build's breakouts differ from the running config's."""
    running, rendered = parse(running_text), parse(rendered_text)
    check_breakouts(running, rendered)
    names, always = owned(rendered)
    kept = in_service_elsewhere(running, rendered)
    names -= {("interface", name) for name in kept}
    candidate = parse("")
    for child in running.children:  # keep the device's own sections, in their place
        if not is_owned(child.text, names, always):
            candidate.add_deep_copy_of(child)
    for child in rendered.children:  # then every owned section as rendered
        wanted = is_owned(child.text, names, always) or child.text.startswith("feature ")
        if wanted and candidate.get_child("equals", child.text) is None:
            candidate.add_deep_copy_of(child)
    remediation = running.config_to_get_to(candidate)
    remediation.set_order_weight()
    commands = [c.cisco_style_text() for c in remediation.all_children_sorted()]
    before = _owned_sorted(running, names)
    after = _owned_sorted(rendered, names)
    diff = _diff(before, after, RUNNING_SIDE, "candidate")
    notes = reload_notes(running, rendered) if commands else []
    if diff:
        diff += kept_notes(kept)
        diff += "".join(f"# {note}\n" for note in notes)
    return OwnedChange("\n".join(_render(candidate.children)) + "\n", commands, diff, names, after, kept, notes, before)


def reload_notes(running: Any, rendered: Any) -> list[str]:
    """What a commit of `rendered` leaves pending a reload: a changed `hardware profile dlb`."""
    if not capabilities("nxos").adaptive_routing_needs_reload:
        return []
    before, after = (_section_lines(tree, _DLB) for tree in (running, rendered))
    if before == after:
        return []
    return [f"`{_DLB}` changed: it takes effect only after a reload (NX-OS lists it in `show system config "
            "reload-pending`); until then the switch keeps its current load balancing"]


def _section_lines(tree: Any, header: str) -> list[str]:
    section = tree.get_child("equals", header)
    return _render([section]) if section is not None else []


def in_service_elsewhere(running: Any, rendered: Any) -> list[str]:
    """Ports the build shuts as unused that the switch has put in service itself (see the module docstring)."""
    kept = []
    for child in rendered.children:
        key = _section_key(child.text)
        if key is None or key[0] != "interface" or not shut_as_unused(c.text for c in child.children):
            continue
        have = running.get_child("equals", child.text)
        if have is not None and in_service_by_switch((c.text for c in have.children), _IN_SERVICE):
            kept.append(key[1])
    return kept


class NxosDriver(NxosHealthGetters, NxosPtpGetters, NXOSSSHDriver):
    """napalm ``nxos_ssh`` with owned-section candidates, checkpoint/rollback and verified host keys."""

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        args = dict(optional_args or {})
        self.known_hosts = known_hosts_option(args)
        args.pop("known_hosts", None)
        self.checkpoint_prefix = str(args.pop("checkpoint_prefix", "fabricgen"))
        super().__init__(hostname, username, password, timeout=timeout, optional_args=args)
        self.change: OwnedChange | None = None
        self._owned_names: set[tuple[str, str]] = set()  # of the last loaded build
        self._pending: list[str] = []  # notes of the last commit, reported by fabricgen_verify
        self.last_changes = ""
        self.last_sides: list[tuple[str, str, list[str], list[str]]] | None = None
        self._last_checkpoint: str | None = None
        # Set by deploy: once set (Ctrl-C) every command outside a commit or rollback is refused, so a
        # getter or diff stops at its next command (netmiko's own read ends within its read timeout).
        self.cancel: threading.Event | None = None
        self._critical = 0

    # ------------------------------------------------------------------ connection

    def _connect(self) -> Any:
        """The netmiko connection (tests replace this with a recorded-output device)."""
        return netmiko_connect("cisco_nxos", self.hostname, self.username, self.password, self.timeout,
                               self.known_hosts, **self.netmiko_optional_args)

    def open(self) -> None:
        self.device = self._connect()
        self._netmiko_device = self.device

    @contextlib.contextmanager
    def uninterruptible(self) -> Iterator[None]:
        """Commands inside run even after Ctrl-C: a commit or rollback cut in half leaves the switch
        between two configs."""
        self._critical += 1
        try:
            yield
        finally:
            self._critical -= 1

    def _interrupted(self, what: str) -> None:
        if self.cancel is not None and self.cancel.is_set() and not self._critical:
            from fabricgen.napalm_kit import CommandInterrupted

            raise CommandInterrupted(f"{self.hostname}: interrupted before `{what}`")

    def _send_command(self, command: str, raw_text: bool = False, cmd_verify: bool = True) -> Any:
        self._interrupted(command)
        return super()._send_command(command, raw_text=raw_text, cmd_verify=cmd_verify)

    def _send_command_list(self, commands: list[str], expect_string: str | None = None, **kwargs: Any) -> Any:
        self._interrupted(commands[0] if commands else "")
        return super()._send_command_list(commands, expect_string=expect_string, **kwargs)

    # ------------------------------------------------------------------ config

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        config = rendered_config(filename, config)
        running = self.get_config(retrieve="running")["running"]
        self.change = plan_change(running, config)
        self._owned_names = self.change.names
        self.last_changes = "\n".join(self.change.commands)
        self.last_sides = sides(self.change.diff, self.change.running, self.change.rendered, "candidate")
        self.loaded, self.replace = True, True

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise NotImplementedError("fabricgen's NX-OS driver replaces owned sections (load_replace_candidate)")

    def compare_config(self) -> str:
        """Unified diff of the fabricgen-owned sections ("" when the remediation is empty)."""
        if self.change is None or not self.change.commands:
            return ""
        return self.change.diff or "\n".join(self.change.commands) + "\n"

    def discard_config(self) -> None:
        self.change = None
        self.loaded = False

    def _checkpoint_name(self) -> str:
        return f"{self.checkpoint_prefix}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Checkpoint, send the remediation, save; any rejected line rolls back to the checkpoint."""
        if revert_in is not None or message:
            raise NotImplementedError("commit confirm and commit messages are not supported")
        if self.change is None:
            raise ReplaceConfigException("no candidate loaded (load_replace_candidate first)")
        if not self.change.commands:
            self.discard_config()
            return
        checkpoint = self._checkpoint_name()
        # NX-OS keeps at most ten checkpoints: drop this session's previous one (its commit was checked)
        drop = [f"no checkpoint {self._last_checkpoint}"] if self._last_checkpoint else []
        self._send_command_list(["terminal dont-ask", *drop, f"checkpoint {checkpoint}", "no terminal dont-ask"])
        self._last_checkpoint = checkpoint
        sent = self._send_config(self.change.commands)
        output = sent if isinstance(sent, str) else "\n".join(map(str, sent))
        rejected = REJECTED.search(output)
        if rejected:
            reason = output[rejected.start():].strip().splitlines()[0]
            try:
                self.rollback()
            except Exception as exc:  # noqa: BLE001
                raise ConfigUndetermined(
                    f"{self.hostname}: NX-OS rejected a line ({reason}) AND the rollback to checkpoint {checkpoint} "
                    f"failed ({exc}); the device config is undetermined") from exc
            raise ReplaceConfigException(f"{self.hostname}: NX-OS rejected a line, rolled back to checkpoint "
                                         f"{checkpoint}:\n{output.strip()}")
        self._copy_run_start()
        self._pending = list(self.change.notes)
        self.discard_config()

    def rollback(self) -> None:
        """Back to the checkpoint of the last commit, then save (saved = running)."""
        self._pending = []
        if not self._last_checkpoint:
            raise ReplaceConfigException(f"{self.hostname}: no checkpoint of a commit in this session to roll back to")
        result = self._send_command_list(
            ["terminal dont-ask", f"rollback running-config checkpoint {self._last_checkpoint}",
             "no terminal dont-ask"], expect_string=r"[#>]", read_timeout=90)
        text = result if isinstance(result, str) else "\n".join(map(str, result))
        if "completed" not in text.lower():
            raise ReplaceConfigException(f"{self.hostname}: rollback to checkpoint {self._last_checkpoint} failed:\n"
                                         f"{text.strip()}")
        self._copy_run_start()

    # ------------------------------------------------------------------ fabricgen extensions

    def fabricgen_reset_bgp(self) -> None:
        """Hard-reset every BGP session so changed keepalive/hold times apply."""
        self._send_command("clear ip bgp *")

    def fabricgen_persisted_diff(self) -> str:
        """Owned sections of the startup config vs the build ("" = a reboot keeps the build)."""
        if self.change is None:
            return ""
        startup = owned_lines(self.get_config(retrieve="startup")["startup"], self.change.names)
        return _diff(startup, self.change.rendered, "startup (fabricgen-owned sections)", "build")

    def fabricgen_verify(self) -> tuple[list[str], list[str]]:
        """After a commit: saved = running for every owned section; the commit's notes (a reload pending)."""
        config = self.get_config(retrieve="all")
        diff = _diff(owned_lines(config["startup"], self._owned_names),
                     owned_lines(config["running"], self._owned_names), "startup", "running")
        notes, self._pending = self._pending, []
        return notes, ([f"the startup config differs from the running config:\n{diff}"] if diff else [])


def owned_lines(text: str, names: set[tuple[str, str]]) -> list[str]:
    """The lines of the sections of ``text`` that fabricgen owns (by-name sections from ``names``)."""
    return _owned_sorted(parse(text), names)


def _diff(a: list[str], b: list[str], fromfile: str, tofile: str) -> str:
    return "".join(difflib.unified_diff([ln + "\n" for ln in a], [ln + "\n" for ln in b], fromfile, tofile))


def commands_touching(commands: Iterable[str], pattern: re.Pattern[str]) -> list[str]:
    """Remediation lines matching ``pattern`` (tests: nothing may touch management, boot, users, AAA)."""
    return [c for c in commands if pattern.search(c)]
