"""Staged rollout: which switches may change together, so a wave never takes too much capacity out.

A *wave* is a set of switches deployed (and drained) at the same time; the next wave starts only
when the fabric validates again.  Every wave, whether built by ``auto`` or read from a file,
holds these rules (``violations`` names any it breaks):

* **one tier at a time** - leaves, spines and super-spines never share a wave;
* **one switch per group** - an upper-tier *group* is the set of switches that serve exactly the
  same switches below (the spines of one pod and plane, the super-spines serving one spine
  index of a plane): at most one of a group per wave;
* **at most ⌈N/4⌉ of the N switches above any switch** - no leaf (or spine) loses more than a
  quarter of its uplink neighbors, rounded up, in one wave (whichever of the two is stricter holds);
* **one rail per server** - leaves are grouped so that no GPU server loses more than one of its
  leaves (one rail) in a wave.

``auto_waves`` places switches greedily, top tier first, each into the first wave of its tier
that still holds the rules (so a 2-spine, 4-leaf rail fabric is spine01 | spine02 | the leaves of
rail 0 | the leaves of rail 1).  ``--canary HOST`` puts one switch in a wave of its own first.
A waves file is YAML: ``waves: [[lab-spine01], [lab-spine02], [lab-leaf01, lab-leaf03], ...]``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.errors import FabricError, Problem
from fabricgen.plan.model import Plan

TIER_ORDER = ("super_spine", "spine", "leaf")  # rollout order: the top tier first


@dataclass
class Wave:
    number: int  # 1-based
    hosts: list[str] = field(default_factory=list)
    note: str = ""  # why it is separate ("canary") or what it is ("spine")


@dataclass(frozen=True)
class Topology:
    """Who serves whom, from the plan's cables."""

    up: dict[str, frozenset[str]]  # switch -> the switches above it
    down: dict[str, frozenset[str]]  # switch -> the switches below it
    server_leaves: dict[str, frozenset[str]]  # server -> the leaves its NICs are cabled to
    role: dict[str, str]

    @classmethod
    def of(cls, plan: Plan) -> Topology:
        rank = {"leaf": 0, "spine": 1, "super_spine": 2}
        up: dict[str, set[str]] = defaultdict(set)
        down: dict[str, set[str]] = defaultdict(set)
        for link in plan.links:
            a, z = plan.switches.get(link.a_device), plan.switches.get(link.z_device)
            if a is None or z is None or rank[a.role] == rank[z.role]:
                continue
            low, high = (a, z) if rank[a.role] < rank[z.role] else (z, a)
            up[low.hostname].add(high.hostname)
            down[high.hostname].add(low.hostname)
        servers = {s.name: frozenset(n.leaf for n in s.nics) for s in plan.servers}
        return cls({k: frozenset(v) for k, v in up.items()}, {k: frozenset(v) for k, v in down.items()}, servers,
                   {h: sw.role for h, sw in plan.switches.items()})

    def group(self, host: str) -> frozenset[str]:
        """An upper-tier switch's group key: the switches it serves."""
        return self.down.get(host, frozenset())


def violations(plan: Plan, hosts: Iterable[str], topo: Topology | None = None) -> list[str]:
    """Every rule (module doc) the wave ``hosts`` breaks, each naming the switches involved."""
    topo = topo or Topology.of(plan)
    wave = sorted(set(hosts))
    out: list[str] = []
    tiers = sorted({topo.role[h] for h in wave}, key=TIER_ORDER.index)
    if len(tiers) > 1:
        out.append(f"mixes tiers ({', '.join(tiers)}): one tier per wave")
    groups: dict[frozenset[str], list[str]] = defaultdict(list)
    for h in wave:
        if topo.role[h] != "leaf" and topo.group(h):
            groups[topo.group(h)].append(h)
    for members in groups.values():
        if len(members) > 1:
            out.append(f"{', '.join(members)} serve the same switches (one switch per spine group per wave)")
    below = sorted({b for h in wave for b in topo.down.get(h, ())})
    for b in below:
        uplinks = topo.up.get(b, frozenset())
        out_now = sorted(uplinks & set(wave))
        limit = math.ceil(len(uplinks) / 4)
        if len(out_now) > limit:
            out.append(f"{b} would lose {len(out_now)} of its {len(uplinks)} uplink switches ({', '.join(out_now)}); "
                       f"at most {limit} (a quarter, rounded up) per wave")
    for server, leaves in sorted(topo.server_leaves.items()):
        hit = sorted(leaves & set(wave))
        if len(hit) > 1:
            out.append(f"server {server} would lose {len(hit)} rails at once ({', '.join(hit)}); one per wave")
    return out


def auto_waves(plan: Plan, hosts: Iterable[str], canary: str | None = None) -> list[Wave]:
    """Waves over ``hosts`` (the switches that change) that hold every rule; see the module doc."""
    topo = Topology.of(plan)
    todo = sorted(set(hosts), key=lambda h: (TIER_ORDER.index(topo.role[h]), plan.switches[h].plane,
                                              plan.switches[h].pod, plan.switches[h].index, h))
    waves: list[Wave] = []
    if canary is not None:
        waves.append(Wave(1, [canary], f"canary ({topo.role[canary]})"))
        todo = [h for h in todo if h != canary]
    first_of_tier = len(waves)
    tier = None
    for host in todo:
        if topo.role[host] != tier:
            tier, first_of_tier = topo.role[host], len(waves)
        for wave in waves[first_of_tier:]:
            if not violations(plan, [*wave.hosts, host], topo):
                wave.hosts.append(host)
                break
        else:
            waves.append(Wave(len(waves) + 1, [host], str(tier).replace("_", "-")))
    return waves


def load_waves(path: str | Path, plan: Plan, changing: Iterable[str]) -> list[Wave]:
    """A waves file (module doc), checked: known switches, each at most once, every switch that
    changes placed, every wave within the rules.  Raises FabricError naming file, line and fix."""
    from fabricgen.intent.reader import load

    source = str(path)
    data, lines = load(path)
    root: tuple[object, ...] = ()
    if isinstance(data, dict):
        if set(data) != {"waves"}:
            raise FabricError.single(source, "", f"unknown keys {sorted(set(data) - {'waves'})}",
                                     "the file holds one key, `waves`: a list of lists of hostnames", 1)
        data, root = data["waves"], ("waves",)
    if not isinstance(data, list) or not data:
        raise FabricError.single(source, ".".join(map(str, root)), "is not a non-empty list of waves",
                                 "write `waves: [[host, ...], [host, ...]]`", lines.get(root, 1))
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    topo = Topology.of(plan)
    waves = []
    for i, entry in enumerate(data):
        where = (*root, i)
        dotted = ".".join(map(str, where))
        if not isinstance(entry, list) or not entry or not all(isinstance(h, str) for h in entry):
            problems.append(Problem(dotted, "is not a non-empty list of hostnames", "list the hostnames of this wave",
                                    lines.get(where)))
            continue
        wave = Wave(i + 1, [], "from file")
        for j, host in enumerate(entry):
            line = lines.get((*where, j), lines.get(where))
            if host not in plan.switches:
                problems.append(Problem(f"{dotted}.{j}", f"{host!r} is not a switch of the plan",
                                        "use a hostname `fabricgen plan --format json` lists", line))
            elif host in seen:
                problems.append(Problem(f"{dotted}.{j}", f"{host} is already in wave {seen[host]}",
                                        "put every switch in one wave", line))
            else:
                seen[host] = i + 1
                wave.hosts.append(host)
        for rule in violations(plan, wave.hosts, topo):
            problems.append(Problem(dotted, f"wave {i + 1} {rule}", "split the wave", lines.get(where)))
        waves.append(wave)
    missing = sorted(set(changing) - set(seen))
    if missing:
        problems.append(Problem(".".join(map(str, root)), f"does not place {', '.join(missing)}, which this deploy "
                                f"changes", "add them to a wave (or deploy them with --limit)",
                                lines.get(root, 1)))
    if problems:
        raise FabricError(source, problems)
    return [w for w in waves if w.hosts]
