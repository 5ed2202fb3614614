"""SONiC tenant facts: VRFs and their VNIs, tenant ports and port MTUs from config_db.json; each VRF's RD
and RTs from the split-unified frr.conf (the shared FRR scanner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabricgen.plan.model import Plan
from fabricgen.platforms.frr.tenants import ROUTES_VTYSH, VNI_VTYSH, parse_live
from fabricgen.platforms.tenant_facts import LiveVrf, TenantFacts, scan_frr_tenants

VRF_PREFIX = "Vrf"  # sonic-vrf.yang: a data VRF's name starts with "Vrf" (render: Vrf<tenant>)
CONFIG_DB_COMMAND = "show runningconfiguration all"  # the running ConfigDB as JSON (napalm_sonic reads it so)


def tenant_facts(plan: Plan, configs: Path, host: str) -> TenantFacts:
    """The VTEP's DSCP/ECN copy: VXLAN_TUNNEL has no DSCP or ECN mode in SONiC's model (sonic-vxlan.yang:
    src_ip, dst_ip, ttl_mode), so the SAI tunnel defaults apply: encapsulation DSCP mode uniform (inner
    copied to outer) and ECN mode standard (RFC 6040)."""
    path = configs / host / "config_db.json"
    f = TenantFacts(host, str(path), dscp_why="SAI tunnel defaults: uniform DSCP, standard ECN (no ConfigDB field)")
    try:
        db: Any = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        f.errors.append(f"cannot read config_db.json: {exc}")
        return f
    if not isinstance(db, dict):
        f.errors.append("config_db.json is not a JSON object")
        return f
    for name, entry in (db.get("VRF") or {}).items():
        v = f.vrf(name, f"/VRF/{name}")
        vni = str((entry or {}).get("vni", "0"))
        v.vni = int(vni) if vni.isdigit() else 0
    for key, entry in (db.get("INTERFACE") or {}).items():
        if "|" not in key and isinstance(entry, dict) and entry.get("vrf_name"):
            f.port_vrf[key] = (str(entry["vrf_name"]), f"/INTERFACE/{key}/vrf_name")
    for port, entry in (db.get("PORT") or {}).items():
        mtu = str((entry or {}).get("mtu", ""))
        if mtu.isdigit():
            f.port_mtu[port] = int(mtu)
    try:
        scan_frr_tenants((configs / host / "frr.conf").read_text().splitlines(), f, with_interfaces=False)
    except (OSError, UnicodeDecodeError) as exc:
        f.errors.append(f"cannot read frr.conf: {exc}")
    return f


def read_live(device: Any) -> dict[str, LiveVrf]:
    """What a SONiC switch runs (validate --tenants), keyed by tenant: its FRR's L3VNIs and per-VRF routes
    (the commands of Linux + FRR, in the bgp container through the driver's `fabricgen_vtysh`) and the
    running ConfigDB's VRF and VXLAN_TUNNEL_MAP tables, which program the ASIC (vrfmgrd, vxlanorch)."""
    vtysh = device.fabricgen_vtysh
    db = device.cli([CONFIG_DB_COMMAND])[CONFIG_DB_COMMAND]
    return parse_live_sonic(str(vtysh(VNI_VTYSH)), str(vtysh(ROUTES_VTYSH)),
                            db if isinstance(db, str) else json.dumps(db))


def parse_live_sonic(vnis_json: str, routes_json: str, config_db_json: str) -> dict[str, LiveVrf]:
    """FRR's view (`parse_live`) of the data VRFs (``Vrf<tenant>`` -> ``<tenant>``; the default VRF kept,
    SONiC's management VRF and any other left out), each checked against ConfigDB: ``VRF|Vrf<t>`` must carry
    the VNI FRR uses and VXLAN_TUNNEL_MAP must map it to a VLAN, else the VRF's `issue` says which disagrees."""
    frr = parse_live(vnis_json, routes_json)
    db: Any = json.loads(config_db_json or "{}")
    db = db if isinstance(db, dict) else {}
    vrf_table = db.get("VRF") or {}
    mapped = {str(e.get("vni", "")) for e in (db.get("VXLAN_TUNNEL_MAP") or {}).values() if isinstance(e, dict)}
    out: dict[str, LiveVrf] = {}
    for name in sorted(set(frr) | set(vrf_table)):
        if name == "default":
            out[name] = frr[name]
            continue
        if not name.startswith(VRF_PREFIX):
            continue
        live = frr.get(name, LiveVrf())
        entry = vrf_table.get(name)
        db_vni = str(entry.get("vni", "")) if isinstance(entry, dict) else ""
        issue = ""
        if entry is None:
            issue = f"in FRR but not in ConfigDB's VRF table (VRF|{name})"
        elif name not in frr:
            issue = f"in ConfigDB (VRF|{name}) but FRR has no such VRF"
        elif (db_vni or "0") != str(live.vni):
            issue = f"ConfigDB VRF|{name} has vni {db_vni or 'none'}, FRR L3VNI {live.vni or 'none'}"
        elif live.vni and str(live.vni) not in mapped:
            issue = f"L3VNI {live.vni} is in no VXLAN_TUNNEL_MAP entry (no VLAN carries it)"
        out[name[len(VRF_PREFIX):]] = LiveVrf(live.vni, live.prefixes, issue)
    return out
