"""The platform registry: one declarative record per platform (netlab's device files, in Python).

Everything fabricgen knows about a platform lives in its `PlatformRecord`: the files it renders
and with which function, how it names ports without a SKU and where its SKU data comes from,
its napalm driver, its containerlab kind, whether the namespace lab can run it, the function
that extracts its RoCE facts from rendered files, its structural checks, what its configs do
not deploy, and its **capabilities**.  render, deploy, inventory, check, lab and the tests ask
`platform(name)`; nothing else branches on a platform's name.  Adding a platform is adding a
record here (and its own renderer, template and extractor modules).

This module imports no other part of fabricgen at import time (the intent validates platform
names against it); functions are named by "module:attribute" and loaded on first use.

Capability sources (the team's RoCE vendor reference, roce-fabric-vendor-reference.md):

* NX-OS dynamic load balancing (§1.10): flowlet and per-packet modes on Cloud Scale
  9300-FX3/GX/GX2/HX-TOR from 10.5(1)F; it steers traffic to a DLB MAC that every participating
  switch must own, so a port joins DLB only when its neighbour does DLB too; changing
  `hardware profile dlb` is reload-pending.
* NX-OS pause buffers (§5.3): `pause buffer-size ... pause-threshold ... resume-threshold` is
  mandatory on no-drop classes of cables longer than 100 m (Cisco Nexus 9000 QoS guide, PFC
  guidelines).  Cloud Scale thresholds are in bytes; every published value is a whole number of
  208-byte buffer cells (e.g. 101920 / 46800 / 34320), so fabricgen rounds to cells too.
* NX-OS PFC watchdog (§1.7): the watchdog polls every `watch-dog interval` (100..1000 ms, default
  100 ms; Nexus Dashboard offers 101..1000), declares a queue stuck after `shutdown-multiplier`
  intervals (1..10) and drops its traffic -- NX-OS has no forward or alert-only action.
* SONiC (§2): PFC_WD per port with detection / restoration times and drop / forward / alert
  actions, the dynamic buffer model (headroom computed by buffermgrd's Lua); SONiC renders no
  adaptive routing today (ARS needs SKU support, issue 9's SONiC half).
* Linux + FRR: BGP and BFD only; no QoS in frr.conf, the MTU is the kernel interface's.
* PTP boundary clocks (docs/ptp.md): NX-OS `feature ptp` with the default (1588) profile on routed ports
  (Cisco Nexus 9000 NX-OS System Management Configuration Guide, "Configuring PTP": default, AES67 and
  SMPTE 2059-2 profiles; fabricgen renders no telecom profile there); EOS `ptp mode boundary` with the
  default profile or `ptp profile g8275.1 | g8275.2` (AVD eos_cli_config_gen `ptp.profile`); Linux + FRR
  switches run linuxptp's ptp4l (its G.8275.1 / G.8275.2 example configs); SONiC has no PTP yet
  (sonic-net/SONiC#2324 is open).
* ECN defaults of the RoCE queue (§0.1, §5.4): Cisco Nexus Dashboard's AI/ML QoS 950 / 3,000 KB at
  probability 7 % (published for 100-400G); SONiC's community QoS template 1 / 2 MiB at 5 %
  (a SONiC SKU's own QoS template may differ: `skus.HardwareSku.ecn_default`); NVIDIA Cumulus
  `nv set qos roce` 150,000 / 1,501,500 B at 100 %.  The ECN maximum is never compared with a
  PG's `xoff`: that is headroom above the pause trigger, not the trigger (§5.4 erratum).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

# --------------------------------------------------------------------------- ECN defaults


@dataclass(frozen=True, slots=True)
class EcnDefault:
    """The ECN/WRED thresholds a vendor ships for the lossless queue (bytes, percent)."""

    min_bytes: int
    max_bytes: int
    probability: int
    source: str
    speeds: tuple[int, ...] = ()  # Gb/s the vendor publishes it for; () = every speed

    def applies_to(self, speed: int) -> bool:
        return not self.speeds or speed in self.speeds


KBYTE = 1024  # NX-OS `kbytes`
# SONiC's community QoS template (files/build_templates/qos_config.j2, WRED_PROFILE AZURE_LOSSLESS),
# used by every SKU whose own qos.json.j2 does not generate WRED profiles.
SONIC_COMMUNITY_ECN = EcnDefault(1_048_576, 2_097_152, 5,
                                 "SONiC community QoS template (qos_config.j2 WRED_PROFILE AZURE_LOSSLESS)")
# Cisco Nexus Dashboard AI/ML QoS defaults (Cisco's ND Ansible collection, vendor reference §0.1)
CISCO_ND_ECN = EcnDefault(950 * KBYTE, 3000 * KBYTE, 7, "Cisco Nexus Dashboard AI/ML QoS (NX-OS)",
                          speeds=(100, 200, 400))
# NVIDIA Cumulus `nv set qos roce` (Spectrum), vendor reference §3.1
CUMULUS_ECN = EcnDefault(150_000, 1_501_500, 100, "NVIDIA Cumulus nv set qos roce (Spectrum)")
# Arista's RoCE samples mark with weight 0 (instantaneous depth) and a 20 % maximum mark probability (the AMD
# Instinct cluster networking guide's Arista 7388 DCQCN sample); they publish no byte thresholds fabricgen
# could take for every speed, so the thresholds are SONiC's community ones, in kbytes.
ARISTA_ECN = EcnDefault(1_048_576, 2_097_152, 20, "Arista DCQCN samples (weight 0, max-mark-probability 20; "
                        "thresholds: SONiC community QoS template)")
# Every vendor default fabricgen knows: the range a configured threshold is compared with.
VENDOR_ECN_DEFAULTS = (CUMULUS_ECN, CISCO_ND_ECN, SONIC_COMMUNITY_ECN)


def vendor_ecn_range(speed: int) -> tuple[tuple[int, int], tuple[int, int], list[EcnDefault]]:
    """(min range, max range, sources): the span of the vendors' published defaults for `speed`."""
    sources = [d for d in VENDOR_ECN_DEFAULTS if d.applies_to(speed)]
    mins = [d.min_bytes for d in sources]
    maxes = [d.max_bytes for d in sources]
    return (min(mins), max(mins)), (min(maxes), max(maxes)), sources


# --------------------------------------------------------------------------- capabilities


@dataclass(frozen=True, slots=True)
class WatchdogFacts:
    """How a platform's PFC watchdog timers are configured (whole multiples of its poll interval)."""

    interval_ms: tuple[int, int]  # poll interval range
    detection_multiplier: tuple[int, int]  # intervals before a stuck queue is shut
    restore_multiplier: tuple[int, int]  # intervals without PFC before it is restored


@dataclass(frozen=True, slots=True)
class WatchdogTimers:
    """The intent's PFC watchdog in a platform's terms: a poll interval and two multiples of it."""

    interval_ms: int
    detection_multiplier: int  # stuck after this many intervals (detection = interval x multiplier)
    restore_multiplier: int  # restored after this many intervals without PFC

    @property
    def detection_ms(self) -> int:
        return self.interval_ms * self.detection_multiplier

    @property
    def restoration_ms(self) -> int:
        return self.interval_ms * self.restore_multiplier


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a platform's rendered config can express, as far as fabricgen's plan depends on it."""

    lossless_qos: bool = False  # PFC, ECN, DWRR / strict scheduling in its config
    adaptive_routing_modes: frozenset[str] = frozenset()  # modes it renders; empty = no adaptive routing
    adaptive_routing_needs_reload: bool = False  # enabling it only takes effect after a reload
    qp_hashing: bool = False  # can hash on the RoCE queue pair (UDF on the BTH destination QP)
    # Where its ECMP hash seed comes from: "config" (the intent's per-tier seed and rotation are rendered),
    # "fixed" (the platform derives it itself: record.hash_seed_fn), "random" (a random key per switch),
    # "none" (no seed setting: every switch of a model hashes alike).
    hash_seed: Literal["config", "fixed", "random", "none"] = "none"
    hash_algorithms: frozenset[str] = frozenset()  # modelled hashes (crc32, crc16, xor) its config can select
    pfc_watchdog: bool = False  # renders a PFC watchdog
    watchdog_actions: frozenset[str] = frozenset()  # storm actions it implements (intent names: drop, forward, alert)
    watchdog_timers: WatchdogFacts | None = None  # None: any timers the intent validates are rendered as they are
    dynamic_buffers: bool = False  # headroom computed on the switch from cable length and speed
    bfd: bool = False
    sets_mtu: bool = True  # the config carries the interface MTU
    max_mtu: int = 9216  # largest interface MTU it takes
    strict_queues_highest: bool = False  # strict-priority queues must all be above the round-robin ones
    maximum_paths: int = 1024  # largest `maximum-paths` the BGP implementation takes
    pause_buffer_above_m: float | None = None  # static ingress pause buffer needed above this cable length
    buffer_cell_bytes: int = 1  # granularity of buffer thresholds
    ecn_default: EcnDefault | None = None  # the vendor's RoCE-queue ECN; None: SONiC's (the config has no ECN)
    ecn_from_sku: bool = False  # the SKU's own QoS template sets the ECN default (SONiC), not the platform
    breakout_in_config: bool = False  # its hardware models break cages out in the config (NX-OS), not a SKU file
    cnp_queue: int | None = None  # the queue its config puts CNPs in (NX-OS: 7); None: the plan's CNP class
    ptp_profiles: frozenset[str] = frozenset()  # PTP profiles its boundary clock renders; empty: no PTP
    ptp_missing: str = ""  # why it has no PTP (or lacks a profile), for the refusal
    tenancy: frozenset[str] = frozenset()  # tenant isolation it renders (tenancy.mechanism: vrf-lite, evpn-vxlan)

    def adaptive_routing(self, mode: str) -> bool:
        """True if the platform renders adaptive routing in this mode."""
        return mode in self.adaptive_routing_modes

    def needs_pause_buffer(self, cable_m: float) -> bool:
        return self.pause_buffer_above_m is not None and cable_m > self.pause_buffer_above_m

    def has(self, capability: str) -> bool:
        """By name, as `plan` reports a missing one: "bfd", "pfc-watchdog", "adaptive-routing flowlet" ..."""
        kind, _, arg = capability.partition(" ")
        if kind == "adaptive-routing":
            return self.adaptive_routing(arg)
        if kind == "ptp":
            return arg in self.ptp_profiles
        if kind == "hash-seed":
            return self.hash_seed == "config"
        if kind == "hash-algorithm":
            return arg in self.hash_algorithms
        if kind == "tenancy":
            return arg in self.tenancy
        return bool(getattr(self, kind.replace("-", "_")))


# --------------------------------------------------------------------------- port naming


def slot_port_name(cage: int, sub: int, breakout: int, lanes_per_port: int) -> str:
    """Ethernet1/<cage> on a fixed switch, Ethernet1/<cage>/<sub> when the cage is broken out (NX-OS)."""
    return f"Ethernet1/{cage + 1}" if breakout == 1 else f"Ethernet1/{cage + 1}/{sub + 1}"


def lane_port_name(cage: int, sub: int, breakout: int, lanes_per_port: int) -> str:
    """Ethernet<first SerDes lane> (SONiC, and Linux + FRR on the same netdevs)."""
    return f"Ethernet{cage * lanes_per_port + sub * (lanes_per_port // breakout)}"


def cage_lane_port_name(cage: int, sub: int, breakout: int, lanes_per_port: int) -> str:
    """Ethernet<cage>/<first lane>: every lane of a multi-lane cage is addressable (EOS)."""
    return f"Ethernet{cage + 1}/{sub * max(1, lanes_per_port // breakout) + 1}"


PortNaming = Callable[[int, int, int, int], str]  # (cage, sub-port, breakout, lanes per cage), all 0-based


# --------------------------------------------------------------------------- deploy gaps


@dataclass(frozen=True, slots=True)
class PlatformGap:
    """An intent setting a platform's config does not carry (see fabricgen.plan.deployable)."""

    setting: str  # dotted intent path; a prefix covers everything under it
    why: str
    fix: str
    refuse: bool = True  # False: a plan warning only (deploy checks it live)


# --------------------------------------------------------------------------- the record


@dataclass(frozen=True, slots=True)
class PlatformRecord:
    """One platform, declared.  "module:attribute" strings are loaded on first use."""

    name: str
    description: str
    kind: Literal["switch", "host"]
    files: tuple[str, ...]  # rendered per device, the main (startup) config first; "{device}" = the device's name
    renderer: str  # (switch, plan, jinja2 env) -> {file name: text}
    port_name: PortNaming | None  # generic port naming without a SKU (None: hosts)
    sku_catalog: Literal["sonic", "nxos", ""]  # where its hardware SKUs come from ("" = none)
    napalm_driver: str  # nornir-napalm platform (napalm's get_network_driver name)
    containerlab_kind: str
    containerlab_image: str
    extractor: str  # (plan, configs dir, hostname) -> check.facts.DeviceFacts
    capabilities: Capabilities
    # Structural checks of `fabricgen check` (full): batch checkers over one of its files (check.run knows
    # "sonic-yang" and "frr-parse"), and/or a per-device analyzer that parses a config once for its own
    # structural rules and its RoCE facts: (plan, configs, host, structural) -> (findings, DeviceFacts).
    file_checks: tuple[tuple[str, str], ...] = ()  # (checker, file name)
    analyzer: str = ""
    structural_rules: str = ""  # the analyzer's rule ids (a tuple of str)
    lab_node: bool = False  # the namespace lab runs its rendered config as it is
    # A rendered file the lab runs in the switch's namespaces before FRR starts (the kernel side of its
    # tenant VRFs: network namespaces, so zebra runs with its netns VRF backend, `-n`), and deploy runs on the
    # switch right before each commit (driver `fabricgen_setup`: idempotent, never in a dry run); "" = none
    lab_script: str = ""
    output_dir: str = "configs"  # where render writes its files, below the output directory
    per_device_dir: bool = True  # <output_dir>/<device>/<file>; False: <output_dir>/<file>
    executable: bool = False  # its files are scripts
    pointer_file: str = ""  # the file JSON-pointer locations ("/PORT/...") point into
    bgp_file: str = ""  # the file holding `router bgp` (default: the main file)
    leaf_announces_own_only: bool = False  # its leaves export only their own prefixes (PL-LOCAL)
    candidate: Literal["text", "json-bundle"] = "text"  # one file as is, or every file in one JSON document
    # Rendered files deploy pushes beside the main one, each to a file of its own on the device, restarting the
    # daemon that reads it only when it changed (frr: linuxptp's ptp4l.conf).  A device that renders any gets a
    # JSON document keyed by file name (render.manifest.candidate_config); one that renders none, its main file.
    service_files: tuple[str, ...] = ()
    fact_cost_s: float = 0.001  # estimated fact extraction time per device (pool decisions)
    extract_in_pool: bool = False  # worth a worker process (parse cost above the pickling of its facts)
    not_deployed: tuple[PlatformGap, ...] = ()
    plan_warnings: str = ""  # (plan) -> [Problem]: what the platform has to say about a plan (SONiC: buffers)
    plan_problems: str = ""  # (plan) -> [Problem]: what the platform refuses in a plan (NX-OS: no-drop budget)
    lossless_apply: str = ""  # (hwsku) -> (live, statement): can the lossless config go on live (SONiC: GCU)?
    impact: str = ""  # platforms.change.Labeller: the impact rules of its config diffs ("" = none: deploy refuses)
    drain: str = ""  # (candidate, on) -> candidate: BGP graceful shutdown ("" = it cannot be drained)
    saved_config: Literal["startup", "running"] = "startup"  # the get_config() side that holds the saved config
    lab_box: str = ""  # (plan, switch) -> lab.topology.SonicBox-like extras of its lab node ("" = plain FRR node)
    tenant_extractor: str = ""  # (plan, configs, host) -> platforms.tenant_facts.TenantFacts ("" = no tenants)
    # (napalm device) -> {VRF: platforms.tenant_facts.LiveVrf}: the VRFs it runs (validate --tenants; "" = not read)
    tenant_reader: str = ""
    ptp_reader: str = ""  # (configs, host) -> platforms.ptp_facts.PtpFacts | None: its PTP lines ("" = no PTP)
    hash_seed_fn: str = ""  # (role) -> (seed, rotate, how): the seed a "fixed" hash_seed platform gives a role
    # The `frr defaults` profile its frr.conf declares, once ("" = it runs no FRR).  FRR reads it only when a
    # daemon starts, so `validate` (frr-defaults) names a daemon that runs another one (issue 23 D4).
    frr_defaults: str = ""
    # (plan, switch) -> {setting: value}: the ECMP hash settings validate reads back with the driver's
    # get_ecmp_hash() and compares (rule `hash`); "" = not read back
    live_hash: str = ""

    @property
    def main_file(self) -> str:
        return self.files[0]

    @property
    def bgp_config_file(self) -> str:
        return self.bgp_file or self.files[0]

    def location_file(self, loc: str) -> str:
        """The file a finding's location points into: JSON pointers (/...) or lines (L12) of the text config."""
        if self.pointer_file and loc.startswith("/"):
            return self.pointer_file
        return self.bgp_config_file if self.pointer_file else self.main_file

    def render_fn(self) -> Callable[..., dict[str, str]]:
        fn: Callable[..., dict[str, str]] = load(self.renderer)
        return fn

    def extractor_fn(self) -> Callable[..., Any]:
        fn: Callable[..., Any] = load(self.extractor)
        return fn

    def rule_ids(self) -> tuple[str, ...]:
        """Every structural check id `fabricgen check` runs on a device of this platform."""
        rules: tuple[str, ...] = load(self.structural_rules) if self.structural_rules else ()
        return tuple(checker for checker, _ in self.file_checks) + rules


_LOADED: dict[str, Any] = {}


def load(ref: str) -> Any:
    """The object a "package.module:attribute" reference names (imported once)."""
    obj = _LOADED.get(ref)
    if obj is None:
        module, _, attr = ref.partition(":")
        obj = _LOADED[ref] = getattr(importlib.import_module(module), attr)
    return obj


_FRR_NO_QOS = (
    PlatformGap("qos.mtu", "frr.conf has no interface MTU (FRR 8.4's zebra has no `mtu` command); the MTU "
                           "is the Linux interface's", "set the MTU on the switch ports themselves (the lab "
                                                       "does at `fabricgen lab up`)", refuse=False),
    PlatformGap("qos.nic", "NIC settings go to the servers' NIC scripts, not to switches",
                "run the hosts/*.sh scripts on the servers", refuse=False),
    PlatformGap("qos", "Linux + FRR switches get no QoS from fabricgen (no PFC, ECN, scheduling or buffers "
                       "in frr.conf)", "use platform sonic or nxos for lossless RoCE switches"),
)

_NXOS = PlatformRecord(
    name="nxos",
    description="Cisco NX-OS (Nexus 9000 Cloud Scale)",
    kind="switch",
    files=("nxos.cfg",),
    renderer="fabricgen.platforms.nxos.render:render",
    port_name=slot_port_name,
    sku_catalog="nxos",
    napalm_driver="nxos_fabricgen",  # napalm_nxos_fabricgen: nxos_ssh with owned-section candidates
    containerlab_kind="cisco_n9kv",
    containerlab_image="vrnetlab/cisco_n9kv:10.5",
    extractor="fabricgen.platforms.nxos.extract:extract_nxos",
    tenant_extractor="fabricgen.platforms.nxos.tenants:tenant_facts",
    tenant_reader="fabricgen.platforms.nxos.tenants:read_live",  # show vrf / nve vni / ip route vrf all, JSON
    analyzer="fabricgen.platforms.nxos.extract:analyze_nxos",
    structural_rules="fabricgen.platforms.nxos.check:RULES",
    capabilities=Capabilities(
        lossless_qos=True,
        adaptive_routing_modes=frozenset({"flowlet", "per-packet"}),
        adaptive_routing_needs_reload=True,
        qp_hashing=False,  # UDF hashing on the BTH destination QP: no catalogued model confirmed
        # `ip load-sharing ... rotate <0-63> universal-id <id>` (Cisco NX-API REST SDK guide, "Configuring ECMP
        # Load Balancing": ipv4IPLoadSharing rotate / universalID); the hash function itself is not selectable
        hash_seed="config",
        pfc_watchdog=True,
        watchdog_actions=frozenset({"drop"}),  # NX-OS has no forward or alert-only action
        watchdog_timers=WatchdogFacts(interval_ms=(100, 1000), detection_multiplier=(1, 10),
                                      restore_multiplier=(0, 100)),
        bfd=True,
        pause_buffer_above_m=100.0,
        buffer_cell_bytes=208,
        ecn_default=CISCO_ND_ECN,
        breakout_in_config=True,  # `interface breakout module 1 port N map ...`
        cnp_queue=7,  # Cisco's RoCE reference: CNP in c-out-8q-q7, priority level 1 (vendor reference §6 item 3)
        ptp_profiles=frozenset({"default-1588"}),
        ptp_missing="fabricgen renders NX-OS's default (1588) PTP profile only",
        # vrf-lite: `import|export vrf default map` + RT leaking (platforms/nxos/tenants.py)
        tenancy=frozenset({"vrf-lite", "evpn-vxlan"}),
    ),
    plan_problems="fabricgen.platforms.nxos.buffers:budget_problems",
    fact_cost_s=0.0025,
    extract_in_pool=True,
    impact="fabricgen.platforms.nxos.change:impact",
    drain="fabricgen.platforms.nxos.change:drained",
    ptp_reader="fabricgen.platforms.nxos.extract:ptp_nxos",
    live_hash="fabricgen.platforms.nxos.render:live_hash",  # `show ip load-sharing`
    saved_config="running",  # the driver saves at every commit: running is what it saved (copy r s)
)

# Linux + FRR: the lab's switches, and the routing half SONiC shares (the record SONiC's inherits from).
_FRR = PlatformRecord(
    name="frr",
    description="Linux + FRR (routing only; the lab's switches)",
    kind="switch",
    files=("frr.conf",),
    renderer="fabricgen.platforms.frr.render:render",
    port_name=lane_port_name,
    sku_catalog="sonic",  # SONiC's routing stack on the same netdevs: SONiC SKUs name its ports
    napalm_driver="frr",
    containerlab_kind="sonic-vs",
    containerlab_image="docker-sonic-vs:latest",
    extractor="fabricgen.platforms.frr.extract:extract_frr",
    tenant_extractor="fabricgen.platforms.frr.tenants:tenant_facts",
    tenant_reader="fabricgen.platforms.frr.tenants:read_live",
    file_checks=(("frr-parse", "frr.conf"),),
    # MULTIPATH_NUM; the kernel hashes with a random key per boot (net.ipv4.fib_multipath_hash_seed, 6.11+,
    # sets one; frr.conf cannot), so every switch hashes differently; PTP: linuxptp ptp4l
    capabilities=Capabilities(bfd=True, sets_mtu=False, max_mtu=65535, maximum_paths=256, hash_seed="random",
                              tenancy=frozenset({"vrf-lite", "evpn-vxlan"}),
                              ptp_profiles=frozenset({"default-1588", "g8275.1", "g8275.2"})),
    lab_node=True,
    lab_script="tenants.sh",  # platforms/frr/render.py TENANTS_FILENAME
    service_files=("ptp4l.conf",),  # platforms/frr/render.py PTP_FILENAME; napalm_frr.services
    leaf_announces_own_only=True,
    not_deployed=_FRR_NO_QOS,
    impact="fabricgen.platforms.frr.change:impact",
    drain="fabricgen.platforms.frr.change:drained",
    ptp_reader="fabricgen.platforms.frr.extract:ptp_frr",
    # FRR's data-center profile (FRR docs, "frr defaults"): 10 s connect retry, 3/9 s timers, no
    # ebgp-requires-policy; fabricgen's BGP settings assume it (platforms/frr/bgp.py)
    frr_defaults="datacenter",
    live_hash="fabricgen.platforms.frr.render:live_hash",  # the kernel's fib_multipath_hash sysctls
)

_SONIC = replace(
    _FRR,
    name="sonic",
    description="SONiC (ConfigDB config_db.json + FRR split-unified frr.conf)",
    files=("config_db.json", "frr.conf"),
    renderer="fabricgen.platforms.sonic.render:render",
    napalm_driver="sonic",
    extractor="fabricgen.platforms.sonic.extract:extract_sonic",
    tenant_extractor="fabricgen.platforms.sonic.tenants:tenant_facts",
    file_checks=(("sonic-yang", "config_db.json"), ("frr-parse", "frr.conf")),
    capabilities=replace(_FRR.capabilities, lossless_qos=True, pfc_watchdog=True,
                         watchdog_actions=frozenset({"drop", "forward", "alert"}),  # PFC_WD.action
                         dynamic_buffers=True, sets_mtu=True, max_mtu=9216, ecn_default=SONIC_COMMUNITY_ECN,
                         ecn_from_sku=True, ptp_profiles=frozenset(),
                         ptp_missing="SONiC has no PTP yet (sonic-net/SONiC#2324 is open)",
                         # ecmp_hash_seed/offset come from DEVICE_METADATA.type (orchagent's switch.json.j2);
                         # SWITCH_HASH|GLOBAL ecmp_hash_algorithm (sonic-hash.yang, stypes:hash-algorithm)
                         hash_seed="fixed", hash_algorithms=frozenset({"crc32", "crc16", "xor"})),
    hash_seed_fn="fabricgen.platforms.sonic.render:hash_seed",
    not_deployed=(),
    pointer_file="config_db.json",
    bgp_file="frr.conf",
    candidate="json-bundle",  # napalm_sonic takes both files as one JSON document keyed by file name
    service_files=(),  # no PTP (capabilities.ptp_missing)
    fact_cost_s=0.006,  # 128 ports: read, parse and per-port QoS facts, measured 6.0 ms (2026-12-07)
    plan_warnings="fabricgen.platforms.sonic.buffers:buffer_warnings",
    lossless_apply="fabricgen.platforms.sonic.change:lossless_apply",
    impact="fabricgen.platforms.sonic.change:impact",
    drain="fabricgen.platforms.sonic.change:drained",
    ptp_reader="",
    live_hash="fabricgen.platforms.sonic.render:live_hash",  # the running ConfigDB's SWITCH_HASH, type
    # FRR as the bgp container starts it, with a ConfigDB stand-in (lab.sonic_box)
    lab_box="fabricgen.lab.from_plan:sonic_node_box",
    lab_script="",  # its tenant VRFs are ConfigDB VRF / VXLAN tables, not a script
    tenant_reader="fabricgen.platforms.sonic.tenants:read_live",  # its FRR + ConfigDB VRF/VXLAN tables
)

_EOS = PlatformRecord(
    name="eos",
    description="Arista EOS (Strata: 7050X, 7060X, 7388X; Sand: 7280R, 7800R), rendered by Arista's pyavd",
    kind="switch",
    files=("eos.cfg",),
    renderer="fabricgen.platforms.eos.render:render",
    port_name=cage_lane_port_name,
    sku_catalog="",
    napalm_driver="eos_fabricgen",  # napalm's eos driver (config sessions) with owned-section candidates
    containerlab_kind="arista_ceos",
    containerlab_image="ceos:4.32.0F",
    extractor="fabricgen.platforms.eos.extract:extract_eos",
    analyzer="fabricgen.platforms.eos.check:analyze_eos",
    structural_rules="fabricgen.platforms.eos.check:RULES",
    capabilities=Capabilities(
        lossless_qos=True,
        pfc_watchdog=True,
        # `priority-flow-control pause watchdog action drop | errdisable | notify-only`: no forward action
        # (aristanetworks/avd#6399); alert is notify-only
        watchdog_actions=frozenset({"drop", "alert"}),
        bfd=True,
        max_mtu=9214,
        strict_queues_highest=True,  # `no priority` makes a tx-queue and every lower one round-robin
        maximum_paths=600,  # `maximum-paths <1-600>`
        # no seed: pyavd's eos_cli_config_gen schema has no hash seed key (load_balance.policies.sand_profiles
        # holds UDP payload fields only) and no seed command is confirmed for both chip families (Strata, Sand)
        hash_seed="none",
        # on Tomahawk (UDF) and Jericho (Sand profile) models only: catalog/eos_models.QP_HASHING; any other
        # model asked for it is refused by the record's plan_problems, naming the model
        qp_hashing=True,
        ecn_default=ARISTA_ECN,
        ptp_profiles=frozenset({"default-1588", "g8275.1", "g8275.2"}),  # eos_cli_config_gen ptp.profile
    ),
    fact_cost_s=0.0025,
    extract_in_pool=True,
    impact="fabricgen.platforms.eos.change:impact",
    drain="fabricgen.platforms.eos.change:drained",
    ptp_reader="fabricgen.platforms.eos.extract:ptp_eos",
    plan_problems="fabricgen.platforms.eos.render:qp_problems",  # ecmp.qp_hashing on a model without a way
)

_RECORDS: tuple[PlatformRecord, ...] = (_NXOS, _SONIC, _FRR, _EOS)

_HOST = PlatformRecord(
    name="host",
    description="GPU server back-end NICs: Linux addressing, routing per NIC, ConnectX RoCE QoS (a bring-up script)",
    kind="host",
    files=("{device}.sh",),
    renderer="fabricgen.platforms.host.render:render",
    port_name=None,
    sku_catalog="",
    napalm_driver="",
    containerlab_kind="linux",
    containerlab_image="alpine:3",
    extractor="",
    capabilities=Capabilities(lossless_qos=True, ptp_profiles=frozenset({"default-1588", "g8275.1", "g8275.2"})),
    output_dir="hosts",
    per_device_dir=False,
    executable=True,
)
_RECORDS += (_HOST,)

PLATFORMS: Mapping[str, PlatformRecord] = MappingProxyType({r.name: r for r in _RECORDS})
SWITCH_PLATFORMS: tuple[str, ...] = tuple(r.name for r in _RECORDS if r.kind == "switch")


class UnknownPlatform(KeyError):
    """A platform name no record has."""

    def __str__(self) -> str:
        return str(self.args[0])


def platform(name: str) -> PlatformRecord:
    """The record of a platform; UnknownPlatform (a KeyError) names the known ones."""
    try:
        return PLATFORMS[name]
    except KeyError:
        raise UnknownPlatform(f"unknown platform {name!r} (known: {', '.join(sorted(PLATFORMS))})") from None


def host_platform() -> PlatformRecord:
    """The record GPU servers render with (their NIC scripts)."""
    return _HOST


def capabilities(name: str) -> Capabilities:
    return platform(name).capabilities


def watchdog_timers(poll_ms: int, detection_ms: int, restoration_ms: int, facts: WatchdogFacts) -> WatchdogTimers:
    """Poll interval = the intent's poll_ms; detection and restoration rounded up to whole intervals.

    Rounding up never makes the watchdog fire earlier than the intent says.  Raises ValueError
    naming the intent field when the platform cannot express the timers.
    """
    lo, hi = facts.interval_ms
    if not lo <= poll_ms <= hi:
        raise ValueError(f"poll_ms: {poll_ms} ms is outside the watchdog interval range {lo}..{hi} ms")
    detect = math.ceil(detection_ms / poll_ms)
    restore = math.ceil(restoration_ms / poll_ms)
    for name, value, (low, high), ms in (("detection_ms", detect, facts.detection_multiplier, detection_ms),
                                         ("restoration_ms", restore, facts.restore_multiplier, restoration_ms)):
        if not low <= value <= high:
            raise ValueError(f"{name}: {ms} ms is {value} x the {poll_ms} ms poll interval, the platform takes "
                             f"{low}..{high} intervals (at most {high * poll_ms} ms)")
    return WatchdogTimers(poll_ms, detect, restore)


__all__ = ["PLATFORMS", "SWITCH_PLATFORMS", "VENDOR_ECN_DEFAULTS", "Capabilities", "EcnDefault", "PlatformGap",
           "PlatformRecord", "UnknownPlatform", "WatchdogFacts", "WatchdogTimers", "capabilities", "lane_port_name",
           "load", "platform", "slot_port_name", "vendor_ecn_range", "watchdog_timers"]
