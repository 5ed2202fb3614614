"""Topology: switches, ports, cables and GPU attachments of a (rail-optimized) Clos.

Every switch and port is placed by its *position* (plane, pod, index, port
slot), never by a running counter, so that growing the fabric appends switches
and links without moving any that existed.  The `Design` holds the envelope:
the numbers that follow from the switch models and the topology settings
alone, independent of how many servers are attached today.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from fabricgen.errors import Problem
from fabricgen.intent import Intent, SwitchModel
from fabricgen.model import Interface, Link, NicAttachment, Plan, Role, Server, Switch, Tier


class TopologyError(Exception):
    """Cross-field problems found while laying out the fabric."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class Design:
    """The growth envelope: what the chosen switch models and settings can hold."""

    tiers: int
    planes: int
    rails: int  # NIC ports per server per plane
    leaf_ports: int
    leaf_down: int
    leaf_up: int
    spines: int  # per plane (2-tier) or per pod (3-tier)
    leaf_spine_links: int  # parallel links between one leaf and one spine
    spine_ports: int
    spine_down: int
    spine_up: int
    max_leaves_per_pod: int
    max_pods: int
    super_group: int  # super-spines per spine index (3-tier)
    spine_super_links: int  # parallel links between one spine and one super-spine
    super_ports: int
    servers_per_leaf: int  # non-rail-optimized designs

    @property
    def max_leaves(self) -> int:
        return self.planes * self.max_pods * self.max_leaves_per_pod

    @property
    def max_spines(self) -> int:
        return self.planes * self.max_pods * self.spines

    @property
    def max_super_spines(self) -> int:
        return self.planes * self.spines * self.super_group if self.tiers == 3 else 0


@lru_cache(maxsize=4096)
def port_name(platform: str, model: SwitchModel, index: int) -> str:
    """The platform's own name of logical port `index` (0-based)."""
    phys, sub = divmod(index, model.breakout)
    if platform == "nxos":
        return f"Ethernet1/{phys + 1}" if model.breakout == 1 else f"Ethernet1/{phys + 1}/{sub + 1}"
    return f"Ethernet{phys * model.lanes_per_port + sub * (model.lanes_per_port // model.breakout)}"


def design(intent: Intent) -> Design:
    """Derive the envelope, or raise TopologyError naming the intent field to change."""
    t, sm, servers = intent.topology, intent.switch_models, intent.servers
    problems: list[Problem] = []
    leaf, spine = sm.leaf, sm.spine
    if servers.nic_speed != leaf.logical_speed:
        problems.append(Problem(
            "switch_models.leaf.port_speed",
            f"leaf ports run at {leaf.logical_speed}G but GPU NICs at {servers.nic_speed}G",
            f"use a leaf port speed/breakout giving {servers.nic_speed}G ports",
        ))
    if leaf.logical_speed != spine.logical_speed:
        problems.append(Problem(
            "switch_models.spine.port_speed",
            f"spine ports run at {spine.logical_speed}G but leaf uplinks at {leaf.logical_speed}G",
            "use the same logical port speed on leaves and spines",
        ))
    ratio = t.oversubscription
    if t.leaf_uplinks is not None:
        leaf_up = t.leaf_uplinks
        if leaf_up >= leaf.logical_ports:
            problems.append(Problem("topology.leaf_uplinks",
                                    f"{leaf_up} uplinks leave no server port on a {leaf.logical_ports}-port leaf",
                                    "use fewer uplinks"))
            raise TopologyError(problems)
        leaf_down = leaf.logical_ports - leaf_up
    else:
        leaf_down = math.floor(leaf.logical_ports * ratio / (1 + ratio) + 1e-9)
        leaf_up = leaf.logical_ports - leaf_down
    spines = t.spines or leaf_up
    rails = servers.nics_per_server
    if leaf_up < 1 or leaf_up % spines:
        problems.append(Problem(
            "topology.spines",
            f"{leaf_up} leaf uplinks cannot be spread evenly over {spines} spines",
            f"choose a spine count that divides {leaf_up}",
        ))
        raise TopologyError(problems)
    lsl = leaf_up // spines
    if t.tiers == 2:
        spine_down, spine_up = spine.logical_ports, 0
    else:
        spine_down = spine.logical_ports // 2
        spine_up = spine.logical_ports - spine_down
    max_leaves_per_pod = spine_down // lsl
    servers_per_leaf = leaf_down // rails if not t.rail_optimized else 0
    if t.rail_optimized:
        if t.scalable_unit > leaf_down:
            problems.append(Problem(
                "topology.scalable_unit",
                f"a rail leaf has {leaf_down} server ports but a scalable unit has {t.scalable_unit} servers",
                f"use at most {leaf_down} servers per scalable unit or a larger leaf",
            ))
        if max_leaves_per_pod < rails:
            problems.append(Problem(
                "topology.spines",
                f"a spine holds {max_leaves_per_pod} leaves but one scalable unit needs {rails} rail leaves",
                "use fewer, wider spines (fewer parallel links) or a larger spine model",
            ))
    elif servers_per_leaf < 1:
        problems.append(Problem(
            "switch_models.leaf.ports",
            f"a leaf has {leaf_down} server ports, fewer than the {rails} NICs of one server",
            "use a larger leaf or rail_optimized: true",
        ))
    super_group = spine_super_links = super_ports = 0
    max_pods = 1
    if t.tiers == 3:
        ss = sm.super_spine
        assert ss is not None  # enforced by Intent
        super_ports = ss.logical_ports
        super_group = t.super_spines_per_group or spine_up
        if spine_up % super_group:
            problems.append(Problem(
                "topology.super_spines_per_group",
                f"{spine_up} spine uplinks cannot be spread evenly over {super_group} super-spines",
                f"choose a group size that divides {spine_up}",
            ))
        else:
            spine_super_links = spine_up // super_group
            max_pods = super_ports // spine_super_links
            if ss.logical_speed != spine.logical_speed:
                problems.append(Problem("switch_models.super_spine.port_speed",
                                        "super-spine and spine port speeds differ", "use the same speed"))
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
        tiers=t.tiers, planes=t.planes, rails=rails, leaf_ports=leaf.logical_ports, leaf_down=leaf_down,
        leaf_up=leaf_up, spines=spines, leaf_spine_links=lsl, spine_ports=spine.logical_ports,
        spine_down=spine_down, spine_up=spine_up, max_leaves_per_pod=max_leaves_per_pod, max_pods=max_pods,
        super_group=super_group, spine_super_links=spine_super_links, super_ports=super_ports,
        servers_per_leaf=servers_per_leaf,
    )


def _width(n: int) -> int:
    return max(2, len(str(n)))


class _Builder:
    """Lays switches, servers and cables into a Plan in deterministic order."""

    def __init__(self, intent: Intent, d: Design, plan: Plan) -> None:
        self.intent, self.d, self.plan = intent, d, plan
        self.name = intent.fabric.name

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
                    plane=plane, pod=pod, index=index, slot=slot)
        if name in self.plan.switches:
            raise TopologyError([Problem("fabric.name", f"duplicate hostname {name}", "use a distinct fabric name")])
        self.plan.switches[name] = sw
        return sw

    def _port(self, sw: Switch, index: int) -> str:
        return port_name(sw.platform, getattr(self.intent.switch_models, sw.role), index)

    def _cable(self, tier: Tier, a: Switch, a_idx: int, z: Switch, z_idx: int) -> None:
        """A switch-to-switch link: interfaces on both ends plus the cable record."""
        speed = self.intent.switch_models.leaf.logical_speed
        length = self.intent.cabling.leaf_spine_m if tier == "leaf_spine" else self.intent.cabling.spine_super_spine_m
        ap, zp = self._port(a, a_idx), self._port(z, z_idx)
        mtu = self.intent.qos.mtu
        a.interfaces.append(Interface(ap, a_idx, speed, tier, "up", z.hostname, zp, mtu=mtu, cable_m=length))
        z.interfaces.append(Interface(zp, z_idx, speed, tier, "down", a.hostname, ap, mtu=mtu, cable_m=length))
        self.plan.links.append(Link(tier, a.hostname, ap, z.hostname, zp, speed, length, media_for(speed, length)))

    # ----------------------------------------------------------------- build
    def build(self) -> None:
        d, servers = self.d, self.intent.servers
        t = self.intent.topology
        count = servers.count
        width = max(4, len(str(count)))
        # Which leaf position (pod, index-in-pod) serves which servers, per plane.
        if t.rail_optimized:
            su_size = t.scalable_unit
            sus = math.ceil(count / su_size)
            sus_per_pod = d.max_leaves_per_pod // d.rails
            leaves_per_plane = sus * d.rails
            pods_needed = math.ceil(sus / sus_per_pod)
        else:
            leaves_per_plane = math.ceil(count / d.servers_per_leaf)
            pods_needed = math.ceil(leaves_per_plane / d.max_leaves_per_pod)
            sus_per_pod = su_size = sus = 0
        if pods_needed > d.max_pods:
            if d.tiers == 2:
                raise TopologyError([Problem(
                    "servers.count",
                    f"{count} servers need {leaves_per_plane} leaves per plane; a 2-tier fabric with these spines "
                    f"holds {d.max_leaves_per_pod}",
                    "use topology.tiers: 3, fewer parallel leaf-spine links (topology.spines) or larger spines",
                )])
            raise TopologyError([Problem(
                "servers.count",
                f"{count} servers need {pods_needed} pods; the super-spine layer holds {d.max_pods}",
                "use larger super-spines, raise topology.max_pods or change topology.super_spines_per_group",
            )])
        self.plan.facts.update(pods=pods_needed if d.tiers == 3 else 0, leaves_per_plane=leaves_per_plane)

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
                    n_leaves = min(sus_per_pod, sus - pod * sus_per_pod) * d.rails
                else:
                    n_leaves = min(d.max_leaves_per_pod, leaves_per_plane - pod * d.max_leaves_per_pod)
                for li in range(n_leaves):
                    slot = (plane * d.max_pods + pod) * d.max_leaves_per_pod + li
                    leaf = self._switch("leaf", plane, pod, li, slot)
                    if t.rail_optimized:
                        leaf.su, leaf.rail = pod * sus_per_pod + li // d.rails, li % d.rails
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

    def _attach_servers(self, count: int, width: int, su_size: int, sus_per_pod: int) -> None:
        d, servers, t = self.d, self.intent.servers, self.intent.topology
        leaves = {(s.plane, s.pod, s.index): s for s in self.plan.switches.values() if s.role == "leaf"}
        length = self.intent.cabling.gpu_leaf_m
        speed = servers.nic_speed
        media = media_for(speed, length)
        mtu = self.intent.qos.mtu
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
                        leaf = leaves[plane, pod, su_in_pod * d.rails + nic]
                        port_idx = pos
                    else:
                        leaf = leaves[plane, pod, leaf_global % d.max_leaves_per_pod]
                        port_idx = pos * d.rails + nic
                    ifname = f"eth{nic * d.planes + plane}"
                    lp = self._port(leaf, port_idx)
                    leaf.interfaces.append(Interface(lp, port_idx, speed, "gpu_leaf", "down", srv.name, ifname,
                                                     mtu=mtu, cable_m=length))
                    srv.nics.append(NicAttachment(srv.name, nic, plane, nic, plane, ifname, leaf.hostname, lp, speed))
                    self.plan.links.append(Link("gpu_leaf", srv.name, ifname, leaf.hostname, lp, speed, length, media))
            self.plan.servers.append(srv)


# Reach limits in metres per media, by lane rate; the first that reaches wins (cheapest first).
_MEDIA = (
    ("DAC", {100: 5.0, 200: 3.0, 400: 3.0, 800: 2.0}),
    ("AEC", {100: 7.0, 200: 7.0, 400: 7.0, 800: 7.0}),
    ("AOC", {100: 30.0, 200: 30.0, 400: 30.0, 800: 30.0}),
    ("SR", {100: 100.0, 200: 100.0, 400: 100.0, 800: 50.0}),
    ("DR", {100: 500.0, 200: 500.0, 400: 500.0, 800: 500.0}),
    ("FR", {100: 2000.0, 200: 2000.0, 400: 2000.0, 800: 2000.0}),
    ("LR", {100: 10000.0, 200: 10000.0, 400: 10000.0, 800: 10000.0}),
)
_OPTIC_SUFFIX = {
    ("SR", 100): "SR4", ("SR", 200): "SR4", ("SR", 400): "SR8", ("SR", 800): "SR8",
    ("DR", 100): "DR", ("DR", 200): "DR4", ("DR", 400): "DR4", ("DR", 800): "DR8",
    ("FR", 100): "FR", ("FR", 200): "FR4", ("FR", 400): "FR4", ("FR", 800): "2xFR4",
    ("LR", 100): "LR4", ("LR", 200): "LR4", ("LR", 400): "LR4", ("LR", 800): "2xLR4",
}


@lru_cache(maxsize=256)
def media_for(speed: int, length_m: float) -> str:
    """Cheapest cable or optic that reaches `length_m` at `speed` (e.g. '400G-DAC', '400G-DR4')."""
    rate = min((s for s in (100, 200, 400, 800) if s >= speed), default=800)
    for kind, reach in _MEDIA:
        if length_m <= reach[rate]:
            return f"{speed}G-{_OPTIC_SUFFIX.get((kind, rate), kind)}"
    raise ValueError(f"no optic reaches {length_m} m at {speed}G (longest: LR, 10 km)")


def build_topology(intent: Intent, plan: Plan) -> Design:
    d = design(intent)
    _Builder(intent, d, plan).build()
    for sw in plan.switches.values():
        sw.interfaces.sort(key=lambda i: i.index)
    plan.facts["design"] = d
    return d
