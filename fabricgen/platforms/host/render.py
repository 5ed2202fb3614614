"""GPU servers: the script that brings a server's back-end NICs up (templates/nic.sh.j2).

One bash script per server, run at every boot (nothing it sets survives a reboot or a driver
reload).  Per NIC, from the plan: the /31 address and MTU; one routing table with a source rule,
the connected /31 and routes to the GPU pool and the switch loopbacks through the NIC's own leaf,
so traffic sourced from a NIC leaves on its rail; ARP and reverse-path settings a multi-NIC host
needs.  Then the RoCE QoS of the fabric (DSCP trust, PFC, ToS, ECN, the CNP DSCP and 802.1p priority)
through mlnx-tools and sysfs, and the NCCL settings that match it, written to /etc/nccl.conf
(``NCCL_IB_TC``, ``NCCL_IB_QPS_PER_CONNECTION``, ``NCCL_IB_GID_INDEX``; every other line of the file is
kept; ``$NCCL_CONF_FILE`` names another file, as it does for NCCL).

Nothing is assumed about the host: the RDMA device of each netdev is read from
/sys/class/infiniband/*/device/net/ (the mlx5 PCI order is not the netdev order), every tool
and sysfs path is checked before use with a message naming the driver or package it needs
(tc/*/traffic_class and ecn/* exist only with NVIDIA MLNX_OFED / DOCA-OFED), and a failed step
is reported without aborting the rest (vendor reference §3.3).
"""

from __future__ import annotations

import itertools
import operator
import re
import socket
from dataclasses import dataclass
from typing import NamedTuple

import jinja2

from fabricgen.base.templating import environment
from fabricgen.plan.model import Plan, QosPolicy, Server
from fabricgen.plan.ptp import clock_key
from fabricgen.plan.qos import pfc_mask
from fabricgen.platforms.linuxptp import ptp4l_conf

TEMPLATE = "host/nic.sh.j2"
NIC_TABLE_BASE = 100  # routing table (and rule preference) of the server's n-th back-end NIC: 100 + n
HEADER = "# fabricgen: "  # the script's settings, `key=value` each
NIC_HEADER = "# fabricgen-nic: "  # one line per NIC


def roce_gid(ip: str) -> str:
    """The RoCEv2 GID of an IPv4 address as mlx5 shows it in ports/1/gids/N (IPv4-mapped, 8 full groups)."""
    a, b, c, d = socket.inet_aton(ip)
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"


def _network(address: str) -> str:
    """"198.18.32.1/31" -> "198.18.32.0/31" (ipaddress costs ~10 us a call, 32K NICs a render)."""
    ip, _, plen = address.partition("/")
    bits = int(plen)
    value = int.from_bytes(socket.inet_aton(ip), "big") & ((0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF)
    return f"{socket.inet_ntoa(value.to_bytes(4, 'big'))}/{bits}"


class NicLine(NamedTuple):
    """One NIC as the template lays it out: attributes, not dict keys, as Jinja tries an attribute first (a
    dict's costs it an exception per lookup, ~100 lookups a server)."""

    ifname: str
    nic: int
    port: int
    fw_port: int
    rail: int
    plane: int
    leaf: str
    leaf_port: str
    address: str
    ip: str
    gateway: str
    network: str
    table: int
    gid: str


def nic_table(position: int) -> int:
    return NIC_TABLE_BASE + position


def render(server: Server, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    """The host platform's renderer (registry record "host"): {"<server>.sh": the bring-up script}."""
    return {f"{server.name}.sh": nic_script(server, plan, env)}


# The strings of a server's script that are its own (name, and per NIC these NicLine fields); everything else
# its template reads (the QoS policy, the MTU, each NIC's index, port, rail, plane and table) is its *shape*.
_OWN_FIELDS = ("ifname", "leaf", "leaf_port", "address", "ip", "gateway", "network", "gid")
_own = operator.attrgetter(*_OWN_FIELDS)
_MARK = "\x00"  # a sentinel in the shape's render: NUL <index> NUL (no template or plan string holds NUL)
_MARKS = re.compile(_MARK + r"(\d+)" + _MARK)


def nic_script(server: Server, plan: Plan, env: jinja2.Environment | None = None) -> str:
    """The bring-up script of one GPU server (see the module docstring).

    The template runs once per script *shape* (`_Shape`): servers alike but for their own strings share one
    render with those strings as `str.format` fields, which the other servers (16,384 at 128K GPUs) fill in.
    """
    env = env or environment()
    context = _context(server, plan)
    if context["ptp"] is not None:  # each NIC's ptp4l.conf is its own text: no shape
        return _direct(env, context)
    nics: list[NicLine] = context["nics"]  # type: ignore[assignment]
    shape = _shape(env, context)
    if shape.fmt is None:
        return _direct(env, context)
    text = shape.fmt.format(server.name, *(v for n in nics for v in _own(n)))
    if not shape.proven:  # a shape's first server: filled in, it must be byte for byte the template's own render
        direct = _direct(env, context)
        if text != direct:  # the template tested or transformed one of the server's own strings
            shape.fmt = None
            return direct
        shape.proven = True
    return text


def _context(server: Server, plan: Plan) -> dict[str, object]:
    """What the template reads, computed here (Python computes; the template only lays out)."""
    policy: QosPolicy | None = plan.qos
    assert policy is not None, "plan has no QoS policy; build it with fabricgen.plan.build.build_plan"
    addressing = plan.settings.pools
    # mlx5's default DSCP trust map is DSCP >> 3; only remap DSCPs whose class differs.
    wanted = {d: policy.roce_tc for d in policy.roce_dscp} | {policy.nic_cnp_dscp: policy.cnp_tc}
    remap = sorted((d, prio) for d, prio in wanted.items() if d >> 3 != prio)
    nics = []
    for pos, n in enumerate(sorted(server.nics, key=lambda n: (n.nic, n.port))):
        ip = n.ip.split("/")[0]
        nics.append(NicLine(n.ifname, n.nic, n.port, n.port + 1, n.rail, n.plane, n.leaf, n.leaf_port, n.ip, ip,
                            n.gateway, _network(n.ip), nic_table(pos), roce_gid(ip)))
    return {
        "server": server.name,
        "nics": nics,
        "mtu": _mtu(server, plan, policy.mtu),
        "pools": [str(addressing.gpu), str(addressing.loopbacks)],
        "trust": policy.nic_trust,
        "pfc_mask": pfc_mask(policy.lossless_tcs),
        "roce_dscp": ",".join(str(d) for d in policy.roce_dscp),
        "roce_tos": policy.nic_roce_tos,
        "roce_prio": policy.roce_tc,
        "cnp_dscp": policy.nic_cnp_dscp,
        "cnp_prio": policy.cnp_tc,
        "ecn": 1 if policy.nic_ecn else 0,
        "remap": remap,
        "qps": policy.nic_qps_per_connection,
        "ptp": ptp_clients(server, plan),
    }


def _direct(env: jinja2.Environment, context: dict[str, object]) -> str:
    return env.get_template(TEMPLATE).render(**context)


@dataclass(slots=True)
class _Shape:
    """The NIC script of every server with one shape key, as a `str.format` string of the server's own strings."""

    fmt: str | None  # None: the template runs for each server of this shape
    proven: bool = False  # compared with a direct render once


_SHAPES: dict[tuple[jinja2.Environment, tuple[object, ...]], _Shape] = {}


def _shape(env: jinja2.Environment, context: dict[str, object]) -> _Shape:
    """The server's shape, rendered on first use with a sentinel in place of each of its own strings."""
    nics: list[NicLine] = context["nics"]  # type: ignore[assignment]
    fixed = {k: v for k, v in context.items() if k not in ("server", "nics", "ptp")}
    key = (env, (*((k, tuple(v) if isinstance(v, list) else v) for k, v in fixed.items()),
                 *((n.nic, n.port, n.fw_port, n.rail, n.plane, n.table) for n in nics)))
    shape = _SHAPES.get(key)
    if shape is not None:
        return shape
    marks = (f"{_MARK}{i}{_MARK}" for i in itertools.count())
    server = next(marks)
    masked = [NicLine(**(n._asdict() | {f: next(marks) for f in _OWN_FIELDS})) for n in nics]
    parts = _MARKS.split(_direct(env, {**fixed, "server": server, "nics": masked, "ptp": None}))
    text = parts[::2]  # between the sentinels: the shape's own text
    fmt = "".join(p.replace("{", "{{").replace("}", "}}") if i % 2 == 0 else "{" + p + "}"
                  for i, p in enumerate(parts))
    if len(_SHAPES) >= 256:  # one process may render many plans (tests, the lab): keep the cache small
        _SHAPES.clear()
    shape = _SHAPES[key] = _Shape(None if any(_MARK in t for t in text) else fmt)
    return shape


def ptp_clients(server: Server, plan: Plan) -> dict[str, object] | None:
    """The server's NIC clocks (intent `ptp.servers`): each NIC's ptp4l.conf, for the PTP section of the script."""
    ptp = plan.ptp
    if ptp is None:
        return None
    clients = []
    gm = ptp.clocks.get(server.name)  # a grandmaster (or standby) host: one clock on its port
    if gm is not None:
        ifname = server.nics[0].ifname
        clients.append({"ifname": ifname, "conf": ptp4l_conf(gm, ptp, plan, ports=[ifname], instance=ifname,
                                                             header=f"{server.name} {ifname}: PTP {gm.kind}")})
    for nic in sorted(server.nics, key=lambda n: (n.nic, n.port)):
        clock = ptp.clocks.get(clock_key(server.name, nic.ifname))
        if clock is not None:
            clients.append({"ifname": nic.ifname, "conf": ptp4l_conf(clock, ptp, plan, instance=nic.ifname,
                                                                     header=f"{server.name} {nic.ifname}: PTP client")})
    return {"domain": ptp.domain, "profile": ptp.profile, "clients": clients} if clients else None


def _mtu(server: Server, plan: Plan, fabric: int) -> int:
    """A tenant's NICs run the tenant MTU (fabricgen.plan.tenants: lowered under a VXLAN overlay)."""
    t = plan.tenancy
    if t is not None and any((server.name, n.ifname) in t.nic_tenant for n in server.nics):
        return t.tenant_mtu
    return fabric


def _fields(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in lines:
        for token in line.split():
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = value
    return fields


def _after(script: str, prefix: str) -> list[str]:
    """The rest of every line that starts with `prefix` (lines end at a newline).  A search for the prefix: a
    multi-line pattern anchored at line starts tries every position of the script, 20x slower."""
    out: list[str] = []
    at = script.find(prefix)
    while at != -1:
        end = script.find("\n", at)
        if at == 0 or script[at - 1] == "\n":
            out.append(script[at + len(prefix):end if end != -1 else len(script)])
        at = script.find(prefix, at + 1)
    return out


def parse_nic_header(script: str) -> dict[str, str]:
    """key=value pairs of every ``# fabricgen:`` line of a NIC script, for consistency checkers."""
    return _fields(_after(script, HEADER))


def parse_nic_lines(script: str) -> list[dict[str, str]]:
    """One dict per ``# fabricgen-nic:`` line: the script's per-NIC plan (ifname, ip, gateway, table, ...)."""
    return [_fields([line]) for line in _after(script, NIC_HEADER)]
