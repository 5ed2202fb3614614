"""Every rule fabricgen checks, in one table: its stable id, where it runs, how bad a failure is, which
platforms it applies to, and what it means.

The modules that run the rules take their ids from here (`ids`), so an id is written once; the static
check and the live check of one property share its id (``nic-pfc-mask`` in a NIC script and on a live
NIC).  docs/rules.md is generated from this table (`make docs-cli`); a test fails when it is stale.

Stages:

* ``config``  `fabricgen check` over rendered (or hand-edited) switch configs
* ``script``  `fabricgen check` over the servers' NIC scripts
* ``live``    `fabricgen validate` against the running fabric
* ``health``  `fabricgen validate --health`: counter deltas over a window
* ``ptp``     `fabricgen validate --ptp`: every planned PTP clock as it runs
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Stage = Literal["config", "script", "live", "health", "ptp"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    stages: tuple[Stage, ...]
    doc: str
    platforms: tuple[str, ...] = ()  # () = every platform that has what the rule reads
    severity: Severity = "error"


RULES: tuple[Rule, ...] = (
    # ---- file checkers: the vendor's own schema or parser
    Rule("sonic-yang", ("config",), "config_db.json against SONiC's own YANG models (libyang), merged into the "
         "SKU's device-owned tables", ("sonic",)),
    Rule("frr-parse", ("config",), "frr.conf through FRR's own parser (vtysh --dryrun): every line it rejects",
         ("sonic", "frr")),
    # ---- NX-OS structure (platforms/nxos/check.py)
    Rule("nxos-parse", ("config",), "the file is unreadable (missing, or not UTF-8 text)", ("nxos",)),
    Rule("nxos-undefined-ref", ("config",), "a class-map, policy-map, route-map, prefix-list or community-list is "
         "used but not defined (network-qos / queuing classes must be 8-queue system classes)", ("nxos",)),
    Rule("nxos-system-qos", ("config",), "`system qos` does not attach a queuing output or network-qos policy",
         ("nxos",)),
    Rule("nxos-ecn", ("config",), "the switch-wide WRED thresholds of a no-drop queue are not the plan's: the "
         "tightest ECN profile of the switch's ports, in whole kbytes", ("nxos",)),
    Rule("nxos-mtu", ("config",), "a network-qos class is not at the fabric MTU, or a class that carries traffic "
         "(RoCE, CNP) has no network-qos class, so it keeps NX-OS's default MTU 1500", ("nxos",)),
    Rule("nxos-bgp-neighbor-subnet", ("config",), "a BGP neighbor is on no subnet of an interface address",
         ("nxos",)),
    Rule("nxos-watchdog", ("config",), "a PFC watchdog timer line is missing or differs from the intent's timers",
         ("nxos",)),
    Rule("nxos-pause-buffer", ("config",), "a no-drop ingress class has no `pause buffer-size ... pause-threshold "
         "... resume-threshold ...` where the port's cable is over 100 m, its headroom above the pause threshold "
         "(buffer-size - pause-threshold) is below the cable headroom the plan computes, or resume is not below "
         "pause; the pause threshold is an ingress fill level and is never compared with ECN (an egress queue "
         "threshold)", ("nxos",)),
    Rule("nxos-breakout", ("config",), "a broken-out port `Ethernet1/N/M` has no `interface breakout module 1 port "
         "N map <speed>g-<n>x` (or M > n), or the breakouts differ from the plan's front panel", ("nxos",)),
    Rule("nxos-unused-port", ("config",), "a port described unused is not shut, or a front-panel port the plan "
         "leaves free is not configured shut", ("nxos",)),
    # ---- EOS structure (platforms/eos/check.py)
    Rule("eos-parse", ("config",), "the file is unreadable (missing, or not UTF-8 text)", ("eos",)),
    Rule("eos-avd", ("config",), "eos.cfg is not what Arista's pyavd (eos_cli_config_gen) renders from the plan's "
         "structured config: that config fails Arista's schema (key path and message), or the file has a line "
         "Arista's templates do not print there (a hand edit, or a stale build)", ("eos",)),
    Rule("eos-routing-model", ("config",), "no `service routing protocols model multi-agent` (the model AVD renders "
         "on every device; ribd is the legacy one)", ("eos",)),
    Rule("eos-queue-keyword", ("config",), "a qos profile uses `tx-queue` on a Strata switch (7050X, 7060X, 7388X: "
         "`uc-tx-queue`) or `uc-tx-queue` on a Sand switch (7280R, 7800R: `tx-queue`); the chip family comes from "
         "the plan's model (catalog/eos_models.py)", ("eos",)),
    Rule("eos-lane-speed", ("config",), "a port of a split cage (2x400G on an 800G cage) has no `speed <n>g-<lanes>` "
         "for its planned speed and lanes: it never links", ("eos",)),
    Rule("eos-watchdog", ("config",), "the PFC watchdog's polling interval is above half its timeout (EOS then "
         "substitutes its own), its action is not one EOS has (drop, errdisable, notify-only), or its timers are "
         "not the plan's", ("eos",)),
    Rule("eos-ecn", ("config",), "an ECN-marking queue lacks `weight 0` (Arista's RoCE samples mark on the "
         "instantaneous depth) or `random-detect ecn count` (without it validate --health sees no ECN marks)",
         ("eos",)),
    Rule("eos-unused-port", ("config",), "a front-panel port the plan leaves free is not shut and described unused",
         ("eos",)),
    # ---- fabric-wide RoCE invariants over every platform's config facts (check/roce.py)
    Rule("roce-lossless-chain", ("config",), "RoCE DSCP -> TC -> lossless PG / no-drop class (-> PFC priority) -> "
         "egress queue with ECN marking is broken on a port, or differs from the plan"),
    Rule("roce-cnp", ("config",), "the CNP DSCP does not reach a strict-priority queue, or its class is lossless "
         "(PFC / no-drop) on some port"),
    Rule("roce-ecn-order", ("config",), "on a lossless queue ECN min >= max, or, where the lossless PG's pause "
         "trigger is a static threshold (SONiC static_th), ECN max not below it; never compared with a PG's "
         "xoff, which is headroom above the trigger"),
    Rule("roce-bandwidth", ("config",), "the DWRR / `bandwidth remaining percent` shares of the non-strict queues "
         "do not sum to 100"),
    Rule("roce-pfc-both-ends", ("config",), "a fabric-link end or a GPU-facing leaf port lacks PFC on exactly the "
         "lossless priorities, or the PFC watchdog (when the plan enables it)"),
    Rule("roce-mtu-both-ends", ("config",), "the two ends of a switch-switch link have different MTUs"),
    Rule("roce-maximum-paths", ("config",), "`maximum-paths` is below the plan's (what the switch's role needs), "
         "or outside the platform's range (1 up to its record's `maximum_paths`): `maximum-paths 0` is rejected "
         "everywhere"),
    Rule("roce-p2p-pair", ("config",), "the two ends of a /31 are not a distinct pair in one /31, a BGP neighbor is "
         "missing or its remote-as is not the peer's local AS, or a device's local AS is not the planned one"),
    Rule("roce-missing-config", ("config",), "a planned device has no (or an unreadable) rendered file"),
    Rule("roce-ecn-range", ("config",), "ECN thresholds outside the span of the vendors' published defaults for the "
         "port's speed", severity="warning"),
    # ---- tenants (check/tenants.py, issue 25)
    Rule("tenant-numbers", ("config",), "a tenant VRF is missing where the plan puts it, or has a VNI, RD or export "
         "RT other than the plan's; a VRF no planned tenant has; two tenants share a VNI or an export RT, or two "
         "VRFs an RD"),
    Rule("tenant-isolation", ("config",), "a VRF imports a route target (vrf-lite: a tenant community) of a tenant "
         "its own may not reach by the intent, or lacks one of a tenant it may reach (a missing leak), a tenant "
         "port is not in its tenant's VRF, or an untenanted port is in a VRF"),
    Rule("tenant-mtu-chain", ("config",), "evpn-vxlan: a fabric link of a VTEP or spine carries less than the tenant "
         "MTU plus the VXLAN overhead (50 bytes over IPv4, 70 over IPv6)"),
    Rule("tenant-dscp-copy", ("config",), "evpn-vxlan: a VTEP does not copy the inner DSCP and ECN to the outer "
         "header (RFC 6040; NX-OS `qos-mode pipe` on nve1), so spines cannot classify RoCE into its lossless "
         "class"),
    # ---- PTP topology over every platform's PTP lines and the plan (check/ptp.py)
    Rule("ptp-domain", ("config", "ptp"), "a PTP clock's config (or the running clock) is in another domain than "
         "the plan's one domain (every clock of the fabric serves one grandmaster domain)"),
    Rule("ptp-ports", ("config",), "a boundary clock runs PTP on a port the plan gives no PTP role, or not on one it "
         "does, or a switch of a boundary-clock tier has no PTP config"),
    Rule("ptp-reachable", ("config",), "a planned clock (boundary clock, server NIC, standby grandmaster) the "
         "preferred grandmaster cannot reach through ports that run PTP at both ends (a tier without boundary "
         "clocks, or a port left out, cuts it off)"),
    Rule("ptp-port-role", ("config",), "a port planned both toward and away from the grandmaster (master and "
         "slave), or a boundary clock or client with no port toward the grandmaster"),
    Rule("ptp-dscp", ("config",), "PTP messages' DSCP rides a lossless class (PFC pauses it) or a class with no "
         "bandwidth and no strict priority (starved), or a config marks PTP event messages with another DSCP"),
    # ---- PTP as it runs (validate/ptp.py): ANTA's PTP checks, and the plan's place of every clock
    Rule("ptp-running", ("ptp",), "a planned clock (grandmaster, boundary clock, server NIC) does not answer: its "
         "ptp4l or PTP agent is not running, or its host cannot be read"),
    Rule("ptp-mode", ("ptp",), "a switch's clock is not a boundary clock, or a server NIC's is not a client "
         "(slave-only) clock"),
    Rule("ptp-grandmaster", ("ptp",), "a clock follows another grandmaster than the plan's preferred one (or the "
         "preferred one does not answer)"),
    Rule("ptp-steps", ("ptp",), "a clock's steps removed from the grandmaster is not the plan's (it takes time by "
         "another path)"),
    Rule("ptp-parent", ("ptp",), "a clock's parent is not one of the clocks its planned upstream ports face"),
    Rule("ptp-port-state", ("ptp",), "a port planned toward the grandmaster is not SLAVE or PASSIVE (UNCALIBRATED "
         "too with software timestamping), or one planned away from it is not MASTER"),
    Rule("ptp-last-sync", ("ptp",), "a clock's last Sync from its master is older than ptp.thresholds.last_sync_s "
         "(ANTA: 60 s)"),
    Rule("ptp-offset", ("ptp",), "a clock's offset from its master is beyond +-ptp.thresholds.offset_ns (ANTA: 1000 "
         "ns)"),
    Rule("ptp-path-delay", ("ptp",), "a clock's mean path delay exceeds ptp.thresholds.path_delay_ns (Cumulus: 200 "
         "ns)"),
    Rule("addr-duplicate", ("config",), "one address is configured on two interfaces (of one device or two); the "
         "finding goes to every holder the plan does not give that address to"),
    # ---- GPU NICs: the script (check/nic.py) and the live NIC (validate/nic.py), one id per property
    Rule("nic-roce-dscp", ("script", "live"), "a RoCE DSCP, the RoCE ToS (ToS >> 2 and its ECN bits) or the RoCE "
         "priority disagrees with the leaves (script), or the NIC's RDMA-CM ToS is not the plan's (live)",
         ("host",)),
    Rule("nic-cnp-dscp", ("script", "live"), "the NIC's CNP DSCP (and 802.1p priority) is not one the leaves put in "
         "their strict-priority CNP queue (DSCP 4 = NVIDIA network-operator roceOptimized, named as such)",
         ("host",)),
    Rule("nic-pfc-mask", ("script", "live"), "the NIC's PFC mask differs from the leaves' lossless priorities, or "
         "it pauses the CNP priority / not the RoCE priority", ("host",)),
    Rule("nic-trust", ("script", "live"), "the NIC does not trust DSCP (GPU links are routed and untagged)",
         ("host",)),
    Rule("nic-ecn", ("live",), "ECN (DCQCN reaction and notification point) is not enabled on the RoCE priority",
         ("host",)),
    Rule("nccl-tc", ("live",), "/etc/nccl.conf has no NCCL_IB_TC, or one that is not the RoCE ToS (the NIC script "
         "writes it)", ("host",)),
    Rule("nccl-qps", ("live",), "/etc/nccl.conf has no NCCL_IB_QPS_PER_CONNECTION, or not the plan's "
         "(qos.nic.qps_per_connection; the NIC script writes it)", ("host",)),
    Rule("nic-missing-script", ("script",), "a planned server has no script, or the script has no fabricgen header",
         ("host",)),
    Rule("nic-address", ("script",), "a planned NIC has no `nic_up` line, or its address, /31, gateway or routing "
         "table differs from the plan, the gateway is not the leaf port's address, or two NICs share a table",
         ("host",)),
    Rule("nic-mtu", ("script",), "the script's MTU is above the leaf ports' (frames dropped) or below what RoCE "
         "needs for its 4096-byte active MTU", ("host",)),
    # ---- the live fabric (validate/checks.py)
    Rule("bgp", ("live",), "every planned eBGP session is established, and no unplanned one exists"),
    Rule("timers", ("live",), "every session runs the planned keepalive and hold time"),
    Rule("bfd", ("live",), "every planned BFD session is up"),
    Rule("routes", ("live",), "every session accepted the prefixes the plan's routing policy sends it"),
    Rule("ecmp", ("live",), "routes to other leaves use as many next hops as the plan's equal-cost paths"),
    Rule("hash", ("live",), "an ECMP hash setting the switch runs is not the plan's, each named: Linux + FRR "
         "the kernel's net.ipv4/ipv6.fib_multipath_hash_policy (and _fields); SONiC the running ConfigDB's "
         "SWITCH_HASH fields and algorithm and DEVICE_METADATA type (its hash seed); NX-OS `show ip "
         "load-sharing` fields, rotate and universal-id (where rendered). EOS is not read back"),
    Rule("lldp", ("live",), "every planned cable is seen by LLDP at both ends, on the planned ports"),
    Rule("interfaces", ("live",), "every planned port is up, at its MTU, with its address"),
    Rule("mtu", ("live",), "both ends of every link run the same MTU"),
    Rule("config", ("live",), "the running config of fabricgen's sections is the checked build's"),
    Rule("persisted", ("live",), "the saved (startup) config equals the running one: a reboot keeps the build"),
    Rule("frr-defaults", ("live",), "an FRR daemon runs another `frr defaults` profile than its platform's frr.conf "
         "declares (a daemon started without the config keeps FRR's built-in profile: 120 s instead of 10 s BGP "
         "connect retry, other timers), or the running config names two profiles (FRR platforms)"),
    Rule("gpu", ("live",), "GPU NICs reach each other across the fabric at the planned MTU, don't fragment"),
    Rule("tenants", ("live",), "`validate --tenants`: NICs of one VRF reach each other at the tenant MTU (don't "
         "fragment) and NICs of two VRFs do not, unless the intent leaks them; each switch runs exactly its planned "
         "tenant VRFs with their L3VNIs, every tenant subnet is in its VRF and none in a VRF that may not hold it"),
    # ---- lossless health over a window (validate/health.py)
    Rule("counters", ("health",), "every planned port has counters"),
    Rule("pfc-oper", ("health",), "PFC is operational on every planned port for every lossless priority (where the "
         "platform shows it)"),
    Rule("pfc-pause", ("health",), "pause frames on a lossless priority, rx or tx, per minute <= "
         "health.max_pause_per_minute"),
    Rule("pfc-lossy", ("health",), "no pause frames at all on a priority that is not lossless (the CNP priority "
         "above all: a paused CNP queue stalls DCQCN's feedback)"),
    Rule("lossless-drops", ("health",), "drops on a lossless queue per window <= health.max_lossless_drops"),
    Rule("cnp-drops", ("health",), "drops on the CNP queue per window <= health.max_cnp_drops"),
    Rule("ecn-share", ("health",), "ECN-marked share of the RoCE queue's packets <= health.max_ecn_marked_share, "
         "once the queue sent ecn_min_packets in the window"),
    Rule("ecn-queue", ("health",), "no ECN marks on a queue other than the RoCE queue"),
    Rule("pfc-watchdog", ("health",), "storms detected per minute <= health.max_watchdog_storms_per_minute, and no "
         "queue in a storm now"),
)

BY_ID: MappingProxyType[str, Rule] = MappingProxyType({r.id: r for r in RULES})
assert len(BY_ID) == len(RULES), "a rule id is declared twice"


def ids(stage: Stage, prefix: str = "", platform: str | None = None) -> tuple[str, ...]:
    """The ids of one stage (and id prefix), in the table's order: what a checker module runs.  `platform`:
    only the rules of that platform ("" = only the rules of every platform)."""
    return tuple(r.id for r in RULES if stage in r.stages and r.id.startswith(prefix)
                 and (platform is None or (r.platforms == () if platform == "" else platform in r.platforms)))


def rule(rule_id: str) -> Rule:
    return BY_ID[rule_id]


def markdown() -> str:
    """docs/rules.md: the table, by stage."""
    out = ["# Rules", "", "Every rule fabricgen checks, generated from `fabricgen/catalog/rules.py` (`make docs-cli`).",
           "A finding names its rule id; `check --format junit` and `validate --format junit` use it as the test "
           "case name.", ""]
    titles = {"config": "Rendered switch configs (`fabricgen check`)", "script": "NIC scripts (`fabricgen check`)",
              "live": "The live fabric (`fabricgen validate`)", "health": "Lossless health (`validate --health`)",
              "ptp": "PTP as it runs (`validate --ptp`)"}
    for stage, title in titles.items():
        out += [f"## {title}", "", "| rule | platforms | what fails it |", "|---|---|---|"]
        for r in RULES:
            if stage in r.stages:
                also = [s for s in r.stages if s != stage]
                doc = r.doc + (f" (also: {', '.join(also)})" if also else "")
                doc += " (a warning)" if r.severity == "warning" else ""
                out.append(f"| `{r.id}` | {', '.join(r.platforms) or 'all'} | {doc} |")
        out.append("")
    return "\n".join(out)
