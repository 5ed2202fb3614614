"""Lossless RoCEv2 QoS: PFC headroom, ECN thresholds, the fabric QoS policy and its invariants (NIC script: host.py).

Everything here is derived from ``intent.qos`` and ``intent.cabling``; renderers only lay the
numbers out.  The headroom maths mirrors SONiC's dynamic buffer model on NVIDIA Spectrum
(sonic-swss ``cfgmgr/buffer_headroom_mellanox.lua``) so a SONiC leaf computing its own headroom
lands on the same xon/xoff/size as the plan, and the NX-OS/host sides can be checked against it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from fabricgen.catalog.registry import SONIC_COMMUNITY_ECN, EcnDefault, capabilities, vendor_ecn_range
from fabricgen.catalog.skus import HardwareSku
from fabricgen.errors import FabricError, Problem
from fabricgen.intent.model import Headroom, Intent, Qos
from fabricgen.plan.model import Interface, Plan, QosPolicy, QosProfile, Tier

# IEEE 802.3 Annex 31B pause_quanta a port must absorb after sending PAUSE, per speed (Gb/s);
# the same table as SONiC's Mellanox headroom plugin (which maps 800G to the 400G value).
PAUSE_QUANTA: dict[int, int] = {25: 80, 50: 147, 100: 394, 200: 453, 400: 905, 800: 905}
SPEED_OF_LIGHT = 198_000_000  # m/s in the cable, the plugin's constant
MIN_PACKET = 64  # bytes, smallest Ethernet frame
KIB = 1024
TRAFFIC_CLASSES = range(8)
ECT0 = 0b10  # ECN field value "ECN-capable transport (0)"
_SOURCE = "intent"  # FabricError source when no file name is known at this stage


def _ceil_kib(value: float) -> int:
    return math.ceil(value / KIB) * KIB


def is_eight_lane(speed_gbps: int) -> bool:
    """fabricgen's lane assumption: 400G and 800G ports run on 8 SerDes lanes (conservative: more xon)."""
    return speed_gbps >= 400


def headroom(
    speed_gbps: int, cable_m: float, port_mtu: int, hr: Headroom, *, lanes: int | None = None
) -> tuple[int, int, int]:
    """PFC headroom (xon, xoff, size) in bytes of one lossless PG, as SONiC computes it on Spectrum.

    Operation order follows the Lua plugin so the float rounding (and so every 1 KiB step) matches.
    ``lanes`` defaults to :func:`is_eight_lane`; 8-lane ports double the pipeline latency (minus
    1 KiB) and, as the plugin does, add one port MTU to ``size`` (not to xon), so for them
    size = xon + xoff + port_mtu.  No shared headroom pool: size always includes xoff.
    """
    quanta = PAUSE_QUANTA.get(speed_gbps)
    if quanta is None:
        known = ", ".join(f"{s}G" for s in PAUSE_QUANTA)
        raise ValueError(f"no IEEE 802.3 pause-quanta value for {speed_gbps}G ports (known: {known}); "
                         "the PFC headroom cannot be computed")
    if cable_m <= 0:
        raise ValueError(f"cable length must be positive, got {cable_m} m")
    if port_mtu < 1:
        raise ValueError(f"port MTU must be positive, got {port_mtu}")
    eight_lane = is_eight_lane(speed_gbps) if lanes is None else lanes == 8

    pipeline_latency = hr.pipeline_latency_kb * KIB
    mac_phy_delay = hr.mac_phy_delay_kb * KIB
    speed_overhead = 0
    if eight_lane:
        pipeline_latency = pipeline_latency * 2 - KIB
        speed_overhead = port_mtu

    cell = hr.cell_size
    worst_case_factor = cell / MIN_PACKET if cell > 2 * MIN_PACKET else (2 * cell) / (1 + cell)
    small = hr.small_packet_percentage
    cell_occupancy = (100 - small + small * worst_case_factor) / 100

    speed_mbps = speed_gbps * 1000
    peer_response = quanta * 512 / 8  # pause quanta are 512 bit times
    # round trip, in the plugin's units (Mb/s x 1e9 / 8 KiB, i.e. ~1000/1024 of true bytes)
    bytes_on_cable = 2 * cable_m * speed_mbps * 1_000_000_000 / SPEED_OF_LIGHT / (8 * KIB)
    propagation_delay = port_mtu + bytes_on_cable + mac_phy_delay + peer_response  # no gearbox

    xoff = _ceil_kib(hr.lossless_mtu + propagation_delay * cell_occupancy)
    xon = _ceil_kib(pipeline_latency)
    size = _ceil_kib(xoff + xon + speed_overhead)
    return xon, xoff, size


@dataclass(frozen=True, slots=True)
class EcnSetting:
    """The ECN/WRED thresholds of a port's RoCE queue and where they come from."""

    min_bytes: int
    max_bytes: int
    probability: int
    tag: str = ""  # profile-name tag of a platform default that is not SONiC's ("nxos"); "" otherwise
    source: str = "intent"


def default_ecn(platform: str, sku: HardwareSku | None = None) -> EcnDefault:
    """The ECN thresholds a switch runs when the intent sets none for a speed: its SKU's QoS template,
    else its platform's vendor default; platforms that render no ECN (frr) plan with SONiC's, the
    routing stack they stand in for."""
    if sku is not None and sku.ecn_default is not None:
        return sku.ecn_default
    return capabilities(platform).ecn_default or SONIC_COMMUNITY_ECN


def ecn_setting(intent: Intent, speed: int, platform: str = "sonic", sku: HardwareSku | None = None) -> EcnSetting:
    """The intent's `qos.ecn.<speed>` if it sets one, else the vendor default of the switch (facts.default_ecn)."""
    explicit = intent.qos.ecn.get(speed)
    if explicit is not None:
        return EcnSetting(explicit.min_bytes, explicit.max_bytes, explicit.probability)
    d = default_ecn(platform, sku)
    caps = capabilities(platform)
    own = not caps.ecn_from_sku and caps.ecn_default is not None
    tag = platform if own else ""
    return EcnSetting(d.min_bytes, d.max_bytes, d.probability, tag, d.source)


# --------------------------------------------------------------------------- fabric-wide policy


def pfc_mask(lossless_tcs: Iterable[int]) -> str:
    """mlnx_qos --pfc argument: one 0/1 per priority 0..7."""
    lossless = set(lossless_tcs)
    return ",".join("1" if p in lossless else "0" for p in TRAFFIC_CLASSES)


def roce_tos(dscp: int, ecn: bool = True) -> int:
    """IPv4 ToS byte of RoCE traffic: DSCP in the upper six bits, ECT(0) when DCQCN is on."""
    return dscp << 2 | (ECT0 if ecn else 0)


def build_policy(intent: Intent) -> QosPolicy:
    """Classification, PFC maps, scheduling and NIC settings shared by every switch and GPU NIC.

    All 64 DSCPs are listed (SONiC's templates do; an ASIC default for unlisted ones is not
    portable).  Priority groups: each lossless TC gets its own PG so its headroom is separate;
    all lossy TCs share PG 0.
    """
    q = intent.qos
    lossless = tuple(sorted(set(q.lossless)))
    dscp_to_tc = {d: 0 for d in range(64)}
    for d in q.roce_dscp:
        dscp_to_tc[d] = q.roce_tc
    dscp_to_tc[q.cnp_dscp] = q.cnp_tc
    identity = {tc: tc for tc in TRAFFIC_CLASSES}
    return QosPolicy(
        roce_dscp=q.roce_dscp,
        cnp_dscp=q.cnp_dscp,
        roce_tc=q.roce_tc,
        cnp_tc=q.cnp_tc,
        lossless_tcs=lossless,
        dscp_to_tc=dscp_to_tc,
        tc_to_queue=dict(identity),
        tc_to_pg={tc: (tc if tc in lossless else 0) for tc in TRAFFIC_CLASSES},
        pfc_priority_to_queue=dict(identity),
        bandwidth={"roce": q.bandwidth.roce, "default": q.bandwidth.default},
        mtu=q.mtu,
        watchdog_enabled=q.pfc_watchdog.enabled,
        watchdog_detection_ms=q.pfc_watchdog.detection_ms,
        watchdog_restoration_ms=q.pfc_watchdog.restoration_ms,
        watchdog_poll_ms=q.pfc_watchdog.poll_ms,
        watchdog_action=q.pfc_watchdog.action,
        nic_trust=q.nic.trust,
        nic_cnp_dscp=q.cnp_dscp if q.nic.cnp_dscp is None else q.nic.cnp_dscp,
        nic_roce_tos=roce_tos(q.roce_dscp[0], q.nic.ecn_capable),
        nic_ecn=q.nic.ecn_capable,
        nic_qps_per_connection=q.nic.qps_per_connection,
    )


def cnp_class(policy: QosPolicy, platform: str) -> int:
    """The traffic class (= queue) a platform's config gives CNPs: the platform's own CNP queue where its
    record names one (NX-OS: 7) and no other class of the intent uses it, else the plan's CNP class."""
    cnp = capabilities(platform).cnp_queue
    if cnp is None or cnp in policy.lossless_tcs or cnp in set(policy.dscp_to_tc.values()) - {policy.cnp_tc}:
        return policy.cnp_tc
    return cnp


# --------------------------------------------------------------------------- per-port profiles


def tier_cable_m(intent: Intent, tier: Tier) -> float:
    """Intent cable length of a tier, used when a port has no measured length."""
    c = intent.cabling
    if tier == "gpu_leaf":
        return c.gpu_leaf_m
    return c.leaf_spine_m if tier == "leaf_spine" else c.spine_super_spine_m


def profile_length(cable_m: float) -> int:
    """Whole metres, rounded up (longer cable = more headroom, never less), at least 1 m."""
    return max(1, math.ceil(cable_m))


def profile_name(speed_gbps: int, length_m: int, mtu: int, fabric_mtu: int, tag: str = "") -> str:
    """SONiC BUFFER_PROFILE naming, ``_mtu<mtu>`` only for ports off the fabric MTU, ``_<tag>`` for a
    non-SONiC platform's own ECN default (those ports never appear in a SONiC config)."""
    mtu_part = "" if mtu == fabric_mtu else f"_mtu{mtu}"
    tag_part = f"_{tag}" if tag else ""
    return f"pg_lossless_{speed_gbps * 1000}_{length_m}m{mtu_part}{tag_part}_profile"


def _port_key(intent: Intent, itf: Interface) -> tuple[int, int, int]:
    cable = itf.cable_m if itf.cable_m > 0 else tier_cable_m(intent, itf.tier)
    return itf.speed, profile_length(cable), itf.mtu


def make_profile(intent: Intent, speed: int, length_m: int, mtu: int, ecn: EcnSetting | None = None) -> QosProfile:
    """One lossless PG profile (default ECN: the intent's, else SONiC's); FabricError for a speed without quanta."""
    try:
        xon, xoff, size = headroom(speed, length_m, mtu, intent.qos.headroom)
    except ValueError as exc:
        hint = "use port speeds among " + ", ".join(f"{s}G" for s in PAUSE_QUANTA)
        raise FabricError.single(_SOURCE, "qos.headroom", str(exc), hint) from None
    e = ecn if ecn is not None else ecn_setting(intent, speed)
    return QosProfile(
        name=profile_name(speed, length_m, mtu, intent.qos.mtu, e.tag),
        speed=speed,
        cable_m=float(length_m),
        mtu=mtu,
        xon=xon,
        xoff=xoff,
        size=size,
        ecn_min=e.min_bytes,
        ecn_max=e.max_bytes,
        ecn_probability=e.probability,
    )


def build_profiles(intent: Intent, interfaces: Iterable[Interface], platform: str = "sonic",
                   sku: HardwareSku | None = None) -> dict[str, QosProfile]:
    """One profile per distinct (speed, cable metres rounded up, MTU) of ports on one platform/SKU."""
    keys = sorted({_port_key(intent, itf) for itf in interfaces})
    profiles = (make_profile(intent, *key, ecn_setting(intent, key[0], platform, sku)) for key in keys)
    return {p.name: p for p in profiles}


def assign_profiles(plan: Plan, intent: Intent) -> None:
    """Set plan.qos, plan.qos_profiles and every switch port's qos_profile.

    Every fabric and GPU-facing port carries RoCE, so every port gets a lossless profile.  A
    profile is one (speed, cable metres, MTU, ECN): where the intent sets no ECN for a speed each
    switch runs its vendor's default (its SKU's QoS template, or its platform's), so the two ends
    of a link may use different profiles.  Needs links (speeds, cable lengths); addresses are not used.
    """
    plan.qos = build_policy(intent)
    found: dict[str, QosProfile] = {}
    # A port's profile follows from its role's platform and SKU and its speed, cable, tier and MTU: worked out
    # once per such class (a handful), not per port (655K at 128K GPUs).
    named: dict[tuple[object, ...], str] = {}
    for sw in plan.switches.values():
        hw = plan.hardware.get(sw.role)
        sku = hw.sku if hw is not None else None
        settings: dict[int, EcnSetting] = {}
        for itf in sw.interfaces:
            cls = (sw.role, sw.platform, itf.speed, itf.cable_m, itf.tier, itf.mtu)
            known = named.get(cls)
            if known is not None:
                itf.qos_profile = known
                continue
            speed, length, mtu = _port_key(intent, itf)
            ecn = settings.get(speed)
            if ecn is None:
                ecn = settings[speed] = ecn_setting(intent, speed, sw.platform, sku)
            name = profile_name(speed, length, mtu, intent.qos.mtu, ecn.tag)
            prof = found.get(name)
            if prof is None:
                prof = found[name] = make_profile(intent, speed, length, mtu, ecn)
            elif (prof.ecn_min, prof.ecn_max, prof.ecn_probability) != (ecn.min_bytes, ecn.max_bytes, ecn.probability):
                raise FabricError.single(_SOURCE, f"qos.ecn.{speed}", f"SONiC SKUs of this fabric ship different ECN "
                                         f"defaults for {speed}G ports", f"set qos.ecn.{speed} for the whole fabric")
            itf.qos_profile = named[cls] = name
    plan.qos_profiles = dict(sorted(found.items(), key=lambda kv: (kv[1].speed, kv[1].cable_m, kv[1].mtu, kv[0])))


# --------------------------------------------------------------------------- invariants

# SONiC PFC_WD YANG ranges (ms); the intent model enforces them too, this guards constructed intents.
# NVIDIA NIC Configuration Operator "roceOptimized" sets CNP_DSCP_P1=4, not the switches' 48.
ROCE_OPTIMIZED_CNP_DSCP = 4


def _intent_port_classes(intent: Intent) -> set[tuple[int, int, int]]:
    """(speed, metres, mtu) of each link tier of an intent, before any topology exists."""
    sm, c, mtu = intent.switch_models, intent.cabling, intent.qos.mtu
    classes = {(min(intent.servers.nic_speed, sm.leaf.side("down")[0]), profile_length(c.gpu_leaf_m), mtu)}
    if intent.topology.tiers >= 2 and sm.spine is not None:
        classes.add((sm.leaf.side("up")[0], profile_length(c.leaf_spine_m), mtu))
    if intent.topology.tiers == 3 and sm.spine is not None:
        classes.add((sm.spine.side("up")[0], profile_length(c.spine_super_spine_m), mtu))
    return classes


def _headroom_problems(intent: Intent, classes: Iterable[tuple[int, int, int]]) -> list[Problem]:
    """Every port class needs a computable PFC headroom (a speed with IEEE pause quanta)."""
    problems: list[Problem] = []
    for speed, length, mtu in sorted(classes):
        try:
            headroom(speed, length, mtu, intent.qos.headroom)
        except ValueError as exc:
            problems.append(Problem("qos.headroom", str(exc), "use a port speed with a known pause quanta"))
            break
    return problems


def ecn_warnings(intent: Intent) -> list[Problem]:
    """Configured ECN thresholds outside the span of the vendors' published defaults for their speed."""
    out: list[Problem] = []
    for speed, ecn in sorted(intent.qos.ecn.items()):
        (min_lo, min_hi), (max_lo, max_hi), sources = vendor_ecn_range(speed)
        bad = []
        if not min_lo <= ecn.min_bytes <= min_hi:
            bad.append(f"min {ecn.min_bytes} B is outside {min_lo}..{min_hi} B")
        if not max_lo <= ecn.max_bytes <= max_hi:
            bad.append(f"max {ecn.max_bytes} B is outside {max_lo}..{max_hi} B")
        if bad:
            named = "; ".join(f"{d.source}: {d.min_bytes} / {d.max_bytes} B" for d in sources)
            out.append(Problem(f"qos.ecn.{speed}", f"ECN at {speed}G: {' and '.join(bad)}, the range of the "
                               f"vendors' defaults for {speed}G ({named})",
                               f"use thresholds within that range, or drop qos.ecn.{speed} for each "
                               "platform's own default"))
    return out


def _policy_problems(q: Qos) -> list[Problem]:
    problems: list[Problem] = []

    def add(path: str, message: str, hint: str) -> None:
        problems.append(Problem(path, message, hint))

    lossless = q.lossless
    bad_tcs = sorted(tc for tc in lossless if tc not in TRAFFIC_CLASSES)
    if bad_tcs:
        add("qos.lossless_tcs", f"traffic classes must be 0..7, got {bad_tcs}", "use 0..7")
    if 0 in lossless:
        add("qos.lossless_tcs", "TC 0 is lossless, but every unclassified DSCP maps to TC 0",
            "keep TC 0 lossy; give RoCE its own class (e.g. 3)")
    if q.roce_tc not in lossless:
        add("qos.lossless_tcs", f"RoCE class {q.roce_tc} is not lossless (lossless: {list(lossless)})",
            f"add {q.roce_tc} to qos.lossless_tcs")
    if q.cnp_tc == q.roce_tc:
        add("qos.cnp_tc", f"CNPs share traffic class {q.cnp_tc} with RoCE data",
            "give CNPs their own strict-priority class, e.g. 6")
    elif q.cnp_tc in lossless:
        add("qos.lossless_tcs", f"CNP class {q.cnp_tc} is lossless: PFC would pause the congestion "
            "notifications that are meant to relieve congestion", f"remove {q.cnp_tc} from qos.lossless_tcs")
    if q.cnp_dscp in q.roce_dscp:
        add("qos.cnp_dscp", f"CNP DSCP {q.cnp_dscp} is also a RoCE data DSCP",
            "use distinct values, e.g. RoCE 26 and CNP 48")
    shares = q.bandwidth.roce + q.bandwidth.default
    if shares != 100:
        add("qos.bandwidth", f"bandwidth shares sum to {shares}%, not 100% "
            f"(roce {q.bandwidth.roce} + default {q.bandwidth.default})", "make roce + default = 100")
    if q.mtu < q.headroom.lossless_mtu:
        add("qos.mtu", f"MTU {q.mtu} is below the lossless MTU {q.headroom.lossless_mtu} the headroom is "
            "sized for",
            "raise qos.mtu or lower qos.headroom.lossless_mtu")
    wd = q.pfc_watchdog
    if wd.poll_ms > min(wd.detection_ms, wd.restoration_ms):
        add("qos.pfc_watchdog.poll_ms", f"poll interval {wd.poll_ms} ms is longer than detection "
            f"{wd.detection_ms} ms / restoration {wd.restoration_ms} ms",
            "poll at most as often as the shorter of the two timers")
    nic_cnp = q.cnp_dscp if q.nic.cnp_dscp is None else q.nic.cnp_dscp
    if nic_cnp != q.cnp_dscp:
        hint = f"set qos.nic.cnp_dscp to {q.cnp_dscp} (or leave it unset)"
        if nic_cnp == ROCE_OPTIMIZED_CNP_DSCP:
            hint += ("; NVIDIA's NIC Configuration Operator 'roceOptimized' profile programs CNP_DSCP_P1=4, "
                     f"override it with CNP_DSCP_P1={q.cnp_dscp}")
        add("qos.nic.cnp_dscp", f"NICs send CNPs with DSCP {nic_cnp} but the switches classify CNPs on "
            f"DSCP {q.cnp_dscp}: CNPs would queue as default traffic", hint)
    if q.nic.trust != "dscp":
        add("qos.nic.trust", f"NIC trust '{q.nic.trust}' needs 802.1Q tags, but GPU links are routed and "
            "untagged, so RoCE would leave the NIC at priority 0", "use trust: dscp")
    return problems


def check_invariants(intent: Intent, plan: Plan | None = None) -> list[Problem]:
    """Cross-field QoS rules that pydantic cannot see, for an intent or the plan built from it.

    Without a plan the port classes come from the switch models and tier cable lengths; with one
    from its profiles (or, before assign_profiles, its interfaces).
    """
    if plan is not None:
        if plan.qos_profiles:
            classes = {(p.speed, int(p.cable_m), p.mtu) for p in plan.qos_profiles.values()}
        else:
            classes = {_port_key(intent, itf) for sw in plan.switches.values() for itf in sw.interfaces}
        low_mtu = sorted({mtu for _, _, mtu in classes if mtu < intent.qos.headroom.lossless_mtu})
    else:
        classes = _intent_port_classes(intent)
        low_mtu = []
    problems = _policy_problems(intent.qos)
    if low_mtu:
        problems.append(Problem("qos.mtu", f"ports with MTU {low_mtu} are below the lossless MTU "
                                f"{intent.qos.headroom.lossless_mtu}", "raise the port MTU"))
    problems += _headroom_problems(intent, classes)
    return problems
