"""Arista EOS renderer: plan -> AVD structured config -> Arista's own pyavd (one `eos.cfg` per switch).

The plan is turned into the structured config of Arista's AVD ``eos_cli_config_gen`` (the keys its
schema documents); pyavd validates it against that schema (``pyavd.validate_structured_config``) and
renders it with Arista's own templates (``pyavd.get_device_config``).  Arista's schema is the EOS
checker and Arista's templates give the syntax: fabricgen decides every number and name, pyavd
prints it.  A structured config the schema rejects is a fabricgen bug and fails the render, naming
the key (`EosSchemaError`).

* ``service routing protocols model multi-agent`` (AVD renders it on every device it designs).
* Classification: ``qos.map.dscp`` for all 64 DSCPs (the plan's `dscp_to_tc`); ports trust DSCP.
* Per cable class (plan QoS profile) one ``qos profile``, attached with ``service-profile``.  Its queues
  are the chip family's (`fabricgen.catalog.eos_models`): ``uc_tx_queues`` (``uc-tx-queue N``) on
  Strata, ``tx_queues`` (``tx-queue N``) on Sand.  The CNP queue ``priority strict``; the lossless and
  default queues ``no priority`` with ``bandwidth percent``; ECN on each lossless queue the Arista way:
  ``random-detect ecn minimum-threshold .. kbytes maximum-threshold .. kbytes max-mark-probability ..
  weight 0`` (weight 0: instantaneous queue depth, no averaging) and ``random-detect ecn count``
  (per-queue ECN mark counters, which `validate --health` reads).  EOS schedules strict-priority
  queues above its round-robin ones: the registry records it (``strict_queues_highest``).
* PFC watchdog: ``priority-flow-control pause watchdog default timeout / polling-interval /
  recovery-time`` in seconds (timeout and recovery-time in 10 ms steps, rounded up so the watchdog
  never fires earlier than the intent says) and ``... watchdog action drop | notify-only`` (the
  intent's drop / alert; EOS has no forward action, and the plan refuses it by capability).  EOS
  polls at most every half timeout and substitutes its own interval otherwise: the polling interval
  is the intent's, or half the timeout where that is shorter.
* Lane speeds: a cage split into several ports (2x400G on an 800G OSFP) gets ``speed <n>g-<lanes>``
  on each half, or the ports never link (``speed 400g-4`` on Ethernet1/1 and Ethernet1/5).
* ECMP hashing: ``port-channel load-balance trident fields ip ...``; AVD has no key for it, so it goes
  through ``eos_cli`` (raw lines printed at the end).
* BGP: ``router bgp``, ``bgp bestpath as-path multipath-relax`` (``bgp_defaults``), ``maximum-paths N
  ecmp N``, one neighbor per session with ``bfd`` and ``allowas-in``, ``redistribute connected`` through a
  route-map that permits the loopback and, on leaves, the GPU pool; BFD timers in ``router bfd``.
* Same-tier ASNs: leaves take ``allowas-in N``; EOS spines need no line (no sender-side AS-path check;
  AVD's ``underlay_filter_peer_as`` exists to add that filter by route-map).
* PTP (intent ``ptp:``): AVD's ``ptp`` keys -- ``mode boundary``, ``profile`` (g8275.1 / g8275.2; none
  for the default profile), ``domain``, ``priority1/2``, ``source.ip`` (the loopback), ``message_type``
  event/general ``dscp`` and ``monitor.threshold`` (offset from master, mean path delay, in ns) -- and
  ``ptp.enable`` on each planned PTP port (``ptp enable``).
* Every front-panel port the plan leaves free is shut and described ``unused: ...``, as on NX-OS.

Sources: Arista's AVD ``eos_cli_config_gen`` schema and templates, run here through pyavd itself; the
AMD Instinct cluster networking guide's Arista 7388 DCQCN sample (``uc-tx-queue``, ``weight 0``,
``max-mark-probability 20``, ``random-detect ecn count``, ``speed 200g-4`` on split cages);
aristanetworks/avd#6399 (EOS's watchdog actions are drop, errdisable and notify-only).
"""

from __future__ import annotations

import math
from typing import Any

import jinja2

from fabricgen.catalog.eos_models import QP_HASHING, ChipFamily, chip_family, family, qp_hashing
from fabricgen.catalog.registry import capabilities
from fabricgen.errors import Problem
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Interface, Plan, PtpClock, PtpPlan, QosPolicy, QosProfile, Switch

FILENAME = "eos.cfg"
PROFILE_PREFIX = "ROCE"  # + _<speed>G_<metres>M[_MTU<n>]: one qos profile per plan QoS profile
ROUTE_MAP = "RM-REDIST-CONNECTED"
PREFIX_LIST = "PL-REDIST-CONNECTED"
ROUTE_MAP_V6 = "RM-REDIST-CONNECTED-V6"
PREFIX_LIST_V6 = "PL-REDIST-CONNECTED-V6"
KBYTE = 1024
ROUTING_MODEL = "multi-agent"
ECN_WEIGHT = 0  # Arista's RoCE samples: instantaneous queue depth
# Intent hash field -> EOS `fields ip` keyword; ip-protocol is constant (UDP) for RoCEv2.
HASH_FIELDS = {"src-ip": "source-ip", "dst-ip": "destination-ip", "l4-src-port": "source-port",
               "l4-dst-port": "destination-port"}
WATCHDOG_ACTION = {"drop": "drop", "alert": "notify-only"}  # intent action -> EOS action (no forward on EOS)
QUEUE_KEY: dict[ChipFamily, str] = {"strata": "uc_tx_queues", "sand": "tx_queues"}
# The description of a port the plan leaves free; the deploy driver knows fabricgen's ports by it.
UNUSED_DESCRIPTION = "unused: not in the fabric plan"
HEADER = "Generated by fabricgen -- do not edit; change the intent and re-render."


class EosSchemaError(ValueError):
    """The structured config fabricgen built is not valid under Arista's eos_cli_config_gen schema."""


def profile_name(profile: QosProfile, fabric_mtu: int) -> str:
    """ROCE_400G_3M (with _MTU<n> for ports off the fabric MTU), after the plan profile."""
    mtu = "" if profile.mtu == fabric_mtu else f"_MTU{profile.mtu}"
    return f"{PROFILE_PREFIX}_{profile.speed}G_{profile.cable_m:g}M{mtu}"


def ecn(profile: QosProfile) -> dict[str, Any]:
    """Bytes -> whole kbytes rounded down (marks no later than planned), min kept below max; weight 0, counted."""
    low = max(1, profile.ecn_min // KBYTE)
    return {"count": True, "threshold": {"units": "kbytes", "min": low, "max": max(low + 1, profile.ecn_max // KBYTE),
                                         "max_probability": profile.ecn_probability, "weight": ECN_WEIGHT}}


def _shares(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def tx_queues(policy: QosPolicy, profile: QosProfile) -> list[dict[str, Any]]:
    """The CNP queue strict; the lossless queues round-robin with the RoCE share split over them and ECN;
    the default queue round-robin with the default share."""
    lossless = sorted(policy.lossless_tcs)
    shares = dict(zip(lossless, _shares(policy.bandwidth["roce"], len(lossless)), strict=True))
    out = [{"id": policy.tc_to_queue.get(0, 0), "priority": "no priority",
            "bandwidth_percent": policy.bandwidth["default"]}]
    out += [{"id": policy.tc_to_queue.get(tc, tc), "priority": "no priority", "bandwidth_percent": shares[tc],
             "random_detect": {"ecn": ecn(profile)}} for tc in lossless]
    out.append({"id": policy.tc_to_queue.get(policy.cnp_tc, policy.cnp_tc), "priority": "priority strict"})
    return sorted(out, key=lambda q: int(q["id"]))


def seconds(ms: int, decimals: int) -> str:
    """Milliseconds as EOS seconds with at most `decimals` decimals, rounded up: 200 -> "0.2"."""
    step = 10 ** (3 - decimals)
    value = math.ceil(ms / step) * step / 1000
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def polling_ms(policy: QosPolicy) -> int:
    """The intent's poll interval, or half the timeout where that is shorter (EOS polls at most every half
    timeout and would substitute its own value), in whole milliseconds (EOS takes 3 decimals)."""
    timeout_ms = math.ceil(policy.watchdog_detection_ms / 10) * 10
    return max(1, min(policy.watchdog_poll_ms, timeout_ms // 2))


def watchdog(plan: Plan) -> dict[str, Any] | None:
    q = plan.qos
    if q is None or not q.watchdog_enabled:
        return None
    return {"action": WATCHDOG_ACTION[q.watchdog_action], "timeout": seconds(q.watchdog_detection_ms, 2),
            "polling_interval": seconds(polling_ms(q), 3), "recovery_time": seconds(q.watchdog_restoration_ms, 2)}


def dscp_maps(policy: QosPolicy) -> list[str]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(policy.dscp_to_tc.items()):
        by_tc.setdefault(tc, []).append(dscp)
    return [f"{' '.join(map(str, dscps))} to traffic-class {tc}" for tc, dscps in sorted(by_tc.items())]


def load_balance(hash_fields: tuple[str, ...]) -> str:
    keywords = [HASH_FIELDS[f] for f in HASH_FIELDS if f in hash_fields]
    return "port-channel load-balance trident fields ip " + " ".join(keywords)


ROCE_UDP_PORT = 4791  # RoCEv2's UDP destination port (IBTA RoCEv2 annex A17)
BTH_QP_BYTES = (5, 6, 7)  # the destination QP in the BTH, the first bytes of the UDP payload
UDP_HEADER = 8


def qp_hashing_config(model: str) -> dict[str, Any]:
    """The eos_cli_config_gen keys that add the RoCE destination QP to the ECMP hash (catalog/eos_models
    QP_HASHING says which chips take which, and where that comes from); {} on a chip without a way."""
    method = qp_hashing(model)
    if method == "trident-udf":
        return {"port_channel": {"load_balance_trident_udf": [
            {"eth_type": "ipv4", "header": "outer_l4", "offset": UDP_HEADER + b, "mask": "0xff"}
            for b in BTH_QP_BYTES]}}
    if method == "sand-profile":
        first, last = BTH_QP_BYTES[0], BTH_QP_BYTES[-1]
        return {"load_balance": {"policies": {"sand_profiles": [
            {"name": "default", "fields": {"udp": {"dst_port": ROCE_UDP_PORT, "payload_bytes": f"{first}-{last}"}}}]}}}
    return {}


def qp_problems(plan: Plan) -> list[Problem]:
    """ecmp.qp_hashing on an EOS model with no confirmed way to hash on the QP: refused, naming the model
    (the record's ``plan_problems``)."""
    out: list[Problem] = []
    seen: set[str] = set()
    for sw in plan.switches.values():
        h = plan.hashing.get(sw.role)
        if sw.platform != "eos" or h is None or not h.qp_hashing or sw.model in seen or qp_hashing(sw.model):
            continue
        seen.add(sw.model)
        fam = family(sw.model)
        chip = f"{fam.asic} chip" if fam is not None else "chip fabricgen does not know"
        out.append(Problem("ecmp.qp_hashing", f"EOS model {sw.model} ({sw.role}, {chip}) lacks the capability "
                           "`qp-hashing`: no way to hash on the RoCE destination QP is confirmed for it (only "
                           f"{' and '.join(sorted(QP_HASHING))} chips)", "set ecmp.qp_hashing: false (more QPs per "
                           "connection, qos.nic.qps_per_connection, spread RoCE traffic without it), or use "
                           "Tomahawk (7060X) or Jericho (7280R, 7800R) models"))
    return out


def lane_speed(sw: Switch, plan: Plan, itf: Interface) -> str:
    """`<n>g-<lanes>` on a port of a split cage ("" on a whole cage, which runs at its native speed)."""
    if itf.breakout <= 1:
        return ""
    model = plan.settings.models.get(sw.role)
    lanes = model.lanes_per_port if model is not None else 8
    per_port = max(1, lanes // itf.breakout)
    return f"{itf.speed}g-{per_port}" if itf.speed < 1000 else f"{itf.speed / 1000:g}t-{per_port}"


def _redistribution(sw: Switch, plan: Plan, cfg: dict[str, Any]) -> bool:
    """What BGP announces: the loopback(s) and, on leaves, the GPU pool's /31s (`le 31`).  True with IPv6."""
    assert sw.bgp is not None
    v4 = [p for p in sw.bgp.networks if ":" not in p]
    entries = [f"permit {p}" for p in v4]
    if sw.bgp.connected_gpu_subnets:
        gpu = plan.settings.pools.gpu
        entries.append(f"permit {gpu}" + ("" if gpu.prefixlen >= 31 else " le 31"))
    cfg["prefix_lists"] = [{"name": PREFIX_LIST, "sequence_numbers": [
        {"sequence": 10 * (i + 1), "action": e} for i, e in enumerate(entries)]}]
    cfg["route_maps"] = [{"name": ROUTE_MAP, "sequence_numbers": [
        {"sequence": 10, "type": "permit", "match": [f"ip address prefix-list {PREFIX_LIST}"]}]}]
    v6 = [p for p in sw.bgp.networks if ":" in p]
    if v6:
        cfg["ipv6_prefix_lists"] = [{"name": PREFIX_LIST_V6, "sequence_numbers": [
            {"sequence": 10 * (i + 1), "action": f"permit {p}"} for i, p in enumerate(v6)]}]
        cfg["route_maps"].append({"name": ROUTE_MAP_V6, "sequence_numbers": [
            {"sequence": 10, "type": "permit", "match": [f"ipv6 address prefix-list {PREFIX_LIST_V6}"]}]})
    return bool(v6)


def ptp_settings(clock: PtpClock, ptp: PtpPlan) -> dict[str, Any]:
    """eos_cli_config_gen `ptp`: a boundary clock (`ptp mode boundary`), the profile (none for the default
    1588 profile: EOS's own default; `ptp profile g8275.1 | g8275.2`), domain, priorities, the loopback as
    source, the intent's DSCP for event and general messages and its thresholds in `ptp monitor`."""
    out: dict[str, Any] = {"mode": "boundary", "domain": ptp.domain, "priority1": clock.priority1,
                           "priority2": clock.priority2,
                           "message_type": {"event": {"dscp": ptp.dscp}, "general": {"dscp": ptp.dscp}},
                           "monitor": {"enabled": True, "threshold": {"offset_from_master": ptp.offset_ns,
                                                                      "mean_path_delay": ptp.path_delay_ns}}}
    if ptp.profile != "default-1588":
        out["profile"] = ptp.profile
    if clock.source_ip:
        out["source"] = {"ip": clock.source_ip}
    return out


def structured_config(sw: Switch, plan: Plan) -> dict[str, Any]:
    """One switch as AVD eos_cli_config_gen structured config (the keys of Arista's schema)."""
    if plan.qos is None:
        raise ValueError("plan has no QoS policy; build it with fabricgen.plan.build.build_plan")
    policy, settings = plan.qos, plan.settings
    chip, _ = chip_family(sw.model)
    queues_key = QUEUE_KEY[chip]
    names: dict[str, str] = {}
    profiles = []
    for name in sorted({itf.qos_profile for itf in sw.interfaces}):
        prof = plan.qos_profiles[name]
        names[name] = profile_name(prof, policy.mtu)
        pfc: dict[str, Any] = {"enabled": True, "priorities": [{"priority": tc, "no_drop": True}
                                                               for tc in sorted(policy.lossless_tcs)]}
        if policy.watchdog_enabled:
            pfc["watchdog"] = {"enabled": True}
        profiles.append({"name": names[name], "trust": "dscp", queues_key: tx_queues(policy, prof),
                         "priority_flow_control": pfc})
    cfg: dict[str, Any] = {
        "config_comment": f" {HEADER}\n {sw.hostname}: {sw.role}, {sw.model}",
        "service_routing_protocols_model": ROUTING_MODEL,
        "hostname": sw.hostname,
        "qos": {"map": {"dscp": dscp_maps(policy)}},
        "qos_profiles": sorted(profiles, key=lambda p: p["name"]),
        "ip_routing": True,
        "config_end": True,
        "eos_cli": load_balance(settings.hash_fields),
    }
    h = plan.hashing.get(sw.role)
    if h is not None and h.qp_hashing:
        cfg.update(qp_hashing_config(sw.model))
    queue_maps = [f"{tc} to tx-queue {q}" for tc, q in sorted(policy.tc_to_queue.items()) if tc != q]
    if queue_maps:
        cfg["qos"]["map"]["traffic_class"] = queue_maps
    wd = watchdog(plan)
    if wd is not None:
        cfg["priority_flow_control"] = {"watchdog": wd}
    clock = plan.ptp.clocks.get(sw.hostname) if plan.ptp is not None else None
    ptp_ports = {p.name for p in clock.ports} if clock is not None else set()
    if clock is not None and plan.ptp is not None:
        cfg["ptp"] = ptp_settings(clock, plan.ptp)
    ethernet: list[dict[str, Any]] = []
    for itf in sw.interfaces:
        port: dict[str, Any] = {"name": itf.name, "description": itf.description}
        speed = lane_speed(sw, plan, itf)
        if speed:
            port["speed"] = speed
        port.update({"mtu": itf.mtu, "switchport": {"enabled": False}, "ip_address": itf.ipv4})
        if itf.ipv6:
            port["ipv6_address"] = itf.ipv6
        port["service_profile"] = names[itf.qos_profile]
        if itf.name in ptp_ports:
            port["ptp"] = {"enable": True}
        ethernet.append(port)
    ethernet += [{"name": name, "description": UNUSED_DESCRIPTION, "shutdown": True}
                 for name in front_panel(plan, sw).unused]
    cfg["ethernet_interfaces"] = ethernet
    if sw.loopback:
        loop: dict[str, Any] = {"name": "Loopback0", "description": "router-id", "ip_address": f"{sw.loopback}/32"}
        if sw.loopback_v6:
            loop["ipv6_address"] = f"{sw.loopback_v6}/128"
        cfg["loopback_interfaces"] = [loop]
    if sw.mgmt_ip:
        cfg["management_interfaces"] = [{"name": "Management1",
                                         "ip_address": f"{sw.mgmt_ip}/{settings.pools.management.prefixlen}"}]
    if sw.loopback_v6 or any(itf.ipv6 for itf in sw.interfaces):
        cfg["ipv6_unicast_routing"] = True
    b = sw.bgp
    if b is None:
        return cfg
    if b.bfd and any(n.bfd for n in b.neighbors):
        cfg["router_bfd"] = {"interval": b.bfd_min_tx, "min_rx": b.bfd_min_rx, "multiplier": b.bfd_multiplier}
    v6 = _redistribution(sw, plan, cfg)
    paths = min(b.maximum_paths, capabilities(sw.platform).maximum_paths)
    neighbors = []
    for n in b.neighbors:
        entry: dict[str, Any] = {"ip_address": n.ip, "remote_as": str(n.remote_asn), "description": n.description}
        if b.bfd and n.bfd:
            entry["bfd"] = True
        if n.allowas_in:
            entry["allowas_in"] = {"enabled": True, "times": n.allowas_in}
        neighbors.append(entry)
    bgp: dict[str, Any] = {
        "as": str(b.asn), "router_id": b.router_id,
        "timers": {"keepalive_time": b.keepalive, "hold_time": b.holdtime},
        "bgp_defaults": ["bgp bestpath as-path multipath-relax"],
        "maximum_paths": {"paths": paths, "ecmp": paths},
        "neighbors": neighbors,
        "redistribute": {"connected": {"enabled": True, "route_map": ROUTE_MAP}},
    }
    if v6:
        bgp["address_family_ipv6"] = {
            "neighbors": [{"ip_address": n.ip, "activate": True} for n in b.neighbors if n.afi == "ipv6"],
            "redistribute": {"connected": {"enabled": True, "route_map": ROUTE_MAP_V6}}}
    cfg["router_bgp"] = bgp
    return cfg


def validated(cfg: dict[str, Any], hostname: str) -> dict[str, Any]:
    """The structured config as Arista's schema validates (and type-converts) it; EosSchemaError names each
    violation by its key path."""
    from pyavd import validate_structured_config

    result = validate_structured_config(cfg)
    violations = result.validation_result.violations
    if violations or result.validated_data is None:
        raise EosSchemaError(f"{hostname}: the EOS structured config fails Arista's eos_cli_config_gen schema: "
                             + "; ".join(f"{'.'.join(map(str, v.path))}: {v.message}" for v in violations))
    data: dict[str, Any] = result.validated_data
    return data


def device_config(cfg: dict[str, Any], hostname: str) -> str:
    """eos.cfg: the structured config validated by Arista's schema and rendered by Arista's templates."""
    from pyavd import get_device_config

    text: str = get_device_config(validated(cfg, hostname))
    return text


def render(sw: Switch, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    """{"eos.cfg": running-config text} for one EOS switch."""
    return {FILENAME: device_config(structured_config(sw, plan), sw.hostname)}
