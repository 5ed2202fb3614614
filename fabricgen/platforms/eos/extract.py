"""Arista EOS facts from eos.cfg, read over its indentation tree (check.config_tree).

What EOS means by what it prints (the semantics the fabric-wide rules need):

* classification: the global `qos map dscp <dscps> to traffic-class <tc>` lines on every port that
  trusts DSCP (`qos trust dscp` in its qos profile); a DSCP without a line keeps traffic class 0
  here, so a missing map shows up as RoCE landing in TC 0;
* traffic class -> tx-queue is the identity unless `qos map traffic-class <tc> to tx-queue <q>`;
* tx-queues (`uc-tx-queue` on Strata, `tx-queue` on Sand) are strict priority unless `no priority`
  is set on that queue or on a higher one (a round-robin queue makes every lower queue round-robin);
  `bandwidth percent` is a round-robin queue's share; `random-detect ecn minimum-threshold N <unit>
  maximum-threshold M <unit>` marks ECN;
* `priority-flow-control on` and `priority-flow-control priority <p> no-drop` in the port's qos
  profile (or on the interface) make priority p lossless on that port, `priority-flow-control pause
  watchdog` runs the watchdog there;
* no PG xoff is in the config: a lossless priority buffers as the port's plan profile says;
* the interface MTU defaults to 1500.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabricgen.base.config_tree import ConfigLine, parse_tree
from fabricgen.plan.model import Plan
from fabricgen.platforms.facts import (
    DeviceFacts,
    Ecn,
    LosslessPg,
    Neighbor,
    PortFacts,
    QosMaps,
    Queue,
    parse_asn,
    plan_ports,
    read_config,
)
from fabricgen.platforms.ptp_facts import PtpFacts, read_cli

EOS_CFG = "eos.cfg"
DEFAULT_MTU = 1500
_UNITS = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
_DSCP_MAP = re.compile(r"^qos map dscp ([\d ]+) to traffic-class (\d)$")
_TC_MAP = re.compile(r"^qos map traffic-class ([\d ]+) to tx-queue (\d)$")
_ECN = re.compile(r"^random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)")
_NO_DROP = re.compile(r"^priority-flow-control priority (\d) no-drop$")
_PATHS = re.compile(r"^maximum-paths (\d+)")


_QUEUE = re.compile(r"^(?:uc-)?tx-queue (\d)$")


def _queue_id(text: str) -> int | None:
    """The queue of a `tx-queue N` (Sand) or `uc-tx-queue N` (Strata) stanza."""
    m = _QUEUE.match(text)
    return int(m.group(1)) if m else None


class _Profile:
    """One `qos profile` (or the QoS lines of an interface): trust, tx-queues, PFC, watchdog."""

    def __init__(self, name: str, line: int) -> None:
        self.name, self.line = name, line
        self.trust_dscp = False
        self.pfc_on = False
        self.pfc_line = line
        self.no_drop: set[int] = set()
        self.watchdog = False
        self.queue_lines: dict[int, ConfigLine] = {}

    def read(self, node: ConfigLine) -> None:
        for child in node.children:
            text = child.text
            if text == "qos trust dscp":
                self.trust_dscp = True
            elif text == "priority-flow-control on":
                self.pfc_on, self.pfc_line = True, child.line
            elif m := _NO_DROP.match(text):
                self.no_drop.add(int(m.group(1)))
            elif text == "priority-flow-control pause watchdog":
                self.watchdog = True
            elif (q := _queue_id(text)) is not None:
                self.queue_lines[q] = child

    def queues(self) -> dict[int, Queue]:
        """Every tx-queue 0-7 with EOS's scheduling: round-robin at and below the highest `no priority`."""
        round_robin_top = max((q for q, node in self.queue_lines.items()
                               if any(c.text == "no priority" for c in node.children)), default=-1)
        out: dict[int, Queue] = {}
        for q in range(8):
            node = self.queue_lines.get(q)
            strict = q > round_robin_top
            weight, marks = 0, False
            ecn: tuple[Ecn, ...] = ()
            loc = f"L{node.line}" if node is not None else f"L{self.line}"
            sched_loc = loc
            for child in node.children if node is not None else ():
                if child.text in ("priority strict", "no priority"):
                    sched_loc = f"L{child.line}"
                elif child.text.startswith("bandwidth percent ") and child.text[18:].isdigit():
                    weight = int(child.text[18:])
                    sched_loc = f"L{child.line}"
                elif m := _ECN.match(child.text):
                    lo, hi = int(m.group(1)) * _UNITS.get(m.group(2), 0), int(m.group(3)) * _UNITS.get(m.group(4), 0)
                    marks = True
                    ecn = (Ecn(lo, hi, f"L{child.line}", f"{self.name} tx-queue {q}"),)
            label = node.text if node is not None else f"tx-queue {q}"
            out[q] = Queue(label, strict, 0 if strict else weight, marks, ecn, loc, sched_loc)
        return out


def extract_eos(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """The device's ports (MTU, address, classification, PFC, queues), BGP AS, neighbors and maximum-paths."""
    f = DeviceFacts(host, "eos", qos=True)
    text = read_config(f, configs, EOS_CFG)
    if text is None:
        return f
    return eos_facts(plan, f, parse_tree(text.splitlines()))


def eos_facts(plan: Plan, f: DeviceFacts, roots: list[ConfigLine]) -> DeviceFacts:
    """The facts of an eos.cfg already parsed into its tree (shared with platforms/eos/check.py)."""
    host = f.device
    dscp: dict[int, int] = {}
    dscp_locs: dict[int, str] = {}
    tc_queue = {tc: tc for tc in range(8)}
    profiles: dict[str, _Profile] = {}
    interfaces: list[ConfigLine] = []
    for node in roots:
        t = node.text
        if m := _DSCP_MAP.match(t):
            for d in map(int, m.group(1).split()):
                if 0 <= d < 64:
                    dscp[d], dscp_locs[d] = int(m.group(2)), f"L{node.line}"
        elif m := _TC_MAP.match(t):
            for tc in map(int, m.group(1).split()):
                tc_queue[tc] = int(m.group(2))
        elif t.startswith("qos profile "):
            prof = profiles[t[12:]] = _Profile(t[12:], node.line)
            prof.read(node)
        elif t.startswith("interface Ethernet"):
            interfaces.append(node)
        if t.startswith("interface "):  # every interface's addresses, loopbacks and management too
            f.addresses += [(t.split()[1], c.text.split()[2], f"L{c.line}") for c in node.children
                            if c.text.startswith(("ip address ", "ipv6 address ")) and len(c.text.split()) >= 3]
        elif t.startswith("router bgp "):
            _bgp(node, f)
    classification = QosMaps("qos map dscp", {d: dscp.get(d, 0) for d in range(64)}, tc_queue,
                             {tc: tc for tc in range(8)}, {tc: tc for tc in range(8)},
                             {d: dscp_locs.get(d, "L1") for d in range(64)})
    planned = plan_ports(plan, host)
    for node in interfaces:
        name = node.text.split()[1]
        port = f.ports[name] = PortFacts(name, f"L{node.line}", mtu=DEFAULT_MTU, mtu_loc=f"L{node.line}")
        own = _Profile(name, node.line)
        own.read(node)
        prof = own
        for child in node.children:
            words = child.text.split()
            if words[0] == "mtu" and len(words) == 2 and words[1].isdigit():
                port.mtu, port.mtu_loc = int(words[1]), f"L{child.line}"
            elif words[:2] == ["ip", "address"] and len(words) >= 3 and not port.ipv4:
                port.ipv4, port.ipv4_loc = words[2], f"L{child.line}"
            elif words[0] == "service-profile" and len(words) == 2:
                port.maps_loc = f"L{child.line}"
                prof = profiles.get(words[1], own)
        port.maps_loc = port.maps_loc or f"L{node.line}"
        port.maps = classification if (prof.trust_dscp or own.trust_dscp) else None
        port.pfc_on = prof.pfc_on or own.pfc_on
        port.pfc = frozenset(prof.no_drop | own.no_drop) if port.pfc_on else frozenset()
        port.pfc_loc = f"L{prof.pfc_line}"
        port.watchdog, port.watchdog_loc = prof.watchdog or own.watchdog, f"L{prof.line}"
        port.queues = prof.queues()
        f.bandwidth_loc = f"L{prof.line}"
        pitf = planned.get(name)
        qprof = plan.qos_profiles.get(pitf.qos_profile) if pitf is not None else None
        port.lossless = {p: LosslessPg(qprof.name if qprof is not None else "", "") for p in port.pfc}
    return f


def _bgp(node: ConfigLine, f: DeviceFacts) -> None:
    words = node.text.split()
    f.bgp_asn, f.bgp_loc = (parse_asn(words[2]) if len(words) >= 3 else None), f"L{node.line}"
    for child in node.children:
        words = child.text.split()
        if words[0] == "neighbor" and len(words) >= 4 and words[2] == "remote-as":
            f.neighbors[words[1]] = Neighbor(words[1], parse_asn(words[3]), f"L{child.line}")
        elif m := _PATHS.match(child.text):
            f.maximum_paths.append((int(m.group(1)), f"L{child.line}"))


def ptp_eos(configs: Path, host: str) -> PtpFacts | None:
    """`ptp domain N`, `ptp message-type event dscp N default` and the interfaces with `ptp enable`."""
    return read_cli(configs / host / "eos.cfg", r"ptp domain (\d+)", "   ptp enable",
                    r"ptp message-type event dscp (\d+) default")
