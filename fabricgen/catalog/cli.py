"""`fabricgen platforms`: every platform, the hardware models fabricgen knows for it, and what each can do.

Read from the one place each fact lives: the platform records (platforms/registry.py) and the
hardware records (skus.py: the SONiC SKUs fabricgen ships or a --sonic-platform tree adds, the
NX-OS models of nxos_models.py), so the list cannot disagree with what `plan` and `render` do.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from fabricgen.catalog.registry import PLATFORMS, Capabilities, PlatformRecord


def capability_names(caps: Capabilities, switch: bool = True) -> list[str]:
    """A platform's capabilities as `plan` names them (Capabilities.has)."""
    out = []
    if caps.lossless_qos:
        out.append("lossless-qos")
    if caps.pfc_watchdog:
        out.append(f"pfc-watchdog ({'/'.join(sorted(caps.watchdog_actions))})")
    if caps.dynamic_buffers:
        out.append("dynamic-buffers")
    if caps.bfd:
        out.append("bfd")
    if caps.qp_hashing:
        out.append("qp-hashing")
    out += [f"adaptive-routing {mode}" for mode in sorted(caps.adaptive_routing_modes)]
    if switch and caps.sets_mtu:
        out.append(f"mtu <= {caps.max_mtu}")
    if switch:
        out.append(f"maximum-paths <= {caps.maximum_paths}")
    return out


def _ports(sku: Any) -> str:
    speeds = sku.speeds
    main = sku.ports_at(speeds[0])
    cages = len({p.index for p in main})
    per_cage = len(main) // cages if cages else 0
    text = f"{len(main)} x {speeds[0]}G" + (f" ({cages} cages x {per_cage})" if per_cage > 1 else "")
    if sku.breakouts:
        text += "; breakouts " + ", ".join(f"{n} x {s}G" for n, s in sku.breakouts)
    return text


def hardware(record: PlatformRecord) -> list[dict[str, Any]]:
    """The hardware models of one platform's catalogue, with what each adds to or takes from the platform."""
    from fabricgen.catalog.skus import SkuError, find_sku, known_skus

    out: list[dict[str, Any]] = []
    for name in known_skus(record.name):
        try:
            sku = find_sku(record.name, name)
        except (SkuError, ValueError, OSError) as exc:
            out.append({"platform": record.name, "name": name, "error": str(exc)})
            continue
        modes = sku.adaptive_routing_modes
        ar = sorted(modes if modes is not None else record.capabilities.adaptive_routing_modes)
        out.append({
            "platform": record.name, "name": name, "ports": _ports(sku),
            "buffer_model": sku.buffer_model or "",
            "lossless": ("yes" if sku.lossless else "no (lossy-only)") if sku.lossless_queues is not None else
                        ("unknown" if record.sku_catalog == "sonic" else "as the platform"),
            "adaptive_routing": ar,
            "capabilities": sorted(sku.capabilities),
            "facts": sku.origin,
        })
    return out


def catalog() -> dict[str, Any]:
    """Platforms and their hardware, JSON-ready."""
    platforms = [{"name": r.name, "kind": r.kind, "description": r.description, "files": list(r.files),
                  "napalm_driver": r.napalm_driver,
                  "capabilities": capability_names(r.capabilities, r.kind == "switch"),
                  "not_deployed": [g.setting for g in r.not_deployed]} for r in PLATFORMS.values()]
    seen: set[str] = set()
    skus = []
    for r in PLATFORMS.values():
        if r.sku_catalog and r.sku_catalog not in seen:  # frr names its ports by SONiC's SKUs: listed once
            seen.add(r.sku_catalog)
            skus += hardware(r)
    return {"platforms": platforms, "hardware": skus}


def cmd_platforms(args: argparse.Namespace) -> int:
    data = catalog()
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=1) + "\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    con = Console(highlight=False, soft_wrap=True)
    t = Table(title="platforms")
    for col in ("platform", "kind", "what", "napalm driver", "capabilities", "not deployed"):
        t.add_column(col)
    for p in data["platforms"]:
        t.add_row(p["name"], p["kind"], p["description"], p["napalm_driver"] or "-", ", ".join(p["capabilities"]),
                  ", ".join(p["not_deployed"]) or "-")
    con.print(t)
    h = Table(title="hardware models (switch_models.<role>.sku)")
    for col in ("platform", "model", "ports", "buffers", "lossless", "adaptive routing", "facts from"):
        h.add_column(col, no_wrap=col == "model", min_width=22 if col == "model" else None)
    for s in data["hardware"]:
        if "error" in s:
            h.add_row(s["platform"], s["name"], "", "", "", "", s["error"])
            continue
        h.add_row(s["platform"], s["name"], s["ports"], s["buffer_model"] or "-", s["lossless"],
                  ", ".join(s["adaptive_routing"]) or "none", s["facts"])
    con.print(h)
    con.print("Without `sku`, a role gets generic port names from its platform's naming scheme; "
              "--sonic-platform DIR adds the SONiC SKUs of a sonic-buildimage tree.", markup=False)
    return 0


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("platforms", help="list the platforms, the hardware models fabricgen knows and what each "
                                         "can do")
    p.add_argument("--format", choices=["table", "json"], default="table", help="tables, or JSON for scripts")
    p.set_defaults(func=cmd_platforms)
