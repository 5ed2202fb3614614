"""Structural checks of a rendered NX-OS running-config (RoCEv2 QoS chain, references, BGP).

The file is parsed into its indentation tree (check.config_tree); only single lines are
matched with small regexes to pull values out.  Every finding carries the
1-based line number ("L12") of the line at fault, or of the block that lacks a line.

Rules: the ``nxos-*`` ids of catalog/rules.py, which says what fails each.

These are NX-OS's own structure and numbers only.  The RoCE chain itself (DSCP -> qos-group,
no-drop classes and their CoS, egress queues, CNP strict priority, ECN on, ECN order,
bandwidth shares, PFC and the watchdog on every port, MTU at both ends) is checked once for
every platform by `check.roce` over the facts `check.extract.nxos` reads from the same parse:
one bad line gives one finding.  Expectations come from the plan (`plan.qos`, the port profiles,
the registry's watchdog limits), never from the renderer.  Without a plan, the classes are read
off the config: the qos-groups set by the class-maps ``ROCEv2`` and ``CNP``.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.base.config_tree import ConfigLine, parse_tree
from fabricgen.base.findings import Finding
from fabricgen.catalog.registry import capabilities, watchdog_timers
from fabricgen.catalog.rules import ids
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.nxos import render as render_nxos

RULES = ids("config", "nxos-")  # catalog/rules.py documents each
UNUSED_DESCRIPTION = "unused"  # descriptions of unplanned ports start with this word
DEFAULT_MTU = 1500  # NX-OS interface default when no `mtu` line is present
_NQ_CLASS = re.compile(r"^c-8q-nq(\d|-default)$")
_QUEUE_CLASS = re.compile(r"^c-out-8q-q(\d|-default)$")
_IN_QUEUE_CLASS = re.compile(r"^c-in-q(\d|-default)$")  # ingress queuing (pause buffers)
_RE_PAUSE_BUFFER = re.compile(r"^pause buffer-size (\d+) pause-threshold (\d+) resume-threshold (\d+)$")
_UNITS = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
KBYTE = _UNITS["kbytes"]
_DSCP_NAMES = {"default": 0, "ef": 46, **{f"cs{i}": 8 * i for i in range(8)},
               **{f"af{x}{y}": 8 * x + 2 * y for x in range(1, 5) for y in range(1, 4)}}

# Single-line patterns (the hierarchy comes from check.config_tree).
_RE_CLASS_MAP = re.compile(r"^class-map type qos (?:match-any |match-all )?(\S+)$")
_RE_POLICY = re.compile(r"^policy-map type (qos|network-qos|queuing) (\S+)$")
_RE_PREFIX_LIST = re.compile(r"^(ip|ipv6) prefix-list (\S+) ")
_RE_ROUTE_MAP = re.compile(r"^route-map (\S+)(?: (?:permit|deny))?(?: \d+)?$")
_RE_MATCH_PL = re.compile(r"^match (ip|ipv6) address prefix-list (.+)$")
_RE_INTERFACE = re.compile(r"^interface (\S+)$")
_RE_ROUTER_BGP = re.compile(r"^router bgp (\S+)$")
_RE_NEIGHBOR = re.compile(r"^neighbor (\S+)")
_RE_RM_REF = re.compile(r"\broute-map (\S+)(?: (?:in|out))?$")
_RE_COMMUNITY_LIST = re.compile(r"^ip community-list standard (\S+) ")
# vrf-lite leaking under `vrf context` (platforms/nxos/tenants.py)
_RE_VRF_LEAK_MAP = re.compile(r"^(?:import|export) vrf default(?: \d+)? map (\S+)")
_RE_BREAKOUT = re.compile(r"^interface breakout module 1 port (\S+) map (\d+)g-(\d+)x$")
_RE_SUBPORT = re.compile(r"^Ethernet1/(\d+)/(\d+)$")
_RE_WATCHDOG_TIMER = re.compile(
    r"^priority-flow-control (watch-dog interval|watch-dog shutdown-multiplier|auto-restore multiplier) (\d+)$")
_RE_WRED = re.compile(
    r"^random-detect minimum-threshold (\d+) (bytes|kbytes|mbytes) maximum-threshold (\d+) (bytes|kbytes|mbytes)"
    r"(?: drop-probability (\d+))?(?: weight (\d+))?(?P<ecn> ecn)?$"
)


def _address(text: str) -> tuple[int, int, int] | None:
    """(IP version, the address as an int, its bits) of an address, None if it is not one; IPv4 without
    ipaddress objects (a spine checks hundreds)."""
    if text.count(".") == 3:
        try:
            return 4, int.from_bytes(socket.inet_aton(text), "big"), 32
        except OSError:
            return None
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    return ip.version, int(ip), ip.max_prefixlen


def _loc(line: int) -> str:
    return f"L{line}" if line else ""


def parse_numbers(text: str, names: dict[str, int] | None = None) -> set[int]:
    """"10,12-14 46" or "af31 ef" -> {10, 12, 13, 14, 46} / {26, 46}."""
    out: set[int] = set()
    for token in re.split(r"[,\s]+", text.strip()):
        if not token:
            continue
        if names and token.lower() in names:
            out.add(names[token.lower()])
        elif re.fullmatch(r"\d+-\d+", token):
            lo, hi = (int(x) for x in token.split("-"))
            out.update(range(lo, hi + 1))
        elif token.isdigit():
            out.add(int(token))
    return out


# --------------------------------------------------------------------------- parsed model


@dataclass
class _Ref:
    name: str
    line: int


@dataclass
class _ClassMap:
    line: int
    dscp: set[int] = field(default_factory=set)


@dataclass
class _QosClass:
    line: int
    qos_group: int | None = None
    set_line: int = 0


@dataclass
class _NqClass:
    line: int
    mtu: int | None = None
    mtu_line: int = 0
    pause: list[tuple[int, int]] = field(default_factory=list)  # (cos, line)


@dataclass
class _Wred:
    min_bytes: int
    max_bytes: int
    probability: int | None
    ecn: bool
    line: int


@dataclass
class _QueueClass:
    line: int
    priority_line: int = 0
    bandwidth: int | None = None
    bandwidth_line: int = 0
    wred: _Wred | None = None
    pause: tuple[int, int, int, int] | None = None  # (buffer-size, pause-threshold, resume-threshold, line)


@dataclass
class _Policy:
    line: int
    classes: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Interface:
    name: str
    line: int
    switchport: bool | None = None  # None: not stated
    mtu: int | None = None
    mtu_line: int = 0
    pfc_on: bool = False
    watchdog: bool = False
    qos_input: _Ref | None = None
    queuing_input: _Ref | None = None
    addresses: list[tuple[str, int]] = field(default_factory=list)
    shutdown: bool = False
    description: str = ""

    @property
    def routed(self) -> bool:
        return self.name.lower().startswith("ethernet") and (self.switchport is False or bool(self.addresses))


@dataclass
class _Config:
    watchdog_line: int = 0
    watchdog_timers: dict[str, tuple[int, int]] = field(default_factory=dict)  # keyword -> (value, line)
    class_maps: dict[str, _ClassMap] = field(default_factory=dict)
    policies: dict[str, dict[str, _Policy]] = field(
        default_factory=lambda: {"qos": {}, "network-qos": {}, "queuing": {}})
    system_qos_line: int = 0
    system_queuing: _Ref | None = None
    system_network_qos: _Ref | None = None
    system_qos_input: _Ref | None = None
    prefix_lists: set[tuple[str, str]] = field(default_factory=set)
    route_maps: set[str] = field(default_factory=set)
    prefix_list_refs: list[tuple[str, str, int]] = field(default_factory=list)  # (afi, name, line)
    route_map_refs: list[_Ref] = field(default_factory=list)
    community_lists: set[str] = field(default_factory=set)
    community_list_refs: list[_Ref] = field(default_factory=list)
    interfaces: dict[str, _Interface] = field(default_factory=dict)
    bgp_line: int = 0
    neighbors: list[_Ref] = field(default_factory=list)
    breakouts: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # cage -> (ports, Gb/s, line)


def _parse_policy(kind: str, obj: ConfigLine) -> _Policy:
    policy = _Policy(obj.line)
    for cls in obj.children:
        parts = cls.text.split()
        if not parts or parts[0] != "class":
            continue
        name = parts[-1]
        if kind == "qos":
            qc = _QosClass(cls.line)
            for child in cls.children:
                m = re.match(r"^set qos-group (\d+)$", child.text)
                if m:
                    qc.qos_group, qc.set_line = int(m.group(1)), child.line
            policy.classes[name] = qc
        elif kind == "network-qos":
            nq = _NqClass(cls.line)
            for child in cls.children:
                t = child.text
                if m := re.match(r"^mtu (\d+)$", t):
                    nq.mtu, nq.mtu_line = int(m.group(1)), child.line
                elif m := re.match(r"^pause pfc-cos (.+)$", t):
                    nq.pause.extend((cos, child.line) for cos in sorted(parse_numbers(m.group(1))))
            policy.classes[name] = nq
        else:
            qq = _QueueClass(cls.line)
            for child in cls.children:
                t = child.text
                if t.startswith("priority"):
                    qq.priority_line = child.line
                elif m := re.match(r"^bandwidth remaining percent (\d+)$", t):
                    qq.bandwidth, qq.bandwidth_line = int(m.group(1)), child.line
                elif t.startswith("random-detect"):
                    qq.wred = _parse_wred(t, child.line)
                elif m := _RE_PAUSE_BUFFER.match(t):
                    qq.pause = (int(m.group(1)), int(m.group(2)), int(m.group(3)), child.line)
            policy.classes[name] = qq
    return policy


def _parse_wred(text: str, line: int) -> _Wred:
    m = _RE_WRED.match(text)
    if not m:  # unknown shape: keep ECN presence only, thresholds unusable
        return _Wred(0, 0, None, text.endswith(" ecn"), line)
    return _Wred(int(m.group(1)) * _UNITS[m.group(2)], int(m.group(3)) * _UNITS[m.group(4)],
                 int(m.group(5)) if m.group(5) else None, bool(m.group("ecn")), line)


# An interface's lines, matched for every port of every file (compiled once: `re`'s own cache lookup was a tenth
# of the NX-OS analysis at 128K GPUs).
_RE_ITF_MTU = re.compile(r"^mtu (\d+)$")
_RE_ITF_QOS = re.compile(r"^service-policy type qos input (\S+)$")
_RE_ITF_QUEUING = re.compile(r"^service-policy type queuing input (\S+)$")
_RE_ITF_ADDRESS = re.compile(r"^(?:ip|ipv6) address (\S+)(?: secondary)?$")


def _parse_interface(name: str, obj: ConfigLine) -> _Interface:
    itf = _Interface(name, obj.line)
    for child in obj.children:
        t = child.text
        first = t[0]  # the lines below start with distinct letters: a pattern runs only where it can match
        if first == "d":
            if t.startswith("description "):
                itf.description = t[len("description "):]
        elif first == "n":
            if t == "no switchport":
                itf.switchport = False
        elif first == "s":
            if t == "switchport":
                itf.switchport = True
            elif t == "shutdown":
                itf.shutdown = True
            elif m := _RE_ITF_QOS.match(t):
                itf.qos_input = _Ref(m.group(1), child.line)
            elif m := _RE_ITF_QUEUING.match(t):
                itf.queuing_input = _Ref(m.group(1), child.line)
        elif first == "p":
            if t == "priority-flow-control mode on":
                itf.pfc_on = True
            elif t == "priority-flow-control watch-dog-interval on":
                itf.watchdog = True
        elif first == "m":
            if m := _RE_ITF_MTU.match(t):
                itf.mtu, itf.mtu_line = int(m.group(1)), child.line
        elif first == "i" and (m := _RE_ITF_ADDRESS.match(t)):
            itf.addresses.append((m.group(1), child.line))
    return itf


def parse(lines: list[str]) -> _Config:
    """The parts of an NX-OS config the checks need, each with the line it is on (see check.config_tree)."""
    cfg = _Config()
    for obj in parse_tree(lines):
        if obj.indent != 0:
            continue  # no parent, yet indented: not a top-level command
        text = obj.text
        if m := _RE_INTERFACE.match(text):  # most of a config; no other pattern matches `interface <name>`
            cfg.interfaces[m.group(1)] = _parse_interface(m.group(1), obj)
        elif text == "priority-flow-control watch-dog-interval on":
            cfg.watchdog_line = obj.line
        elif m := _RE_WATCHDOG_TIMER.match(text):
            cfg.watchdog_timers[m.group(1)] = (int(m.group(2)), obj.line)
        elif m := _RE_CLASS_MAP.match(text):
            cm = cfg.class_maps[m.group(1)] = _ClassMap(obj.line)
            for child in obj.children:
                mm = re.match(r"^match dscp (.+)$", child.text)
                if mm:
                    cm.dscp |= parse_numbers(mm.group(1), _DSCP_NAMES)
        elif m := _RE_POLICY.match(text):
            cfg.policies[m.group(1)][m.group(2)] = _parse_policy(m.group(1), obj)
        elif text == "system qos":
            cfg.system_qos_line = obj.line
            for child in obj.children:
                t = child.text
                if mm := re.match(r"^service-policy type queuing output (\S+)$", t):
                    cfg.system_queuing = _Ref(mm.group(1), child.line)
                elif mm := re.match(r"^service-policy type network-qos (\S+)$", t):
                    cfg.system_network_qos = _Ref(mm.group(1), child.line)
                elif mm := re.match(r"^service-policy type qos input (\S+)$", t):
                    cfg.system_qos_input = _Ref(mm.group(1), child.line)
        elif m := _RE_PREFIX_LIST.match(text):
            cfg.prefix_lists.add((m.group(1), m.group(2)))
        elif m := _RE_ROUTE_MAP.match(text):
            cfg.route_maps.add(m.group(1))
            for child in obj.children:
                mm = _RE_MATCH_PL.match(child.text)
                if mm:
                    cfg.prefix_list_refs.extend((mm.group(1), n, child.line) for n in mm.group(2).split())
                elif child.text.startswith("match community "):
                    cfg.community_list_refs.extend(_Ref(n, child.line) for n in child.text.split()[2:])
        elif m := _RE_COMMUNITY_LIST.match(text):
            cfg.community_lists.add(m.group(1))
        elif text.startswith("vrf context "):
            for child, _ in obj.descendants():
                if mm := _RE_VRF_LEAK_MAP.match(child.text):
                    cfg.route_map_refs.append(_Ref(mm.group(1), child.line))
        elif _RE_ROUTER_BGP.match(text):
            cfg.bgp_line = obj.line
            for child, depth in obj.descendants():
                if depth == 1 and (mm := _RE_NEIGHBOR.match(child.text)):
                    cfg.neighbors.append(_Ref(mm.group(1), child.line))
                elif mm := _RE_RM_REF.search(child.text):
                    cfg.route_map_refs.append(_Ref(mm.group(1), child.line))
        elif m := _RE_BREAKOUT.match(text):
            for cage in parse_numbers(m.group(1)):
                cfg.breakouts[cage] = (int(m.group(3)), int(m.group(2)), obj.line)
    return cfg


# --------------------------------------------------------------------------- checks


@dataclass
class _Expect:
    """What the QoS chain must look like: from the plan, or read off the config."""

    roce: int | None
    cnp: int | None
    lossless: set[int]
    mtu: int | None = None
    watchdog: bool = True


class _Checker:
    def __init__(self, device: str, file: str, cfg: _Config, plan: Plan | None) -> None:
        self.device, self.file, self.cfg, self.plan = device, file, cfg, plan
        self.findings: list[Finding] = []
        self.switch: Switch | None = plan.switches.get(device) if plan is not None else None

    def add(self, rule: str, line: int, message: str) -> None:
        self.findings.append(Finding(self.device, self.file, _loc(line), rule, message))

    # ----------------------------------------------------------------- policies in use
    @property
    def queuing_name(self) -> str:
        return self.cfg.system_queuing.name if self.cfg.system_queuing is not None else ""

    def _attached(self, kind: str, ref: _Ref | None) -> _Policy | None:
        if ref is None:
            return None
        return self.cfg.policies[kind].get(ref.name)

    def classification(self) -> tuple[str, _Policy] | None:
        """The classification policy the RoCE ports use (most used one), if defined."""
        names: dict[str, int] = {}
        for itf in self.cfg.interfaces.values():
            if itf.qos_input is not None:
                names[itf.qos_input.name] = names.get(itf.qos_input.name, 0) + 1
        if self.cfg.system_qos_input is not None:
            names[self.cfg.system_qos_input.name] = names.get(self.cfg.system_qos_input.name, 0) + 1
        for name, _ in sorted(names.items(), key=lambda kv: (-kv[1], kv[0])):
            if name in self.cfg.policies["qos"]:
                return name, self.cfg.policies["qos"][name]
        return None

    def expect(self, qos_policy: _Policy | None) -> _Expect:
        nq = self._attached("network-qos", self.cfg.system_network_qos)
        paused: set[int] = set()
        for cname, c in (nq.classes.items() if nq is not None else ()):
            m = _NQ_CLASS.match(cname)
            if c.pause and m and m.group(1).isdigit():
                paused.add(int(m.group(1)))
        if self.plan is not None and self.plan.qos is not None:
            q = self.plan.qos
            return _Expect(q.roce_tc, render_nxos.cnp_group(q), set(q.lossless_tcs), q.mtu,
                           q.watchdog_enabled)
        classes = qos_policy.classes if qos_policy else {}
        roce = classes.get(render_nxos.CLASS_ROCE)
        cnp = classes.get(render_nxos.CLASS_CNP)
        roce_g = roce.qos_group if roce else None
        cnp_g = cnp.qos_group if cnp else None
        lossless = (paused - {cnp_g}) | ({roce_g} if roce_g else set())
        return _Expect(roce_g, cnp_g, lossless)

    # ----------------------------------------------------------------- rules
    def references(self) -> None:
        cfg = self.cfg
        for name, policy in cfg.policies["qos"].items():
            for cname, qc in policy.classes.items():
                if cname != "class-default" and cname not in cfg.class_maps:
                    self.add("nxos-undefined-ref", qc.line,
                             f"policy-map type qos {name} uses class {cname}, but no class-map type qos {cname}")
        inputs = {itf.queuing_input.name for itf in cfg.interfaces.values() if itf.queuing_input is not None}
        for kind, pattern, label in (("network-qos", _NQ_CLASS, "c-8q-nqN"), ("queuing", _QUEUE_CLASS, "c-out-8q-qN")):
            for name, policy in cfg.policies[kind].items():
                if kind == "queuing" and name in inputs:
                    pattern, label = _IN_QUEUE_CLASS, "ingress c-in-qN"
                for cname, c in policy.classes.items():
                    if not pattern.match(cname):
                        self.add("nxos-undefined-ref", c.line,
                                 f"policy-map type {kind} {name} uses class {cname}, which is not an 8-queue "
                                 f"system class ({label})")
        for itf in cfg.interfaces.values():
            for kind, ref in (("qos", itf.qos_input), ("queuing", itf.queuing_input)):
                if ref is not None and ref.name not in cfg.policies[kind]:
                    self.add("nxos-undefined-ref", ref.line,
                             f"{itf.name} attaches policy-map type {kind} {ref.name}, which is not defined")
        for kind, ref in (("queuing", cfg.system_queuing), ("network-qos", cfg.system_network_qos),
                          ("qos", cfg.system_qos_input)):
            if ref is not None and ref.name not in cfg.policies[kind]:
                self.add("nxos-undefined-ref", ref.line,
                         f"system qos attaches policy-map type {kind} {ref.name}, which is not defined")
        for ref in cfg.route_map_refs:
            if ref.name not in cfg.route_maps:
                self.add("nxos-undefined-ref", ref.line, f"route-map {ref.name} is used but not defined")
        for afi, name, line in cfg.prefix_list_refs:
            if (afi, name) not in cfg.prefix_lists:
                self.add("nxos-undefined-ref", line, f"{afi} prefix-list {name} is used but not defined")
        for ref in cfg.community_list_refs:
            if ref.name not in cfg.community_lists:
                self.add("nxos-undefined-ref", ref.line, f"ip community-list {ref.name} is used but not defined")

    def system_qos(self) -> None:
        where = self.cfg.system_qos_line
        if self.cfg.system_queuing is None:
            self.add("nxos-system-qos", where, "system qos attaches no `service-policy type queuing output`: "
                     "no ECN and no CNP priority on any port")
        if self.cfg.system_network_qos is None:
            self.add("nxos-system-qos", where, "system qos attaches no `service-policy type network-qos`: "
                     "no class is no-drop (PFC) and the QoS MTU is the default")

    def class_mtus(self, exp: _Expect) -> None:
        """Every network-qos class at the fabric MTU; the RoCE and CNP classes present (else MTU 1500)."""
        nq = self._attached("network-qos", self.cfg.system_network_qos)
        if nq is None or exp.mtu is None:
            return
        for cname, c in nq.classes.items():
            if c.mtu is not None and c.mtu != exp.mtu:
                self.add("nxos-mtu", c.mtu_line, f"network-qos class {cname} has MTU {c.mtu}, the plan has {exp.mtu}")
        for what, group in (("RoCE", exp.roce), ("CNP", exp.cnp)):
            if not group:
                continue
            cls = nq.classes.get(render_nxos.nq_class(group))
            if cls is None or cls.mtu is None:
                self.add("nxos-mtu", cls.line if cls is not None else nq.line,
                         f"the {what} qos-group {group} has no `mtu {exp.mtu}` in `class type network-qos "
                         f"{render_nxos.nq_class(group)}`: it keeps NX-OS's default MTU 1500")

    def ecn(self, exp: _Expect) -> None:
        """The switch-wide WRED thresholds are the tightest ECN profile of the switch's ports (NX-OS attaches
        one queuing policy under `system qos`), in whole kbytes rounded down: marking no later than planned."""
        queuing = self._attached("queuing", self.cfg.system_queuing)
        if queuing is None or self.switch is None or self.plan is None:
            return
        profiles = [self.plan.qos_profiles[i.qos_profile] for i in self.switch.interfaces
                    if i.qos_profile in self.plan.qos_profiles]
        if not profiles:
            return
        tight = min(profiles, key=lambda p: (p.ecn_max, p.ecn_min, p.name))
        want_min = max(1, tight.ecn_min // KBYTE)
        want = (want_min, max(want_min + 1, tight.ecn_max // KBYTE))
        for tc in sorted(exp.lossless - ({exp.cnp} if exp.cnp is not None else set())):
            qname = render_nxos.queue_class(tc)
            q = queuing.classes.get(qname)
            w = q.wred if q is not None else None
            if w is None or not w.ecn or w.min_bytes >= w.max_bytes:
                continue  # no ECN, or its order: check.roce's findings
            have = (w.min_bytes // KBYTE, w.max_bytes // KBYTE)
            if have != want:
                self.add("nxos-ecn", w.line, f"queue {qname}: ECN thresholds {have[0]}/{have[1]} KB differ from "
                         f"the plan's {want[0]}/{want[1]} KB ({tight.name}, the tightest profile of the switch)")

    def bgp_neighbors(self) -> None:
        # (version, prefix length) -> {network as an int: the interface's own address}; ints, not ipaddress
        # objects: a spine has hundreds of /31s and as many neighbors
        nets: dict[tuple[int, int], dict[int, int]] = {}
        for itf in self.cfg.interfaces.values():
            for addr, _ in itf.addresses:
                ip_text, _, plen_text = addr.partition("/")
                parsed = _address(ip_text)
                if parsed is None or not plen_text.isdigit() or int(plen_text) > parsed[2]:
                    continue
                version, own, bits = parsed
                plen = int(plen_text)
                nets.setdefault((version, plen), {})[own >> (bits - plen)] = own
        for ref in self.cfg.neighbors:
            parsed = _address(ref.name)
            if parsed is None:
                continue  # prefix peers (neighbor 198.18.0.0/24) are not interface peers
            version, value, bits = parsed
            found = False
            for (v, plen), table in nets.items():
                if v != version:
                    continue
                mine = table.get(value >> (bits - plen))
                if mine is not None and mine != value:
                    found = True
                    break
            if not found:
                self.add("nxos-bgp-neighbor-subnet", ref.line,
                         f"BGP neighbor {ref.name} is on no subnet of an interface address")

    def watchdog(self, exp: _Expect) -> None:
        """The watchdog timers are the intent's, in NX-OS multiples (the registry's limits); that it runs at
        all (the global line, each port) is check.roce's roce-pfc-both-ends."""
        if self.plan is None or not exp.watchdog:
            return
        assert self.plan.qos is not None
        q = self.plan.qos
        limits = capabilities("nxos").watchdog_timers
        if not q.watchdog_enabled or limits is None:
            return
        want = watchdog_timers(q.watchdog_poll_ms, q.watchdog_detection_ms, q.watchdog_restoration_ms, limits)
        for keyword, value in (("watch-dog interval", want.interval_ms),
                               ("watch-dog shutdown-multiplier", want.detection_multiplier),
                               ("auto-restore multiplier", want.restore_multiplier)):
            have = self.cfg.watchdog_timers.get(keyword)
            if have is None:
                self.add("nxos-watchdog", self.cfg.watchdog_line, f"`priority-flow-control {keyword} {value}` is "
                         "missing: NX-OS runs its default instead of the intent's PFC watchdog timers")
            elif have[0] != value:
                self.add("nxos-watchdog", have[1], f"`priority-flow-control {keyword} {have[0]}` differs from the "
                         f"intent's {value} (qos.pfc_watchdog)")

    def pause_buffers(self, exp: _Expect) -> None:
        """Static ingress pause buffers: present where the plan's cable needs them, and self-consistent.  The
        pause threshold is an ingress fill level of the no-drop class and is never compared with the egress
        queue's ECN thresholds (reference §5.4)."""
        cfg = self.cfg
        need: dict[str, int] = {}  # port -> headroom the plan needs above the pause threshold (0: none)
        if self.switch is not None and self.plan is not None:
            facts = capabilities("nxos")
            for port in self.switch.interfaces:
                prof = self.plan.qos_profiles.get(port.qos_profile)
                if prof is not None and facts.needs_pause_buffer(prof.cable_m):
                    need[port.name] = prof.size - prof.xon
        checked: set[tuple[str, str]] = set()  # (policy, class) whose thresholds were checked
        for name, itf in cfg.interfaces.items():
            ref = itf.queuing_input
            policy = cfg.policies["queuing"].get(ref.name) if ref is not None else None
            if name in need and policy is None:
                self.add("nxos-pause-buffer", itf.line, f"RoCE port {name} has a cable over 100 m but no ingress "
                         "queuing policy with `pause buffer-size ... pause-threshold ... resume-threshold ...`: "
                         "Cisco makes it mandatory there, in-flight data would overflow the default headroom")
                continue
            if policy is None or ref is None:
                continue
            for tc in sorted(exp.lossless - ({exp.cnp} if exp.cnp is not None else set())):
                cname = render_nxos.in_queue_class(tc)
                c = policy.classes.get(cname)
                if c is None or c.pause is None:
                    if name in need:
                        self.add("nxos-pause-buffer", c.line if c is not None else policy.line,
                                 f"policy-map type queuing {ref.name} ({name}) sets no pause buffer on {cname}")
                    continue
                size, pause, resume, line = c.pause
                if name in need and size - pause < need[name]:
                    self.add("nxos-pause-buffer", line, f"{ref.name} {cname} ({name}): {size - pause} B of headroom "
                             f"above the pause threshold, the plan needs {need[name]} B for the cable")
                if (ref.name, cname) in checked:
                    continue
                checked.add((ref.name, cname))
                problems = []
                if resume >= pause:
                    problems.append(f"resume-threshold {resume} is not below pause-threshold {pause}")
                if problems:
                    self.add("nxos-pause-buffer", line, f"{ref.name} {cname}: " + "; ".join(problems))

    def breakouts(self) -> None:
        """Broken-out ports exist only on broken-out cages; with a plan, the cages are split as planned."""
        cfg = self.cfg
        for name, itf in cfg.interfaces.items():
            m = _RE_SUBPORT.match(name)
            if m is None:
                continue
            cage, sub = int(m.group(1)), int(m.group(2))
            have = cfg.breakouts.get(cage)
            if have is None:
                self.add("nxos-breakout", itf.line, f"{name} exists only when port {cage} is broken out, and no "
                         f"`interface breakout module 1 port ... map ...` covers port {cage}")
            elif sub > have[0]:
                self.add("nxos-breakout", itf.line, f"{name}: port {cage} is broken out into {have[0]} ports "
                         f"(line {have[2]}), there is no sub-port {sub}")
        if self.switch is None or self.plan is None:
            return
        planned = {b.cage: (b.ports, b.speed) for b in front_panel(self.plan, self.switch).breakouts}
        for cage, want in sorted(planned.items()):
            have = cfg.breakouts.get(cage)
            if have is None:
                self.add("nxos-breakout", 0, f"port {cage} is not broken out; the plan splits it into {want[0]} x "
                         f"{want[1]}G (`interface breakout module 1 port {cage} map {want[1]}g-{want[0]}x`)")
            elif have[:2] != want:
                self.add("nxos-breakout", have[2], f"port {cage} is broken out into {have[0]} x {have[1]}G; the plan "
                         f"splits it into {want[0]} x {want[1]}G")
        for cage, have in sorted(cfg.breakouts.items()):
            if cage not in planned:
                self.add("nxos-breakout", have[2], f"port {cage} is broken out into {have[0]} x {have[1]}G; the plan "
                         "keeps it whole")

    def unused_ports(self) -> None:
        """Ports described unused are shut; with a plan, every port the plan leaves free is configured shut."""
        cfg = self.cfg
        for name, itf in cfg.interfaces.items():
            if itf.description.split(":")[0].split()[:1] == [UNUSED_DESCRIPTION] and not itf.shutdown:
                self.add("nxos-unused-port", itf.line, f"{name} is described unused but not shut")
        if self.switch is None or self.plan is None:
            return
        for name in front_panel(self.plan, self.switch).unused:
            port = cfg.interfaces.get(name)
            if port is None:
                self.add("nxos-unused-port", 0, f"front-panel port {name} is not in the plan and not configured: "
                         "it keeps the switch's default state instead of `shutdown`")
            elif not port.shutdown:
                self.add("nxos-unused-port", port.line, f"{name} is not in the plan but not shut")

    def run(self) -> list[Finding]:
        qos_policy = self.classification()
        exp = self.expect(qos_policy[1] if qos_policy else None)
        self.references()
        self.system_qos()
        self.class_mtus(exp)
        self.ecn(exp)
        self.bgp_neighbors()
        self.watchdog(exp)
        self.pause_buffers(exp)
        self.breakouts()
        self.unused_ports()
        return self.findings


def check_parsed(cfg: _Config, device: str, plan: Plan | None = None, file: str = "") -> list[Finding]:
    """The rules over a config already parsed by `parse`."""
    return _Checker(device, file, cfg, plan).run()


def check_nxos_text(text: str, device: str, plan: Plan | None = None, file: str = "") -> list[Finding]:
    """Check NX-OS config text (see the module docstring for the rules)."""
    return check_parsed(parse(text.splitlines()), device, plan, file)


def check_nxos_config(path: Path, device: str, plan: Plan | None) -> list[Finding]:
    """Check one rendered NX-OS configuration file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Finding(device, str(path), "", "nxos-parse", f"cannot read: {exc}")]
    return check_nxos_text(text, device, plan, str(path))
