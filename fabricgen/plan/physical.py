"""The physical layer: cages, pluggable modules, breakout cables and fibre, counted separately.

A *link* is one logical port pair (what BGP and the configs see).  A *port* is one end of it.  A
*module* sits in one front-panel cage and serves every logical port of that cage: an 800G OSFP
split 2 x 400G takes one twin-port module, not two.  A *cable* is what a technician pulls: an
integrated copper or active cable (DAC, ACC/AEC, AOC) is one cable whatever its breakout, and
joins the modules-free cages at both ends; a transceiver link needs a module at each end and one
fibre per port (MPO for parallel optics, duplex LC for wavelength-multiplexed ones).

Optic names follow the port's electrical lanes and the reach: a 400G half of an 800G cage is
400G-DR4 (4 x 100G), the cage's module a "2x400G-DR4 twin-port"; a single-lane 100G breakout
is 100G-SR1, not 100G-SR4.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from fabricgen.base import pool
from fabricgen.plan.model import Plan, RoleModel

# Reach limits in metres per media, by lane rate; the first that reaches wins (cheapest first).
_MEDIA = (
    ("DAC", {100: 5.0, 200: 3.0, 400: 3.0, 800: 2.0}),
    ("ACC", {100: 7.0, 200: 7.0, 400: 7.0, 800: 7.0}),
    ("AOC", {100: 30.0, 200: 30.0, 400: 30.0, 800: 30.0}),
    ("SR", {100: 100.0, 200: 100.0, 400: 100.0, 800: 50.0}),
    ("DR", {100: 500.0, 200: 500.0, 400: 500.0, 800: 500.0}),
    ("FR", {100: 2000.0, 200: 2000.0, 400: 2000.0, 800: 2000.0}),
    ("LR", {100: 10000.0, 200: 10000.0, 400: 10000.0, 800: 10000.0}),
)
INTEGRATED = frozenset({"DAC", "ACC", "AOC"})  # the cable is the module: no transceivers
CAGE_NAMES = {"osfp": "OSFP", "qsfp-dd": "QSFP-DD", "qsfp112": "QSFP112", "qsfp56": "QSFP56", "qsfp28": "QSFP28"}


def default_cage(port_speed: int, lanes: int) -> str:
    """The usual cage of a port: 800G OSFP, 400G QSFP-DD (8 lanes) or QSFP112 (4), 200G QSFP56, else QSFP28."""
    if port_speed >= 800:
        return "osfp"
    if port_speed == 400:
        return "qsfp-dd" if lanes == 8 else "qsfp112"
    return "qsfp56" if port_speed == 200 else "qsfp28"


def cage_of(model: RoleModel) -> str:
    return model.cage or default_cage(model.port_speed, model.lanes_per_port)


@lru_cache(maxsize=512)
def media_kind(speed: int, length_m: float) -> str:
    """Cheapest media family that reaches `length_m` at `speed`: DAC, ACC, AOC, SR, DR, FR or LR."""
    rate = min((s for s in (100, 200, 400, 800) if s >= speed), default=800)
    for kind, reach in _MEDIA:
        if length_m <= reach[rate]:
            return kind
    raise ValueError(f"no optic reaches {length_m} m at {speed}G (longest: LR, 10 km)")


@lru_cache(maxsize=512)
def optic_name(speed: int, lanes: int, kind: str) -> str:
    """The port-level name of `kind` at `speed` over `lanes` electrical lanes, e.g. 400G-DR4, 100G-SR1."""
    if kind in INTEGRATED:
        return f"{speed}G-{kind}"
    if kind == "SR":  # multimode parallel: one fibre pair per electrical lane
        return f"{speed}G-SR{lanes}"
    if kind == "DR":  # single-mode parallel, 100G optical lanes
        n = max(1, speed // 100)
        return f"{speed}G-DR{n if n > 1 else ''}"
    # FR / LR: 4 wavelengths per 400G on duplex fibre, two of them in an 800G module
    if speed >= 800:
        return f"{speed}G-2x{kind}4"
    return f"{speed}G-{kind}{4 if speed >= 200 else 1}"


def media_for(speed: int, length_m: float, lanes: int | None = None) -> str:
    """Cheapest cable or optic that reaches `length_m` at `speed` (e.g. '400G-DAC', '400G-DR4')."""
    return optic_name(speed, lanes or (8 if speed >= 400 else 4), media_kind(speed, length_m))


@lru_cache(maxsize=256)
def module_name(cage: str, port_optic: str, breakout: int) -> str:
    """Part class of the module in one cage, e.g. 'OSFP 2x400G-DR4 twin-port' or 'QSFP-DD 400G-DR4'."""
    prefix = CAGE_NAMES.get(cage, cage.upper())
    if breakout == 1:
        return f"{prefix} {port_optic}"
    return f"{prefix} {breakout}x{port_optic}" + (" twin-port" if breakout == 2 else "")


@lru_cache(maxsize=256)
def fibre_name(port_optic: str) -> str:
    """The fibre one transceiver port takes: MPO for parallel optics, duplex LC for wavelength-multiplexed."""
    tail = port_optic.split("-", 1)[1]
    if tail.startswith(("SR", "DR")) and tail[2:] not in ("", "1"):
        return "MPO-16 fibre" if tail[2:] == "8" else "MPO-12 fibre"
    return "duplex LC fibre"


@dataclass(slots=True)
class End:
    """One link end: device, logical port, cage (device-unique key), its breakout, cage type and lanes."""

    device: str
    port: str
    cage: int
    breakout: int
    cage_type: str
    lanes: int


@dataclass(slots=True)
class Cable:
    """One physical cable: its type, the ends it joins and the logical links it carries."""

    tier: str
    kind: str  # cable part class, e.g. "800G to 2x400G DAC breakout", "MPO-12 fibre"
    length_m: float
    a: list[End]
    z: list[End]
    a_module: str  # module in the A-end cage(s) ("" for integrated cables)
    z_module: str


@dataclass(slots=True)
class Physical:
    cables: list[Cable]
    modules: Counter[str]  # part class -> count (transceivers; integrated cables have none)
    ports: int  # logical ports with something plugged in (2 per link)
    distinct_cages: bool = False  # every link end in a cage of its own (`_one_cable_per_link`): one plug each

    def cable_counts(self) -> Counter[str]:
        return Counter(c.kind for c in self.cables)

    def counts(self) -> PhysicalCounts:
        return PhysicalCounts(self.ports, dict(self.modules), dict(self.cable_counts()))


@dataclass(frozen=True, slots=True)
class PhysicalCounts:
    """What the plan's summary says of the physical layer: logical ports in use, modules and cables by part class."""

    ports: int
    modules: dict[str, int]
    cables: dict[str, int]


@dataclass(frozen=True, slots=True)
class Cabling:
    """The physical layer as render writes it: cabling.csv, the summary's counts, and the cages that would take
    more than one plug (a plan no hardware takes).  Small next to the cables it comes from (52 MB of text for
    400K cables at 128K GPUs), so it can come back from a forked process (`cabling`)."""

    csv: str
    counts: PhysicalCounts
    overfull: list[tuple[str, int, int]]


def cabling(plan: Plan) -> Cabling:
    """The plan's cabling.  It reads the topology only (links, ports, cages, NICs), never an address: render
    computes it in a child forked as soon as the topology is built, beside the rest of the plan."""
    physical = build_physical(plan)
    return Cabling(cabling_rows(plan, physical), physical.counts(), overfull_cages(physical))


def _ends(plan: Plan) -> dict[tuple[str, str], End]:
    """Every link end by (device, port): switch ports from their interfaces, NIC ports per NIC cage."""
    ends: dict[tuple[str, str], End] = {}
    for sw in plan.switches.values():
        model = plan.settings.models[sw.role]
        cage_type, lpp, host = cage_of(model), model.lanes_per_port, sw.hostname
        for itf in sw.interfaces:
            ends[host, itf.name] = End(host, itf.name, itf.cage, itf.breakout, cage_type, max(1, lpp // itf.breakout))
    planes = plan.envelope.planes
    for srv in plan.hosts():
        ports = planes if srv.role == "gpu" else 1  # an endpoint has one port, on one leaf
        for nic in srv.nics:
            leaf_end = ends[nic.leaf, nic.leaf_port]
            total = nic.speed * ports  # a NIC's ports (one per plane) share its cage
            cage = "osfp" if total >= 400 else default_cage(total, 4)
            ends[srv.name, nic.ifname] = End(srv.name, nic.ifname, nic.nic, ports, cage, leaf_end.lanes)
    return ends


def build_physical(plan: Plan) -> Physical:
    """Group the plan's links into cables and count the modules in every used cage."""
    with pool.collector_off():  # ~100K ends and cables at 32K GPUs, none of them cyclic
        ends = _ends(plan)
        return _one_cable_per_link(plan, ends) or _build(plan, ends)


def _one_cable_per_link(plan: Plan, ends: dict[tuple[str, str], End]) -> Physical | None:
    """The cables when no cage breaks out and none is used twice (every plan of one port speed end to end, 400K
    links at 128K GPUs): each link is a cable of its own, as `_build` would group it, without the grouping;
    None where that does not hold."""
    cables: list[Cable] = []
    modules: Counter[str] = Counter()
    cages: set[tuple[str, int]] = set()
    for link in plan.links:
        a, z = ends[link.a_device, link.a_port], ends[link.z_device, link.z_port]
        ka, kz = (a.device, a.cage), (z.device, z.cage)
        if a.breakout != 1 or z.breakout != 1 or ka in cages or kz in cages or ka == kz:
            return None
        cages.add(ka)
        cages.add(kz)
        kind = media_kind(link.speed, link.length_m)
        optic = optic_name(link.speed, a.lanes, kind)
        if kind in INTEGRATED:
            cables.append(Cable(link.tier, _integrated_name(optic, 1, 1, 1), link.length_m, [a], [z], "", ""))
            continue
        a_mod = module_name(a.cage_type, optic, 1)
        z_mod = module_name(z.cage_type, optic, 1)
        modules[a_mod] += 1
        modules[z_mod] += 1
        cables.append(Cable(link.tier, fibre_name(optic), link.length_m, [a], [z], a_mod, z_mod))
    return Physical(cables, modules, 2 * len(plan.links), distinct_cages=True)


def _build(plan: Plan, ends: dict[tuple[str, str], End]) -> Physical:
    cables: list[Cable] = []
    modules: Counter[str] = Counter()
    seen_cages: set[tuple[str, int]] = set()

    def fibre(tier: str, length: float, a: End, z: End, optic: str) -> None:
        """A transceiver at each end (one per cage) and one fibre per port."""
        a_mod = module_name(a.cage_type, optic, a.breakout)
        z_mod = module_name(z.cage_type, optic, z.breakout)
        for cage, mod in (((a.device, a.cage), a_mod), ((z.device, z.cage), z_mod)):
            if cage not in seen_cages:
                seen_cages.add(cage)
                modules[mod] += 1
        cables.append(Cable(tier, fibre_name(optic), length, [a], [z], a_mod, z_mod))

    # Integrated cables join every link of their trunk cage (the end with the larger breakout), or of
    # their cage pair when both ends break out alike: grouped first, emitted in first-link order.
    groups: dict[tuple[object, ...], tuple[Cable, str]] = {}
    fibred: list[tuple[str, float, End, End, str]] = []  # (tier, length, a, z, optic) of transceiver links
    order: list[tuple[tuple[object, ...] | None, str, float, End, End, int]] = []  # (group key or None, ...)
    for link in plan.links:
        a, z = ends[link.a_device, link.a_port], ends[link.z_device, link.z_port]
        kind = media_kind(link.speed, link.length_m)
        optic = optic_name(link.speed, a.lanes, kind)
        if kind not in INTEGRATED:
            fibred.append((link.tier, link.length_m, a, z, optic))
            order.append((None, link.tier, link.length_m, a, z, link.speed))
            continue
        if a.breakout > z.breakout:
            key: tuple[object, ...] = ("trunk", a.device, a.cage)
        elif z.breakout > a.breakout:
            key = ("trunk", z.device, z.cage)
        else:
            key = ("pair", a.device, a.cage, z.device, z.cage)
        order.append((key, link.tier, link.length_m, a, z, link.speed))
        group = groups.get(key)
        if group is None:
            groups[key] = (Cable(link.tier, "", link.length_m, [a], [z], "", ""), optic)  # named once complete
        else:
            group[0].a.append(a)
            group[0].z.append(z)
    # One plug per cage: an integrated cable may only end in cages no other cable or module uses.  A split
    # cage whose halves go to different split peers takes a transceiver and one fibre per port instead
    # (the shortest-reach optic, SR), as the published designs count them.
    split = _shared_cages(groups, fibred)
    emitted: set[tuple[object, ...]] = set()
    for group_key, tier, length, a, z, speed in order:
        if group_key is None:
            fibre(tier, length, a, z, optic_name(speed, a.lanes, media_kind(speed, length)))
        elif group_key in split:
            fibre(tier, length, a, z, optic_name(speed, a.lanes, "SR"))
        elif group_key not in emitted:
            emitted.add(group_key)
            cables.append(groups[group_key][0])
    for key, (cable, optic) in groups.items():
        if key in split:
            continue
        if len(cable.a) > 1:
            a_ends, z_ends = _unique(cable.a), _unique(cable.z)
            if len({(e.device, e.cage) for e in a_ends}) > len({(e.device, e.cage) for e in z_ends}):
                a_ends, z_ends = z_ends, a_ends  # the single-cage (trunk) end is always A
            cable.a, cable.z = a_ends, z_ends
        z_cages = len({(e.device, e.cage) for e in cable.z}) if len(cable.z) > 1 else 1
        cable.kind = _integrated_name(optic, len(cable.a), len(cable.z), z_cages)
    return Physical(cables, modules, 2 * len(plan.links))


def _shared_cages(groups: dict[tuple[object, ...], tuple[Cable, str]],
                  fibred: list[tuple[str, float, End, End, str]]) -> set[tuple[object, ...]]:
    """The integrated-cable groups that cannot be one cable: a cage of theirs is also used by another group or
    by a transceiver, directly or through a group already turned into transceivers (to a fixed point)."""
    users: dict[tuple[str, int], set[tuple[object, ...]]] = {}
    for key, (cable, _) in groups.items():
        for e in (*cable.a, *cable.z):
            users.setdefault((e.device, e.cage), set()).add(key)
    moduled = {(e.device, e.cage) for _, _, a, z, _ in fibred for e in (a, z)}
    todo = [key for keys in users.values() if len(keys) > 1 for key in keys]
    todo += [key for cage, keys in users.items() if cage in moduled for key in keys]
    bad: set[tuple[object, ...]] = set()
    while todo:
        key = todo.pop()
        if key in bad:
            continue
        bad.add(key)
        cable, _ = groups[key]
        for e in (*cable.a, *cable.z):
            todo += [k for k in users[(e.device, e.cage)] if k not in bad]
    return bad


def cage_plugs(physical: Physical) -> dict[tuple[str, int], int]:
    """Plugs in each used cage: one per integrated cable ending there, one for a transceiver module (its fibres
    plug into the module, not the cage).  A cage takes one plug."""
    integrated, moduled = _cage_uses(physical)
    plugs: Counter[tuple[str, int]] = Counter(integrated)
    plugs.update(moduled)
    return dict(plugs)


def _cage_uses(physical: Physical) -> tuple[list[tuple[str, int]], set[tuple[str, int]]]:
    """Each integrated cable's distinct cages (one list, 400K cables at 128K GPUs), and the cages with a module."""
    moduled: set[tuple[str, int]] = set()
    integrated: list[tuple[str, int]] = []
    for c in physical.cables:
        if len(c.a) == 1 and len(c.z) == 1:  # most cables: one link, two cages (one if both ends share it)
            a, z = c.a[0], c.z[0]
            ends = ((a.device, a.cage), (z.device, z.cage))
            cages: tuple[tuple[str, int], ...] | set[tuple[str, int]] = ends if ends[0] != ends[1] else ends[:1]
        else:
            cages = {(e.device, e.cage) for e in (*c.a, *c.z)}
        if c.a_module or c.z_module:
            moduled.update(cages)
        else:
            integrated += cages
    return integrated, moduled


def overfull_cages(physical: Physical) -> list[tuple[str, int, int]]:
    """(device, 1-based cage, plugs) of every cage with more plugs than the one it takes."""
    if physical.distinct_cages:  # each cable's cages are its links' own, and no two link ends share one
        return []
    integrated, moduled = _cage_uses(physical)
    distinct = set(integrated)
    if len(distinct) == len(integrated) and moduled.isdisjoint(distinct):  # every plan fabricgen makes
        return []
    return sorted((dev, cage + 1, n) for (dev, cage), n in cage_plugs(physical).items() if n > 1)


def _unique(ends: list[End]) -> list[End]:
    out: dict[tuple[str, str], End] = {}
    for e in ends:
        out.setdefault((e.device, e.port), e)
    return list(out.values())


_CSV_SPECIAL = frozenset('"\r\n')  # with the delimiter, what makes csv.writer (QUOTE_MINIMAL) quote a field


@lru_cache(maxsize=256)
def _integrated_name(optic: str, a_ports: int, z_ports: int, z_cages: int) -> str:
    """'400G AOC', or '800G to 2x400G DAC breakout' when the A cage fans out to several cages."""
    speed, kind = optic.split("-", 1)
    per_port = int(speed[:-1])
    if z_cages > 1:
        return f"{per_port * a_ports}G to {z_ports}x{per_port}G {kind} breakout"
    return f"{per_port * a_ports}G {kind}"


def cable_label(cable: Cable) -> str:
    """The cable's name in the data hall: its A end's device and first port (a port is on one cable only).

    Named by position, never by a running count, so growing the fabric relabels no cable already pulled.
    """
    return f"{cable.a[0].device}:{cable.a[0].port}"


def cabling_rows(plan: Plan, physical: Physical | None = None) -> str:
    """cabling.csv: one row per physical cable with both ends' cages, ports and modules."""
    phys = physical or build_physical(plan)
    rows = [["cable", "tier", "cable_type", "length_m", "a_device", "a_cage", "a_ports", "a_module", "z_ends",
             "z_module", "links"]]
    lengths: dict[float, str] = {}
    for c in phys.cables:
        a0 = c.a[0]
        if len(c.z) == 1 and len(c.a) == 1:  # most cables: one link, nothing to join
            a_ports, z_ends = a0.port, f"{c.z[0].device}:{c.z[0].port}"
        else:
            a_ports, z_ends = ";".join(e.port for e in c.a), ";".join(f"{e.device}:{e.port}" for e in c.z)
        length = lengths.get(c.length_m) or lengths.setdefault(c.length_m, f"{c.length_m:g}")
        rows.append([cable_label(c), c.tier, c.kind, length, a0.device, str(a0.cage + 1),
                     a_ports, c.a_module, z_ends, c.z_module, str(max(len(c.a), len(c.z)))])
    return csv_text(rows)


def csv_text(rows: list[list[str]]) -> str:
    """The rows as csv.writer (QUOTE_MINIMAL, "\n") writes them: joined at once when, over the whole text, no
    field holds a delimiter, quote or line end (every cabling plan fabricgen makes; 400K rows at 128K GPUs),
    else row by row (`csv_line`)."""
    text = "\n".join(map(",".join, rows)) + "\n"
    plain = (text.count(",") == sum(map(len, rows)) - len(rows) and text.count("\n") == len(rows)
             and '"' not in text and "\r" not in text and all(len(r) > 1 or r[0] for r in rows))
    return text if plain else "".join(csv_line(r) + "\n" for r in rows)


def csv_line(fields: list[str]) -> str:
    """One CSV row as csv.writer (QUOTE_MINIMAL) writes it, without its line end: the plain join when no field
    needs quoting, else csv.writer's own."""
    line = ",".join(fields)
    if line.count(",") == len(fields) - 1 and not _CSV_SPECIAL.intersection(line) and (line or len(fields) > 1):
        return line
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(fields)
    return out.getvalue()[:-1]
