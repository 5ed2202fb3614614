"""NX-OS facts from nxos.cfg, parsed once (check.nxos's indentation tree) for its structural rules too."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabricgen.base.findings import Finding
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

NXOS_CFG = "nxos.cfg"


def scan_nxos_bgp(lines: list[str], start: int, f: DeviceFacts) -> None:
    """`router bgp` block of NX-OS from its 1-based line `start`: local AS, neighbors, maximum-paths."""
    head = lines[start - 1].split()
    f.bgp_asn, f.bgp_loc = (parse_asn(head[2]) if len(head) >= 3 else None), f"L{start}"
    current: Neighbor | None = None
    for i in range(start, len(lines)):
        raw = lines[i]
        s = raw.strip()
        if not s:
            continue
        indent = len(raw) - len(raw.lstrip())
        if indent == 0:
            break
        parts = s.split()
        if indent <= 2:
            current = None
            if parts[0] == "neighbor" and len(parts) >= 2:
                current = f.neighbors[parts[1]] = Neighbor(parts[1], None, f"L{i + 1}")
                if len(parts) >= 4 and parts[2] == "remote-as":
                    current.remote_as, current.loc = parse_asn(parts[3]), f"L{i + 1}"
            continue
        if current is not None and parts[0] == "remote-as" and len(parts) == 2:
            current.remote_as, current.loc = parse_asn(parts[1]), f"L{i + 1}"
        elif current is None and parts[0] == "maximum-paths" and len(parts) == 2 and parts[1].isdigit():
            f.maximum_paths.append((int(parts[1]), f"L{i + 1}"))


def _nxos_dscp_maps(name: str, policy: Any, class_maps: dict[str, Any], at: Callable[[int], str]) -> QosMaps:
    """DSCP -> qos-group of a classification policy: first matching class wins, then class-default."""
    dscp: dict[int, int] = {}
    locs: dict[int, str] = {}
    default_group, default_loc = 0, at(policy.line)
    for cname, c in policy.classes.items():
        group = c.qos_group if c.qos_group is not None else 0
        loc = at(c.set_line or c.line)
        if cname == "class-default":
            default_group, default_loc = group, loc
            continue
        cm = class_maps.get(cname)
        for d in sorted(cm.dscp) if cm is not None else ():
            if d not in dscp and 0 <= d < 64:
                dscp[d], locs[d] = group, loc
    for d in range(64):
        if d not in dscp:
            dscp[d], locs[d] = default_group, default_loc
    identity = {tc: tc for tc in range(8)}
    return QosMaps(name, dscp, identity, dict(identity), dict(identity), locs)


_NQ = re.compile(r"^c-8q-nq(\d)$")
_QQ = re.compile(r"^c-out-8q-q(\d|-default)$")


def extract_nxos(plan: Plan, configs: Path, host: str) -> DeviceFacts:
    """NX-OS facts (see `analyze_nxos`)."""
    return analyze_nxos(plan, configs, host, structural=False)[1]


def analyze_nxos(plan: Plan, configs: Path, host: str, structural: bool = True,
                 skip: frozenset[str] = frozenset()) -> tuple[list[Finding], DeviceFacts]:
    """One read and one parse of nxos.cfg for both NX-OS checks: the structural findings of
    `check.nxos` (when `structural`) and this module's facts."""
    from fabricgen.platforms.nxos import check as nxos

    f = DeviceFacts(host, "nxos", qos=True)
    text = read_config(f, configs, NXOS_CFG)
    path = f.files[NXOS_CFG]
    if text is None:
        return ([Finding(host, path, "", "nxos-parse", why) for _, why in f.errors] if structural else []), f
    lines = text.splitlines()
    cfg = nxos.parse(lines)
    findings = nxos.check_parsed(cfg, host, plan, path) if structural else []
    return findings, nxos_facts(plan, host, lines, cfg, path)


def nxos_facts(plan: Plan, host: str, lines: list[str], cfg: Any, path: str = NXOS_CFG) -> DeviceFacts:
    """Facts from an NX-OS config already parsed by `check.nxos.parse(lines)` (shared with the structural check)."""
    from fabricgen.platforms.nxos.check import DEFAULT_MTU

    f = DeviceFacts(host, "nxos", files={NXOS_CFG: path}, qos=True)

    def at(n: int) -> str:
        return f"L{n}"

    # Egress queues (system queuing policy) and no-drop classes (system network-qos policy).
    queues: dict[int, Queue] = {}
    qref = cfg.system_queuing
    qpolicy = cfg.policies["queuing"].get(qref.name) if qref is not None else None
    f.bandwidth_loc = at(qpolicy.line) if qpolicy is not None else (at(cfg.system_qos_line) if
                                                                      cfg.system_qos_line else "")
    if qpolicy is not None:
        for cname, c in qpolicy.classes.items():
            m = _QQ.match(cname)
            if not m:
                continue
            qi = 0 if m.group(1) == "-default" else int(m.group(1))
            w = c.wred
            ecn: tuple[Ecn, ...] = ()
            if w is not None and w.max_bytes:
                ecn = (Ecn(w.min_bytes, w.max_bytes, at(w.line), cname),)
            strict = bool(c.priority_line)
            queues[qi] = Queue(cname, strict, 0 if strict else (c.bandwidth or 0), bool(w is not None and w.ecn),
                               ecn, at(c.line), at(c.priority_line or c.bandwidth_line or c.line))
    nref = cfg.system_network_qos
    npolicy = cfg.policies["network-qos"].get(nref.name) if nref is not None else None
    f.watchdog_global = bool(cfg.watchdog_line)
    f.no_drop_loc = at(npolicy.line) if npolicy is not None else (at(cfg.system_qos_line) if
                                                                    cfg.system_qos_line else "L1")
    if npolicy is not None:
        for cname, c in npolicy.classes.items():
            m = _NQ.match(cname)
            if m and c.pause:
                f.pause[int(m.group(1))] = [(cos, at(line)) for cos, line in c.pause]
    device_pfc = frozenset(cos for pauses in f.pause.values() for cos, _ in pauses)

    planned = plan_ports(plan, host)
    maps_cache: dict[str, QosMaps] = {}
    lossless_cache: dict[str, dict[int, LosslessPg]] = {}
    f.addresses = [(name, addr, at(line)) for name, itf in cfg.interfaces.items() for addr, line in itf.addresses]
    for name, itf in cfg.interfaces.items():
        if not name.lower().startswith("ethernet"):
            continue
        port = PortFacts(name, at(itf.line))
        port.mtu = itf.mtu if itf.mtu is not None else DEFAULT_MTU
        port.mtu_loc = at(itf.mtu_line or itf.line)
        for addr, line in itf.addresses:
            if ":" not in addr:
                port.ipv4, port.ipv4_loc = addr, at(line)
                break
        port.pfc_on = itf.pfc_on
        port.pfc = device_pfc if itf.pfc_on else frozenset()
        port.pfc_loc, port.pfc_device_wide = at(itf.line), True
        port.watchdog = itf.watchdog
        port.watchdog_loc = at(itf.line)
        port.maps_loc = at(itf.line)
        if itf.qos_input is not None:
            port.maps_loc = at(itf.qos_input.line)
            pname = itf.qos_input.name
            policy = cfg.policies["qos"].get(pname)
            if policy is not None:
                if pname not in maps_cache:
                    maps_cache[pname] = _nxos_dscp_maps(pname, policy, cfg.class_maps, at)
                port.maps = maps_cache[pname]
        port.queues = queues
        # No PG buffer profile in an NX-OS config: the no-drop classes buffer as the port's plan profile says
        # (one read-only dict per profile, shared by its ports like their queues and maps).
        pitf = planned.get(name)
        prof = plan.qos_profiles.get(pitf.qos_profile) if pitf is not None else None
        profile = prof.name if prof is not None else ""
        lossless = lossless_cache.get(profile)
        if lossless is None:
            lossless = lossless_cache[profile] = {tc: LosslessPg(profile, "") for tc in f.pause}
        port.lossless = lossless
        f.ports[name] = port
    if cfg.bgp_line:
        scan_nxos_bgp(lines, cfg.bgp_line, f)
    return f


def ptp_nxos(configs: Path, host: str) -> PtpFacts | None:
    """`ptp domain N` and the interfaces with `ptp`."""
    return read_cli(configs / host / "nxos.cfg", r"ptp domain (\d+)", "  ptp")
