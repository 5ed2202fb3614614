"""Plan: the chain intent -> topology -> underlay -> ECMP -> QoS -> checks, each a small step.

`build_plan` is the only entry point the rest of fabricgen uses; it returns a
fully resolved `Plan` or raises `FabricError` naming the intent field to fix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fabricgen.base import pool
from fabricgen.catalog.registry import PlatformRecord, load, platform, watchdog_timers
from fabricgen.catalog.skus import RoleHardware, SkuError, breakout_role_hardware, lossless_problems, role_hardware
from fabricgen.errors import FabricError, Problem
from fabricgen.intent.model import Intent, PortGroup, SwitchModel, line_for, load_intent
from fabricgen.plan import qos
from fabricgen.plan.ecmp import plan_adaptive_routing, plan_hashing
from fabricgen.plan.model import ROLES, Design, FabricSettings, HealthLimits, Plan, Pools, Role, RoleModel
from fabricgen.plan.ptp import build_ptp
from fabricgen.plan.tenants import plan_tenants
from fabricgen.plan.topology import TopologyError, build_topology, check_size, design, layout
from fabricgen.plan.underlay import build_underlay, check_pools

PLURAL = {"leaf": "leaves", "spine": "spines", "super_spine": "super-spines"}


def unsupported_settings(intent: Intent) -> list[Problem]:
    """Settings of the intent that a role's platform lacks the capability for: errors before anything is planned.

    Role-wide settings (BFD, the PFC watchdog and its timers) must be rendered by every role's
    platform; adaptive routing is per link (both ends, see fabricgen.plan.ecmp) and is refused only when no
    platform of the fabric has the mode at all.  QoS on a platform without lossless QoS is
    fabricgen.plan.deployable's plan warning and deploy refusal.
    """
    roles = ROLES[:intent.topology.tiers]
    used = {role: platform(getattr(intent.platforms, role)) for role in roles}
    problems: list[Problem] = []

    def lacks(path: str, capability: str, fix: str, records: dict[Role, PlatformRecord]) -> None:
        for role, rec in records.items():
            if not rec.capabilities.has(capability):
                problems.append(Problem(path, f"platform {rec.name} ({PLURAL[role]}) lacks the capability "
                                        f"`{capability}`", fix))

    if intent.bgp.bfd.enabled:
        lacks("bgp.bfd.enabled", "bfd", "set bgp.bfd.enabled: false, or use a platform with BFD", used)
    wd = intent.qos.pfc_watchdog
    qos_roles = {role: rec for role, rec in used.items() if rec.capabilities.lossless_qos}
    if wd.enabled:
        lacks("qos.pfc_watchdog.enabled", "pfc-watchdog", "set qos.pfc_watchdog.enabled: false, or use a platform "
              "with a PFC watchdog", qos_roles)
    for role, rec in used.items():
        if intent.qos.mtu > rec.capabilities.max_mtu:
            problems.append(Problem("qos.mtu", f"platform {rec.name} ({PLURAL[role]}) takes interface MTUs up to "
                                    f"{rec.capabilities.max_mtu}, the fabric asks for {intent.qos.mtu}",
                                    f"set qos.mtu to {rec.capabilities.max_mtu} or less"))
    lossless = intent.qos.lossless
    for role, rec in qos_roles.items():
        if rec.capabilities.strict_queues_highest and intent.qos.cnp_tc < max(lossless):
            problems.append(Problem("qos.cnp_tc", f"platform {rec.name} ({PLURAL[role]}) schedules strict-priority "
                                    f"queues only above its round-robin ones: the CNP class {intent.qos.cnp_tc} is "
                                    f"below the lossless class {max(lossless)}", "give CNPs a traffic class above "
                                    "every lossless one (e.g. qos.cnp_tc: 6)"))
    if intent.ecmp.qp_hashing:
        lacks("ecmp.qp_hashing", "qp-hashing", "set ecmp.qp_hashing: false (more QPs per connection, "
              "qos.nic.qps_per_connection, spread RoCE traffic without it)", used)
    ar = intent.ecmp.adaptive_routing
    if ar.enabled and not any(rec.capabilities.adaptive_routing(ar.mode) for rec in used.values()):
        names = ", ".join(sorted({rec.name for rec in used.values()}))
        problems.append(Problem("ecmp.adaptive_routing.enabled", f"no platform of this fabric ({names}) has the "
                                f"capability `adaptive-routing {ar.mode}`", "set ecmp.adaptive_routing.enabled: "
                                "false, or use switches that do adaptive routing in this mode"))
    problems += _ptp_unsupported(intent, used)
    if intent.tenants and intent.tenancy is not None:
        mech = intent.tenancy.mechanism
        # spines carry EVPN; vrf-lite is the leaves' alone
        needs: dict[Role, PlatformRecord] = used if mech == "evpn-vxlan" else {"leaf": used["leaf"]}
        for tier, rec in needs.items():
            if mech not in rec.capabilities.tenancy:
                problems.append(Problem("tenancy.mechanism", f"platform {rec.name} ({PLURAL[tier]}) lacks the "
                                        f"capability `tenancy {mech}`: fabricgen renders no tenant "
                                        f"{'VRF' if tier == 'leaf' else 'EVPN transit'} for it", "use a platform "
                                        "that renders it (`fabricgen platforms` lists them)" + (
                                            ", or tenancy.mechanism: vrf-lite" if mech == "evpn-vxlan" else "")))
    seen: set[str] = set()
    for role, rec in qos_roles.items():
        caps = rec.capabilities
        if rec.name in seen or not wd.enabled or not caps.pfc_watchdog:
            continue
        seen.add(rec.name)
        if wd.action not in caps.watchdog_actions:
            problems.append(Problem("qos.pfc_watchdog.action", f"{rec.name} ({PLURAL[role]}) lacks the capability "
                                    f"`pfc-watchdog action {wd.action}`: {wd.action!r} is not a storm action of the "
                                    f"platform ({', '.join(sorted(caps.watchdog_actions))})", "pick an action every "
                                    "platform of the fabric supports (`fabricgen platforms` lists them)"))
        if caps.watchdog_timers is None:
            continue
        try:
            watchdog_timers(wd.poll_ms, wd.detection_ms, wd.restoration_ms, caps.watchdog_timers)
        except ValueError as exc:
            field, _, message = str(exc).partition(": ")
            problems.append(Problem(f"qos.pfc_watchdog.{field}", f"{rec.name} ({PLURAL[role]}) cannot run this PFC "
                                    f"watchdog: {message}", "pick timers and an action every platform of the "
                                    "fabric supports"))
    return problems


def _ptp_unsupported(intent: Intent, used: dict[Role, PlatformRecord]) -> list[Problem]:
    """PTP on a tier whose platform has no boundary clock for the profile: a named refusal (SONiC has none)."""
    ptp = intent.ptp
    if ptp is None:
        return []
    out = []
    for role, rec in used.items():
        if role not in ptp.boundary_clocks or rec.capabilities.has(f"ptp {ptp.profile}"):
            continue
        why = f": {rec.capabilities.ptp_missing}" if rec.capabilities.ptp_missing else ""
        out.append(Problem("ptp.boundary_clocks", f"platform {rec.name} ({PLURAL[role]}) lacks the capability "
                           f"`ptp {ptp.profile}`{why}", f"leave {role} out of ptp.boundary_clocks (its switches "
                           "then pass no time on), pick a profile every platform has, or use a platform with "
                           "a PTP boundary clock"))
    return out


def resolve_hardware(intent: Intent) -> tuple[Intent, dict[Role, RoleHardware]]:
    """Each role's SKU record and usable cages; the intent with each SKU's numbers filled in.

    With a SKU, a role's cage count, cage speed, breakout and lanes come from the SKU's own port
    data (the cages whose ports all run at the chosen speed); the rest of the pipeline sees them
    as if the intent had said them.
    """
    hardware: dict[Role, RoleHardware] = {}
    models: dict[str, Any] = {}
    problems: list[Problem] = []
    for role in ROLES:
        model = getattr(intent.switch_models, role)
        if model is None:
            continue
        platform = getattr(intent.platforms, role)
        speeds = {g.speed for g in (model.downlink, model.uplink) if g is not None}
        if model.sku is not None and _breaks_out_in_config(platform):
            try:
                hardware[role], models[role] = _breakout_model(role, platform, model)
            except SkuError as exc:
                problems.append(Problem(exc.path, exc.message, exc.hint))
            continue
        try:
            if model.sku is not None and len(speeds) > 1:
                raise SkuError(f"downlink and uplink speeds differ ({', '.join(f'{s}G' for s in sorted(speeds))}) "
                               f"on SKU {model.sku}: fabricgen uses one speed of a SKU per role",
                               "give both directions the same speed", f"switch_models.{role}.downlink")
            hw = role_hardware(role, platform, model.sku, speeds.pop() if speeds else None)
        except SkuError as exc:
            problems.append(Problem(exc.path, exc.message, exc.hint))
            continue
        except (OSError, ValueError) as exc:  # a SKU directory whose files cannot be read
            problems.append(Problem(f"switch_models.{role}.sku", f"cannot read the SKU's files: {exc}",
                                    "check the SKU directory, or use another SKU"))
            continue
        lossy = lossless_problems(role, platform, hw)
        if lossy:
            problems += lossy
            continue
        hardware[role] = hw
        if hw.sku is not None:
            models[role] = model.model_copy(update={
                "ports": len(hw.cages), "port_speed": hw.speed * hw.breakout, "breakout": hw.breakout,
                "lanes_per_port": hw.lanes_per_cage, "downlink": None, "uplink": None})
    if problems:
        raise FabricError("<intent>", problems)
    if not models:
        return intent, hardware
    return intent.model_copy(update={"switch_models": intent.switch_models.model_copy(update=models)}), hardware


def _breaks_out_in_config(name: str) -> bool:
    """True for platforms whose hardware models the config breaks out (NX-OS `interface breakout`)."""
    return platform(name).capabilities.breakout_in_config


def _breakout_model(role: Role, platform: str, model: SwitchModel) -> tuple[RoleHardware, SwitchModel]:
    """A role on a model whose config breaks cages out (NX-OS): the model's cages, cage speed, lanes and
    cage type, each side's breakout checked against the model (`skus.breakout_role_hardware`)."""
    groups = {side: (g.speed, g.breakout) if g is not None else None
              for side, g in (("downlink", model.downlink), ("uplink", model.uplink))}
    hw, breakouts = breakout_role_hardware(role, platform, model.sku or "", groups)
    assert hw.sku is not None
    if model.cage is not None and hw.sku.cage and model.cage != hw.sku.cage:
        raise SkuError(f"{hw.sku.name} has {hw.sku.cage} cages, not {model.cage}", "remove `cage`",
                       f"switch_models.{role}.cage")
    update: dict[str, Any] = {"ports": len(hw.cages), "port_speed": hw.speed, "lanes_per_port": hw.sku.lanes or 8,
                              "cage": hw.sku.cage or model.cage, "breakout": 1, "downlink": None, "uplink": None}
    (down_speed, down), up_side = breakouts["downlink"], breakouts["uplink"]
    if (down_speed, down) == up_side and down_speed * down == hw.speed:
        update["breakout"] = down
    else:
        update["downlink"] = PortGroup.model_validate({"speed": down_speed, "breakout": down})
        update["uplink"] = PortGroup.model_validate({"speed": up_side[0], "breakout": up_side[1]})
    return hw, model.model_copy(update=update)


def check_oversubscription(intent: Intent, d: Design, plan: Plan) -> None:
    """Measured down:up bandwidth per tier (of the most loaded switch) against each tier's target."""
    ratios: dict[str, float] = {}
    if d.tiers >= 2:
        down = max((sum(i.speed for i in s.interfaces if i.direction == "down") for s in plan.by_role("leaf")),
                   default=0)
        ratios["leaf"] = down / d.leaf_sides[1].bandwidth
    if d.tiers == 3:
        down = max((sum(i.speed for i in s.interfaces if i.direction == "down") for s in plan.by_role("spine")),
                   default=0)
        ratios["spine"] = down / d.spine_sides[1].bandwidth
    plan.oversubscription = ratios
    for tier, ratio in ratios.items():
        target = intent.topology.ratio("leaf" if tier == "leaf" else "spine")
        if ratio > target + 1e-9:
            path = "topology.leaf_uplinks" if tier == "leaf" else "topology.oversubscription"
            raise TopologyError([Problem(
                path, f"{tier} oversubscription is {ratio:.2f}:1 in bandwidth, above the target {target:g}:1",
                "add uplinks, attach fewer servers per leaf, or raise topology.oversubscription")])


def build_plan(intent: Intent, source: str = "<intent>", lines: dict[tuple[Any, ...], int] | None = None,
               check_qos: bool = True, topology_done: Callable[[Plan], None] | None = None) -> Plan:
    """Resolve an intent into a plan; every cross-field problem becomes a FabricError.

    `topology_done(plan)` is called once the switches, links and NICs exist, before any address: work that
    reads the topology only (render's cabling) can start there, beside the rest of the plan build."""
    lines = lines or {}
    unsupported = unsupported_settings(intent)
    if unsupported:
        raise _located(source, unsupported, lines)
    try:
        intent, hardware = resolve_hardware(intent)
    except FabricError as exc:
        raise _located(source, exc.problems, lines) from None
    plan = Plan(settings=fabric_settings(intent), hardware=hardware, source=source,
                health=HealthLimits(**intent.health.model_dump()))
    try:
        d = design(intent)
        lay = layout(intent, d)
        check_size(lay)  # an intent that would build millions of switches stops here, in milliseconds
        check_pools(intent, d, lay)
        with pool.collector_off():  # millions of plan objects at 32K GPUs, none of them garbage yet
            build_topology(intent, plan, d)
            check_oversubscription(intent, d, plan)
            if topology_done is not None:
                topology_done(plan)
            build_underlay(intent, d, plan)
            plan_tenants(intent, plan)  # before QoS: tenant MTUs change buffer profiles
            plan_adaptive_routing(plan, intent.ecmp.adaptive_routing)
            plan_hashing(plan, intent.ecmp)
            qos.assign_profiles(plan, intent)
            plan.ptp = build_ptp(plan, intent)
        refused = platform_problems(plan)
        if refused:
            raise FabricError(source, refused)
        plan.warnings += qos.ecn_warnings(intent) + platform_warnings(plan)
    except TopologyError as exc:
        raise _located(source, exc.problems, lines) from None
    except FabricError as exc:  # raised by a step that knows the field but not the file
        raise _located(source, exc.problems, lines) from None
    if check_qos:
        problems = qos.check_invariants(intent, plan)
        if problems:
            raise _located(source, problems, lines)
    _locate(plan.warnings, lines)
    return plan


def explicit_settings(model: BaseModel, prefix: str = "") -> list[str]:
    """Dotted paths of every field the intent sets explicitly (not left to its default)."""
    out = []
    for name in sorted(model.model_fields_set):
        value: Any = getattr(model, name)
        path = f"{prefix}.{name}" if prefix else name
        if isinstance(value, BaseModel):
            out += explicit_settings(value, path) or [path]
        else:
            out.append(path)
    return out


def fabric_settings(intent: Intent) -> FabricSettings:
    """What the later stages need from the (SKU-resolved) intent: names, pools, models, platforms, hashes."""
    a = intent.addressing
    models: dict[Role, RoleModel] = {}
    platforms: dict[Role, str] = {}
    for role in ROLES:
        m = getattr(intent.switch_models, role)
        platforms[role] = getattr(intent.platforms, role)
        if m is not None:
            models[role] = RoleModel(m.model, m.ports, m.port_speed, m.breakout, m.lanes_per_port, m.cage or "",
                                     m.side("down"), m.side("up"), m.downlink is not None or m.uplink is not None)
    data = intent.model_dump(mode="json")
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return FabricSettings(
        name=intent.fabric.name, description=intent.fabric.description, intent_sha256=digest,
        asn_scheme=intent.bgp.asn_scheme, hash_fields=tuple(intent.ecmp.hash_fields), mtu=intent.qos.mtu,
        pools=Pools(a.loopbacks, a.p2p, a.gpu, a.management, a.loopbacks_v6, a.p2p_v6), models=models,
        platforms=platforms, explicit=tuple(explicit_settings(intent)),
        sonic_release=intent.platforms.sonic_release or "")


def _locate(problems: list[Problem], lines: dict[tuple[Any, ...], int]) -> None:
    """Give each problem the line of its YAML path."""
    for p in problems:
        if p.line is None and p.path:
            loc = tuple(int(x) if x.isdigit() else x for x in p.path.split("."))
            p.line = line_for(lines, loc)


def _located(source: str, problems: list[Problem], lines: dict[tuple[Any, ...], int]) -> FabricError:
    _locate(problems, lines)
    return FabricError(source, problems)


def _platform_hooks(plan: Plan, field: str) -> list[Problem]:
    out: list[Problem] = []
    for name in sorted({sw.platform for sw in plan.switches.values()}):
        hook = getattr(platform(name), field)
        if hook:
            out += load(hook)(plan)
    return out


def platform_warnings(plan: Plan) -> list[Problem]:
    """What each platform in use says about this plan (its record's `plan_warnings`, e.g. SONiC buffers)."""
    return _platform_hooks(plan, "plan_warnings")


def platform_problems(plan: Plan) -> list[Problem]:
    """What each platform in use refuses in this plan (its record's `plan_problems`, e.g. NX-OS's no-drop budget)."""
    return _platform_hooks(plan, "plan_problems")


def warning_lines(plan: Plan) -> list[str]:
    """What the intent asked for and the plan does not give, one line each, for `plan` and `render`."""
    source = plan.source
    return [f"warning: {p.format(source)}" for p in plan.warnings]


def load_plan(path: str | Path, check_qos: bool = True, topology_done: Callable[[Plan], None] | None = None) -> Plan:
    intent, lines = load_intent(path)
    plan = build_plan(intent, str(path), lines, check_qos=check_qos, topology_done=topology_done)
    from fabricgen.plan.pulled import honour  # addresses a source of truth reserves (`fabricgen sot pull`)

    honour(plan, path)
    return plan


# --------------------------------------------------------------------------- views
