"""validate's comparisons: pure functions from (plan, switch, getter output) to outcomes.

Expectations come only from the plan (and the checked build); each comparison is
testable with recorded getter data.  Every failure names device, check, expected and
actual; a link failure names both ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan, Server, Switch

CHECKS = ids("live", platform="")  # the fabric's checks (catalog/rules.py); the NICs' are validate.nic's


@dataclass(frozen=True)
class Outcome:
    device: str
    check: str
    item: str
    ok: bool
    expected: str = ""
    actual: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    coverage: list[str] = field(default_factory=list)  # what the sampled checks covered, one line each
    health: Any = None  # fabricgen.validate.health_collect.HealthRun of `validate --health`
    ptp: Any = None  # fabricgen.validate.ptp.Readings: every PTP clock as read (`--ptp`, `--health` with PTP)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def ok(self) -> bool:
        return bool(self.outcomes) and not self.failures

    def add(self, items: Iterable[Outcome]) -> None:
        self.outcomes.extend(items)


# --------------------------------------------------------------------------- pure comparisons


def check_bgp(sw: Switch, bgp: dict[str, Any]) -> list[Outcome]:
    """Every planned session Established with the planned peer and ASN; no unplanned sessions."""
    assert sw.bgp is not None
    peers = bgp.get("global", {}).get("peers", {})
    out: list[Outcome] = []
    planned = {n.ip: n for n in sw.bgp.neighbors}
    for ip, n in planned.items():
        item = f"{ip} ({n.peer_device})"
        p = peers.get(ip)
        if p is None:
            out.append(Outcome(sw.hostname, "bgp", item, False, f"session to AS{n.remote_asn} Established",
                               "no such session configured"))
        elif int(p.get("remote_as", 0)) != n.remote_asn:
            out.append(Outcome(sw.hostname, "bgp", item, False, f"AS{n.remote_asn}", f"AS{p.get('remote_as')}"))
        elif not p.get("is_up"):
            out.append(Outcome(sw.hostname, "bgp", item, False, "Established", "down"))
        else:
            out.append(Outcome(sw.hostname, "bgp", item, True, "Established", "Established"))
    for ip in sorted(set(peers) - set(planned)):
        out.append(Outcome(sw.hostname, "bgp", ip, False, "no session (not in plan)",
                           f"session to AS{peers[ip].get('remote_as')}"))
    return out


def expected_ecmp(plan: Plan, sw: Switch) -> int:
    """Next hops a route towards another leaf shows on `sw`: a leaf's equal-cost paths, up to `sw`'s
    maximum-paths (both from the plan)."""
    assert sw.bgp is not None
    leaf = next(s for s in plan.switches.values() if s.role == "leaf" and s.bgp is not None)
    assert leaf.bgp is not None
    return min(sw.bgp.maximum_paths, leaf.bgp.equal_cost_paths)


def check_ecmp(plan: Plan, sw: Switch, routes: dict[str, Any]) -> list[Outcome]:
    """`routes` is the switch's routing table in napalm's get_route_to shape ({prefix: [route per next hop]}),
    read once (`get_route_to(<loopback pool>, longer=True)`); every other leaf's loopback /32 is looked up."""
    want = expected_ecmp(plan, sw)
    out = []
    for other in plan.by_role("leaf"):
        if other.hostname == sw.hostname or other.plane != sw.plane:
            continue
        prefix = f"{other.loopback}/32"
        paths = [r for r in routes.get(prefix, []) if r.get("current_active", True)]
        hops = len({(r.get("next_hop"), r.get("outgoing_interface")) for r in paths})
        out.append(Outcome(sw.hostname, "ecmp", f"{prefix} ({other.hostname})", hops == want,
                           f"{want} next hops", f"{hops} next hops"))
    return out


def check_hash(sw: Switch, expected: dict[str, str], live: dict[str, str]) -> list[Outcome]:
    """Every ECMP hash setting the plan gives the switch (its record's ``live_hash``) against what its driver
    read back (``get_ecmp_hash``); "" is a setting left unset, a missing key one the switch did not show."""
    out = []
    for key, want in expected.items():
        got = live.get(key)
        shown = "not shown by the switch" if got is None else (got or "not set")
        out.append(Outcome(sw.hostname, "hash", key, got == want, want or "not set", shown))
    return out


def check_lldp(plan: Plan, sw: Switch, lldp: dict[str, list[dict[str, Any]]]) -> list[Outcome]:
    """The neighbor on every planned port is the planned device and port; names both ends."""
    out = []
    for itf in sw.interfaces:
        item = f"{itf.name} -> {itf.peer_device}:{itf.peer_interface}"
        seen = lldp.get(itf.name) or []
        if not seen:
            out.append(Outcome(sw.hostname, "lldp", item, False, f"{itf.peer_device} {itf.peer_interface}",
                               "no LLDP neighbor (cable missing or link down)"))
            continue
        n = seen[0]
        name = str(n.get("remote_system_name", "")).split(".")[0]
        port = str(n.get("remote_port", "")) or str(n.get("remote_port_description", ""))
        ok = name == itf.peer_device and port == itf.peer_interface
        out.append(Outcome(sw.hostname, "lldp", item, ok, f"{itf.peer_device} {itf.peer_interface}",
                           f"{name} {port}" + ("" if ok else " (miscabled)")))
    return out


def _diff_text(diff: dict[str, Any], prefix: str = "") -> list[str]:
    """Flatten a napalm compliance diff into "field: expected X, got Y" phrases."""
    out = [f"{prefix}{key} missing" for key in diff.get("missing", [])]
    for key, item in diff.get("present", {}).items():
        if item.get("complies"):
            continue
        if item.get("nested"):
            out += _diff_text(item["diff"], f"{prefix}{key} ")
        elif key == "is_up" and item.get("actual_value") is False:
            out.append(f"{prefix}down")
        else:
            out.append(f"{prefix}{key}: expected {item.get('expected_value')}, got {item.get('actual_value')}")
    return out


def check_interfaces(sw: Switch, interfaces: dict[str, Any], ips: dict[str, Any]) -> list[Outcome]:
    """Planned ports up with the planned MTU and /31, compared with napalm's own compliance logic."""
    from napalm.base.validate import compare

    want = {i.name: {"is_up": True, "mtu": i.mtu,
                     "ipv4": {i.ipv4.split("/")[0]: {"prefix_length": int(i.ipv4.split("/")[1])}}}
            for i in sw.interfaces}
    live = {name: {**data, "ipv4": ips.get(name, {}).get("ipv4", {})} for name, data in interfaces.items()}
    report = cast("dict[str, Any]", compare(want, live))  # napalm's compliance report of two dicts
    out = []
    for itf in sw.interfaces:
        expected = f"up, mtu {itf.mtu}, {itf.ipv4}"
        if itf.name in report.get("missing", []):
            out.append(Outcome(sw.hostname, "interfaces", itf.name, False, expected, "missing"))
            continue
        item = report["present"][itf.name]
        problems = [] if item["complies"] else _diff_text(item["diff"])
        out.append(Outcome(sw.hostname, "interfaces", itf.name, not problems, expected,
                           "; ".join(problems) or expected))
    return out


def diff_lines(diff: str) -> list[str]:
    """The changed lines of a unified diff (``+``/``-``, without the file headers)."""
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def check_config(sw: Switch, diff: str) -> list[Outcome]:
    """Running config equals the checked build's (FRR: BGP and policy; SONiC/NX-OS: every owned section).

    ``actual`` lists every changed line; output folds it only with an explicit count.
    """
    if not diff.strip():
        return [Outcome(sw.hostname, "config", "running vs build", True, "no drift", "no drift")]
    lines = diff_lines(diff) or diff.strip().splitlines()
    return [Outcome(sw.hostname, "config", "running vs build", False, "no drift",
                    f"{len(lines)} line(s) differ:\n" + "\n".join(lines))]


def check_persisted(sw: Switch, diff: str | None) -> list[Outcome]:
    """The saved (startup) config equals the build: a reboot must not bring back another intent."""
    if diff is None:
        return []
    if not diff.strip():
        return [Outcome(sw.hostname, "persisted", "saved vs build", True, "saved config = build", "equal")]
    lines = diff_lines(diff) or diff.strip().splitlines()
    return [Outcome(sw.hostname, "persisted", "saved vs build", False, "saved config = build",
                    f"{len(lines)} line(s) differ (a reboot would load them):\n" + "\n".join(lines))]


def check_frr_defaults(sw: Switch, profile: str, daemons: dict[str, str]) -> list[Outcome]:
    """Every running FRR daemon on the `frr defaults` profile the rendered config declares (``daemons``:
    daemon -> the profile its own running config shows, "" when it shows none)."""
    want = f"frr defaults {profile} in every daemon"
    other = {d: p for d, p in sorted(daemons.items()) if p != profile}
    if not daemons:
        return [Outcome(sw.hostname, "frr-defaults", "daemons", False, want, "no FRR daemon answered")]
    if not other:
        return [Outcome(sw.hostname, "frr-defaults", "daemons", True, want, want)]
    runs = "; ".join(f"{d} runs `frr defaults {p}`" if p else f"{d} shows no `frr defaults`" for d, p in other.items())
    return [Outcome(sw.hostname, "frr-defaults", "daemons", False, want,
                    f"{runs}: FRR reads the profile only when a daemon starts, so that daemon was started without "
                    f"this config (`show running-config` then names two profiles); fix: restart FRR so every daemon "
                    f"starts from frr.conf (`systemctl restart frr`; SONiC: `systemctl restart bgp`)")]


def check_timers(sw: Switch, detail: dict[str, Any]) -> list[Outcome]:
    """Configured and negotiated BGP keepalive/hold time per planned session (napalm neighbors detail)."""
    assert sw.bgp is not None
    by_ip: dict[str, dict[str, Any]] = {}
    for per_as in detail.get("global", {}).values():
        for d in per_as:
            by_ip[str(d.get("remote_address"))] = d
    want = f"keepalive {sw.bgp.keepalive}s, hold {sw.bgp.holdtime}s"
    out = []
    for n in sw.bgp.neighbors:
        item = f"{n.ip} ({n.peer_device})"
        d = by_ip.get(n.ip)
        if d is None:
            out.append(Outcome(sw.hostname, "timers", item, False, want, "no such session configured"))
            continue
        conf = (int(d.get("configured_keepalive", 0)), int(d.get("configured_holdtime", 0)))
        live = (int(d.get("keepalive", 0)), int(d.get("holdtime", 0)))
        problems = []
        if conf != (sw.bgp.keepalive, sw.bgp.holdtime):
            problems.append(f"configured keepalive {conf[0]}s, hold {conf[1]}s")
        if d.get("up") and live != (sw.bgp.keepalive, sw.bgp.holdtime):
            problems.append(f"negotiated keepalive {live[0]}s, hold {live[1]}s (the session keeps its old "
                            f"timers until it is reset: `clear bgp {n.ip}`)")
        out.append(Outcome(sw.hostname, "timers", item, not problems, want, "; ".join(problems) or want))
    return out


def check_bfd(sw: Switch, peers: list[dict[str, Any]] | None) -> list[Outcome]:
    """Every BFD-enabled planned session has an up BFD peer with the planned timers.

    ``peers``: ``[{"peer": ip, "status": "up", "receive_interval": ms, "transmit_interval": ms,
    "detect_multiplier": n}]``; None when the driver cannot read BFD (nothing checked).
    """
    assert sw.bgp is not None
    if peers is None or not sw.bgp.bfd:
        return []
    by_ip = {str(p.get("peer")): p for p in peers}
    b = sw.bgp
    want = f"up, tx {b.bfd_min_tx} ms, rx {b.bfd_min_rx} ms, x{b.bfd_multiplier}"
    out = []
    for n in b.neighbors:
        if not n.bfd:
            continue
        item = f"{n.ip} ({n.peer_device})"
        p = by_ip.get(n.ip)
        if p is None:
            out.append(Outcome(sw.hostname, "bfd", item, False, want, "no BFD session"))
            continue
        got = (f"{p.get('status')}, tx {p.get('transmit_interval')} ms, rx {p.get('receive_interval')} ms, "
               f"x{p.get('detect_multiplier')}")
        ok = (p.get("status") == "up" and int(p.get("transmit_interval", 0)) == b.bfd_min_tx
              and int(p.get("receive_interval", 0)) == b.bfd_min_rx
              and int(p.get("detect_multiplier", 0)) == b.bfd_multiplier)
        out.append(Outcome(sw.hostname, "bfd", item, ok, want, got))
    return out


def check_routes(sw: Switch, bgp: dict[str, Any], expected: dict[str, int]) -> list[Outcome]:
    """IPv4 prefixes received and accepted per planned session, against the plan (fabricgen.plan.expect)."""
    assert sw.bgp is not None
    peers = bgp.get("global", {}).get("peers", {})
    out = []
    for n in sw.bgp.neighbors:
        if n.afi != "ipv4":
            continue
        want = expected.get(n.ip, 0)
        af = peers.get(n.ip, {}).get("address_family", {}).get("ipv4", {})
        received, accepted = int(af.get("received_prefixes", 0) or 0), int(af.get("accepted_prefixes", 0) or 0)
        if accepted < 0:  # the driver cannot tell (napalm's nxos_ssh): received stands in
            accepted = received
        ok = received == want and accepted == want
        out.append(Outcome(sw.hostname, "routes", f"{n.ip} ({n.peer_device})", ok,
                           f"{want} IPv4 prefixes received and accepted",
                           f"{received} received, {accepted} accepted"))
    return out


LinkEnd = tuple[str, str]  # (device, port)


def planned_links(plan: Plan) -> list[tuple[LinkEnd, LinkEnd, int]]:
    """Every cable (switch to switch, server NIC to leaf) with the MTU planned on its switch end(s)."""
    mtu = {(sw.hostname, itf.name): itf.mtu for sw in plan.switches.values() for itf in sw.interfaces}
    out = []
    for link in plan.links:
        want = mtu.get((link.a_device, link.a_port)) or mtu.get((link.z_device, link.z_port)) or 0
        out.append(((link.a_device, link.a_port), (link.z_device, link.z_port), want))
    return out


def check_mtu(plan: Plan, live: dict[LinkEnd, int], devices: set[str] | None = None) -> list[Outcome]:
    """Both ends of every link at the planned MTU; a failure names both ends and says "mismatch".

    ``live`` maps (device, port) -> MTU read from the device (switches: get_interfaces;
    servers: ``ip -j link``).  Links whose ends were both not read are skipped; ``devices``
    limits the check to links touching those devices.  A link with one end read (the other outside
    ``--limit``/``--role``, or silent) is judged on that end alone and says the far end was not read.
    """
    out = []
    seen: set[tuple[LinkEnd, LinkEnd]] = set()
    for a, z, want in planned_links(plan):
        if (a, z) in seen or (devices is not None and a[0] not in devices and z[0] not in devices):
            continue
        seen.add((a, z))
        got_a, got_z = live.get(a), live.get(z)
        if got_a is None and got_z is None:
            continue
        item = f"{a[0]} {a[1]} <-> {z[0]} {z[1]}"
        if got_a is None or got_z is None:  # the far end is outside --limit/--role (or did not answer)
            (near, got), far = ((a, got_a), z) if got_z is None else ((z, got_z), a)
            why = "outside the selection" if devices is not None and far[0] not in devices else "not read"
            out.append(Outcome(near[0], "mtu", item, got == want, f"mtu {want} on {near[0]} {near[1]}",
                               f"{'' if got == want else 'off plan: '}{near[0]} {near[1]} mtu {got}; the far end "
                               f"{far[0]} {far[1]} was not read ({why})"))
            continue
        ends = f"{a[0]} {a[1]} mtu {got_a}, {z[0]} {z[1]} mtu {got_z}"
        ok = got_a == want and got_z == want
        problem = ""
        if not ok:
            problem = "MTU mismatch: " if got_a != got_z else "both ends off plan: "
        out.append(Outcome(a[0], "mtu", item, ok, f"mtu {want} on both ends", problem + ends))
    return out


Ping = tuple[str, str, str]  # (source NIC address, destination address, label)


@dataclass
class GpuSample:
    """The GPU pings of a sampled validate: per server its pings, and what they cover."""

    pings: dict[str, list[Ping]]
    coverage: list[str]


def _ip(address: str) -> str:
    return address.split("/")[0]


def gpu_sample(plan: Plan) -> GpuSample:
    """Pings that reach every part of the fabric at least once, instead of every server pair.

    Per plane: one GPU -> GPU ping for every ordered pair of leaves (two servers of the same leaf
    for a leaf with itself), one GPU -> switch-loopback ping from every leaf to every spine and
    super-spine (the leaf's links up to it, and its route back), and every NIC the source of at
    least one ping (a NIC's own link and rail).  Sources rotate over the NICs of each leaf, so the
    load spreads over the servers.  ``--full`` pings every NIC to every other server instead
    (`gpu_targets`).
    """
    by_leaf: dict[str, list[tuple[Server, Any]]] = {}
    for srv in plan.servers:
        for nic in sorted(srv.nics, key=lambda n: (n.nic, n.port)):
            by_leaf.setdefault(nic.leaf, []).append((srv, nic))
    turn: dict[str, int] = {}

    def next_nic(leaf: str, not_server: str = "") -> tuple[Server, Any] | None:
        nics = [x for x in by_leaf.get(leaf, []) if x[0].name != not_server]
        if not nics:
            return None
        i = turn.get(leaf, 0)
        turn[leaf] = i + 1
        return nics[i % len(nics)]

    pings: dict[str, list[Ping]] = {}
    used: set[tuple[str, str]] = set()  # (server, ifname) that sourced a ping

    def add(src: tuple[Server, Any], dst_ip: str, label: str) -> None:
        srv, nic = src
        pings.setdefault(srv.name, []).append((_ip(nic.ip), dst_ip, f"{srv.name}:{nic.ifname} -> {label}"))
        used.add((srv.name, nic.ifname))

    leaves = [sw for sw in plan.by_role("leaf") if sw.hostname in by_leaf]
    leaf_pairs = covered_pairs = 0
    for a in leaves:
        for b in leaves:
            if a.plane != b.plane:
                continue
            leaf_pairs += 1
            src = next_nic(a.hostname)
            dst = next_nic(b.hostname, not_server=src[0].name if src else "")
            if src is None or dst is None:
                continue
            add(src, _ip(dst[1].ip), f"{dst[0].name}:{dst[1].ifname}")
            covered_pairs += 1
    uplinks = covered_up = 0
    for a in leaves:
        for sw in plan.switches.values():
            if sw.role == "leaf" or sw.plane != a.plane or not sw.loopback or (sw.pod not in (0, a.pod)
                                                                                and sw.role == "spine"):
                continue
            uplinks += 1
            src = next_nic(a.hostname)
            if src is not None:
                add(src, sw.loopback, f"{sw.hostname} (loopback)")
                covered_up += 1
    nics = [(srv, nic) for nics in by_leaf.values() for srv, nic in nics]
    for srv, nic in nics:
        if (srv.name, nic.ifname) in used:
            continue
        other = next((x for x in leaves if x.hostname != nic.leaf and x.plane == nic.plane), None)
        dst = next_nic(other.hostname, not_server=srv.name) if other is not None else None
        if dst is not None:
            add((srv, nic), _ip(dst[1].ip), f"{dst[0].name}:{dst[1].ifname}")
    rails = {(nic.plane, nic.rail) for _, nic in nics}
    rails_used = {(nic.plane, nic.rail) for srv, nic in nics if (srv.name, nic.ifname) in used}
    total = sum(len(p) for p in pings.values())
    coverage = [
        f"GPU pings: {total} sampled (--full: {full_ping_count(plan)}); NICs {len(used)}/{len(nics)}, rails "
        f"{len(rails_used)}/{len(rails)}, leaf pairs {covered_pairs}/{leaf_pairs}, leaf -> spine/super-spine "
        f"{covered_up}/{uplinks}",
    ]
    return GpuSample(pings, coverage)


def full_ping_count(plan: Plan) -> int:
    """How many pings `gpu_targets` makes over all servers, counted without listing them."""
    rails_of: dict[int, list[set[int]]] = {}  # plane -> each server's rails in that plane
    for srv in plan.servers:
        per_plane: dict[int, set[int]] = {}
        for nic in srv.nics:
            per_plane.setdefault(nic.plane, set()).add(nic.rail)
        for plane, rails in per_plane.items():
            rails_of.setdefault(plane, []).append(rails)
    only: dict[tuple[int, int], int] = {}  # (plane, rail) -> servers whose only rail in the plane it is
    for plane, servers in rails_of.items():
        for rails in servers:
            if len(rails) == 1:
                key = (plane, next(iter(rails)))
                only[key] = only.get(key, 0) + 1
    total = 0
    for srv in plan.servers:
        for nic in srv.nics:
            servers = rails_of[nic.plane]
            others = len(servers) - only.get((nic.plane, nic.rail), 0)  # servers with a rail != nic.rail
            mine = {n.rail for n in srv.nics if n.plane == nic.plane}
            total += others - (1 if mine != {nic.rail} else 0)  # not the source server itself
    return total


def gpu_targets(plan: Plan, src: Server) -> list[tuple[str, str, str]]:
    """(source NIC ip, destination ip, label) pairs: every NIC to one NIC on every *other* rail of other servers."""
    pairs = []
    for nic in src.nics:
        for dst in plan.servers:
            if dst.name == src.name:
                continue
            for other in dst.nics:
                if other.rail != nic.rail and other.plane == nic.plane:
                    pairs.append((nic.ip.split("/")[0], other.ip.split("/")[0],
                                  f"{src.name}:{nic.ifname} -> {dst.name}:{other.ifname}"))
                    break
    return pairs


def check_gpu_output(src: Server, pairs: list[tuple[str, str, str]], output: str, mtu: int = 0) -> list[Outcome]:
    """Per pair: the full-size (``mtu``) don't-fragment ping and the small one; names which failed."""
    ok = {tuple(line.split()[1:3]) for line in output.splitlines() if line.startswith("OK ")}
    small = {tuple(line.split()[1:3]) for line in output.splitlines() if line.startswith("SMALL ")}
    want = f"reachable at {mtu} bytes, don't fragment" if mtu else "reachable"
    out = []
    for s, d, label in pairs:
        if (s, d) in ok:
            out.append(Outcome(src.name, "gpu", label, True, want, want))
        elif (s, d) in small:
            out.append(Outcome(src.name, "gpu", label, False, want,
                               f"only small packets pass: {mtu}-byte don't-fragment pings are lost (an MTU below "
                               f"{mtu} on the path)"))
        else:
            out.append(Outcome(src.name, "gpu", label, False, want, "unreachable"))
    return out


def server_mtus(src: Server, output: str) -> dict[LinkEnd, int]:
    """(server, NIC) -> MTU from the ``ip -j link show`` part of the server script's output."""
    start = output.find("### links\n")
    end = output.find("### pings", start)
    if start < 0:
        return {}
    try:
        links = json.loads(output[start + len("### links\n"):end if end >= 0 else None] or "[]")
    except ValueError:
        return {}
    nics = {nic.ifname for nic in src.nics}
    return {(src.name, str(link["ifname"])): int(link["mtu"]) for link in links
            if isinstance(link, dict) and link.get("ifname") in nics and "mtu" in link}


