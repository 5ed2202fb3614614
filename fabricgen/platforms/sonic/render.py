"""SONiC renderer: plan -> ConfigDB (config_db.json) + FRR (frr.conf).

`config_db(sw, plan)` builds the whole ConfigDB as a dict (the structured config): the switch's own
tables and its port classes' tables (QoS, queues, buffers: the same on every switch of a role with the
same ports), which `config_db_text` serialises once per class key and splices in (byte for byte the
deterministic `to_json` of the whole); `templates/config_db.json.j2` only lays the text out.  Every table
validates against SONiC's YANG models (sonic-buildimage `src/sonic-yang-models`, vendor reference §2.2-§2.4).

Choices worth knowing (vendor reference §2 and §5):

* The bgp container as it really runs (sonic-buildimage dockers/docker-fpm-frr, src/sonic-bgpcfgd):
  ``docker_routing_config_mode`` is ``split-unified``, in which the container reads one
  operator-owned ``/etc/sonic/frr/frr.conf`` (plain ``split`` deletes frr.conf and expects
  per-daemon files, §2.7).  At every start ``docker_init.sh`` appends ``no fpm
  use-next-hop-groups`` and ``fpm address 127.0.0.1`` to that file unless the first is there
  (zebra's FPM link to fpmsyncd, the only way routes reach the ASIC); frr.conf carries both
  (`BGP_CONTAINER_LINES`), so a push never removes them.  ``frr_mgmt_framework_config`` is
  ``true``: the container's supervisord template then starts bfdd (BFD toward the fabric) and
  frrcfgd instead of bgpcfgd, so no template-driven daemon writes peer-groups, route-maps or
  ``set src`` route-maps into FRR behind frr.conf's back.  frrcfgd acts only on changes to its
  own tables (BGP_GLOBALS, BGP_NEIGHBOR, ROUTE_MAP, PREFIX_SET, BFD_PEER, STATIC_ROUTE, ...;
  it replays them at start only in ``unified`` mode), none of which is rendered: FRR has one
  writer, frr.conf.
* One QoS map name, ``AI``, for every map table.  Every port runs RoCE: PFC on the lossless
  TCs, the RoCE queue on DWRR with the port's ECN/WRED profile, CNPs strict priority.
* config_db.json is fabricgen's part of the ConfigDB only (`platforms.sonic_configdb`): never
  ``lanes``, ``alias``, ``index`` (the SKU's), the SKU's buffer pools or profiles, ``hwsku``,
  ``platform`` or ``mac``; the SONiC driver, ``check`` and the tests merge it into the device's.
* Buffers the SKU's way (`platforms.sonic_buffers`): on a dynamic-model SKU ``buffer_model:
  dynamic`` and each lossless PG ``NULL`` (the switch computes its headroom from ``CABLE_LENGTH``,
  speed and MTU); on a traditional SKU the lossless PG profile buffermgrd itself would create from
  the SKU's ``pg_profile_lookup.ini``; the lossy PG and the egress queues use the SKU's own
  profiles.  Where the SKU's QoS template renders one (Spectrum, ``pfc_to_pg_map_supported_asics``),
  the PFC priority -> PG map too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import jinja2

from fabricgen.base.templating import member_json, to_json_of_members
from fabricgen.catalog.registry import platform
from fabricgen.catalog.skus import PFC_TO_PG_MAP
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Plan, QosPolicy, QosProfile, Switch
from fabricgen.platforms import runs
from fabricgen.platforms.frr.bgp import bgp_config
from fabricgen.platforms.frr.tenants import vrf_name
from fabricgen.platforms.sonic.buffers import (
    NULL_PROFILE,
    lookup_row,
    role_buffers,
    traditional_entry,
    traditional_profile_name,
)
from fabricgen.platforms.sonic.configdb import UNUSED_DESCRIPTION

SONIC_VRF_PREFIX = "Vrf"  # sonic-vrf.yang: VRF names match "Vrf[a-zA-Z0-9_-]+"
VTEP = "vtep"
NVO = "nvo"

CONFIG_DB = "config_db.json"
FRR_CONF = "frr.conf"
TEMPLATE_CONFIG_DB = "sonic/config_db.json.j2"
TEMPLATE_FRR = "sonic/frr.conf.j2"

ROUTING_CONFIG_MODE = "split-unified"
# dockers/docker-fpm-frr/docker_init.sh, write_default_zebra_config(): appended to frr.conf in split-unified
# mode unless `^no fpm use-next-hop-groups` is already there (tests/platforms/test_sonic_bgp_container.py runs it).
BGP_CONTAINER_LINES: dict[str, tuple[str, ...]] = {
    "split-unified": ("no fpm use-next-hop-groups", "fpm address 127.0.0.1"),
}
# DEVICE_METADATA.localhost.frr_mgmt_framework_config: supervisord.conf.common.j2 starts bfdd (and frrcfgd
# instead of bgpcfgd) only when it is "true".
FRR_MGMT_FRAMEWORK_CONFIG = "true"
# The DEVICE_METADATA.localhost fields the bgp container reads only when it starts: docker_init.sh treats
# /etc/frr by the routing mode, and supervisord's template picks the daemons by frr_mgmt_framework_config.
# A change takes effect when the container restarts, which SONiC does with `systemctl restart bgp`.
BGP_CONTAINER_BOOT_FIELDS = ("docker_routing_config_mode", "frr_mgmt_framework_config")
BGP_SERVICE = "bgp"


def bgp_container_daemons(metadata: dict[str, str]) -> tuple[str, ...]:
    """The routing daemons the bgp container must run for this DEVICE_METADATA.localhost
    (supervisord.conf.common.j2: zebra and bgpd always, bfdd only with frr_mgmt_framework_config "true")."""
    bfd = ("bfdd",) if metadata.get("frr_mgmt_framework_config") == "true" else ()
    return ("zebra", "bgpd", *bfd)


DEVICE_TYPE = {"leaf": "BackEndLeafRouter", "spine": "BackEndSpineRouter", "super_spine": "UpperSpineRouter"}
MAP = "AI"  # the one name of every QoS map
CABLE_LENGTH_MAP = "AZURE"  # SONiC's buffer manager reads CABLE_LENGTH|AZURE
SCHED_CNP = "AI_CNP_STRICT"
# Queue 7 carries what the switch's CPU sends (BGP, BFD, LLDP: sonic-swss portsorch DEFAULT_HOSTIF_TX_QUEUE 7):
# strict priority, so no DWRR share can starve it.
SCHED_CONTROL = "AI_CONTROL_STRICT"
CONTROL_QUEUE = 7
SCHED_ROCE = "AI_ROCE_DWRR"
SCHED_DEFAULT = "AI_DEFAULT_DWRR"
FEC = "rs"  # RS(544,514) for PAM4 400G/800G; also right for 100G/200G PAM4 optics
QUEUES = 8

FLEX_COUNTERS: dict[str, dict[str, str]] = {
    "PFCWD": {"FLEX_COUNTER_STATUS": "enable"},
    "QUEUE": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    "QUEUE_WATERMARK": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    "PG_WATERMARK": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    "WRED_ECN_QUEUE": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    "WRED_ECN_PORT": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "1000"},
}

# The ECMP hash seed and offset orchagent programs from DEVICE_METADATA.localhost.type (sonic-buildimage
# dockers/docker-orchagent/switch.json.j2, SWITCH_TABLE:switch ecmp_hash_seed / ecmp_hash_offset): the first
# substring of the type that matches, in the template's order.  "UpperSpineRouter" contains "SpineRouter",
# so a super-spine gets the spine's seed.  ConfigDB has no seed field (sonic-hash.yang: fields and algorithm).
TYPE_SEEDS = (("ToRRouter", 0, 0), ("LeafRouter", 10, 10), ("SpineRouter", 25, 0), ("FabricSpineRouter", 40, 0),
              ("UpperSpineRouter", 50, 0))
# SWITCH_HASH|GLOBAL ecmp_hash_algorithm (stypes:hash-algorithm) of each modelled hash
HASH_ALGORITHM = {"crc32": "CRC_32LO", "crc16": "CRC_CCITT", "xor": "XOR"}


def hash_seed(role: str) -> tuple[int, int, str]:
    """(seed, offset, how): what orchagent gives a switch of this role (the record's hash_seed_fn)."""
    kind = DEVICE_TYPE[role]
    for part, seed, offset in TYPE_SEEDS:
        if part in kind:
            return seed, offset, f"orchagent, from DEVICE_METADATA.type {kind}"
    return 0, 0, f"orchagent's default (DEVICE_METADATA.type {kind})"


def switch_hash(plan: Plan, sw: Switch) -> dict[str, Any]:
    """SWITCH_HASH|GLOBAL: the plan's fields, and the algorithm where the plan renders one."""
    out: dict[str, Any] = {"ecmp_hash": [HASH_FIELDS[f] for f in plan.settings.hash_fields]}
    rendered = plan.hashing[sw.role].rendered_algorithm if sw.role in plan.hashing else ""
    if rendered:
        out["ecmp_hash_algorithm"] = HASH_ALGORITHM[rendered]
    return out


def hash_settings(db: Mapping[str, Any]) -> dict[str, str]:
    """The ECMP hash settings of a ConfigDB (rendered or running), as validate compares them: the hash
    fields (a set: the order of a leaf-list means nothing), the algorithm ("" = SAI's default) and
    DEVICE_METADATA's type, from which orchagent takes the seed and offset (TYPE_SEEDS)."""
    glob = db.get("SWITCH_HASH", {}).get("GLOBAL", {})
    fields = glob.get("ecmp_hash", [])
    fields = fields.split(",") if isinstance(fields, str) else list(fields)
    return {"SWITCH_HASH|GLOBAL ecmp_hash": ",".join(sorted(str(f) for f in fields)),
            "SWITCH_HASH|GLOBAL ecmp_hash_algorithm": str(glob.get("ecmp_hash_algorithm", "")),
            "DEVICE_METADATA|localhost type": str(db.get("DEVICE_METADATA", {}).get("localhost", {}).get("type", ""))}


def live_hash(plan: Plan, sw: Switch) -> dict[str, str]:
    """What `validate` expects to read back from the running ConfigDB (the record's ``live_hash``)."""
    return hash_settings({"SWITCH_HASH": {"GLOBAL": switch_hash(plan, sw)},
                          "DEVICE_METADATA": {"localhost": {"type": DEVICE_TYPE[sw.role]}}})


HASH_FIELDS = {
    "src-ip": "SRC_IP",
    "dst-ip": "DST_IP",
    "l4-src-port": "L4_SRC_PORT",
    "l4-dst-port": "L4_DST_PORT",
    "ip-protocol": "IP_PROTOCOL",
}

WRED_NAME_MAX = 32  # YANG: [a-zA-Z0-9][-a-zA-Z0-9_]{0,31}


def wred_name(p: QosProfile) -> str:
    """Name of the WRED/ECN profile of one threshold set, e.g. AI_ECN_65536_131072_5 (<= 32 chars)."""
    name = f"{MAP}_ECN_{p.ecn_min}_{p.ecn_max}_{p.ecn_probability}"
    if len(name) <= WRED_NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return f"{MAP}_ECN_{digest}"


def _s(mapping: dict[int, int]) -> dict[str, str]:
    return {str(k): str(v) for k, v in sorted(mapping.items())}


class _Classes:
    """Queue, PG and scheduler layout derived once from the fabric QoS policy."""

    def __init__(self, q: QosPolicy) -> None:
        self.lossless_tcs = sorted(set(q.lossless_tcs))
        self.pfc_enable = ",".join(str(tc) for tc in self.lossless_tcs)
        self.lossless_pgs = sorted({q.tc_to_pg[tc] for tc in self.lossless_tcs})
        self.lossy_pgs = sorted(({q.tc_to_pg[tc] for tc in q.tc_to_pg if tc not in self.lossless_tcs} | {0})
                                - set(self.lossless_pgs))
        self.lossless_queues = sorted({q.tc_to_queue[tc] for tc in self.lossless_tcs})
        self.cnp_queue = q.tc_to_queue[q.cnp_tc]
        used = {q.tc_to_queue[tc] for tc in set(q.dscp_to_tc.values())}
        self.default_queues = sorted(used - set(self.lossless_queues) - {self.cnp_queue} - {CONTROL_QUEUE})
        self.control_queue = CONTROL_QUEUE if CONTROL_QUEUE not in {*self.lossless_queues, self.cnp_queue} else None
        lossy_queues = [i for i in range(QUEUES) if i not in self.lossless_queues]
        self.lossless_queue_keys = runs(self.lossless_queues)
        self.lossless_pg_keys = runs(self.lossless_pgs)
        self.lossy_queue_keys = runs(lossy_queues)


def config_db(sw: Switch, plan: Plan) -> dict[str, Any]:
    """fabricgen's part of the switch's ConfigDB (platforms.sonic_configdb.OWNERSHIP), every value a string
    as ConfigDB stores it (leaf-lists as lists)."""
    return {**_own_tables(sw, plan), **_class_tables(sw, plan), **tenant_tables(sw, plan)}


def config_db_text(sw: Switch, plan: Plan) -> str:
    """`to_json(config_db(sw, plan))`, byte for byte, with the tables of the switch's port classes
    (`_class_tables`) serialised once per class key and shared by every switch that has it: 4,096 SONiC
    switches at 128K GPUs have 2 keys.  Only the switch's own tables are built and serialised per switch."""
    own = {name: member_json(table) for name, table in (_own_tables(sw, plan) | tenant_tables(sw, plan)).items()}
    return to_json_of_members(own | _class_texts(sw, plan))


def _own_tables(sw: Switch, plan: Plan) -> dict[str, Any]:
    """The tables with the switch's own values: names, addresses, neighbours, ASN, unused ports, port FEC."""
    if plan.qos is None or sw.bgp is None:
        raise ValueError(f"{sw.hostname}: the plan has no QoS policy or BGP settings; build it with build_plan")
    lpp = int(plan.settings.models[sw.role].lanes_per_port)
    hw = plan.hardware[sw.role]
    tenant_port = plan.tenancy.port_tenant if plan.tenancy is not None else {}
    port: dict[str, Any] = {}
    interface: dict[str, Any] = {}
    neighbor: dict[str, Any] = {}
    for itf in sw.interfaces:
        name = itf.name
        sku_port = hw.port(sw.platform, itf.cage, itf.subport, itf.breakout, lpp, itf.speed)
        port[name] = {
            "admin_status": "up",
            "description": itf.description,
            "fec": sku_port.fec or FEC,
            "mtu": str(itf.mtu),
            "speed": str(itf.speed * 1000),
        }
        vrf = tenant_port.get((sw.hostname, name))
        interface[name] = {"vrf_name": vrf_name(SONIC_VRF_PREFIX, vrf)} if vrf else {}
        if itf.ipv4:
            interface[f"{name}|{itf.ipv4}"] = {}
        if itf.ipv6:
            interface[f"{name}|{itf.ipv6}"] = {}
        neighbor[name] = {"name": itf.peer_device, "port": itf.peer_interface}
    for name in front_panel(plan, sw).unused:  # shut, described unused; merge_owned drops their addresses
        port[name] = {"admin_status": "down", "description": UNUSED_DESCRIPTION}
    b = sw.bgp
    loopback: dict[str, Any] = {"Loopback0": {}, f"Loopback0|{sw.loopback}/32": {}}
    if sw.loopback_v6:
        loopback[f"Loopback0|{sw.loopback_v6}/128"] = {}
    metadata = {
        "hostname": sw.hostname,
        "bgp_asn": str(b.asn),
        "bgp_router_id": b.router_id,
        "type": DEVICE_TYPE[sw.role],
        "docker_routing_config_mode": ROUTING_CONFIG_MODE,
        "frr_mgmt_framework_config": FRR_MGMT_FRAMEWORK_CONFIG,
        # The explicit PFC_WD entries carry the intent's timers; "enable" would let `pfcwd start_default`
        # rewrite them with port-count-scaled defaults after a reload.
        "default_pfcwd_status": "disable",
    }
    rb = role_buffers(hw)
    if rb.model != "device":
        metadata["buffer_model"] = rb.model
    return {
        "DEVICE_METADATA": {"localhost": metadata},
        "PORT": port,
        "INTERFACE": interface,
        "LOOPBACK_INTERFACE": loopback,
        "DEVICE_NEIGHBOR": neighbor,
    }


def _class_key(sw: Switch) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What `_class_tables` reads of the switch: its role (hardware, hash) and each port's name and QoS profile."""
    return sw.role, tuple([(itf.name, itf.qos_profile) for itf in sw.interfaces])


# The serialised class tables of the plan being rendered, by class key.  The plan is held (not its id), so a
# new plan (a test, the lab) starts afresh and an id is never reused while its entry exists.
_CLASS_TEXTS: tuple[Plan | None, dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, str]]] = (None, {})


def _class_texts(sw: Switch, plan: Plan) -> dict[str, str]:
    """`member_json` of each of `_class_tables(sw, plan)`, computed once per class key of the plan."""
    global _CLASS_TEXTS
    if _CLASS_TEXTS[0] is not plan:
        _CLASS_TEXTS = (plan, {})
    texts = _CLASS_TEXTS[1]
    key = _class_key(sw)
    found = texts.get(key)
    if found is None:
        found = texts[key] = {name: member_json(table) for name, table in _class_tables(sw, plan).items()}
    return found


def _class_tables(sw: Switch, plan: Plan) -> dict[str, Any]:
    """The tables that depend only on `_class_key(sw)` and the fabric's QoS: maps, schedulers, queues, buffers,
    WRED profiles, cable lengths, the PFC watchdog, the ECMP hash and the counters."""
    q = plan.qos
    assert q is not None, "plan has no QoS policy; build it with build_plan"
    c = _Classes(q)
    hw = plan.hardware[sw.role]
    rb = role_buffers(hw)
    objects = rb.objects
    profiles = plan.qos_profiles
    wd = q.watchdog_enabled
    pfc_to_pg = hw.sku is not None and hw.sku.supports(PFC_TO_PG_MAP)

    # Entries identical on every port are shared objects (json.dumps does not care, and it is faster).
    port_qos = {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP, "pfc_to_queue_map": MAP,
                "pfc_enable": c.pfc_enable}
    if pfc_to_pg:
        port_qos["pfc_to_pg_map"] = MAP
    if wd:
        port_qos["pfcwd_sw_enable"] = c.pfc_enable
    q_cnp = {"scheduler": SCHED_CNP}
    q_control = {"scheduler": SCHED_CONTROL}
    q_default = {"scheduler": SCHED_DEFAULT}
    pfc_wd = {"action": q.watchdog_action, "detection_time": str(q.watchdog_detection_ms),
              "restoration_time": str(q.watchdog_restoration_ms)}
    pg_lossy = {"profile": objects.pg_lossy} if objects is not None else {}
    pg_dynamic = {"profile": NULL_PROFILE}
    bq_lossless = {"profile": objects.queue_lossless} if objects is not None else {}
    bq_lossy = {"profile": objects.queue_lossy} if objects is not None else {}

    port_qos_map: dict[str, Any] = {"global": {"dscp_to_tc_map": MAP}}
    queue: dict[str, Any] = {}
    buffer_pg: dict[str, Any] = {}
    buffer_queue: dict[str, Any] = {}
    buffer_profile: dict[str, Any] = {}
    cable: dict[str, str] = {}
    pfcwd: dict[str, Any] = {}
    wred: dict[str, Any] = {}
    roce_queue: dict[str, dict[str, str]] = {}  # QoS profile name -> shared QUEUE entry
    pg_lossless: dict[tuple[int, int], dict[str, str]] = {}  # (speed, metres) -> shared BUFFER_PG entry

    for itf in sw.interfaces:
        name = itf.name
        prof = profiles[itf.qos_profile]
        rq = roce_queue.get(prof.name)
        if rq is None:
            wname = wred_name(prof)
            wred[wname] = {
                "ecn": "ecn_all",
                "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true",
                "green_min_threshold": str(prof.ecn_min), "green_max_threshold": str(prof.ecn_max),
                "yellow_min_threshold": str(prof.ecn_min), "yellow_max_threshold": str(prof.ecn_max),
                "red_min_threshold": str(prof.ecn_min), "red_max_threshold": str(prof.ecn_max),
                "green_drop_probability": str(prof.ecn_probability),
                "yellow_drop_probability": str(prof.ecn_probability),
                "red_drop_probability": str(prof.ecn_probability),
            }
            rq = roce_queue[prof.name] = {"scheduler": SCHED_ROCE, "wred_profile": wname}

        port_qos_map[name] = port_qos
        for qi in c.lossless_queues:
            queue[f"{name}|{qi}"] = rq
        queue[f"{name}|{c.cnp_queue}"] = q_cnp
        if c.control_queue is not None:
            queue[f"{name}|{c.control_queue}"] = q_control
        for qi in c.default_queues:
            queue[f"{name}|{qi}"] = q_default
        metres = int(prof.cable_m)
        found = None
        if objects is not None and rb.model != "dynamic":
            found = lookup_row(hw.sku, prof.speed, metres) if hw.sku is not None else None
            if found is None:
                raise ValueError(f"{sw.hostname}: SKU {hw.describe()} has no pg_profile_lookup.ini row for "
                                 f"{prof.speed}G (plan refuses such a SKU)")
            metres = found[1]  # the next length the SKU's table lists: what buffermgrd itself would look up
        cable[name] = f"{metres}m"
        if wd:
            pfcwd[name] = pfc_wd
        if objects is None:
            continue  # buffers left to the device (sonic_buffers)
        if found is None:
            pl = pg_dynamic
        else:
            pl = pg_lossless.get((prof.speed, metres), {})
            if not pl:
                pname = traditional_profile_name(prof.speed, metres)
                buffer_profile[pname] = traditional_entry(objects, found[0])
                pl = pg_lossless[prof.speed, metres] = {"profile": pname}
        for key in c.lossless_pg_keys:  # "3", or "3-4" as buffermgrd writes several
            buffer_pg[f"{name}|{key}"] = pl
        for pg in c.lossy_pgs:
            buffer_pg[f"{name}|{pg}"] = pg_lossy
        for key in c.lossless_queue_keys:
            buffer_queue[f"{name}|{key}"] = bq_lossless
        for key in c.lossy_queue_keys:
            buffer_queue[f"{name}|{key}"] = bq_lossy

    weights = q.bandwidth
    db: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP: _s(q.dscp_to_tc)},
        "TC_TO_QUEUE_MAP": {MAP: _s(q.tc_to_queue)},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: _s(q.tc_to_pg)},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: _s(q.pfc_priority_to_queue)},
    }
    if pfc_to_pg:
        db["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {MAP: {str(tc): str(q.tc_to_pg[tc]) for tc in c.lossless_tcs}}
    db.update({
        "PORT_QOS_MAP": port_qos_map,
        "SCHEDULER": {
            SCHED_CNP: {"type": "STRICT"},
            **({SCHED_CONTROL: {"type": "STRICT"}} if c.control_queue is not None else {}),
            SCHED_ROCE: {"type": "DWRR", "weight": str(max(1, weights.get("roce", 50)))},
            SCHED_DEFAULT: {"type": "DWRR", "weight": str(max(1, weights.get("default", 50)))},
        },
        "QUEUE": queue,
        "WRED_PROFILE": wred,
    })
    if buffer_profile:
        db["BUFFER_PROFILE"] = buffer_profile
    if buffer_pg:
        db["BUFFER_PG"] = buffer_pg
        db["BUFFER_QUEUE"] = buffer_queue
    db["CABLE_LENGTH"] = {CABLE_LENGTH_MAP: cable}
    db["SWITCH_HASH"] = {"GLOBAL": switch_hash(plan, sw)}
    db["FLEX_COUNTER_TABLE"] = FLEX_COUNTERS
    if wd:
        pfcwd["GLOBAL"] = {"POLL_INTERVAL": str(q.watchdog_poll_ms)}
        db["PFC_WD"] = pfcwd
    return db


def tenant_tables(sw: Switch, plan: Plan) -> dict[str, Any]:
    """The tenant VRFs of a leaf and, with evpn-vxlan, its VTEP and one L3VNI per VRF.

    SONiC's EVPN VXLAN design (sonic-net/SONiC doc/vxlan/EVPN/EVPN_VXLAN_HLD.md): one VXLAN_TUNNEL
    (the VTEP, sourced from Loopback0), one VXLAN_EVPN_NVO naming it, and per L3VNI a VLAN mapped
    to the VNI (VXLAN_TUNNEL_MAP) whose VLAN_INTERFACE is in the VRF, the VRF carrying the VNI.
    Names and patterns: sonic-vrf.yang (Vrf...), sonic-vxlan.yang, sonic-vlan.yang.  The tunnel's
    DSCP/ECN handling is not a ConfigDB field of VXLAN_TUNNEL (its model has src_ip, dst_ip and
    ttl_mode only): the SAI tunnel defaults apply (uniform DSCP, standard ECN: copied), which
    `fabricgen check` states as a tenant rule.
    """
    t = plan.tenancy
    mine = t.on(sw.hostname) if t is not None else []
    if t is None or not mine:
        return {}
    vrfs = {vrf_name(SONIC_VRF_PREFIX, tp.name): {"vni": str(tp.vni)} if t.evpn else {} for tp in mine}
    if not t.evpn:
        return {"VRF": vrfs}
    return {
        "VRF": vrfs,
        "VLAN": {f"Vlan{tp.vlan}": {"vlanid": str(tp.vlan)} for tp in mine},
        "VLAN_INTERFACE": {f"Vlan{tp.vlan}": {"vrf_name": vrf_name(SONIC_VRF_PREFIX, tp.name)} for tp in mine},
        "VXLAN_TUNNEL": {VTEP: {"src_ip": sw.loopback}},
        "VXLAN_EVPN_NVO": {NVO: {"source_vtep": VTEP}},
        "VXLAN_TUNNEL_MAP": {f"{VTEP}|map_{tp.vni}_Vlan{tp.vlan}": {"vlan": f"Vlan{tp.vlan}", "vni": str(tp.vni)}
                             for tp in mine},
    }


def render(sw: Switch, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    return {
        CONFIG_DB: env.get_template(TEMPLATE_CONFIG_DB).render(config_db_json=config_db_text(sw, plan)),
        FRR_CONF: env.get_template(TEMPLATE_FRR).render(
            hostname=sw.hostname, bgp=bgp_config(sw, plan, SONIC_VRF_PREFIX),
            frr_defaults=platform(sw.platform).frr_defaults,
            container_lines=BGP_CONTAINER_LINES[ROUTING_CONFIG_MODE]),
    }
