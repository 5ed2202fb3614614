"""Structural checks of a rendered (or hand-edited) Arista EOS config: the ``eos-*`` rules of catalog/rules.py.

Two kinds, run by `fabricgen check` through the EOS record's analyzer (one read, one parse per file,
shared with the RoCE facts of platforms/eos/extract.py):

* ``eos-avd``: Arista's own library is the EOS checker.  The plan's structured config (what render
  builds) is validated against Arista's ``eos_cli_config_gen`` schema and rendered by Arista's
  templates (pyavd); the file must be exactly that text.  A schema violation names the key; otherwise
  the first line that differs is the finding's location.
* line rules over the file itself, so a hand edit is named by what it breaks: the routing model, the
  queue keyword of the chip family, lane speeds on split cages, the watchdog's EOS limits, Arista-style
  ECN and free ports.

Expectations come from the plan (models, front panel, the QoS policy), never from the renderer's text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path

from fabricgen.base.config_tree import ConfigLine, parse_tree
from fabricgen.base.findings import Finding
from fabricgen.catalog.eos_models import chip_family
from fabricgen.catalog.rules import ids
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.eos import render as eos_render
from fabricgen.platforms.eos.extract import EOS_CFG, eos_facts
from fabricgen.platforms.facts import DeviceFacts, read_config

RULES = ids("config", "eos-")
Add = Callable[[str, int, str], None]  # (rule, line, message)
EOS_WATCHDOG_ACTIONS = ("drop", "errdisable", "notify-only")  # AVD schema priority_flow_control.watchdog.action
_QUEUE = re.compile(r"^(uc-tx-queue|tx-queue|mc-tx-queue) (\d)$")
_ECN = re.compile(r"^random-detect ecn minimum-threshold ")
_WATCHDOG = re.compile(r"^priority-flow-control pause watchdog (?:default (timeout|polling-interval|recovery-time) "
                       r"(\S+)|action (\S+))$")


def analyze_eos(plan: Plan, configs: Path, host: str, structural: bool = True,
                skip: frozenset[str] = frozenset()) -> tuple[list[Finding], DeviceFacts]:
    """The structural findings (when `structural`; but the rules in `skip`) and the RoCE facts of one eos.cfg,
    from one parse."""
    f = DeviceFacts(host, "eos", qos=True)
    text = read_config(f, configs, EOS_CFG)
    path = f.files[EOS_CFG]
    if text is None:
        return ([Finding(host, path, "", "eos-parse", why) for _, why in f.errors] if structural else []), f
    lines = text.splitlines()
    roots = parse_tree(lines)
    facts = eos_facts(plan, f, roots)
    sw = plan.switches.get(host)
    if not structural or sw is None:
        return [], facts
    return check_eos(plan, sw, lines, roots, path, skip), facts


def check_eos(plan: Plan, sw: Switch, lines: list[str], roots: list[ConfigLine], path: str,
              skip: frozenset[str] = frozenset()) -> list[Finding]:
    out: list[Finding] = []

    def add(rule: str, line: int, message: str) -> None:
        out.append(Finding(sw.hostname, path, f"L{line}" if line else "", rule, message))

    if "eos-avd" not in skip:
        _avd(plan, sw, lines, add)
    top = {node.text: node for node in roots}
    if f"service routing protocols model {eos_render.ROUTING_MODEL}" not in top:
        add("eos-routing-model", 1, f"no `service routing protocols model {eos_render.ROUTING_MODEL}`")
    chip, why = chip_family(sw.model)
    want = "uc-tx-queue" if chip == "strata" else "tx-queue"
    for node in roots:
        if not node.text.startswith("qos profile ") and not node.text.startswith("interface "):
            continue
        for child in node.children:
            m = _QUEUE.match(child.text)
            if m is None:
                continue
            if m.group(1) not in (want, "mc-tx-queue") or (chip == "sand" and m.group(1) == "mc-tx-queue"):
                add("eos-queue-keyword", child.line, f"`{child.text}` on {sw.model} ({why}): EOS rejects it and "
                    "the config session aborts")
            _ecn(child, add)
    _lane_speeds(plan, sw, top, add)
    _watchdog(plan, roots, add)
    free = front_panel(plan, sw).unused
    for name in free:
        port = top.get(f"interface {name}")
        body = {c.text for c in port.children} if port is not None else set()
        if "shutdown" not in body or not any(t.startswith("description unused") for t in body):
            add("eos-unused-port", port.line if port is not None else 0,
                f"{name} is free in the plan but not shut and described unused")
    return out


def _avd(plan: Plan, sw: Switch, lines: list[str], add: Add) -> None:
    """eos-avd: the file against Arista's schema and templates, from the plan's structured config."""
    try:
        want = eos_render.device_config(eos_render.structured_config(sw, plan), sw.hostname)
    except eos_render.EosSchemaError as exc:
        add("eos-avd", 0, str(exc))
        return
    expected = want.splitlines()
    if expected == lines:
        return
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, expected, lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        have = lines[j1] if j1 < j2 else "(nothing)"
        wanted = expected[i1] if i1 < i2 else "(nothing)"
        add("eos-avd", min(j1, len(lines) - 1) + 1 if lines else 0,
            f"the file says `{have.strip()}` where Arista's eos_cli_config_gen prints `{wanted.strip()}` from the "
            "plan's structured config (a hand edit or a stale build: re-render)")
        return


def _ecn(queue: ConfigLine, add: Add) -> None:
    texts = [c.text for c in queue.children]
    for child in queue.children:
        if _ECN.match(child.text) and not child.text.endswith(" weight 0"):
            add("eos-ecn", child.line, f"{queue.text}: ECN marks on an averaged queue depth (no `weight 0`)")
    if any(_ECN.match(t) for t in texts) and "random-detect ecn count" not in texts:
        add("eos-ecn", queue.line, f"{queue.text} marks ECN but has no `random-detect ecn count`: its marks are "
            "not counted, validate --health cannot see them")


def _lane_speeds(plan: Plan, sw: Switch, top: dict[str, ConfigLine], add: Add) -> None:
    for itf in sw.interfaces:
        want = eos_render.lane_speed(sw, plan, itf)
        if not want:
            continue
        node = top.get(f"interface {itf.name}")
        if node is None:
            continue
        speeds = [c for c in node.children if c.text.startswith("speed ")]
        if not any(c.text == f"speed {want}" for c in speeds):
            at = speeds[0].line if speeds else node.line
            add("eos-lane-speed", at, f"{itf.name} is {itf.breakout} ports of a split cage: it needs `speed {want}`"
                f" ({itf.speed}G on {want.rsplit('-', 1)[1]} lanes) or it never links")


def _watchdog(plan: Plan, roots: list[ConfigLine], add: Add) -> None:
    q = plan.qos
    seen: dict[str, tuple[str, int]] = {}
    for node in roots:
        m = _WATCHDOG.match(node.text)
        if m is None:
            continue
        if m.group(3) is not None:
            seen["action"] = (m.group(3), node.line)
        else:
            seen[m.group(1)] = (m.group(2), node.line)
    if q is None or not q.watchdog_enabled:
        return
    want = eos_render.watchdog(plan)
    assert want is not None
    keys = {"timeout": "timeout", "polling-interval": "polling_interval", "recovery-time": "recovery_time",
            "action": "action"}
    for word, key in keys.items():
        have = seen.get(word)
        if have is None:
            add("eos-watchdog", 1, f"no `priority-flow-control pause watchdog {'default ' if key != 'action' else ''}"
                f"{word}` (the plan's: {want[key]})")
        elif word == "action" and have[0] not in EOS_WATCHDOG_ACTIONS:
            add("eos-watchdog", have[1], f"watchdog action {have[0]!r} is not an EOS action "
                f"({', '.join(EOS_WATCHDOG_ACTIONS)})")
        elif have[0] != want[key]:
            add("eos-watchdog", have[1], f"watchdog {word} {have[0]} is not the plan's {want[key]}")
    timeout, polling = seen.get("timeout"), seen.get("polling-interval")
    try:
        if timeout and polling and float(polling[0]) > float(timeout[0]) / 2 + 1e-9:
            add("eos-watchdog", polling[1], f"polling-interval {polling[0]} s is above half the {timeout[0]} s "
                "timeout: EOS substitutes its own interval")
    except ValueError:
        add("eos-watchdog", polling[1] if polling else 1, "watchdog timers are not numbers of seconds")
