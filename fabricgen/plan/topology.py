"""Topology: switches, ports, cables and GPU attachments of a (rail-optimized) Clos.

Every switch and port is placed by its *position* (plane, pod, index, port
slot), never by a running counter, so that growing the fabric appends switches
and links without moving any that existed.  The `Design` holds the envelope:
the numbers that follow from the switch models and the topology settings
alone, independent of how many servers are attached today.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from fabricgen.catalog.skus import generic_port_name
from fabricgen.errors import Problem
from fabricgen.intent.model import Intent, SwitchModel
from fabricgen.plan.model import Choice, Design, Interface, Link, NicAttachment, Plan, Role, Server, Side, Switch, Tier
from fabricgen.plan.physical import media_for


class TopologyError(Exception):
    """Cross-field problems found while laying out the fabric."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


@lru_cache(maxsize=8192)
def cage_port_name(platform: str, lanes_per_port: int, cage: int, sub: int, breakout: int) -> str:
    """The platform's naming scheme for a port of a model without a SKU (see skus.generic_port_name)."""
    return generic_port_name(platform, cage, sub, breakout, lanes_per_port)


def port_name(platform: str, model: SwitchModel, index: int) -> str:
    """The platform's own name of logical port `index` (0-based) of a uniformly broken-out model."""
    cage, sub = divmod(index, model.breakout)
    return cage_port_name(platform, model.lanes_per_port, cage, sub, model.breakout)


def split_ports(cages: int, down: tuple[int, int], up: tuple[int, int], target: float,
                unit: int = 1, uplinks: int | None = None) -> tuple[Side, Side]:
    """Divide `cages` between down- and uplinks so that down:up bandwidth comes as close to `target`
    as the radix allows without exceeding it (ports may stay spare to hit it exactly).

    `down`/`up` are (speed, breakout); `unit` is the down-port granularity (a ToR leaf attaches whole
    servers); `uplinks` fixes the uplink port count instead.
    """
    (sd, bd), (su, bu) = down, up
    if uplinks is not None:
        uc = -(-uplinks // bu)
        dc = cages - uc
        return Side(max(dc, 0), bd, sd), Side(uc, bu, su)
    best: tuple[float, int, int, int] | None = None  # (ratio, down ports, -up cages, down cages)
    for uc in range(1, cages):
        most = min((cages - uc) * bd, math.floor(target * uc * bu * su / sd + 1e-9))
        d = most - most % unit
        if d <= 0:
            continue
        key = (round(d * sd / (uc * bu * su), 9), d, -uc, -(-d // bd))
        if best is None or key > best:
            best = key
    if best is None:
        return Side(cages, bd, sd), Side(0, bu, su)
    return Side(best[3], bd, sd), Side(-best[2], bu, su)


def fewest_divisor(total: int, fits: Callable[[int], bool]) -> int | None:
    """The smallest divisor n of `total` (equal parallel links) for which fits(n) holds."""
    for n in range(1, total + 1):
        if total % n == 0 and fits(n):
            return n
    return None


def _ratio_text(r: float) -> str:
    return f"{r:.2f}:1"


def design(intent: Intent) -> Design:
    """Derive the envelope, or raise TopologyError naming the intent field to change."""
    t, sm, servers = intent.topology, intent.switch_models, intent.servers
    problems: list[Problem] = []
    choices: list[Choice] = []
    leaf = sm.leaf
    rails, rpl = servers.nics_per_server, t.rails_per_leaf
    leaf_down_speed, leaf_down_bo = leaf.side("down")
    if servers.nic_speed != leaf_down_speed:
        problems.append(Problem(
            "switch_models.leaf.downlink.speed" if leaf.downlink else "switch_models.leaf.port_speed",
            f"leaf server ports run at {leaf_down_speed}G but GPU NICs at {servers.nic_speed}G",
            f"use a leaf downlink speed/breakout giving {servers.nic_speed}G ports",
        ))
    if t.rail_optimized and rails % rpl:
        problems.append(Problem("topology.rails_per_leaf",
                                f"{rails} rails cannot be split evenly over leaves of {rpl} rails",
                                f"use a rails_per_leaf that divides {rails}"))
    leaves_per_su = rails // rpl if t.rail_optimized else 1
    endpoints = endpoint_ports(intent, leaves_per_su)
    for i, ep in enumerate(intent.endpoints):
        if ep.speed is not None and ep.speed != leaf_down_speed:
            problems.append(Problem(f"endpoints.{i}.speed", f"endpoint {ep.name} runs at {ep.speed}G but the leaf "
                                    f"server ports at {leaf_down_speed}G", f"use {leaf_down_speed}G (or leave "
                                    "speed out): endpoints take the leaves' server ports"))
    if problems:
        raise TopologyError(problems)
    unit = 1 if t.rail_optimized else rails
    if t.tiers == 1:
        leaf_split = (Side(leaf.ports, leaf_down_bo, leaf_down_speed), Side(0, 1, 0))
        if t.leaf_uplinks is not None:
            problems.append(Problem("topology.leaf_uplinks", "a single-tier plane has no uplinks",
                                    "remove leaf_uplinks or use tiers: 2"))
            raise TopologyError(problems)
    else:
        leaf_split = split_ports(leaf.ports, leaf.side("down"), leaf.side("up"), t.ratio("leaf"), unit,
                                 t.leaf_uplinks)
        if leaf_split[0].ports < unit:
            problems.append(Problem("topology.leaf_uplinks",
                                    f"{leaf_split[1].ports} uplinks leave no server port on a "
                                    f"{leaf.ports}-cage leaf", "use fewer uplinks"))
            raise TopologyError(problems)
    ldown, lup = leaf_split
    leaf_down, leaf_up = ldown.ports, lup.ports
    if t.tiers > 1:
        why = ("set by topology.leaf_uplinks" if t.leaf_uplinks is not None else
               f"closest to the {t.ratio('leaf'):g}:1 target the {leaf.ports} cages allow")
        spare = leaf.ports - ldown.cages - lup.cages
        choices.append(Choice("leaf ports", f"{leaf_down} x {ldown.speed}G down, {leaf_up} x {lup.speed}G up"
                              + (f", {spare} cages spare" if spare else ""),
                              f"port budget; {_ratio_text(ldown.bandwidth / lup.bandwidth)} down:up bandwidth if "
                              f"every down port is used, {why}"))
    server_ports = leaf_down - endpoints  # the leaf's server ports left to GPU servers
    if endpoints:
        choices.append(Choice("endpoint ports", f"{endpoints} per leaf", "intent.endpoints take the last server "
                              f"ports of every leaf; {server_ports} stay for GPU servers"))
        if server_ports < unit:
            raise TopologyError([Problem("endpoints", f"endpoints take {endpoints} of a leaf's {leaf_down} server "
                                         f"ports, leaving {server_ports} for GPU servers (one needs {unit})",
                                         "use fewer endpoints, per: su, or a larger leaf")])
    servers_per_leaf = 0 if t.rail_optimized else server_ports // rails
    su_size = 0
    if t.rail_optimized:
        fits = server_ports // rpl
        su_size = t.scalable_unit or fits
        if t.scalable_unit is None:
            choices.append(Choice("scalable unit", f"{su_size} servers",
                                  f"the {fits} server ports one leaf has per rail"
                                  + (f" ({rpl} rails per leaf)" if rpl > 1 else "")))
        elif t.scalable_unit > fits:
            problems.append(Problem(
                "topology.scalable_unit",
                f"a rail leaf has {server_ports} server ports ({fits} per rail"
                + (f"; {endpoints} more go to endpoints" if endpoints else "") + ") but a scalable unit has "
                f"{t.scalable_unit} servers",
                f"use at most {fits} servers per scalable unit, fewer rails_per_leaf or a larger leaf",
            ))
    elif servers_per_leaf < 1:
        problems.append(Problem(
            "switch_models.leaf.ports",
            f"a leaf has {leaf_down} server ports, fewer than the {rails} NICs of one server",
            "use a larger leaf or rail_optimized: true",
        ))
    if problems:
        raise TopologyError(problems)
    per_unit = su_size if t.rail_optimized else servers_per_leaf  # servers per block of leaves_per_su leaves
    env_servers = max(servers.count, t.max_servers or 0)
    env_leaves = -(-env_servers // per_unit) * leaves_per_su
    spine_sides = super_sides = (Side(0, 1, 0), Side(0, 1, 0))
    ratios: list[tuple[str, float]] = []
    if t.tiers > 1:
        ratios.append(("leaf", ldown.bandwidth / lup.bandwidth))
    spines = lsl = spine_ports = spine_down = spine_up = 0
    super_group = spine_super_links = super_ports = 0
    max_pods = 1
    if t.tiers == 1:
        max_leaves_per_pod = leaves_per_su
        if env_leaves > leaves_per_su:
            raise TopologyError([Problem(
                "servers.count",
                f"{env_servers} servers need {env_leaves} leaves per plane; a single-tier plane holds "
                f"{leaves_per_su} (one leaf per {'rail group' if t.rail_optimized else 'plane'})",
                "use tiers: 2, a larger leaf or more planes")])
    else:
        spine = sm.spine
        if spine is None:
            raise TopologyError([Problem("switch_models.spine", f"topology.tiers is {t.tiers} but there is no "
                                         "spine model", "add switch_models.spine or use tiers: 1")])
        sp_down_speed, sp_down_bo = spine.side("down")
        if sp_down_speed != lup.speed:
            problems.append(Problem(
                "switch_models.spine.downlink.speed" if spine.downlink else "switch_models.spine.port_speed",
                f"spine ports toward the leaves run at {sp_down_speed}G but leaf uplinks at {lup.speed}G",
                f"give the spine {lup.speed}G downlinks (port_speed/breakout or downlink.speed)"))
            raise TopologyError(problems)
        if t.tiers == 2:
            spine_sides = (Side(spine.ports, sp_down_bo, sp_down_speed), Side(0, 1, 0))
        else:
            spine_sides = split_ports(spine.ports, spine.side("down"), spine.side("up"), t.ratio("spine"))
            ratios.append(("spine", spine_sides[0].bandwidth / spine_sides[1].bandwidth))
            choices.append(Choice(
                "spine ports", f"{spine_sides[0].ports} x {spine_sides[0].speed}G down, "
                f"{spine_sides[1].ports} x {spine_sides[1].speed}G up",
                f"port budget; {_ratio_text(ratios[-1][1])} down:up bandwidth if every down port is used, "
                f"closest to the {t.ratio('spine'):g}:1 target"))
        spine_ports, spine_down, spine_up = spine.ports, spine_sides[0].ports, spine_sides[1].ports
        # spines are named by their port count; in 3 tiers only the down half faces the leaves
        spine_name = f"{spine_down + spine_up}-port spines" + (f" ({spine_down} ports down)" if spine_up else "")
        if t.tiers == 3:
            # A pod is as many whole scalable units as the spines hold at one link per leaf.
            pod_leaves = max(spine_down // leaves_per_su * leaves_per_su, leaves_per_su)
            why_pod = f"a pod of {pod_leaves} leaves, the most {spine_name} hold"
        else:
            pod_leaves = env_leaves
            why_pod = (f"{env_leaves} leaves planned" + (f" (growth to {env_servers} servers)"
                                                         if env_servers > servers.count else ""))
        if t.spines is not None:
            spines = t.spines
        else:
            found = fewest_divisor(leaf_up, lambda s: s * spine_down >= pod_leaves * leaf_up)
            if found is None:
                raise TopologyError([Problem(
                    "servers.count",
                    f"{env_servers} servers need {env_leaves} leaves per plane; {spine_name} hold "
                    f"at most {spine_down} leaves of {leaf_up} uplinks in a 2-tier fabric",
                    "use topology.tiers: 3, more planes or larger spines")])
            spines = found
        if leaf_up % spines:
            raise TopologyError([Problem(
                "topology.spines", f"{leaf_up} leaf uplinks cannot be spread evenly over {spines} spines",
                f"choose a spine count that divides {leaf_up}")])
        lsl = leaf_up // spines
        max_leaves_per_pod = spine_down // lsl
        if t.spines is None:
            choices.append(Choice("spines", f"{spines} per {'pod' if t.tiers == 3 else 'plane'}, "
                                  f"{lsl} parallel link(s) to each leaf",
                                  f"the fewest {spine_name} that give {why_pod} "
                                  f"their {leaf_up} uplinks with equal links per spine"))
        if t.rail_optimized and max_leaves_per_pod < leaves_per_su:
            problems.append(Problem(
                "topology.spines",
                f"a spine holds {max_leaves_per_pod} leaves but one scalable unit needs {leaves_per_su} rail leaves",
                "use fewer, wider spines (fewer parallel links) or a larger spine model",
            ))
        if t.tiers == 3:
            ss = sm.super_spine
            assert ss is not None  # enforced by Intent
            ss_speed, ss_bo = ss.side("down")
            if ss_speed != spine_sides[1].speed:
                problems.append(Problem("switch_models.super_spine.port_speed",
                                        f"super-spine ports run at {ss_speed}G but spine uplinks at "
                                        f"{spine_sides[1].speed}G", "use the same speed on both ends"))
                raise TopologyError(problems)
            super_sides = (Side(ss.ports, ss_bo, ss_speed), Side(0, 1, 0))
            super_ports = super_sides[0].ports
            per_pod = max_leaves_per_pod // leaves_per_su * leaves_per_su or max_leaves_per_pod
            planned_pods = -(-env_leaves // per_pod)
            want_pods = max(planned_pods, t.max_pods or 0)
            if t.super_spines_per_group is not None:
                super_group = t.super_spines_per_group
            else:
                found = fewest_divisor(spine_up, lambda g: g * super_ports >= want_pods * spine_up)
                super_group = found or spine_up
                choices.append(Choice(
                    "super-spines", f"{spines * super_group} per plane ({super_group} per spine index)",
                    f"the fewest {super_ports}-port super-spines for {want_pods} pod(s) "
                    + ("(topology.max_pods)" if t.max_pods and t.max_pods >= planned_pods else "planned")))
            if spine_up % super_group:
                problems.append(Problem(
                    "topology.super_spines_per_group",
                    f"{spine_up} spine uplinks cannot be spread evenly over {super_group} super-spines",
                    f"choose a group size that divides {spine_up}",
                ))
            else:
                spine_super_links = spine_up // super_group
                max_pods = super_ports // spine_super_links
                if t.max_pods is not None:
                    if t.max_pods > max_pods:
                        problems.append(Problem(
                            "topology.max_pods",
                            f"super-spines can hold {max_pods} pods, not {t.max_pods}",
                            f"set max_pods <= {max_pods} or use larger super-spines",
                        ))
                    max_pods = min(max_pods, t.max_pods)
    if problems:
        raise TopologyError(problems)
    return Design(
        tiers=t.tiers, planes=t.planes, rails=rails, leaf_ports=leaf_down + leaf_up, leaf_down=leaf_down,
        leaf_up=leaf_up, spines=spines, leaf_spine_links=lsl, spine_ports=spine_ports,
        spine_down=spine_down, spine_up=spine_up, max_leaves_per_pod=max_leaves_per_pod, max_pods=max_pods,
        super_group=super_group, spine_super_links=spine_super_links, super_ports=super_ports,
        servers_per_leaf=servers_per_leaf, su_size=su_size, rails_per_leaf=rpl if t.rail_optimized else 1,
        endpoint_ports=endpoints,
        leaf_sides=leaf_split, spine_sides=spine_sides, super_sides=super_sides, ratios=tuple(ratios),
        choices=tuple(choices),
    )


def endpoint_ports(intent: Intent, leaves_per_su: int) -> int:
    """Server ports every leaf keeps for endpoints: a `per: leaf` group's count, a `per: su` group's
    count spread over the scalable unit's rail leaves (rounded up)."""
    return sum(ep.count if ep.per == "leaf" else -(-ep.count // leaves_per_su) for ep in intent.endpoints)


def _width(n: int) -> int:
    return max(2, len(str(n)))


@dataclass(frozen=True)
class Layout:
    """How many of each thing the plan builds, known from the design before anything is built."""

    leaves_per_plane: int
    pods: int  # pods in use (3-tier); the one pod / plane otherwise
    sus: int  # scalable units (rail-optimized)
    sus_per_pod: int
    su_size: int
    leaves: int
    spines: int
    super_spines: int
    links: dict[str, int]  # per tier, as Link.tier names them


# Far above the largest AI fabric built today (~10,000 switches and ~400,000 links for 128K GPUs);
# an intent beyond them is a typo (a breakout, a port count) that would otherwise run for minutes.
MAX_SWITCHES = 32_768
MAX_LINKS = 1_048_576


def layout(intent: Intent, d: Design) -> Layout:
    """Which leaf positions the servers fill and the resulting counts; TopologyError when they do not fit."""
    t = intent.topology
    count = intent.servers.count
    if t.rail_optimized:
        su_size = d.su_size
        sus = math.ceil(count / su_size)
        sus_per_pod = max(d.max_leaves_per_pod // d.leaves_per_su, 1)
        leaves_per_plane = sus * d.leaves_per_su
        pods_needed = math.ceil(sus / sus_per_pod)
    else:
        leaves_per_plane = math.ceil(count / d.servers_per_leaf)
        pods_needed = math.ceil(leaves_per_plane / d.max_leaves_per_pod)
        sus_per_pod = su_size = sus = 0
    if pods_needed > d.max_pods or (d.tiers == 1 and leaves_per_plane > d.max_leaves_per_pod):
        if d.tiers < 3:
            raise TopologyError([Problem(
                "servers.count",
                f"{count} servers need {leaves_per_plane} leaves per plane; "
                + ("a 2-tier fabric with these spines" if d.tiers == 2 else "a single-tier plane")
                + f" holds {d.max_leaves_per_pod}",
                "use more tiers, fewer parallel leaf-spine links (topology.spines) or larger spines",
            )])
        raise TopologyError([Problem(
            "servers.count",
            f"{count} servers need {pods_needed} pods; the super-spine layer holds {d.max_pods}",
            "use larger super-spines, raise topology.max_pods or change topology.super_spines_per_group",
        )])
    leaves = d.planes * leaves_per_plane
    spines = d.planes * pods_needed * d.spines if d.tiers > 1 else 0
    links = {"gpu_leaf": count * d.planes * d.rails + leaves * d.endpoint_ports,  # endpoints: at most this
             "leaf_spine": leaves * d.leaf_up if d.tiers > 1 else 0,
             "spine_super_spine": spines * d.spine_up if d.tiers == 3 else 0}
    return Layout(leaves_per_plane, pods_needed, sus, sus_per_pod, su_size, leaves, spines, d.max_super_spines,
                  links)


def check_size(lay: Layout) -> None:
    """Refuse a design far beyond any real fabric before building it (see MAX_SWITCHES)."""
    switches = lay.leaves + lay.spines + lay.super_spines
    links = sum(lay.links.values())
    if switches > MAX_SWITCHES or links > MAX_LINKS:
        detail = (f"{lay.leaves} leaves, {lay.spines} spines, {lay.super_spines} super-spines; "
                  + ", ".join(f"{n} {tier} links" for tier, n in lay.links.items() if n))
        raise TopologyError([Problem(
            "switch_models",
            f"this design builds {switches} switches and {links} links ({detail}), above fabricgen's limit of "
            f"{MAX_SWITCHES} switches and {MAX_LINKS} links",
            "check the port counts, breakouts and speeds in switch_models, topology.spines / super_spines_per_group "
            "and servers.count: a fabric this size is usually a typo")])


class _Builder:
    """Lays switches, servers and cables into a Plan in deterministic order."""

    def __init__(self, intent: Intent, d: Design, plan: Plan) -> None:
        self.intent, self.d, self.plan = intent, d, plan
        self.name = intent.fabric.name
        # Every switch of a role has the same model and platform, so a port index names the same port on
        # each of them: computed once per (role, platform, index) instead of once per interface.
        self._ports: dict[tuple[str, str, int], tuple[str, int, int, int]] = {}

    # ----------------------------------------------------------------- naming
    def _prefix(self, plane: int, pod: int | None) -> str:
        parts = [self.name]
        if self.d.planes > 1:
            parts.append(f"pl{plane + 1}")
        if pod is not None and self.d.tiers == 3:
            parts.append(f"p{pod + 1:0{_width(self.d.max_pods)}d}")
        return "-".join(parts)

    def _switch(self, role: Role, plane: int, pod: int, index: int, slot: int) -> Switch:
        d = self.d
        if role == "leaf":
            name = f"{self._prefix(plane, pod)}-leaf{index + 1:0{_width(d.max_leaves_per_pod)}d}"
        elif role == "spine":
            name = f"{self._prefix(plane, pod)}-spine{index + 1:0{_width(d.spines)}d}"
        else:
            name = f"{self._prefix(plane, None)}-sspine{index + 1:0{_width(d.spines * d.super_group)}d}"
        model = getattr(self.intent.switch_models, role)
        sw = Switch(hostname=name, role=role, platform=getattr(self.intent.platforms, role), model=model.model,
                    plane=plane, pod=pod, index=index, slot=slot, sku=model.sku or "")
        if name in self.plan.switches:
            raise TopologyError([Problem("fabric.name", f"duplicate hostname {name}", "use a distinct fabric name")])
        self.plan.switches[name] = sw
        return sw

    def _port(self, sw: Switch, index: int) -> tuple[str, int, int, int]:
        """(name, cage, sub-port, breakout) of logical port `index` of `sw` (the SKU's name, or generic)."""
        key = (sw.role, sw.platform, index)
        port = self._ports.get(key)
        if port is None:
            port = self._ports[key] = self._position(sw, index)
        return port

    def _position(self, sw: Switch, index: int) -> tuple[str, int, int, int]:
        model = getattr(self.intent.switch_models, sw.role)
        cage, sub, breakout = self.d.port_position(sw.role, index)
        hw = self.plan.hardware.get(sw.role)
        if hw is not None and hw.sku is not None and not hw.sku.breakouts:  # a SKU's own (fixed) port names
            return hw.cages[cage][sub].name, cage, sub, breakout
        # generic naming, and models whose config breaks cages out (NX-OS: Ethernet1/N, Ethernet1/N/M)
        return cage_port_name(sw.platform, model.lanes_per_port, cage, sub, breakout), cage, sub, breakout

    def _interface(self, sw: Switch, index: int, speed: int, tier: Tier, direction: Literal["down", "up"],
                   peer: str, peer_port: str, length: float,
                   port: tuple[str, int, int, int] | None = None) -> Interface:
        name, cage, sub, breakout = port or self._port(sw, index)
        itf = Interface(name, index, speed, tier, direction, peer, peer_port, mtu=self.intent.qos.mtu,
                        cable_m=length, cage=cage, subport=sub, breakout=breakout)
        sw.interfaces.append(itf)
        return itf

    def _cable(self, tier: Tier, a: Switch, a_idx: int, z: Switch, z_idx: int) -> None:
        """A switch-to-switch link: interfaces on both ends plus the cable record."""
        d = self.d
        speed = d.leaf_sides[1].speed if tier == "leaf_spine" else d.spine_sides[1].speed
        length = self.intent.cabling.leaf_spine_m if tier == "leaf_spine" else self.intent.cabling.spine_super_spine_m
        a_port, z_port = self._port(a, a_idx), self._port(z, z_idx)
        ap, zp = a_port[0], z_port[0]
        itf = self._interface(a, a_idx, speed, tier, "up", z.hostname, zp, length, a_port)
        self._interface(z, z_idx, speed, tier, "down", a.hostname, ap, length, z_port)
        lanes = getattr(self.intent.switch_models, a.role).lanes_per_port // itf.breakout
        self.plan.links.append(Link(tier, a.hostname, ap, z.hostname, zp, speed, length,
                                    media_for(speed, length, max(lanes, 1))))

    # ----------------------------------------------------------------- build
    def build(self) -> None:
        d, servers = self.d, self.intent.servers
        t = self.intent.topology
        count = servers.count
        width = max(4, len(str(count)))
        lay = layout(self.intent, d)
        leaves_per_plane, pods_needed, sus, sus_per_pod, su_size = (
            lay.leaves_per_plane, lay.pods, lay.sus, lay.sus_per_pod, lay.su_size)
        self.plan.pods = pods_needed if d.tiers == 3 else 0

        supers: dict[tuple[int, int, int], Switch] = {}
        for plane in range(d.planes):
            if d.tiers == 3:
                for j in range(d.spines):
                    for m in range(d.super_group):
                        idx = j * d.super_group + m
                        supers[plane, j, m] = self._switch("super_spine", plane, 0, idx,
                                                           plane * d.spines * d.super_group + idx)
            for pod in range(pods_needed):
                spines = [self._switch("spine", plane, pod, j, (plane * d.max_pods + pod) * d.spines + j)
                          for j in range(d.spines)]
                if t.rail_optimized:
                    n_leaves = min(sus_per_pod, sus - pod * sus_per_pod) * d.leaves_per_su
                else:
                    n_leaves = min(d.max_leaves_per_pod, leaves_per_plane - pod * d.max_leaves_per_pod)
                for li in range(n_leaves):
                    slot = (plane * d.max_pods + pod) * d.max_leaves_per_pod + li
                    leaf = self._switch("leaf", plane, pod, li, slot)
                    if t.rail_optimized:
                        group = li % d.leaves_per_su
                        leaf.su, leaf.rail = pod * sus_per_pod + li // d.leaves_per_su, group * d.rails_per_leaf
                    for u in range(d.leaf_up):
                        j, k = u % d.spines, u // d.spines
                        self._cable("leaf_spine", leaf, d.leaf_down + u, spines[j], li * d.leaf_spine_links + k)
                if d.tiers == 3:
                    for j, sp in enumerate(spines):
                        for v in range(d.spine_up):
                            m, k = v % d.super_group, v // d.super_group
                            self._cable("spine_super_spine", sp, d.spine_down + v, supers[plane, j, m],
                                        pod * d.spine_super_links + k)
        self._attach_servers(count, width, su_size, sus_per_pod)
        self._attach_endpoints()

    def _attach_servers(self, count: int, width: int, su_size: int, sus_per_pod: int) -> None:
        d, servers, t = self.d, self.intent.servers, self.intent.topology
        leaves = {(s.plane, s.pod, s.index): s for s in self.plan.switches.values() if s.role == "leaf"}
        length = self.intent.cabling.gpu_leaf_m
        speed = servers.nic_speed
        leaf_model = self.intent.switch_models.leaf
        media = media_for(speed, length, max(1, leaf_model.lanes_per_port // d.leaf_sides[0].breakout))
        rpl = d.rails_per_leaf
        for n in range(count):
            if t.rail_optimized:
                su, pos = divmod(n, su_size)
                pod, su_in_pod = divmod(su, sus_per_pod)
            else:
                leaf_global, pos = divmod(n, d.servers_per_leaf)
                pod, su = divmod(leaf_global, d.max_leaves_per_pod)
            srv = Server(name=f"{servers.name_prefix}{n + 1:0{width}d}", index=n, su=su, pod=pod,
                         gpus=servers.gpus_per_server)
            for plane in range(d.planes):
                for nic in range(d.rails):
                    if t.rail_optimized:
                        # Rail r rides leaf r // rails_per_leaf of the SU, in its own block of SU-size ports.
                        group, lane = divmod(nic, rpl)
                        leaf = leaves[plane, pod, su_in_pod * d.leaves_per_su + group]
                        port_idx = lane * su_size + pos
                    else:
                        leaf = leaves[plane, pod, leaf_global % d.max_leaves_per_pod]
                        port_idx = pos * d.rails + nic
                    ifname = f"eth{nic * d.planes + plane}"
                    itf = self._interface(leaf, port_idx, speed, "gpu_leaf", "down", srv.name, ifname, length)
                    lp = itf.name
                    srv.nics.append(NicAttachment(srv.name, nic, plane, nic, plane, ifname, leaf.hostname, lp, speed))
                    self.plan.links.append(Link("gpu_leaf", srv.name, ifname, leaf.hostname, lp, speed, length, media))
            self.plan.servers.append(srv)


    def _attach_endpoints(self) -> None:
        """Each endpoint group on its leaves' last server ports, group after group (intent order).

        An endpoint's number comes from its position in the envelope -- the leaf's slot (`per: leaf`)
        or the scalable unit's place in its pod (`per: su`) -- so growth adds endpoints and renames
        none; its port's /31 comes from the leaf-port pool like a GPU NIC's (underlay).
        """
        d, t = self.d, self.intent.topology
        if not self.intent.endpoints:
            return
        leaves = [s for s in self.plan.switches.values() if s.role == "leaf"]
        length = self.intent.cabling.gpu_leaf_m
        speed = d.leaf_sides[0].speed
        lanes = max(1, self.intent.switch_models.leaf.lanes_per_port // d.leaf_sides[0].breakout)
        media = media_for(speed, length, lanes)
        lps = d.leaves_per_su
        sus_per_pod = max(d.max_leaves_per_pod // lps, 1)
        first = d.endpoint_base  # leaf port index of the group's first slot
        base = 0  # the group's first endpoint number in the envelope (management addresses)
        for ep in self.intent.endpoints:
            per_leaf = ep.count if ep.per == "leaf" else -(-ep.count // lps)
            units = d.endpoint_units(ep.per)
            width = max(3, len(str(units * ep.count)))
            for leaf in leaves:
                if ep.per == "leaf":
                    mine = [(j, j) for j in range(ep.count)]  # (number in the unit, slot on the leaf)
                    unit = leaf.slot
                else:
                    group = leaf.index % lps if t.rail_optimized else 0
                    mine = [(j, j // lps) for j in range(ep.count) if j % lps == group]
                    unit = (leaf.plane * d.max_pods + leaf.pod) * sus_per_pod + leaf.index // lps
                for j, k in mine:
                    n = unit * ep.count + j
                    host = Server(name=f"{ep.name}{n + 1:0{width}d}", index=base + n, su=leaf.su, pod=leaf.pod,
                                  gpus=0, role=ep.role)
                    itf = self._interface(leaf, first + k, speed, "gpu_leaf", "down", host.name, "eth0", length)
                    host.nics.append(NicAttachment(host.name, 0, 0, max(leaf.rail, 0), leaf.plane, "eth0",
                                                   leaf.hostname, itf.name, speed))
                    self.plan.links.append(Link("gpu_leaf", host.name, "eth0", leaf.hostname, itf.name, speed,
                                                length, media))
                    self.plan.endpoints.append(host)
            first += per_leaf
            base += units * ep.count
        self.plan.endpoints.sort(key=lambda h: h.index)


def build_topology(intent: Intent, plan: Plan, d: Design | None = None) -> Design:
    """Switches, interfaces, links and servers of the design (`design(intent)` unless given)."""
    d = d or design(intent)
    _Builder(intent, d, plan).build()
    for sw in plan.switches.values():
        sw.interfaces.sort(key=lambda i: i.index)
    plan.design = d
    return d
