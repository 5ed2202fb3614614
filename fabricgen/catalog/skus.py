"""Hardware SKUs: what a switch's front panel, buffers and features really are.

One declarative record, `HardwareSku`, per SONiC HWSKU or NX-OS model: the ports (name,
front-panel index, speed, SerDes lanes, alias), which of them the fabric can use, the
buffer model, and the capabilities fabricgen may render on it.  The plan, cabling sheet,
configs and lab take port names from here; a role without a SKU gets a *generic* record
synthesised from its `switch_models` numbers, and `plan` says its names are generic.

SONiC records come from SONiC's own SKU files in a sonic-buildimage ``device/`` tree
(``device/<vendor>/<platform>/<HWSKU>/``): ``port_config.ini`` (names, lanes, alias, index,
speed; its ``# name ...`` header names the columns), ``hwsku.json`` (speed from the default
breakout mode where the ini has no speed column, fec), ``pg_profile_lookup.ini`` (the
traditional buffer model's headroom per speed and cable), which ``buffers*.j2`` the SKU ships
(dynamic / traditional buffer model), whether it ships ``qos.json.j2``, and ``platform_asic``.
`sku_facts()` reads those files into one compact, fabricgen-format record; the SKUs fabricgen
supports ship as such records in ``fabricgen/catalog/sonic_facts/skus/<HWSKU>.json`` (made
by ``make sonic-platform``, tools/sonic_facts.py), so a clone or a wheel renders offline.
What the files do not state plainly (which egress queues the SKU's buffer templates make
lossless, the ECN thresholds of its QoS template) is in `SONIC_SKU_FACTS`;
tests/platforms/test_sonic_factory.py checks every entry against the ConfigDB SONiC's own
`sonic-cfggen` generates for the SKU, and tests/catalog/test_skus.py checks every shipped record
against the SKU files it was made from.

Where a SONiC SKU is looked up, first hit wins: ``--sonic-platform DIR`` (`use_platform_dir()`),
then ``$FABRICGEN_SONIC_PLATFORM`` (a sonic-buildimage tree, for SKUs fabricgen does not ship or
a newer copy of one it does), then the records shipped in the package.  `HardwareSku.origin`
says which, and `plan` prints it.

NX-OS models are declared in `fabricgen.catalog.nxos_models` (one record per Nexus model, with its
sources) and resolved here into `NXOS_MODELS`: front-panel naming ``Ethernet1/N``, broken out
``Ethernet1/N/M``, the breakouts the model does (a configured ``interface breakout``, not a SKU
file), its other front-panel ports (SFP+) and its adaptive-routing modes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from fabricgen.catalog import registry
from fabricgen.catalog.nxos_models import NXOS_MODEL_RECORDS, NxosModel
from fabricgen.catalog.registry import SONIC_COMMUNITY_ECN, EcnDefault
from fabricgen.errors import Problem

PLATFORM_ENV = "FABRICGEN_SONIC_PLATFORM"
SHIPPED_SKUS = Path(__file__).resolve().parent / "sonic_facts" / "skus"  # <HWSKU>.json
FACTS_FORMAT = 1  # the shipped records' layout; a record of another layout is regenerated, never guessed at
BufferModel = Literal["dynamic", "traditional"]

# Capabilities a SKU record may carry beyond its platform's (platforms/registry.py holds those, e.g.
# adaptive routing); a setting that needs one is never dropped silently.
PFC_TO_PG_MAP = "pfc-to-pg-map"  # the SKU's QoS template renders PFC_PRIORITY_TO_PRIORITY_GROUP_MAP
# sonic-buildimage files/build_templates/qos_config.j2: `pfc_to_pg_map_supported_asics`
PFC_TO_PG_MAP_ASICS = frozenset({"mellanox", "barefoot"})


class SkuError(Exception):
    """A SKU that cannot be found or used; `path` is the intent field to fix."""

    def __init__(self, message: str, hint: str = "", path: str = "") -> None:
        super().__init__(message)
        self.message, self.hint, self.path = message, hint, path


@dataclass(frozen=True, slots=True)
class SkuPort:
    """One logical port as the switch names it."""

    name: str  # "Ethernet0" (SONiC), "Ethernet1/1/1" (NX-OS)
    index: int  # front-panel port, 1-based (several logical ports share it when broken out)
    speed: int  # Gb/s in the SKU's default breakout mode
    lanes: str = ""  # SerDes lanes, "0,1,2,3" (SONiC PORT.lanes; device-owned)
    alias: str = ""  # front-panel label, "etp1a" (SONiC PORT.alias; device-owned)
    fec: str = ""  # the SKU's FEC where it sets one ("rs")
    fields: Mapping[str, str] = field(default_factory=dict)  # every SKU column, as SONiC's PORT entry holds it


@dataclass(frozen=True, slots=True)
class PgHeadroom:
    """One row of a traditional SKU's pg_profile_lookup.ini (bytes)."""

    size: int
    xon: int
    xoff: int
    threshold: int
    xon_offset: int | None = None


# The community buffer template's lossless egress queues (buffers_config.j2 BUFFER_QUEUE "|3-4").
SONIC_COMMUNITY_LOSSLESS_QUEUES = (3, 4)


@dataclass(frozen=True, slots=True)
class SonicBufferObjects:
    """The SKU's own buffer objects fabricgen refers to (device-owned: never rendered, only named).

    `profiles` and `pools` are the entries as the SKU's buffer templates generate them (the fields
    fabricgen's check and tests rely on; dynamic-model pool sizes are the switch's to compute).
    """

    pg_lossy: str  # BUFFER_PG "<port>|0"
    queue_lossless: str  # BUFFER_QUEUE of the lossless egress queues
    queue_lossy: str  # BUFFER_QUEUE of the other egress queues
    profiles: Mapping[str, Mapping[str, str]]
    pools: Mapping[str, Mapping[str, str]]  # the profiles' pools, and ingress_lossless_pool (lossless PGs)

    @property
    def lossless_pg_threshold(self) -> str:
        """The threshold field of a lossless PG profile: buffermgrd writes "<ingress_lossless_pool mode>_th"."""
        return f"{self.pools[LOSSLESS_PG_POOL].get('mode', 'dynamic')}_th"


LOSSLESS_PG_POOL = "ingress_lossless_pool"  # buffermgrd's INGRESS_LOSSLESS_PG_POOL_NAME


def _frozen(d: dict[str, dict[str, str]]) -> Mapping[str, Mapping[str, str]]:
    return MappingProxyType({k: MappingProxyType(v) for k, v in d.items()})


# NVIDIA's ACS / Spectrum SKU templates (buffers_defaults_objects.j2 of ACS-MSN2700, ACS-SN5600, SN5600-O128)
_SPECTRUM_BUFFERS = SonicBufferObjects(
    "ingress_lossy_profile", "egress_lossless_profile", "q_lossy_profile",
    _frozen({"ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
             "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
             "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"}}),
    _frozen({"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
             "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic"},
             "egress_lossless_pool": {"type": "egress", "mode": "dynamic"},
             "egress_lossy_pool": {"type": "egress", "mode": "dynamic"}}),
)
# Dell Z9864F (Tomahawk 5) buffers_defaults_t1.j2: one shared ingress pool with a shared headroom pool (xoff)
_Z9864F_BUFFERS = SonicBufferObjects(
    "ingress_lossy_profile", "egress_lossless_profile", "egress_lossy_profile",
    _frozen({"ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "165867080"},
             "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "165867080"},
             "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778", "dynamic_th": "0"}}),
    _frozen({"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": "162539680",
                                       "xoff": "33374584"},
             "egress_lossless_pool": {"type": "egress", "mode": "static", "size": "162539680"}}),
)
# Without a SKU fabricgen names the buffer objects of SONiC's reference (ACS) SKUs, dynamic model.
GENERIC_SONIC_BUFFERS = _SPECTRUM_BUFFERS


@dataclass(frozen=True, slots=True)
class SpectrumAsic:
    """The ASIC constants SONiC's dynamic buffer model computes headroom with (STATE_DB ASIC_TABLE)."""

    name: str
    cell_size: int  # bytes
    pipeline_latency_kb: float
    mac_phy_delay_kb: float


# sonic-buildimage platform/mellanox/asic_table.j2 (086b03bd70): platform -> ASIC_TABLE entry
SPECTRUM_ASICS: Mapping[str, SpectrumAsic] = MappingProxyType({
    "x86_64-mlnx_msn2700-r0": SpectrumAsic("MELLANOX-SPECTRUM", 96, 19, 0.8),
    "x86_64-nvidia_sn5600-r0": SpectrumAsic("MELLANOX-SPECTRUM-4", 192, 19, 0.8),
})


@dataclass(frozen=True, slots=True)
class SonicSkuFacts:
    """What a SONiC SKU's templates generate that its data files do not state plainly."""

    lossless_queues: tuple[int, ...]  # egress queues its BUFFER_QUEUE puts on a lossless profile
    ecn: EcnDefault | None  # WRED/ECN of its lossless queue; None: it ships none
    capabilities: frozenset[str] = frozenset()
    buffers: SonicBufferObjects | None = None  # None: fabricgen does not know them (or the SKU is lossy-only)


_LOSSY_ONLY = SonicSkuFacts(lossless_queues=(), ecn=None)
_COMMUNITY = SonicSkuFacts(lossless_queues=SONIC_COMMUNITY_LOSSLESS_QUEUES, ecn=SONIC_COMMUNITY_ECN)
_SPECTRUM = SonicSkuFacts(SONIC_COMMUNITY_LOSSLESS_QUEUES, SONIC_COMMUNITY_ECN, buffers=_SPECTRUM_BUFFERS)

# Checked against SONiC's own sonic-cfggen output for the SKU by tests/platforms/test_sonic_factory.py.
SONIC_SKU_FACTS: dict[str, SonicSkuFacts] = {
    "Mellanox-SN5600-O128": _SPECTRUM,
    "ACS-SN5600": _SPECTRUM,
    "ACS-MSN2700": _SPECTRUM,
    "Dell-Z9864f-O64": SonicSkuFacts(SONIC_COMMUNITY_LOSSLESS_QUEUES, SONIC_COMMUNITY_ECN, buffers=_Z9864F_BUFFERS),
    # lossy-only SKUs: every queue on a lossy egress profile, pfc_enable "" and WRED disabled
    "Mellanox-SN5600-C224O8": _LOSSY_ONLY,
    "Mellanox-SN5600-C256S1": _LOSSY_ONLY,
}


@dataclass(frozen=True, eq=False)
class HardwareSku:
    """One switch model: its ports and what fabricgen may render on it (records compare by identity)."""

    name: str
    platform: str  # "sonic" | "nxos"
    ports: tuple[SkuPort, ...]
    hw_platform: str = ""  # SONiC platform directory, "x86_64-nvidia_sn5600-r0"
    asic: str = ""  # SONiC asic_type ("mellanox", "broadcom")
    buffer_model: BufferModel | None = None  # None: the SKU ships no buffer templates
    pg_lookup: Mapping[tuple[int, int], PgHeadroom] = field(default_factory=dict)  # (Gb/s, metres) -> row
    lossless_queues: tuple[int, ...] | None = None  # None: unknown (no buffer templates)
    ecn_default: EcnDefault | None = None
    capabilities: frozenset[str] = frozenset()
    source: str = ""  # what the record was read from (SONiC: the SKU directory or the shipped file)
    origin: str = ""  # where its facts came from, as `plan` says it (SONiC: shipped, --sonic-platform, ...)
    # Models whose cages the *config* breaks out (NX-OS `interface breakout`): (logical ports, Gb/s) per cage;
    # empty = the SKU's files fix every port (SONiC).
    breakouts: tuple[tuple[int, int], ...] = ()
    cage: str = ""  # cage type (fabricgen.plan.physical names), where the record knows it
    lanes: int = 0  # electrical lanes per cage, where the ports do not list theirs
    adaptive_routing_modes: frozenset[str] | None = None  # None: the platform's (platforms/registry.py)
    buffers: SonicBufferObjects | None = None  # SONiC: the SKU's buffer objects fabricgen names
    headroom_asic: SpectrumAsic | None = None  # SONiC dynamic model: the ASIC constants its headroom uses

    @property
    def lossless(self) -> bool:
        """False for a SKU whose buffer templates make every queue lossy (PFC off)."""
        return self.lossless_queues != ()

    @property
    def speeds(self) -> tuple[int, ...]:
        """Port speeds (Gb/s), most common first (ties: fastest first)."""
        counts = Counter(p.speed for p in self.ports)
        return tuple(sorted(counts, key=lambda s: (-counts[s], -s)))

    def ports_at(self, speed: int) -> tuple[SkuPort, ...]:
        """The ports the fabric can use at `speed`, in front-panel order."""
        return tuple(p for p in self.ports if p.speed == speed)

    def port(self, name: str) -> SkuPort | None:
        return self._by_name().get(name)

    def _by_name(self) -> dict[str, SkuPort]:
        return _port_index(self)

    def supports(self, capability: str) -> bool:
        return capability in self.capabilities


@cache
def _port_index(sku: HardwareSku) -> dict[str, SkuPort]:
    return {p.name: p for p in sku.ports}


# --------------------------------------------------------------------------- generic naming


def generic_port_name(platform: str, cage: int, sub: int, breakout: int, lanes_per_port: int) -> str:
    """A platform's naming scheme (its registry record's) for sub-port `sub` of cage `cage` (0-based) of a
    model without a SKU."""
    naming = registry.platform(platform).port_name
    assert naming is not None, f"platform {platform} names no switch ports"
    return naming(cage, sub, breakout, lanes_per_port)


@cache  # one immutable record per distinct port position: every leaf of a fabric asks for the same ones
def generic_port(platform: str, cage: int, sub: int, breakout: int, lanes_per_port: int, speed: int) -> SkuPort:
    """A port of a model without a SKU: lanes counted from 0 in cage order, alias etp<cage>[a, b, ...]."""
    lanes_n = max(1, lanes_per_port // breakout)
    first = cage * lanes_per_port + sub * lanes_n
    lanes = ",".join(str(lane) for lane in range(first, first + lanes_n))
    alias = f"etp{cage + 1}" + (chr(ord("a") + sub) if breakout > 1 else "")
    cols = {"lanes": lanes, "alias": alias, "index": str(cage + 1), "speed": str(speed * 1000)}
    if breakout > 1:
        cols["subport"] = str(sub + 1)
    return SkuPort(generic_port_name(platform, cage, sub, breakout, lanes_per_port), cage + 1, speed, lanes, alias,
                   fields=MappingProxyType(cols))


# --------------------------------------------------------------------------- NX-OS models


def nxos_front_panel(cages: int, cage_speed: int, breakout: int = 1) -> tuple[SkuPort, ...]:
    """NX-OS names of a fixed switch: Ethernet1/N, or Ethernet1/N/M when every cage is broken out."""
    return tuple(SkuPort(registry.slot_port_name(i // breakout, i % breakout, breakout, 8), i // breakout + 1,
                         cage_speed // breakout) for i in range(cages * breakout))


def nxos_model_sku(model: NxosModel) -> HardwareSku:
    """A Nexus model's record: its cages unbroken (Ethernet1/1 ..), then its fixed ports (SFP+)."""
    ports = list(nxos_front_panel(model.cages, model.cage_speed))
    number = model.cages
    for count, speed in model.fixed:
        ports += [SkuPort(f"Ethernet1/{number + i + 1}", number + i + 1, speed) for i in range(count)]
        number += count
    return HardwareSku(name=model.name, platform="nxos", ports=tuple(ports), asic=model.asic, source=model.source,
                       origin=f"shipped with fabricgen ({model.source})",
                       breakouts=model.breakouts, cage=model.cage, lanes=model.lanes,
                       adaptive_routing_modes=model.adaptive_routing_modes)


# One record per NX-OS model (fabricgen/nxos_models.py); the Cisco PID names the same record.
NXOS_MODELS: dict[str, HardwareSku] = {m.name: nxos_model_sku(m) for m in NXOS_MODEL_RECORDS}
_NXOS_PIDS: dict[str, str] = {m.pid: m.name for m in NXOS_MODEL_RECORDS if m.pid != m.name}


# --------------------------------------------------------------------------- SONiC SKU files

_override: Path | None = None


def use_platform_dir(path: str | Path | None) -> None:
    """Set the SONiC platform directory for this process."""
    global _override
    _override = Path(path) if path else None


@contextlib.contextmanager
def platform_dir_used(path: str | Path | None) -> Iterator[None]:
    """The SONiC platform directory while one command runs (the CLI's --sonic-platform), then the one before:
    a command run through `cli.main` in a longer process leaves no tree behind for the calls after it."""
    before = _override
    use_platform_dir(path)
    try:
        yield
    finally:
        use_platform_dir(before)


def platform_dir() -> Path | None:
    """The user's own SONiC SKU tree: --sonic-platform, else $FABRICGEN_SONIC_PLATFORM, else None."""
    if _override is not None:
        return _override
    env = os.environ.get(PLATFORM_ENV)
    return Path(env) if env else None


def _platform_dir_name() -> str:
    return "--sonic-platform" if _override is not None else f"${PLATFORM_ENV}"


def _device_root(root: Path) -> Path:
    """Accept the pack, a sonic-buildimage checkout, or its device/ directory itself."""
    return root / "device" if (root / "device").is_dir() else root


@cache
def sonic_sku_dirs(root: Path) -> dict[str, Path]:
    """HWSKU name -> its directory, for every device/<vendor>/<platform>/<HWSKU>/port_config.ini."""
    found: dict[str, Path] = {}
    for ini in sorted(_device_root(root).glob("*/*/*/port_config.ini")):
        found.setdefault(ini.parent.name, ini.parent)
    return found


@cache
def shipped_sonic_skus() -> dict[str, Path]:
    """HWSKU name -> its record shipped in the package (catalog/sonic_facts/skus/<HWSKU>.json)."""
    return {f.stem: f for f in sorted(SHIPPED_SKUS.glob("*.json"))}


def _speed_gbps(text: str) -> int:
    m = re.match(r"\s*\d+x(\d+)G", text)
    if not m:
        raise ValueError(f"cannot read a speed from breakout mode {text!r}")
    return int(m.group(1))


def parse_port_config(text: str, hwsku: Mapping[str, Mapping[str, str]] | None = None) -> tuple[SkuPort, ...]:
    """port_config.ini -> ports, columns as its `# name ...` header names them (default name lanes alias index).

    Where the ini has no speed column, the speed is the default breakout mode's in hwsku.json
    (as SONiC reads it from platform.json + hwsku.json on the box).
    """
    titles = ["name", "lanes", "alias", "index"]
    hw = hwsku or {}
    out: list[SkuPort] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if "name" in line.split():
                titles = line.strip("#").split()
            continue
        tokens = line.split()
        if len(tokens) < 2:
            continue
        cols = dict(zip(titles, tokens, strict=False))
        name = cols.pop("name")
        cols.setdefault("alias", name)
        extra = hw.get(name, {})
        if "speed" in cols:
            speed = int(cols["speed"]) // 1000
        elif "default_brkout_mode" in extra:
            speed = _speed_gbps(extra["default_brkout_mode"])
        else:
            raise ValueError(f"port {name}: no speed column and no hwsku.json breakout mode")
        fec = cols.get("fec") or extra.get("fec", "")
        out.append(_port(name, speed, fec, cols))
    return tuple(out)


def _port(name: str, speed: int, fec: str, cols: Mapping[str, str]) -> SkuPort:
    return SkuPort(name, int(cols.get("index", "0")), speed, cols.get("lanes", ""), cols.get("alias", name), fec,
                   MappingProxyType(dict(cols)))


def parse_pg_lookup(text: str) -> dict[tuple[int, int], PgHeadroom]:
    """pg_profile_lookup.ini: `speed(Mb/s) cable size xon xoff threshold [xon_offset]` rows."""
    rows: dict[tuple[int, int], PgHeadroom] = {}
    for raw in text.splitlines():
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        speed, cable, *nums = tokens
        if not cable.endswith("m") or len(nums) < 4:
            continue
        values = [int(n) for n in nums]
        rows[int(speed) // 1000, int(cable[:-1])] = PgHeadroom(values[0], values[1], values[2], values[3],
                                                               values[4] if len(values) > 4 else None)
    return rows


def sku_facts(sku_dir: Path) -> dict[str, Any]:
    """Everything fabricgen reads from one SONiC SKU directory, as one JSON-ready record (the shipped format).

    The record holds facts only (ports with every port_config.ini column, the pg_profile_lookup rows,
    the buffer model and QoS template the SKU ships, its platform and ASIC); `sku_from_facts` turns it
    into a `HardwareSku` the same way whether it was read here or from a shipped file.
    """
    hwsku: dict[str, dict[str, str]] = {}
    if (sku_dir / "hwsku.json").is_file():
        hwsku = json.loads((sku_dir / "hwsku.json").read_text(encoding="utf-8")).get("interfaces", {})
    ports = parse_port_config((sku_dir / "port_config.ini").read_text(encoding="utf-8"), hwsku)
    platform_dir_ = sku_dir.parent
    asic_file = platform_dir_ / "platform_asic"
    asic = asic_file.read_text(encoding="utf-8").strip() if asic_file.is_file() else platform_dir_.parent.name
    model: BufferModel | None = None
    if (sku_dir / "buffers_dynamic.json.j2").is_file():
        model = "dynamic"
    elif (sku_dir / "buffers.json.j2").is_file():
        model = "traditional"
    lookup: dict[tuple[int, int], PgHeadroom] = {}
    if (sku_dir / "pg_profile_lookup.ini").is_file():
        lookup = parse_pg_lookup((sku_dir / "pg_profile_lookup.ini").read_text(encoding="utf-8"))
    return {
        "format": FACTS_FORMAT,
        "hwsku": sku_dir.name,
        "platform": platform_dir_.name,
        "vendor": platform_dir_.parent.name,
        "asic": asic,
        "buffer_model": model,
        "qos_template": (sku_dir / "qos.json.j2").is_file(),
        "ports": [{"name": p.name, "speed": p.speed, "fec": p.fec, "fields": dict(p.fields)} for p in ports],
        "pg_profile_lookup": [[speed, cable, r.size, r.xon, r.xoff, r.threshold, r.xon_offset]
                              for (speed, cable), r in sorted(lookup.items())],
    }


def sku_from_facts(facts: Mapping[str, Any], source: str, origin: str) -> HardwareSku:
    """The record of one SONiC SKU from its facts (`sku_facts`, or a shipped file of the same layout)."""
    name = str(facts["hwsku"])
    if facts.get("format") != FACTS_FORMAT:
        raise SkuError(f"SONiC SKU record {source} has layout {facts.get('format')!r}, this fabricgen reads "
                       f"{FACTS_FORMAT}", "regenerate it with `make sonic-platform`")
    ports = tuple(_port(p["name"], int(p["speed"]), str(p["fec"]), p["fields"]) for p in facts["ports"])
    lookup = {(int(r[0]), int(r[1])): PgHeadroom(*r[2:]) for r in facts["pg_profile_lookup"]}
    model: BufferModel | None = facts["buffer_model"]
    asic, hw_platform = str(facts["asic"]), str(facts["platform"])
    sku_facts_ = SONIC_SKU_FACTS.get(name)
    if sku_facts_ is None and model is not None:
        sku_facts_ = _COMMUNITY  # a SKU this table does not know: SONiC's community templates
    caps = set(sku_facts_.capabilities) if sku_facts_ is not None else set()
    if asic in PFC_TO_PG_MAP_ASICS and facts["qos_template"]:
        caps.add(PFC_TO_PG_MAP)
    return HardwareSku(
        name=name, platform="sonic", ports=ports, hw_platform=hw_platform, asic=asic, buffer_model=model,
        pg_lookup=MappingProxyType(lookup),
        lossless_queues=sku_facts_.lossless_queues if sku_facts_ is not None else None,
        ecn_default=sku_facts_.ecn if sku_facts_ is not None else None, capabilities=frozenset(caps),
        source=source, origin=origin, buffers=sku_facts_.buffers if sku_facts_ is not None else None,
        headroom_asic=SPECTRUM_ASICS.get(hw_platform),
        # No ARS in this SONiC tree (no ARS_* YANG model, no SKU ARS data): a SONiC SKU renders no adaptive routing.
        adaptive_routing_modes=frozenset(),
    )


@cache
def load_sonic_sku(sku_dir: Path, origin: str = "") -> HardwareSku:
    """The record of one SONiC SKU directory."""
    return sku_from_facts(sku_facts(sku_dir), str(sku_dir), origin or str(sku_dir))


@cache
def load_shipped_sku(path: Path) -> HardwareSku:
    """The record of a SKU shipped in the package."""
    facts = json.loads(path.read_text(encoding="utf-8"))
    where = facts.get("source", {})
    origin = (f"shipped with fabricgen ({where.get('repository', '?')} {str(where.get('commit', '?'))[:10]} "
              f"{where.get('path', '?')})")
    return sku_from_facts(facts, str(path), origin)


def known_skus(platform: str, root: Path | None = None) -> list[str]:
    catalog = registry.platform(platform).sku_catalog
    if catalog != "sonic":
        return sorted(NXOS_MODELS) if catalog == "nxos" else []
    base = root if root is not None else platform_dir()
    theirs = set(sonic_sku_dirs(base)) if base is not None and base.is_dir() else set()
    return sorted(theirs | set(shipped_sonic_skus()))


def find_sku(platform: str, name: str, role_path: str = "") -> HardwareSku:
    """The record of SKU `name` on `platform`, or SkuError listing the known ones."""
    path = f"{role_path}.sku" if role_path else "sku"
    catalog = registry.platform(platform).sku_catalog
    if catalog == "nxos":
        if name in NXOS_MODELS or name in _NXOS_PIDS:
            return NXOS_MODELS[_NXOS_PIDS.get(name, name)]
        known = ", ".join(sorted(NXOS_MODELS)) or "none yet"
        raise SkuError(f"unknown NX-OS model {name!r} (known: {known})",
                       "use a known model, or drop `sku` for generic Ethernet1/N naming", path)
    if catalog != "sonic":
        raise SkuError(f"platform {platform} has no hardware SKUs", "drop `sku` for this role", path)
    root = platform_dir()
    if root is not None and not root.is_dir():
        raise SkuError(f"SONiC SKU directory {root} (from {_platform_dir_name()}) does not exist",
                       "point --sonic-platform or $FABRICGEN_SONIC_PLATFORM at a sonic-buildimage checkout "
                       "(or its device/ tree), or unset it to use the SKUs fabricgen ships", path)
    theirs = sonic_sku_dirs(root) if root is not None else {}
    if name in theirs:
        return load_sonic_sku(theirs[name], f"{_platform_dir_name()} {theirs[name]}")
    shipped = shipped_sonic_skus()
    if name in shipped:
        return load_shipped_sku(shipped[name])
    known = ", ".join(sorted(set(theirs) | set(shipped))) or "none"
    where = f" or in {root}" if root is not None else ""
    raise SkuError(f"unknown SONiC HWSKU {name!r}: fabricgen ships no record of it{where} (known: {known})",
                   "use one of the known SKUs, or point --sonic-platform (or $FABRICGEN_SONIC_PLATFORM) at a "
                   "sonic-buildimage tree that has it", path)


def skus_with_speed(platform: str, speed: int, skus: Iterable[str]) -> list[str]:
    """The known SKUs that have ports at `speed` (to suggest one when a SKU lacks a breakout)."""
    out = []
    for name in skus:
        try:
            if find_sku(platform, name).ports_at(speed):
                out.append(name)
        except (SkuError, ValueError, OSError):
            continue
    return out


# --------------------------------------------------------------------------- per-role resolution


@dataclass(frozen=True)
class RoleHardware:
    """One role's switch model: its SKU and the cages the fabric uses (none: generic naming)."""

    sku: HardwareSku | None
    cages: tuple[tuple[SkuPort, ...], ...] = ()  # usable cages in front-panel order, their ports in order
    speed: int = 0  # Gb/s of every usable SKU port

    @property
    def generic(self) -> bool:
        return self.sku is None

    @property
    def breakout(self) -> int:
        return len(self.cages[0]) if self.cages else 1

    @property
    def lanes_per_cage(self) -> int:
        return sum(len(p.lanes.split(",")) for p in self.cages[0]) if self.cages else 0

    def port(self, platform: str, cage: int, sub: int, breakout: int, lanes_per_port: int, speed: int) -> SkuPort:
        """Sub-port `sub` of the fabric's cage `cage` (0-based): the SKU's own port, or a generic one."""
        if self.sku is None:
            return generic_port(platform, cage, sub, breakout, lanes_per_port, speed)
        return self.cages[cage][sub]

    def describe(self) -> str:
        return self.sku.name if self.sku is not None else "generic"


def _cages(ports: Iterable[SkuPort]) -> list[tuple[SkuPort, ...]]:
    by_index: dict[int, list[SkuPort]] = {}
    for p in ports:
        by_index.setdefault(p.index, []).append(p)
    return [tuple(by_index[i]) for i in sorted(by_index)]


def role_hardware(role: str, platform: str, sku: str | None, speed: int | None = None) -> RoleHardware:
    """Resolve one role's SKU: the cages whose every port runs at `speed` (default: its most common speed).

    A speed the SKU has no ports at in its default breakout (a breakout it lacks) is a SkuError naming
    the known SKUs that have it.
    """
    if sku is None:
        return RoleHardware(None)
    path = f"switch_models.{role}"
    record = find_sku(platform, sku, path)
    want = speed if speed is not None else record.speeds[0]
    cages = [c for c in _cages(record.ports) if all(p.speed == want for p in c)]
    if not cages:
        have = ", ".join(f"{s}G" for s in sorted(record.speeds, reverse=True))
        others = [n for n in skus_with_speed(platform, want, known_skus(platform)) if n != record.name]
        hint = f"use {have.split(', ')[0]} ports" + (f", or a SKU with {want}G ports: {', '.join(others)}"
                                                     if others else "")
        raise SkuError(f"SKU {record.name} has no {want}G ports in its default breakout (it has {have} ports)",
                       hint, f"{path}.sku")
    breakouts = {len(c) for c in cages}
    if len(breakouts) > 1:
        cages = [c for c in cages if len(c) == max(breakouts)]
    return RoleHardware(record, tuple(cages), want)


def _can_run(record: HardwareSku, ports: int, speed: int) -> bool:
    """True if the record's cages run `ports` x `speed` G each: unbroken, or one of its breakouts."""
    return (ports, speed) == (1, record.speeds[0]) or (ports, speed) in record.breakouts


def breakout_role_hardware(role: str, platform: str, sku: str,
                           groups: Mapping[str, tuple[int, int | None] | None]
                           ) -> tuple[RoleHardware, dict[str, tuple[int, int]]]:
    """Resolve a role on a model whose config breaks cages out (NX-OS): its unbroken cages, and the
    breakout of each side ({"downlink": (Gb/s, logical ports per cage), "uplink": ...}).

    `groups` holds each side's (speed, breakout or None) from the intent; a side the intent leaves
    out runs like the other one, both unbroken when neither is given.  A breakout the model does not
    do is a SkuError naming the ones it does and the known models that do the asked one.
    """
    path = f"switch_models.{role}"
    record = find_sku(platform, sku, path)
    cage_speed = record.speeds[0]
    cages = tuple(c for c in _cages(record.ports) if all(p.speed == cage_speed for p in c))
    given = {side: g for side, g in groups.items() if g is not None}
    out: dict[str, tuple[int, int]] = {}
    for side, other in (("downlink", "uplink"), ("uplink", "downlink")):
        speed, ports = given.get(side) or given.get(other) or (cage_speed, 1)
        if ports is None:
            ports = cage_speed // speed if speed <= cage_speed and cage_speed % speed == 0 else 0
        if not _can_run(record, ports, speed):
            does = ", ".join(f"{n} x {s}G" for n, s in ((1, cage_speed), *record.breakouts))
            wanted = f"{ports} x {speed}G" if ports else f"{speed}G ports"
            others = sorted(n for n, r in NXOS_MODELS.items()
                            if n != record.name and ports and _can_run(r, ports, speed))
            hint = "use one of those, " + (f"a model that does {wanted} ({', '.join(others)}), " if others else "")
            at = side if side in given else other
            raise SkuError(f"{record.name} cannot run its {cage_speed}G cages as {wanted} (it does {does})",
                           hint + "or drop `sku` for generic port naming", f"{path}.{at}")
        out[side] = (speed, ports)
    return RoleHardware(record, cages, cage_speed), out


def lossless_problems(role: str, platform: str, hw: RoleHardware) -> list[Problem]:
    """A SONiC SKU that cannot carry RoCE losslessly: its own buffer templates make every queue lossy."""
    sku = hw.sku
    if sku is None or not registry.capabilities(platform).lossless_qos or sku.lossless:
        return []
    able = sorted(n for n, f in SONIC_SKU_FACTS.items() if f.lossless_queues and f.buffers is not None)
    return [Problem(f"switch_models.{role}.sku", (
        f"SKU {sku.name} is lossy-only: its buffer templates put every queue on a lossy profile, set no PFC and "
        "a 0 m cable length, so it cannot carry RoCE without drops"),
        f"use a SKU with lossless queues ({', '.join(able)})")]
