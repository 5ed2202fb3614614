"""The plan as an operator reads it: the summary `fabricgen plan` prints and plan.json carries, and the
cabling plan.  Rendered from the plan; the per-platform tables (SONiC's headroom) come from their platform."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from fabricgen.catalog.registry import load, platform
from fabricgen.plan.build import warning_lines
from fabricgen.plan.model import TIERS, Plan, QosPolicy
from fabricgen.plan.physical import PhysicalCounts, build_physical, cabling_rows
from fabricgen.platforms.sonic.buffers import headroom_table


def summary(plan: Plan, counts: PhysicalCounts | None = None) -> dict[str, Any]:
    """Counts an operator checks first: switches per role, links per tier, ratios, the physical layer
    (logical ports, transceiver modules by part class and physical cables, each counted apart), pool use."""
    roles = Counter(s.role for s in plan.switches.values())
    tiers = Counter(link.tier for link in plan.links)
    phys = counts or build_physical(plan).counts()
    d = plan.envelope
    return {
        "fabric": plan.settings.name,
        "tiers": d.tiers,
        "planes": d.planes,
        "pods": plan.pods,
        "gpus": sum(s.gpus for s in plan.servers),
        "servers": len(plan.servers),
        "endpoints": dict(sorted(Counter(h.role for h in plan.endpoints).items())),
        "leaves": roles["leaf"],
        "spines": roles["spine"],
        "super_spines": roles["super_spine"],
        "switches": len(plan.switches),
        "links": {t: tiers[t] for t in TIERS},
        "oversubscription": {k: f"{v:.2f}:1" for k, v in plan.oversubscription.items()},
        "ports": phys.ports,
        "modules": dict(sorted(phys.modules.items())),
        "cables": dict(sorted(phys.cables.items())),
        "pools": {k: {"used": u, "size": n} for k, (u, n) in plan.pool_use.items()},
        "envelope": {"max_leaves": d.max_leaves, "max_spines": d.max_spines,
                     "max_super_spines": d.max_super_spines, "max_pods": d.max_pods},
        "hardware": hardware_summary(plan),
        "port_use": port_use(plan),
        "adaptive_routing": {"enabled": plan.adaptive_routing.enabled, "mode": plan.adaptive_routing.mode,
                             "active_ports": plan.adaptive_routing.active_ports,
                             "switches": plan.adaptive_routing.switches},
        "warnings": warning_lines(plan),
        "headroom": headroom_table(plan),
        "choices": [{"name": c.name, "value": c.value, "why": c.why} for c in d.choices],
    } | ({"tenancy": tenancy_summary(plan)} if plan.tenancy is not None else {})


def tenancy_summary(plan: Plan) -> dict[str, Any]:
    """Scope, mechanism, the MTU chain and why, and per tenant its numbers, leaves, ports and leaks."""
    t = plan.tenancy
    assert t is not None
    return {
        "scope": t.scope, "mechanism": t.mechanism, "outer": t.outer if t.evpn else "",
        "overhead": t.overhead, "underlay_mtu": t.underlay_mtu, "tenant_mtu": t.tenant_mtu, "mtu": t.mtu_why,
        "tenants": [{"name": tp.name, "id": tp.id, "vni": tp.vni if t.evpn else None, "table": tp.table,
                     "route_target": tp.route_target, "leaves": len(tp.leaves), "ports": len(tp.ports),
                     "servers": len({s for s, _ in tp.nics}), "reach": list(tp.reach)}
                    for tp in t.tenants.values()],
    }


def cabling_csv(plan: Plan) -> str:
    """The cabling plan, one row per physical cable (see fabricgen.plan.physical), for the data hall."""
    return cabling_rows(plan)


def plan_dict(plan: Plan, counts: PhysicalCounts | None = None) -> dict[str, Any]:
    """The whole plan for build/plan.json.

    The model's dataclasses are handed to the JSON encoder as they are (templating.to_json,
    to_compact_json_file): both serialise slotted dataclasses natively, where dataclasses.asdict
    deep-copied every leaf and took 30 s at 32K GPUs.
    """
    return {
        "summary": summary(plan, counts),
        "switches": list(plan.switches.values()),
        "links": plan.links,
        "servers": plan.servers,
        "endpoints": plan.endpoints,
        "qos": _text_keys(plan.qos),
        "qos_profiles": plan.qos_profiles,
    } | ({"tenants": _tenants_detail(plan)} if plan.tenancy is not None else {})


def _text_keys(qos: QosPolicy | None) -> QosPolicy | None:
    """The policy with its DSCP, TC and priority maps keyed by their numbers' text, as JSON writes them (and sorts
    them: "10" before "2"), for a JSON encoder that takes string keys only (templating.to_compact_json_file)."""
    if qos is None:
        return None
    maps: dict[str, Any] = {f.name: {str(k): v for k, v in value.items()} for f in dataclasses.fields(qos)
                            if isinstance(value := getattr(qos, f.name), dict)}
    return dataclasses.replace(qos, **maps)


def _tenants_detail(plan: Plan) -> list[dict[str, Any]]:
    """Each tenant with its leaves and ports by name (plan.json), in id order."""
    t = plan.tenancy
    assert t is not None
    return [{"name": tp.name, "id": tp.id, "vni": tp.vni, "table": tp.table, "route_target": tp.route_target,
             "leaves": tp.leaves, "ports": [f"{leaf}:{port}" for leaf, port in tp.ports],
             "nics": [f"{srv}:{ifname}" for srv, ifname in tp.nics], "reach": list(tp.reach)}
            for tp in t.tenants.values()]


def port_use(plan: Plan) -> dict[str, dict[str, list[int]]]:
    """Per role, the busiest switch's ports in use against the design's budget: {"down": [used, budget], "up": ...}.

    The budget is what the design sets aside per switch (the derived choices); oversubscription is measured
    on the ports in use, so a leaf with room to grow shows both."""
    d = plan.envelope
    out: dict[str, dict[str, list[int]]] = {}
    for role in ("leaf", "spine", "super_spine"):
        switches = plan.by_role(role)
        if not switches:
            continue
        down_side, up_side = d.sides(role)
        used = {"down": 0, "up": 0}
        for sw in switches:  # 650K interfaces at 128K GPUs: one list per switch, counted in C
            directions: list[str] = [i.direction for i in sw.interfaces]
            for direction, most in used.items():
                used[direction] = max(most, directions.count(direction))
        out[role] = {"down": [used["down"], down_side.ports], "up": [used["up"], up_side.ports]}
    return out


def hardware_summary(plan: Plan) -> dict[str, dict[str, str]]:
    """Per role: the SKU (or generic naming) and the cages the fabric uses."""
    out: dict[str, dict[str, str]] = {}
    for role, hw in plan.hardware.items():
        model = plan.settings.models[role]
        cages = f"{model.ports} x {model.port_speed}G cages" + (f" ({model.breakout} x {model.logical_speed}G)"
                                                                 if model.breakout > 1 else "")
        if model.split:
            (ds, db), (us, ub) = model.down, model.up
            cages += f" (down {db} x {ds}G, up {ub} x {us}G)"
        if hw.sku is not None:
            cages += f", {hw.cages[0][0].name} .. {hw.cages[-1][-1].name}"
        out[role] = {
            "platform": plan.settings.platforms[role],
            "sku": hw.describe(),
            "ports": cages,
            "port_names": "generic" if hw.generic else "SKU",
            "buffer_model": hw.sku.buffer_model or "" if hw.sku is not None else "",
            "facts": hw.sku.origin if hw.sku is not None else "",
            "lossless_apply": _lossless_apply(plan.settings.platforms[role], hw.sku.name if hw.sku else ""),
        }
    return out


def _lossless_apply(platform_name: str, hwsku: str) -> str:
    """How the platform's record says the lossless config goes onto a running switch of this SKU ("" = no word)."""
    hook = platform(platform_name).lossless_apply
    if not hook or not hwsku:
        return ""
    _, statement = load(hook)(hwsku)
    return str(statement)
