"""SONiC tenant facts: VRFs and their VNIs, tenant ports and port MTUs from config_db.json; each VRF's RD
and RTs from the split-unified frr.conf (the shared FRR scanner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabricgen.plan.model import Plan
from fabricgen.platforms.tenant_facts import TenantFacts, scan_frr_tenants


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
