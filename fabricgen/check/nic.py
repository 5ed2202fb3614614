"""GPU NIC scripts against the leaves they are cabled to (vendor reference §3.3 and §6.1).

Each `hosts/<server>.sh` states its settings in ``# fabricgen:`` header lines
(`host.parse_nic_header`).  They are compared with what the server's leaves actually do on
the cabled ports, read from the switch facts of `check.roce` (the plan's QoS policy stands
in for leaves whose config carries no QoS, platform ``frr``, or whose facts are missing):

* the DSCPs a leaf port treats as lossless RoCE: classified to a TC that has PFC on the port;
* the DSCPs it sends to a strict-priority queue (CNPs);
* the PFC priorities enabled on the port.

The script body (``mlnx_qos --trust/--pfc``, ``cma_roce_tos``, ``traffic_class``,
``CNP_DSCP_P<n>``) must repeat the header's values; a body line that differs is reported
under the same rule at its own line.

Rules: the ``script`` ids of catalog/rules.py (``nic-*``), which says what fails each; the live NIC
check (validate.nic) reports the same property under the same id.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from fabricgen.base.findings import Finding
from fabricgen.catalog.registry import host_platform
from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan, QosPolicy, Server
from fabricgen.plan.qos import ECT0, ROCE_OPTIMIZED_CNP_DSCP
from fabricgen.platforms.facts import DeviceFacts, PortFacts, ip_text
from fabricgen.platforms.host.render import HEADER, parse_nic_header

RULES = ids("script")  # catalog/rules.py documents each
ROCE, CNP, MASK, TRUST, MISSING, ADDRESS, MTU = RULES
# RoCE's active MTU is the largest IB MTU (256..4096) that fits the netdev MTU with the RoCEv2 headers;
# below this netdev MTU a ConnectX runs RoCE at 2048 bytes or less (4096 + IB/UDP/IP headers, rounded up).
ROCE_4K_MTU = 4200
_NIC_UP = re.compile(r"^nic_up (\S+) (\S+) (\S+) (\S+) (\d+)$")
MAX_NAMED = 3
ECN_BITS = 0b11
CE = 0b11

# (header field, keyword a line must contain, pattern capturing the value)
_BODY = (
    ("trust", "--trust", re.compile(r"\bmlnx_qos\b.*\s--trust[ =](\S+)")),
    ("pfc_mask", "--pfc", re.compile(r"\bmlnx_qos\b.*\s--pfc[ =](\S+)")),
    ("roce_tos", "cma_roce_tos", re.compile(r"\bcma_roce_tos\b.*\s-t\s*(\d+)")),
    ("roce_tos", "traffic_class",
     re.compile(r"^\s*(?:put|ofed_put|echo)\s+(\d+)\s+>?\s*\"?\S*/class/infiniband/\S+/tc/\d+/traffic_class")),
    ("cnp_dscp", "CNP_DSCP_P", re.compile(r"\bCNP_DSCP_P\d=(\d+)")),
    ("mtu", "MTU=", re.compile(r"^MTU=(\d+)$")),
)


@dataclass(slots=True)
class SwitchSide:
    """What one leaf port does with host traffic."""

    roce_dscp: frozenset[int]  # classified to a TC with PFC on the port
    cnp_dscp: frozenset[int]  # classified to a strict-priority queue
    pfc: frozenset[int]  # PFC priorities on the port
    dscp_to_tc: dict[int, int]
    source: str  # "config" or "plan"

    def tc_of(self, dscp: int) -> int:
        return self.dscp_to_tc.get(dscp, 0)


def _side(dscp_to_tc: dict[int, int], pfc: frozenset[int], strict_tcs: set[int], source: str) -> SwitchSide:
    return SwitchSide(
        roce_dscp=frozenset(d for d, tc in dscp_to_tc.items() if tc in pfc),
        cnp_dscp=frozenset(d for d, tc in dscp_to_tc.items() if tc in strict_tcs),
        pfc=pfc,
        dscp_to_tc=dscp_to_tc,
        source=source,
    )


def plan_side(q: QosPolicy) -> SwitchSide:
    return _side(q.dscp_to_tc, frozenset(q.lossless_tcs), {q.cnp_tc}, "plan")


def port_side(port: PortFacts, cache: dict[tuple[int, frozenset[int], frozenset[int]], SwitchSide] | None = None
              ) -> SwitchSide | None:
    """The port's view, from its classification map, PFC priorities and strict-priority queues."""
    maps = port.maps
    if maps is None:
        return None
    strict_queues = frozenset(qn for qn, qu in port.queues.items() if qu.strict)
    key = (id(maps), port.pfc, strict_queues)
    if cache is not None and key in cache:
        return cache[key]
    strict = {tc for tc in range(8) if maps.tc_to_queue.get(tc, tc) in strict_queues}
    side = _side(maps.dscp_to_tc, port.pfc, strict, "config")
    if cache is not None:
        cache[key] = side
    return side


def _fmt(values: set[int] | frozenset[int]) -> str:
    items = sorted(values)
    return "{" + ", ".join(str(v) for v in items) + "}" if items else "none"


def _mask(text: str) -> frozenset[int] | None:
    parts = text.split(",")
    if len(parts) != 8 or any(p not in ("0", "1") for p in parts):
        return None
    return frozenset(i for i, p in enumerate(parts) if p == "1")


def _ints(text: str) -> list[int] | None:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        return None


class _Script:
    """One server's script: header fields with their lines, and body values."""

    def __init__(self, text: str) -> None:
        self.header = parse_nic_header(text)
        self.lines: dict[str, int] = {}
        self.body: list[tuple[str, str, int]] = []  # (field, value, line)
        self.nic_up: dict[str, tuple[str, str, str, int, int]] = {}  # ifname -> (address, network, gw, table, line)
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("nic_up ") and (m := _NIC_UP.match(line)):
                self.nic_up[m.group(1)] = (m.group(2), m.group(3), m.group(4), int(m.group(5)), n)
                continue
            if line.startswith(HEADER):
                for token in line[len(HEADER):].split():
                    key, sep, _ = token.partition("=")
                    if sep:
                        self.lines[key] = n
                continue
            for key, keyword, pattern in _BODY:
                if keyword in line and (m := pattern.search(line)):
                    self.body.append((key, m.group(1), n))

    def loc(self, key: str) -> str:
        return f"L{self.lines[key]}" if key in self.lines else "L1"


class _Server:
    def __init__(self, plan: Plan, srv: Server, path: Path, script: _Script,
                 sides: list[tuple[str, SwitchSide]], facts: dict[str, DeviceFacts]) -> None:
        self.plan, self.srv, self.path, self.s = plan, srv, path, script
        self.sides = sides  # ("leaf01 Ethernet0", side)
        self.facts = facts
        self.groups: dict[tuple[str, str, str], list[str]] = {}

    def add(self, rule: str, loc: str, message: str, where: str = "") -> None:
        names = self.groups.setdefault((loc, rule, message), [])
        if where and where not in names:
            names.append(where)

    def findings(self) -> list[Finding]:
        out = []
        for (loc, rule, message), names in self.groups.items():
            if names:
                shown = ", ".join(names[:MAX_NAMED])
                if len(names) > MAX_NAMED:
                    shown += f" and {len(names) - MAX_NAMED} more"
                message = f"{message} [{shown}]"
            out.append(Finding(self.srv.name, str(self.path), loc, rule, message))
        return out

    # ----------------------------------------------------------------- header against the leaves

    def run(self) -> None:
        h = self.s.header
        trust = h.get("trust", "")
        if trust != "dscp":
            self.add(TRUST, self.s.loc("trust"), f"NIC trust is {trust or 'not set'!r}, the leaves classify on "
                     "DSCP: GPU links are routed and untagged, so a PCP-trusting NIC sends RoCE at priority 0")
        self.roce()
        self.cnp()
        self.pfc()
        self.body()
        self.addresses()
        self.mtu()

    def roce(self) -> None:
        h = self.s.header
        dscps = _ints(h.get("roce_dscp", ""))
        loc = self.s.loc("roce_dscp")
        if not dscps:
            self.add(ROCE, loc, f"roce_dscp={h.get('roce_dscp', '')!r} is not a DSCP list")
            dscps = []
        for where, side in self.sides:
            for d in dscps:
                if d not in side.roce_dscp:
                    self.add(ROCE, loc, f"NIC sends RoCE with DSCP {d}, which the leaf ({side.source}) classifies "
                             f"as TC {side.tc_of(d)}, not lossless; RoCE DSCPs there: {_fmt(side.roce_dscp)}", where)
        tos_text = h.get("roce_tos", "")
        tloc = self.s.loc("roce_tos")
        if not tos_text.isdigit() or int(tos_text) > 255:
            self.add(ROCE, tloc, f"roce_tos={tos_text!r} is not a ToS byte")
        else:
            self.tos(int(tos_text), dscps, tloc)
        prio = h.get("roce_prio", "")
        if prio.isdigit() and dscps:
            for where, side in self.sides:
                tc = side.tc_of(dscps[0])
                if tc in side.pfc and int(prio) != tc:
                    self.add(ROCE, self.s.loc("roce_prio"), f"NIC puts RoCE (DSCP {dscps[0]}) on priority {prio}, "
                             f"the leaf ({side.source}) on TC {tc}", where)

    def tos(self, tos: int, dscps: list[int], loc: str) -> None:
        dscp, bits = tos >> 2, tos & ECN_BITS
        if dscps and dscp not in dscps:
            self.add(ROCE, loc, f"ToS {tos} carries DSCP {dscp}, not one of the script's RoCE DSCPs {dscps}")
        else:
            for where, side in self.sides:
                if dscp not in side.roce_dscp:
                    self.add(ROCE, loc, f"ToS {tos} carries DSCP {dscp}, which the leaf ({side.source}) does not "
                             f"treat as lossless RoCE ({_fmt(side.roce_dscp)})", where)
        ecn = self.s.header.get("ecn", "1")
        if bits == CE:
            self.add(ROCE, loc, f"ToS {tos} sets both ECN bits (CE): every RoCE packet would look congested")
        elif ecn == "1" and bits == 0:
            self.add(ROCE, loc, f"ToS {tos} has no ECT bit while DCQCN is on (ecn=1): switches cannot mark "
                     f"congestion; use {dscp << 2 | ECT0} (DSCP {dscp} + ECT(0))")

    def cnp(self) -> None:
        h = self.s.header
        text = h.get("cnp_dscp", "")
        loc = self.s.loc("cnp_dscp")
        if not text.isdigit():
            self.add(CNP, loc, f"cnp_dscp={text!r} is not a DSCP")
            return
        cnp = int(text)
        for where, side in self.sides:
            if cnp in side.cnp_dscp:
                continue
            want = _fmt(side.cnp_dscp)
            if cnp == ROCE_OPTIMIZED_CNP_DSCP:
                msg = (f"NIC sends CNPs with DSCP {cnp}, as NVIDIA network-operator's 'roceOptimized' profile sets "
                       f"(CNP_DSCP_P1=4), but the leaf ({side.source}) expects CNPs on DSCP {want}: CNPs would "
                       f"queue as TC {side.tc_of(cnp)} behind the congestion they report; "
                       f"override with CNP_DSCP_P1={min(side.cnp_dscp) if side.cnp_dscp else 48}")
            else:
                msg = (f"NIC sends CNPs with DSCP {cnp}, which the leaf ({side.source}) classifies as TC "
                       f"{side.tc_of(cnp)}, not its strict-priority CNP class (CNP DSCPs there: {want})")
            self.add(CNP, loc, msg, where)

    def pfc(self) -> None:
        h = self.s.header
        text = h.get("pfc_mask", "")
        loc = self.s.loc("pfc_mask")
        mask = _mask(text)
        if mask is None:
            self.add(MASK, loc, f"pfc_mask={text!r} is not 8 comma-separated 0/1 values")
            return
        for where, side in self.sides:
            if mask != side.pfc:
                self.add(MASK, loc, f"NIC PFC on priorities {_fmt(mask)} ({text}), the leaf ({side.source}) runs "
                         f"PFC on {_fmt(side.pfc)}: RoCE would not be lossless end to end", where)
        prio, cnp_prio = h.get("roce_prio", ""), h.get("cnp_prio", "")
        if prio.isdigit() and int(prio) not in mask:
            self.add(MASK, self.s.loc("roce_prio"), f"RoCE priority {prio} is not PFC-enabled in the NIC mask {text}")
        if cnp_prio.isdigit() and int(cnp_prio) in mask:
            self.add(MASK, self.s.loc("cnp_prio"), f"CNP priority {cnp_prio} is PFC-enabled in the NIC mask {text}: "
                     "CNPs must never be paused")

    # ----------------------------------------------------------------- body against the header

    def body(self) -> None:
        h = self.s.header
        rule = {"trust": TRUST, "pfc_mask": MASK, "roce_tos": ROCE, "cnp_dscp": CNP, "mtu": MTU}
        for key, value, line in self.s.body:
            want = h.get(key)
            if want is not None and value != want:
                self.add(rule[key], f"L{line}", f"the script sets {key.replace('_', ' ')} {value} here, its header "
                         f"says {want}")


    # ----------------------------------------------------------------- addressing and MTU

    def _leaf_port(self, leaf: str, port: str) -> PortFacts | None:
        f = self.facts.get(leaf)
        return f.ports.get(port) if f is not None else None

    def addresses(self) -> None:
        tables: dict[int, str] = {}
        for nic in self.srv.nics:
            where = f"{nic.leaf} {nic.leaf_port}"
            got = self.s.nic_up.get(nic.ifname)
            if got is None:
                self.add(ADDRESS, "L1", f"no `nic_up {nic.ifname} ...` line: {nic.ifname} gets no address, MTU or "
                         f"route (plan: {nic.ip} via {nic.gateway})", where)
                continue
            address, network, gateway, table, line = got
            loc = f"L{line}"
            if (address, gateway) != (nic.ip, nic.gateway):
                self.add(ADDRESS, loc, f"{nic.ifname} is set to {address} via {gateway}, the plan has {nic.ip} via "
                         f"{nic.gateway}", where)
            if _network(address) != network:
                self.add(ADDRESS, loc, f"{nic.ifname}: {network} is not the network of {address}", where)
            port = self._leaf_port(nic.leaf, nic.leaf_port)
            if port is not None and port.ipv4 and port.ipv4.split("/")[0] != gateway:
                self.add(ADDRESS, loc, f"{nic.ifname}'s gateway {gateway} is not the address of the leaf port it is "
                         f"cabled to ({port.ipv4})", where)
            if table in tables:
                self.add(ADDRESS, loc, f"{nic.ifname} and {tables[table]} share routing table {table}: one of them "
                         "would send its RoCE traffic out of the other rail", where)
            tables.setdefault(table, nic.ifname)

    def mtu(self) -> None:
        text = self.s.header.get("mtu", "")
        if not text.isdigit():
            return  # scripts from before the bring-up carry no MTU
        mtu, loc = int(text), self.s.loc("mtu")
        if mtu < ROCE_4K_MTU:
            self.add(MTU, loc, f"NIC MTU {mtu} is below {ROCE_4K_MTU}: RoCE's active MTU drops below 4096 bytes")
        for nic in self.srv.nics:
            port = self._leaf_port(nic.leaf, nic.leaf_port)
            leaf_mtu = port.mtu if port is not None and port.mtu else self.plan.settings.mtu
            if mtu > leaf_mtu:
                self.add(MTU, loc, f"NIC MTU {mtu} is above the leaf port's {leaf_mtu}: full-size frames are dropped",
                         f"{nic.leaf} {nic.leaf_port}")


_IPV4_CIDR = re.compile(r"((?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|"
                        r"[1-9]?[0-9])){3})/(3[0-2]|[12]?[0-9])")


def _network(text: str) -> str | None:
    """str(ipaddress.ip_interface(text).network), None if not an interface address; the common
    a.b.c.d/len computed directly (65,536 NICs at 32K GPUs)."""
    m = _IPV4_CIDR.fullmatch(text)
    if m is not None:
        a, b, c, d = (int(x) for x in m.group(1).split("."))
        length = int(m.group(2))
        net = (a << 24 | b << 16 | c << 8 | d) & (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
        return f"{ip_text(net)}/{length}"
    try:
        return str(ipaddress.ip_interface(text).network)
    except ValueError:
        return None


_SideCache = dict[tuple[int, frozenset[int], frozenset[int]], SwitchSide]


def _sides(srv: Server, facts: dict[str, DeviceFacts], fallback: SwitchSide, cache: _SideCache
           ) -> list[tuple[str, SwitchSide]]:
    out: list[tuple[str, SwitchSide]] = []
    for nic in sorted(srv.nics, key=lambda n: (n.nic, n.port)):
        f = facts.get(nic.leaf)
        side = None
        if f is not None and f.qos:
            port = f.ports.get(nic.leaf_port)
            side = port_side(port, cache) if port is not None else None
        out.append((f"{nic.leaf} {nic.leaf_port}", side or fallback))
    return out


def check_nic_scripts(plan: Plan, hosts_dir: Path, facts: dict[str, DeviceFacts],
                      servers: list[Server] | None = None) -> list[Finding]:
    """Every planned server's NIC script against its leaves (see the module docstring); `servers`: only
    these, a slice of `plan.hosts()` (the findings of the slices, joined in order, are those of the whole)."""
    if plan.qos is None:
        return []
    hosts_dir = Path(hosts_dir)
    findings: list[Finding] = []
    fallback = plan_side(plan.qos)
    cache: _SideCache = {}
    for srv in plan.hosts() if servers is None else servers:
        path = hosts_dir / host_platform().files[0].format(device=srv.name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            findings.append(Finding(srv.name, str(path), "", MISSING,
                                    f"planned server {srv.name} has no NIC script {path.name}"))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding(srv.name, str(path), "", MISSING, f"cannot read the NIC script: {exc}"))
            continue
        script = _Script(text)
        if not script.header:
            findings.append(Finding(srv.name, str(path), "", MISSING,
                                    "the NIC script has no `# fabricgen:` header: its settings cannot be checked"))
            continue
        check = _Server(plan, srv, path, script, _sides(srv, facts, fallback, cache), facts)
        check.run()
        findings += check.findings()
    return findings
