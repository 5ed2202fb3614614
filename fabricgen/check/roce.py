"""Fabric-wide RoCEv2 invariants over the rendered configs of every platform.

Two steps, so a caller can spread the expensive one over processes:

1. ``extract_facts(plan, configs, hostnames)`` reads each device's rendered files into a
   platform-neutral `DeviceFacts` record: per port MTU, IPv4, PFC priorities, watchdog, the
   attached classification maps, egress queues (strict / DWRR weight / ECN thresholds) and
   the buffer profile of each lossless PG; per device the BGP local AS, neighbors and maximum-paths.
   One extractor per platform (`check.extract.<platform>`, named by its registry record).
2. ``check_facts(plan, facts)`` runs the invariants on each device and across every cable.

Expected values come from the plan (`plan.qos`, the per-port QoS profiles, ASNs, addresses),
so "identical across devices" means every device is compared with the one fabric policy, and
a finding always names the device that deviates.  Where both ends of a link disagree the
plan decides which end is wrong; the other end is not blamed.

Rules: the ``roce-*`` ids of catalog/rules.py, which says what fails each.

Locations are JSON pointers into config_db.json ("/WRED_PROFILE/<name>/green_max_threshold") or "L<n>"
lines of nxos.cfg / frr.conf.  Findings at a location shared by many ports (a WRED profile,
a network-qos policy) are reported once and list the ports.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable
from pathlib import Path

from fabricgen.base import pool
from fabricgen.base.findings import Finding
from fabricgen.catalog import rules as catalog_rules
from fabricgen.catalog.registry import platform, vendor_ecn_range
from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Interface, Plan, QosPolicy, Switch
from fabricgen.plan.qos import cnp_class
from fabricgen.platforms.facts import (
    DeviceFacts,
    Ecn,
    LosslessPg,
    PortFacts,
    QosMaps,
    Queue,
    ip_text,
    ipv4_int,
    plan_ports,
    pointer,
)

RULES = ids("config", "roce-")  # catalog/rules.py documents each
CHAIN, CNP, ECN, BANDWIDTH, PFC, MTU, PATHS, P2P, MISSING, ECN_RANGE = RULES
WARNING_RULES = frozenset(r for r in RULES if catalog_rules.rule(r).severity == "warning")  # advice only
MAX_PORTS_NAMED = 3
_POOL_THRESHOLD_S = 1.0


# --------------------------------------------------------------------------- extraction driver

def _extract_chunk(args: tuple[str, list[str]]) -> dict[str, DeviceFacts]:
    configs, hosts = args
    return extract_serial(pool.shared(), Path(configs), hosts)


def extract_serial(plan: Plan, configs: Path, hostnames: Iterable[str]) -> dict[str, DeviceFacts]:
    out: dict[str, DeviceFacts] = {}
    for host in hostnames:
        sw = plan.switches.get(host)
        if sw is None:
            continue
        out[host] = platform(sw.platform).extractor_fn()(plan, configs, host)
    return out


def _pooled(plan: Plan, host: str) -> bool:
    """Worth a worker process (the record's `extract_in_pool`: NX-OS, ~2.5 ms a file, a smaller pickle).
    SONiC and FRR facts are cheaper to extract (~2 ms) than to unpickle in the parent (~4 ms)."""
    sw = plan.switches.get(host)
    return sw is not None and platform(sw.platform).extract_in_pool


def _auto_workers(plan: Plan, hostnames: list[str]) -> int:
    cost = sum(platform(plan.switches[h].platform).fact_cost_s for h in hostnames if _pooled(plan, h))
    if cost < _POOL_THRESHOLD_S:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def extract_facts(
    plan: Plan, configs: Path, hostnames: Iterable[str], workers: int | None = 1
) -> dict[str, DeviceFacts]:
    """Facts of every named device (one entry per planned hostname, even if its files are missing).

    `workers` > 1 sends the NX-OS hosts to a fork-context process pool (the plan is shared
    copy-on-write, only the facts come back pickled) while this process extracts the SONiC and
    FRR hosts; None picks a pool when the NX-OS work is estimated above a second.  Call it with
    workers=1 from a worker of your own to extract one chunk.
    """
    hosts = list(hostnames)
    configs = Path(configs)
    n = _auto_workers(plan, hosts) if workers is None else workers
    heavy = [h for h in hosts if _pooled(plan, h)]
    if n <= 1 or len(heavy) < 2:
        return extract_serial(plan, configs, hosts)
    light = [h for h in hosts if not _pooled(plan, h)]
    for name in {plan.switches[h].platform for h in heavy}:
        platform(name).extractor_fn()  # imported once, before forking

    n_chunks = min(len(heavy), n * 4)
    chunks = [heavy[i::n_chunks] for i in range(n_chunks)]
    with pool.forked_pool(n, plan) as procs:  # the plan is shared copy-on-write
        pending = procs.map_async(_extract_chunk, [(str(configs), c) for c in chunks])
        merged = extract_serial(plan, configs, light)
        for part in pending.get():
            merged.update(part)
    return {h: merged[h] for h in plan.switches if h in merged}


# --------------------------------------------------------------------------- checks


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name) if p)


def _port_list(ports: list[str]) -> str:
    ports = sorted(ports, key=_natural)
    if len(ports) <= MAX_PORTS_NAMED:
        return ", ".join(ports)
    return f"{', '.join(ports[:MAX_PORTS_NAMED])} and {len(ports) - MAX_PORTS_NAMED} more"


Groups = list[tuple[tuple[str, str, str, str, str], list[str]]]  # one device's findings as `_Out` groups them
# The per-port QoS rules a port passed, by what they read (the key `_DeviceCheck.run` builds), with the objects
# whose identity the key holds, so that none is freed and its id reused while the memo lives (one check run).
CleanPorts = dict[tuple[object, ...], tuple[object, ...]]


class _Out:
    """Collects findings; the same (device, rule, location, message) from several ports becomes one."""

    def __init__(self, clean: CleanPorts | None = None) -> None:
        self.groups: dict[tuple[str, str, str, str, str], list[str]] = {}
        self.added = 0  # calls of `add`: a rule that ran without one found nothing
        self.clean = clean if clean is not None else {}

    def add(self, f: DeviceFacts | None, device: str, rule: str, loc: str, message: str, port: str = "",
            file: str | None = None) -> None:
        self.added += 1
        path = file if file is not None else (f.file_for(loc) if f is not None else "")
        ports = self.groups.setdefault((device, path, loc, rule, message), [])
        if port and port not in ports:
            ports.append(port)

    def merge(self, groups: Groups) -> None:
        """Groups another `_Out` collected, as if its `add`s had been made here."""
        for key, ports in groups:
            have = self.groups.setdefault(key, [])
            have += [p for p in ports if p not in have] if have else ports

    def findings(self) -> list[Finding]:
        out = []
        for (device, path, loc, rule, message), ports in self.groups.items():
            text = f"{message} [{_port_list(ports)}]" if ports else message
            out.append(Finding(device, path, loc, rule, text, "warning" if rule in WARNING_RULES else "error"))
        return out


def _fmt(values: Iterable[int]) -> str:
    items = sorted(set(values))
    return "{" + ", ".join(str(v) for v in items) + "}" if items else "none"


class _DeviceCheck:
    """Per-device QoS rules, evaluated per port (shared objects give shared findings)."""

    def __init__(self, plan: Plan, q: QosPolicy, sw: Switch, f: DeviceFacts, out: _Out) -> None:
        self.plan, self.q, self.sw, self.f, self.out = plan, q, sw, f, out
        self.lossless = frozenset(q.lossless_tcs)
        self.planned = {itf.name: itf for itf in sw.interfaces}
        self.cnp_tc = cnp_class(q, sw.platform)  # the platform's CNP queue (NX-OS 7), else the plan's CNP class

    def add(self, rule: str, loc: str, message: str, port: str = "") -> None:
        self.out.add(self.f, self.f.device, rule, loc, message, port)

    def run(self) -> None:
        if self.f.no_drop_loc:  # device-wide no-drop classes (NX-OS network-qos)
            self.no_drop_classes()
        out, clean = self.out, self.out.clean
        device = (self.sw.platform, self.cnp_tc, frozenset(self.f.pause))
        for name, port in self.f.ports.items():
            itf = self.planned.get(name)
            if itf is None:
                continue  # not a RoCE port of the plan (management, unused)
            # A port's verdict depends on its QoS objects, which ports share (SONiC: the same port across the files
            # of a class; NX-OS: the ports of a device, per buffer profile): a set of them that passed passes
            # again, with no finding to place.  Ports that find something run in full, so every finding and its
            # order are unchanged.
            key = (id(port.maps), id(port.lossless), id(port.queues), port.pfc, port.pfc_device_wide, itf.speed,
                   device)
            if key in clean:
                continue
            before = out.added
            self.port(port)
            if out.added == before:
                clean[key] = (port.maps, port.lossless, port.queues)

    def no_drop_classes(self) -> None:
        """NX-OS: the network-qos policy pauses exactly the lossless classes, each on its own CoS."""
        f, q = self.f, self.q
        for tc in sorted(self.lossless):
            pauses = f.pause.get(tc)
            if not pauses:
                self.add(CHAIN, f.no_drop_loc,
                         f"no no-drop class for lossless TC {tc}: the network-qos policy has no class "
                         f"c-8q-nq{tc} with `pause pfc-cos {tc}` (plan lossless TCs {_fmt(self.lossless)})")
                continue
            for cos, loc in pauses:
                if cos in (q.cnp_tc, self.cnp_tc):
                    self.add(CNP, loc, f"no-drop class c-8q-nq{tc} pauses CoS {cos}, the CNP priority: "
                             "CNPs must never be lossless")
                elif cos != tc:
                    self.add(CHAIN, loc, f"no-drop class c-8q-nq{tc} pauses CoS {cos}, expected CoS {tc}: "
                             f"PFC would pause priority {cos} while RoCE is sent with priority {tc}")
        for tc, pauses in sorted(f.pause.items()):
            if tc in self.lossless:
                continue
            loc = pauses[0][1]
            cnp = {q.cnp_tc, self.cnp_tc}
            if tc in cnp or any(cos in cnp for cos, _ in pauses):
                self.add(CNP, loc, f"class c-8q-nq{tc} is no-drop (pause pfc-cos "
                         f"{_fmt(c for c, _ in pauses)}) but TC {self.cnp_tc} carries CNPs: CNPs must never be "
                         "lossless")
            else:
                self.add(CHAIN, loc, f"class c-8q-nq{tc} is no-drop but the plan's lossless TCs are "
                         f"{_fmt(self.lossless)}")

    def pg_loc(self, port: PortFacts, maps: QosMaps, tc: int) -> str:
        """Where TC `tc`'s PG goes wrong: the TC->PG map entry if it differs from the plan, else the port's PG."""
        pg = maps.tc_to_pg.get(tc, 0)
        if maps.tc_to_pg_loc and pg != self.q.tc_to_pg.get(tc, 0):
            return f"{maps.tc_to_pg_loc}/{tc}"
        return port.pg_locs.get(pg, port.loc)

    def port(self, port: PortFacts) -> None:
        q = self.q
        maps = port.maps
        name = port.name
        if maps is None:
            self.add(CHAIN, port.maps_loc, "no DSCP classification attached "
                     "(or it names an undefined map): RoCE would be classified as TC 0, lossy", name)
            return
        for d in q.roce_dscp:
            tc = maps.dscp_to_tc.get(d, 0)
            if tc != q.roce_tc:
                self.add(CHAIN, maps.dscp_locs.get(d, port.maps_loc),
                         f"RoCE DSCP {d} is classified as TC {tc} by {maps.name}, expected TC {q.roce_tc} (plan)",
                         name)
        lossless_tcs = {tc for tc in range(8) if maps.tc_to_pg.get(tc, 0) in port.lossless}
        if port.pfc_device_wide:
            lossless_tcs = set(self.f.pause)
        for tc in sorted(self.lossless):
            self.lossless_tc(port, maps, tc, lossless_tcs)
        if not port.pfc_device_wide:
            for tc in sorted(lossless_tcs - self.lossless - {q.cnp_tc}):
                pg = maps.tc_to_pg.get(tc, 0)
                self.add(CHAIN, self.pg_loc(port, maps, tc),
                         f"TC {tc} (PG {pg}) has a lossless buffer profile but the plan's lossless TCs are "
                         f"{_fmt(self.lossless)}", name)
        self.cnp(port, maps, lossless_tcs)
        self.bandwidth(port)

    def lossless_tc(self, port: PortFacts, maps: QosMaps, tc: int, lossless_tcs: set[int]) -> None:
        name = port.name
        pg = maps.tc_to_pg.get(tc, 0)
        buffering = port.lossless.get(pg)
        if not port.pfc_device_wide and tc not in lossless_tcs:
            self.add(CHAIN, self.pg_loc(port, maps, tc),
                     f"lossless TC {tc} goes to PG {pg}, which has no lossless buffer profile "
                     "(no xoff, and no NULL profile under the dynamic buffer model): the port would drop RoCE "
                     "instead of sending PFC", name)
        queue_no = maps.tc_to_queue.get(tc, tc)
        pfc_queue = maps.pfc_to_queue.get(tc, tc)
        if pfc_queue != queue_no:
            self.add(CHAIN, maps.pfc_to_queue_loc or port.maps_loc,
                     f"PFC priority {tc} pauses queue {pfc_queue}, but TC {tc} is sent from queue {queue_no}", name)
        queue = port.queues.get(queue_no)
        if queue is None:
            self.add(CHAIN, self.f.bandwidth_loc or port.loc, f"no egress queue {queue_no} for lossless TC {tc}",
                     name)
            return
        if queue.strict:
            self.add(CHAIN, queue.sched_loc, f"lossless queue {queue_no} ({queue.scheduler}) is strict priority: "
                     "RoCE would starve every other class; expected DWRR with ECN", name)
        if not queue.marks or not queue.ecn:
            what = "marks no ECN (no WRED profile with ecn)" if not queue.ecn else "drops instead of marking ECN"
            self.add(CHAIN, queue.ecn[0].loc if queue.ecn else queue.loc,
                     f"lossless queue {queue_no} ({queue.scheduler}) {what}: DCQCN would never slow senders", name)
            return
        self.ecn_order(port, queue_no, queue, buffering)

    def ecn_order(self, port: PortFacts, queue_no: int, queue: Queue, buffering: LosslessPg | None) -> None:
        """ECN min < max; below a static pause trigger; within the vendors' defaults for the speed (warning)."""
        pitf = self.planned.get(port.name)
        for e in queue.ecn:
            if e.min_bytes >= e.max_bytes:
                self.add(ECN, e.loc, f"queue {queue_no} ({e.source}): ECN min {e.min_bytes} B is not below "
                         f"max {e.max_bytes} B", port.name)
                continue
            if buffering is not None and buffering.static_th is not None and e.max_bytes >= buffering.static_th:
                self.add(ECN, e.loc, f"queue {queue_no}: ECN max {e.max_bytes} B ({e.source}) is not below the "
                         f"static pause threshold {buffering.static_th} B ({buffering.profile} static_th): PFC "
                         "would pause before ECN marks", port.name)
            if pitf is not None:
                self.ecn_range(port, e, pitf.speed)

    def ecn_range(self, port: PortFacts, e: Ecn, speed: int) -> None:
        (min_lo, min_hi), (max_lo, max_hi), sources = _vendor_ecn_range(speed)
        if min_lo <= e.min_bytes <= min_hi and max_lo <= e.max_bytes <= max_hi:
            return
        self.add(ECN_RANGE, e.loc, f"ECN {e.min_bytes} / {e.max_bytes} B ({e.source}) at {speed}G is outside the "
                 f"vendors' defaults for {speed}G (min {min_lo}..{min_hi} B, max {max_lo}..{max_hi} B: "
                 f"{', '.join(d.source for d in sources)})", port.name)

    def cnp(self, port: PortFacts, maps: QosMaps, lossless_tcs: set[int]) -> None:
        q = self.q
        name = port.name
        tc = maps.dscp_to_tc.get(q.cnp_dscp, 0)
        if tc != self.cnp_tc:
            self.add(CNP, maps.dscp_locs.get(q.cnp_dscp, port.maps_loc),
                     f"CNP DSCP {q.cnp_dscp} is classified as TC {tc} by {maps.name}, expected TC {self.cnp_tc} "
                     f"({'plan' if self.cnp_tc == q.cnp_tc else self.sw.platform + ' CNP queue'})", name)
        if tc in self.lossless:
            self.add(CNP, maps.dscp_locs.get(q.cnp_dscp, port.maps_loc),
                     f"CNP DSCP {q.cnp_dscp} lands in lossless TC {tc}: CNPs must never be paused", name)
        elif tc in lossless_tcs and not port.pfc_device_wide:
            pg = maps.tc_to_pg.get(tc, 0)
            self.add(CNP, self.pg_loc(port, maps, tc), f"CNP TC {tc} goes to PG {pg}, which has a lossless "
                     "buffer profile: CNPs must never be paused", name)
        if tc in port.pfc and not port.pfc_device_wide:
            self.add(CNP, port.pfc_loc, f"PFC runs on priority {tc}, the CNP class: CNPs must never be paused",
                     name)
        queue_no = maps.tc_to_queue.get(tc, tc)
        queue = port.queues.get(queue_no)
        if queue is None:
            self.add(CNP, self.f.bandwidth_loc or port.loc, f"no egress queue {queue_no} for the CNP class (TC {tc})",
                     name)
        elif not queue.strict:
            self.add(CNP, queue.sched_loc, f"CNP queue {queue_no} ({queue.scheduler}) is not strict priority: "
                     "CNPs would wait behind the congestion they report", name)

    def bandwidth(self, port: PortFacts) -> None:
        shares: dict[str, int] = {}
        for _, queue in sorted(port.queues.items()):
            if not queue.strict:
                shares.setdefault(queue.scheduler, queue.weight)
        if not shares:
            return
        total = sum(shares.values())
        if total != 100:
            parts = " + ".join(f"{s} {w}" for s, w in shares.items() if w)
            loc = self.f.bandwidth_loc or pointer("SCHEDULER")
            self.add(BANDWIDTH, loc, f"shares of the non-strict queues sum to {total}, not 100 ({parts})", port.name)


# the same few speeds on every port of the fabric (catalog.registry.vendor_ecn_range is a pure function of it)
_vendor_ecn_range = functools.lru_cache(maxsize=64)(vendor_ecn_range)


def _bgp_file(f: DeviceFacts) -> str:
    return platform(f.platform).bgp_config_file


def _bgp_usable(f: DeviceFacts) -> bool:
    """The file carrying BGP was read (a missing or broken one is roce-missing-config's finding)."""
    name = _bgp_file(f)
    return name in f.files and name not in f.missing and all(n != name for n, _ in f.errors)


def _bgp_device(plan: Plan, sw: Switch, f: DeviceFacts, out: _Out) -> None:
    if not f.bgp_loc:
        out.add(f, f.device, P2P, "", "no `router bgp` section: no eBGP session to any peer",
                file=f.files.get(_bgp_file(f), _bgp_file(f)))
        return
    if f.bgp_asn != sw.asn:
        out.add(f, f.device, P2P, f.bgp_loc, f"local AS {f.bgp_asn} differs from the plan's {sw.asn}: every peer's "
                f"`remote-as {sw.asn}` would fail")
    if sw.bgp is None:
        return
    need = min(sw.bgp.equal_cost_paths, platform(f.platform).capabilities.maximum_paths)
    if not f.maximum_paths and need > 1:
        out.add(f, f.device, PATHS, f.bgp_loc, f"no `maximum-paths`: a {sw.role} needs at least {need} "
                "equal-cost paths")
    top = platform(f.platform).capabilities.maximum_paths
    for value, loc in f.maximum_paths:
        if not 1 <= value <= top:  # the range of every platform's `maximum-paths` (FRR: MULTIPATH_NUM)
            out.add(f, f.device, PATHS, loc, f"maximum-paths {value} is outside the {f.platform} range 1..{top}: "
                    "the switch rejects the line")
        elif value < need:
            out.add(f, f.device, PATHS, loc, f"maximum-paths {value} is below the {need} equal-cost paths a "
                    f"{sw.role} of this design needs: ECMP would use only {value} of them")


def _expected_pfc(q: QosPolicy) -> frozenset[int]:
    return frozenset(q.lossless_tcs)


def _pfc_end(q: QosPolicy, f: DeviceFacts, port: PortFacts, peer: str, out: _Out) -> None:
    want = _expected_pfc(q)
    have = port.pfc - {q.cnp_tc}  # PFC on the CNP priority is roce-cnp's finding
    ok = port.pfc_on if port.pfc_device_wide else have == want
    if not ok:
        what = "PFC is off" if not port.pfc_on else f"PFC runs on priorities {_fmt(port.pfc)}"
        out.add(f, f.device, PFC, port.pfc_loc, f"{port.name} (to {peer}): {what}, expected priorities "
                f"{_fmt(want)}: RoCE on this link is not lossless", port.name)
    if q.watchdog_enabled and not port.watchdog:
        out.add(f, f.device, PFC, port.watchdog_loc, f"{port.name} (to {peer}): no PFC watchdog, the plan enables "
                "it: a PFC storm would stall the lossless class", port.name)


def _links(plan: Plan, facts: dict[str, DeviceFacts], out: _Out) -> None:
    q = plan.qos
    planned_ports: dict[str, dict[str, Interface]] = {}
    usable = _Usable()

    def planned(host: str, name: str) -> Interface | None:
        ports = planned_ports.get(host)
        if ports is None:
            ports = planned_ports[host] = plan_ports(plan, host)
        return ports.get(name)

    for link in plan.links:
        if link.tier == "gpu_leaf":
            leaf = facts.get(link.z_device)
            if leaf is None or not leaf.qos or q is None or not leaf.ports:
                continue  # no QoS in this platform's config, or nothing readable (roce-missing-config)
            port = leaf.ports.get(link.z_port)
            if port is None:
                out.add(leaf, leaf.device, PFC, "", f"GPU-facing port {link.z_port} (to {link.a_device}:"
                        f"{link.a_port}) is not configured", link.z_port)
            else:
                _pfc_end(q, leaf, port, f"{link.a_device}:{link.a_port}", out)
            continue
        a, z = facts.get(link.a_device), facts.get(link.z_device)
        if a is None or z is None or not a.ports or not z.ports:
            continue
        pa, pz = a.ports.get(link.a_port), z.ports.get(link.z_port)
        if pa is None or pz is None:
            for f, name, peer in ((a, link.a_port, f"{link.z_device}:{link.z_port}"),
                                  (z, link.z_port, f"{link.a_device}:{link.a_port}")):
                if name not in f.ports:
                    out.add(f, f.device, P2P, "", f"planned port {name} (to {peer}) is not configured", name)
            continue
        ia, iz = planned(link.a_device, link.a_port), planned(link.z_device, link.z_port)
        if q is not None:
            for f, port, peer in ((a, pa, f"{z.device}:{pz.name}"), (z, pz, f"{a.device}:{pa.name}")):
                if f.qos:
                    _pfc_end(q, f, port, peer, out)
        _mtu(a, pa, ia, z, pz, iz, out)
        _p2p(plan, a, pa, ia, z, pz, iz, out, usable)


def _mtu(a: DeviceFacts, pa: PortFacts, ia: Interface | None, z: DeviceFacts, pz: PortFacts, iz: Interface | None,
         out: _Out) -> None:
    if pa.mtu is None or pz.mtu is None or pa.mtu == pz.mtu:
        return
    ends = [(a, pa, ia, z, pz), (z, pz, iz, a, pa)]
    blamed = [e for e in ends if e[2] is None or e[1].mtu != e[2].mtu] or ends
    for f, port, itf, pf, pport in blamed:
        plan_mtu = f" (plan {itf.mtu})" if itf is not None else ""
        out.add(f, f.device, MTU, port.mtu_loc, f"{port.name} has MTU {port.mtu}{plan_mtu}, the other end "
                f"{pf.device}:{pport.name} has {pport.mtu}: frames between them would be dropped", port.name)


class _Usable(dict[str, bool]):
    """`_bgp_usable` of each device, asked once (a fabric's links ask it a million times at 128K GPUs)."""

    def __call__(self, f: DeviceFacts) -> bool:
        found = self.get(f.device)
        if found is None:
            found = self[f.device] = _bgp_usable(f)
        return found


def _p2p(plan: Plan, a: DeviceFacts, pa: PortFacts, ia: Interface | None, z: DeviceFacts,
         pz: PortFacts, iz: Interface | None, out: _Out, usable: _Usable) -> None:
    va, vz = ipv4_int(pa.ipv4), ipv4_int(pz.ipv4)
    ends = [(a, pa, ia, z, pz), (z, pz, iz, a, pa)]
    if va is None or vz is None:
        for f, port, _itf, pf, pport in ends:
            if ipv4_int(port.ipv4) is None:
                out.add(f, f.device, P2P, port.ipv4_loc or port.loc, f"{port.name} (to {pf.device}:{pport.name}) "
                        f"has no IPv4 address", port.name)
        return
    (ipa, la), (ipz, lz) = va, vz
    if la != 31 or lz != 31 or ipa >> 1 != ipz >> 1 or ipa == ipz:
        blamed = [e for e in ends if e[2] is None or e[1].ipv4 != e[2].ipv4] or ends
        for f, port, itf, pf, pport in blamed:
            plan_ip = f" (plan {itf.ipv4})" if itf is not None else ""
            why = "the same address" if ipa == ipz else "not the other half of one /31"
            out.add(f, f.device, P2P, port.ipv4_loc, f"{port.name} has {port.ipv4}{plan_ip}, the other end "
                    f"{pf.device}:{pport.name} has {pport.ipv4}: {why}", port.name)
        return
    for f, _port, _itf, pf, pport in ends:
        if not f.bgp_loc or not usable(f):
            continue  # reported once per device
        peer_ip = ip_text(ipz if f is a else ipa)
        n = f.neighbors.get(peer_ip)
        if n is None:
            out.add(f, f.device, P2P, f.bgp_loc, f"no BGP neighbor {peer_ip} ({pf.device}:{pport.name}, the other "
                    "end of the /31)")
            continue
        peer_asn = pf.bgp_asn
        peer_sw = plan.switches.get(pf.device)
        if peer_asn is None or not usable(pf) or peer_sw is None or peer_asn != peer_sw.asn:
            continue  # no peer AS to compare with, or the peer's own AS is the fault (reported there)
        if n.remote_as != peer_asn:
            out.add(f, f.device, P2P, n.loc, f"neighbor {peer_ip} ({pf.device}) has remote-as {n.remote_as}, "
                    f"but {pf.device}'s local AS is {peer_asn}")


def check_facts(plan: Plan, facts: dict[str, DeviceFacts], configs: Path | None = None,
                done: dict[str, Groups] | None = None) -> list[Finding]:
    """Every rule over extracted facts; a planned device without facts is a missing config.  `done`: the
    per-device findings of some devices, already grouped where their facts were extracted (`device_groups`)."""
    out = _Out()
    for host, sw in plan.switches.items():
        groups = done.get(host) if done is not None else None
        if groups is None:
            _device_rules(plan, sw, facts.get(host), configs, out)
        else:  # the same groups, in the same order, as if run here
            out.merge(groups)
    _links(plan, facts, out)
    return out.findings()


def device_groups(plan: Plan, host: str, f: DeviceFacts | None, configs: Path | None,
                  clean: CleanPorts | None = None) -> Groups:
    """The per-device rules of one device (everything but the links between devices), as `check_facts` groups
    them: run in the worker that extracted the facts.  `clean`: the port verdicts of the devices checked before
    it in the same run (pass one dict for a batch of devices)."""
    out = _Out(clean)
    _device_rules(plan, plan.switches[host], f, configs, out)
    return list(out.groups.items())


def _device_rules(plan: Plan, sw: Switch, f: DeviceFacts | None, configs: Path | None, out: _Out) -> None:
    q = plan.qos
    host = sw.hostname
    if f is None:
        for name in platform(sw.platform).files:
            path = str(configs / host / name) if configs is not None else name
            out.add(None, host, MISSING, "", f"planned {sw.role} {host} ({sw.platform}) has no rendered "
                    f"{name}", file=path)
        return
    for name in f.missing:
        out.add(f, host, MISSING, "", f"planned {sw.role} {host} ({sw.platform}) has no rendered {name}",
                file=f.files.get(name, name))
    for name, why in f.errors:
        out.add(f, host, MISSING, "", f"{name or 'config'} of {host} is unusable: {why}",
                file=f.files.get(name, name))
    if f.qos and q is not None and f.ports:
        _DeviceCheck(plan, q, sw, f, out).run()
        if q.watchdog_enabled and not f.watchdog_global:
            out.add(f, host, PFC, "", "the global `priority-flow-control watch-dog-interval on` is missing: "
                    "no port runs the PFC watchdog the plan enables")
    if _bgp_usable(f):
        _bgp_device(plan, sw, f, out)


def check_fabric(plan: Plan, configs: Path, workers: int | None = 1) -> list[Finding]:
    """extract_facts + check_facts over every planned switch."""
    configs = Path(configs)
    facts = extract_facts(plan, configs, list(plan.switches), workers=workers)
    return check_facts(plan, facts, configs)
