"""Per-device RoCE facts: what one device's rendered files configure, in platform-neutral form.

Each platform's extractor (its registry record's `extractor`, in fabricgen.check.extract) fills a
`DeviceFacts` from that platform's files; the fabric-wide rules (check.roce) only ever read these
records.  Locations are JSON pointers into a JSON config ("/BUFFER_PROFILE/<name>/size") or "L<n>"
lines of a text config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.catalog.registry import platform
from fabricgen.plan.model import Interface, Plan


@dataclass(slots=True)
class Ecn:
    """One WRED/ECN threshold pair of an egress queue (SONiC: one per enabled colour)."""

    min_bytes: int
    max_bytes: int
    loc: str  # where the maximum threshold is written
    source: str  # "WRED_PROFILE AI_ECN_65536_131072_5 green" / "c-out-8q-q3"


@dataclass(slots=True)
class Queue:
    """Scheduling and marking of one egress queue."""

    scheduler: str  # SONiC SCHEDULER name, NX-OS queuing class name
    strict: bool
    weight: int  # DWRR weight / bandwidth remaining percent; 0 when strict or unset
    marks: bool  # WRED is in ECN-marking mode (not dropping)
    ecn: tuple[Ecn, ...]
    loc: str  # the queue's own entry
    sched_loc: str  # where strict priority / the weight would be set


@dataclass(slots=True)
class QosMaps:
    """The classification chain attached to a port."""

    name: str
    dscp_to_tc: dict[int, int]
    tc_to_queue: dict[int, int]
    tc_to_pg: dict[int, int]
    pfc_to_queue: dict[int, int]
    dscp_locs: dict[int, str]  # where each DSCP's class is decided
    pfc_to_queue_loc: str = ""
    tc_to_pg_loc: str = ""  # SONiC: "/TC_TO_PRIORITY_GROUP_MAP/<name>" (+ "/<tc>" per entry)


@dataclass(slots=True)
class LosslessPg:
    """How a lossless priority group is buffered: a headroom profile, or SONiC's dynamic headroom."""

    profile: str  # BUFFER_PROFILE name; "NULL": the dynamic buffer model computes the headroom (SONiC)
    loc: str  # "/BUFFER_PROFILE/<name>"; "" when it comes from the plan (NX-OS, EOS)
    static_th: int | None = None  # a static pause trigger (bytes); None when dynamic_th / not in the config


@dataclass(slots=True)
class PortFacts:
    name: str
    loc: str  # the port's own entry ("/PORT/Ethernet0", "L120")
    mtu: int | None = None  # None: the platform's config does not carry it (frr)
    mtu_loc: str = ""
    ipv4: str = ""  # "198.18.16.1/31"
    ipv4_loc: str = ""
    maps: QosMaps | None = None  # None: no classification attached
    maps_loc: str = ""
    pfc: frozenset[int] = frozenset()  # priorities PFC runs on at this port
    pfc_on: bool = False  # PFC enabled at all (NX-OS `priority-flow-control mode on`)
    pfc_loc: str = ""
    pfc_device_wide: bool = False  # NX-OS: the priorities come from the network-qos policy
    watchdog: bool = False
    watchdog_loc: str = ""
    lossless: dict[int, LosslessPg] = field(default_factory=dict)  # lossless PG -> its buffering
    pg_locs: dict[int, str] = field(default_factory=dict)  # every PG's BUFFER_PG entry (SONiC)
    queues: dict[int, Queue] = field(default_factory=dict)


@dataclass(slots=True)
class Neighbor:
    ip: str
    remote_as: int | None  # None: not numeric ("external") or not set
    loc: str


@dataclass(slots=True)
class DeviceFacts:
    """What one device's rendered files actually configure, in platform-neutral form."""

    device: str
    platform: str
    files: dict[str, str] = field(default_factory=dict)  # file name -> path
    missing: list[str] = field(default_factory=list)  # planned files that do not exist
    errors: list[tuple[str, str]] = field(default_factory=list)  # (file name, why unreadable)
    qos: bool = False  # the platform's config carries QoS
    ports: dict[str, PortFacts] = field(default_factory=dict)
    pause: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # NX-OS no-drop class -> [(cos, loc)]
    no_drop_loc: str = ""  # NX-OS network-qos policy
    watchdog_global: bool = True  # NX-OS: the global `priority-flow-control watch-dog-interval on`
    bandwidth_loc: str = ""  # where the egress queue set and its shares are defined (NX-OS queuing policy)
    bgp_asn: int | None = None
    bgp_loc: str = ""
    neighbors: dict[str, Neighbor] = field(default_factory=dict)
    maximum_paths: list[tuple[int, str]] = field(default_factory=list)
    # every address the config assigns, on any interface (loopbacks and management too), IPv4 and IPv6:
    # (interface, "address/len", loc); check.addresses finds the ones configured twice
    addresses: list[tuple[str, str, str]] = field(default_factory=list)

    def file_for(self, loc: str) -> str:
        """The file a location points into (the platform record says which: JSON pointers, lines)."""
        name = platform(self.platform).location_file(loc)
        return self.files.get(name, name)


# --------------------------------------------------------------------------- small parsers


def escape_token(part: str) -> str:
    """One RFC 6901 reference token: '~' -> '~0', '/' -> '~1'."""
    return part.replace("~", "~0").replace("/", "~1") if "/" in part or "~" in part else part


def pointer(*parts: str) -> str:
    """RFC 6901 JSON pointer: ("INTERFACE", "Ethernet0|198.18.32.0/31") -> "/INTERFACE/Ethernet0|198.18.32.0~131"."""
    return "/" + "/".join(map(escape_token, parts))


def as_int(value: Any, default: int = 0) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default


def parse_asn(text: str) -> int | None:
    """'4200000000' or asdot '64086.59904' -> int; anything else (external, internal) -> None."""
    if text.isdigit():
        return int(text)
    hi, dot, lo = text.partition(".")
    if dot and hi.isdigit() and lo.isdigit():
        return int(hi) * 65536 + int(lo)
    return None


def key_range(text: str) -> list[int]:
    """SONiC queue/PG key suffix: '3' -> [3], '0-2' -> [0, 1, 2]; junk -> []."""
    lo, dash, hi = text.partition("-")
    if not dash:
        return [int(text)] if text.isdigit() else []
    if lo.isdigit() and hi.isdigit():
        return list(range(int(lo), int(hi) + 1))
    return []


def int_map(raw: Any) -> dict[int, int]:
    out: dict[int, int] = {}
    if isinstance(raw, dict):
        for k, v in raw.items():
            if str(k).isdigit() and str(v).isdigit():
                out[int(k)] = int(v)
    return out


def ipv4_int(prefix: str) -> tuple[int, int] | None:
    """'198.18.16.1/31' -> (address as int, prefix length); None when not IPv4 address/len."""
    addr, _, plen = prefix.partition("/")
    parts = addr.split(".")
    if len(parts) != 4 or not plen.isdigit():
        return None
    try:
        a, b, c, d = map(int, parts)
    except ValueError:
        return None
    return (a << 24 | b << 16 | c << 8 | d), int(plen)


def ip_text(value: int) -> str:
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


# --------------------------------------------------------------------------- FRR / NX-OS BGP scan


def scan_frr(lines: list[str], f: DeviceFacts, with_interfaces: bool) -> None:
    """Interfaces (ip address) and `router bgp` of an FRR config, by indentation."""
    block = ""
    ports = f.ports
    groups: dict[str, int | None] = {}
    members: dict[str, str] = {}
    for i, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s[0] == "!":
            continue
        if raw[0] not in " \t":
            block = ""
            parts = s.split()
            if parts[0] == "interface" and len(parts) >= 2 and with_interfaces:
                name = parts[1]
                if len(parts) == 2:
                    block = "interface"
                    port = ports.setdefault(name, PortFacts(name, f"L{i}")) if name != "lo" else None
            elif parts[0] == "router" and len(parts) == 3 and parts[1] == "bgp" and f.bgp_asn is None:
                block = "bgp"
                f.bgp_asn, f.bgp_loc = parse_asn(parts[2]), f"L{i}"
            continue
        if block == "interface":
            if s.startswith(("ip address ", "ipv6 address ")) and len(addr := s.split()) >= 3:
                f.addresses.append((name, addr[2], f"L{i}"))
                if port is not None and addr[0] == "ip" and not port.ipv4:
                    port.ipv4, port.ipv4_loc = addr[2], f"L{i}"
        elif block == "bgp":
            parts = s.split()
            if parts[0] == "neighbor" and len(parts) >= 4:
                ip, what = parts[1], parts[2]
                if what == "remote-as":
                    asn = parse_asn(parts[3])
                    if "." in ip or ":" in ip:
                        f.neighbors[ip] = Neighbor(ip, asn, f"L{i}")
                    else:
                        groups[ip] = asn
                elif what == "peer-group" and ("." in ip or ":" in ip):
                    members[ip] = parts[3]
                    f.neighbors.setdefault(ip, Neighbor(ip, None, f"L{i}"))
            elif parts[0] == "maximum-paths" and len(parts) == 2 and parts[1].isdigit():
                f.maximum_paths.append((int(parts[1]), f"L{i}"))
    for ip, group in members.items():
        n = f.neighbors[ip]
        if n.remote_as is None and groups.get(group) is not None:
            n.remote_as = groups[group]


# --------------------------------------------------------------------------- extractors


def read_config(f: DeviceFacts, configs: Path, name: str) -> str | None:
    path = configs / f.device / name
    f.files[name] = str(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        f.missing.append(name)
    except (OSError, UnicodeDecodeError) as exc:
        f.errors.append((name, f"cannot read: {exc}"))
    return None


def read_config_bytes(f: DeviceFacts, configs: Path, name: str) -> bytes | None:
    """`read_config` without the decoding, for a parser that reads UTF-8 itself; `config_text` decodes it
    exactly as `read_config` would have."""
    path = configs / f.device / name
    f.files[name] = str(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        f.missing.append(name)
    except OSError as exc:
        f.errors.append((name, f"cannot read: {exc}"))
    return None


def config_text(f: DeviceFacts, name: str, raw: bytes) -> str | None:
    """The text `read_config` returns for these bytes (UTF-8, universal newlines), or None with its error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        f.errors.append((name, f"cannot read: {exc}"))
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def plan_ports(plan: Plan, host: str) -> dict[str, Interface]:
    sw = plan.switches.get(host)
    return {itf.name: itf for itf in sw.interfaces} if sw is not None else {}
