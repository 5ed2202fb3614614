"""SONiC buffers the SKU's way: which buffer model a role runs, what fabricgen renders for it, and
what headroom the switch itself will use.

fabricgen never renders a SKU's buffer pools or its own profiles; it names them
(`skus.SonicBufferObjects`) and owns only the per-port assignments (ConfigDB ownership:
`platforms.sonic_configdb`):

* **dynamic** (SKUs with ``buffers_dynamic.json.j2``, e.g. SN5600): ``buffer_model: dynamic``,
  each lossless PG ``NULL`` -- buffermgrd computes its headroom from the port's speed, its
  ``CABLE_LENGTH`` and MTU with the ASIC's constants (sonic-swss ``buffer_headroom_mellanox.lua``);
* **traditional** (SKUs with only ``buffers.json.j2``, e.g. Dell Z9864F): the lossless PG profile
  buffermgrd itself would create, ``pg_lossless_<speed>_<cable>_profile`` from the SKU's
  ``pg_profile_lookup.ini``; a cable length the table does not list takes the next listed length up
  (``CABLE_LENGTH`` says that length, so buffermgrd finds the same row); beyond the longest row the
  last two rows' slope (the rows are linear in length), **flagged** in `plan` and `render`;
* **left to the device** (a SKU whose buffer objects fabricgen does not know, e.g. a PORT-only
  SKU directory): no buffer tables; with PFC and ``CABLE_LENGTH`` set, the device's own buffer
  manager creates the lossless PG from its lookup table -- a `plan` warning says so;
* without a SKU: the dynamic model with the buffer objects of SONiC's reference (ACS) SKUs.

A lossy-only SKU (every queue lossy, PFC off, cable 0 m: e.g. SN5600 C256S1) cannot carry RoCE
losslessly: `capability_problems` refuses it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from fabricgen.catalog.skus import (
    GENERIC_SONIC_BUFFERS,
    HardwareSku,
    PgHeadroom,
    RoleHardware,
    SonicBufferObjects,
    generic_port,
)
from fabricgen.errors import Problem
from fabricgen.plan.frontpanel import front_panel
from fabricgen.plan.model import Plan, QosProfile, Switch

Model = Literal["dynamic", "traditional", "device"]
NULL_PROFILE = "NULL"  # BUFFER_PG profile: headroom computed by the dynamic buffer model
# buffers_config.j2 (dynamic_mode): LOSSLESS_TRAFFIC_PATTERN AZURE, what the Lua computes with
DYNAMIC_LOSSLESS_MTU = 1024
DYNAMIC_SMALL_PACKET_PERCENTAGE = 50
PAUSE_QUANTA = {800: 905, 400: 905, 200: 453, 100: 394, 50: 147, 40: 118, 25: 80, 10: 67}  # the Lua's table
SPEED_OF_LIGHT = 198_000_000
MIN_PACKET = 64
HEADROOM_COMPENSATION = 2 * 1024


@dataclass(frozen=True, slots=True)
class RoleBuffers:
    """How one SONiC role's buffers are configured."""

    model: Model
    objects: SonicBufferObjects | None  # the SKU's objects fabricgen names (None: left to the device)
    sku: HardwareSku | None


def role_buffers(hw: RoleHardware | None) -> RoleBuffers:
    sku = hw.sku if hw is not None else None
    if sku is None:
        return RoleBuffers("dynamic", GENERIC_SONIC_BUFFERS, None)
    if sku.buffers is None or sku.buffer_model is None:
        return RoleBuffers("device", None, sku)
    return RoleBuffers(sku.buffer_model, sku.buffers, sku)


def traditional_profile_name(speed: int, cable_m: int) -> str:
    """buffermgrd's name: "pg_lossless_" + PORT.speed + "_" + CABLE_LENGTH + "_profile"."""
    return f"pg_lossless_{speed * 1000}_{cable_m}m_profile"


def lookup_row(sku: HardwareSku, speed: int, cable_m: int) -> tuple[PgHeadroom, int, bool] | None:
    """(row, its cable length, listed) of the SKU's pg_profile_lookup.ini for a speed and cable length; None if
    it has no row at that speed.  A length the table does not list takes the next listed length up (a longer
    cable needs more headroom, never less; buffermgrd itself only knows the listed lengths).  Beyond the
    longest row: the last two rows' slope, each value rounded up, and not listed (flagged)."""
    rows = sorted((m, r) for (s, m), r in sku.pg_lookup.items() if s == speed)
    if not rows:
        return None
    up = next(((m, r) for m, r in rows if m >= cable_m), None)
    if up is not None:
        return up[1], up[0], True
    if len(rows) == 1:
        return rows[0][1], cable_m, False
    (m0, a), (m1, b) = rows[-2:]
    f = (cable_m - m0) / (m1 - m0)

    def at(u: int, v: int) -> int:
        return math.ceil(u + (v - u) * f)

    return PgHeadroom(at(a.size, b.size), at(a.xon, b.xon), at(a.xoff, b.xoff), a.threshold,
                      a.xon_offset if a.xon_offset is not None else None), cable_m, False


def traditional_entry(objects: SonicBufferObjects, row: PgHeadroom) -> dict[str, str]:
    """The BUFFER_PROFILE entry buffermgrd writes for a lookup row (cfgmgr/buffermgr.cpp doSpeedUpdateTask)."""
    entry = {"pool": "ingress_lossless_pool", "xon": str(row.xon)}
    if row.xon_offset is not None:
        entry["xon_offset"] = str(row.xon_offset)
    entry.update({"xoff": str(row.xoff), "size": str(row.size), objects.lossless_pg_threshold: str(row.threshold)})
    return entry


def spectrum_headroom(speed: int, cable_m: float, port_mtu: int, lanes: int, cell_size: int,
                      pipeline_latency_kb: float, mac_phy_delay_kb: float, shared_headroom: bool = False,
                      lossless_mtu: int = DYNAMIC_LOSSLESS_MTU,
                      small_packet_percentage: int = DYNAMIC_SMALL_PACKET_PERCENTAGE,
                      asic_generation: int = 4) -> tuple[int, int, int]:
    """(xon, xoff, size) as sonic-swss cfgmgr/buffer_headroom_mellanox.lua (e6b0c5b5d) computes them.

    tests/platforms/test_sonic_buffers.py runs the Lua itself against this.
    """
    pause_quanta = PAUSE_QUANTA[speed]
    port_speed = speed * 1000  # Mb/s
    pipeline_latency = pipeline_latency_kb * 1024
    mac_phy_delay = mac_phy_delay_kb * 1024
    kb_on_tile = port_speed / 1000 * 120 / 8 if asic_generation in (4, 5) else 0
    speed_overhead = 0
    if lanes == 8:
        pipeline_latency = pipeline_latency * 2
        speed_overhead = port_mtu
    worst_case_factor = cell_size / MIN_PACKET if cell_size > 2 * MIN_PACKET else (2 * cell_size) / (1 + cell_size)
    worst_case_factor = math.ceil(worst_case_factor)
    by_byte = 100 * MIN_PACKET / ((small_packet_percentage * MIN_PACKET + (100 - small_packet_percentage)
                                  * lossless_mtu) / 100)
    cell_occupancy = (100 - by_byte + by_byte * worst_case_factor) / 100
    peer_response = pause_quanta * 512 / 8
    bytes_on_cable = 2 * cable_m * port_speed * 1000000000 / SPEED_OF_LIGHT / (8 * 1000)
    propagation_delay = port_mtu + bytes_on_cable + mac_phy_delay + peer_response + kb_on_tile
    xoff = math.ceil((lossless_mtu + propagation_delay * cell_occupancy) / 1024) * 1024
    if not shared_headroom and small_packet_percentage != 100:
        full = math.ceil((lossless_mtu + propagation_delay * worst_case_factor) / 1024) * 1024
        if xoff + HEADROOM_COMPENSATION < full:
            xoff += HEADROOM_COMPENSATION
    xon = math.ceil(pipeline_latency / 1024) * 1024
    size = xon if shared_headroom else xoff + xon + speed_overhead
    return xon, xoff, math.ceil(size / 1024) * 1024


@dataclass(frozen=True, slots=True)
class SwitchHeadroom:
    xon: int | None
    xoff: int | None
    size: int | None
    source: str  # where the switch's value comes from
    flagged: bool = False  # fabricgen computed what the SKU does not list


def switch_headroom(rb: RoleBuffers, prof: QosProfile, lanes: int) -> SwitchHeadroom:
    """What the switch will use for a lossless PG of this profile's speed, cable length and MTU."""
    sku = rb.sku
    if rb.model == "dynamic":
        asic = sku.headroom_asic if sku is not None else None
        if asic is None:
            return SwitchHeadroom(None, None, None, "computed by the switch (dynamic model; ASIC constants not "
                                  "known to fabricgen)")
        gen = int(asic.name.rsplit("-", 1)[-1]) if asic.name[-1].isdigit() else 1
        xon, xoff, size = spectrum_headroom(prof.speed, prof.cable_m, prof.mtu, lanes, asic.cell_size,
                                            asic.pipeline_latency_kb, asic.mac_phy_delay_kb, asic_generation=gen)
        return SwitchHeadroom(xon, xoff, size, f"dynamic model, {asic.name}, {lanes}-lane ports")
    if rb.model == "traditional" and sku is not None:
        found = lookup_row(sku, prof.speed, int(prof.cable_m))
        if found is None:
            return SwitchHeadroom(None, None, None, f"no pg_profile_lookup.ini row for {prof.speed}G")
        row, metres, listed = found
        where = (("pg_profile_lookup.ini" if metres == int(prof.cable_m) else
                  f"pg_profile_lookup.ini, the next listed length up ({metres} m)") if listed
                 else "extrapolated from pg_profile_lookup.ini")
        return SwitchHeadroom(row.xon, row.xoff, row.size, where, flagged=not listed)
    return SwitchHeadroom(None, None, None, "the device's own buffer configuration")


def headroom_table(plan: Plan) -> list[dict[str, Any]]:
    """Per SONiC role and lossless profile: fabricgen's computed headroom beside what the switch will use."""
    rows: list[dict[str, Any]] = []
    for role, hw in plan.hardware.items():
        switches = [s for s in plan.by_role(role) if s.platform == "sonic"]
        if not switches:
            continue
        rb = role_buffers(hw)
        names = sorted({i.qos_profile for s in switches for i in s.interfaces},
                       key=lambda n: (plan.qos_profiles[n].speed, plan.qos_profiles[n].cable_m, n))
        for name in names:
            prof = plan.qos_profiles[name]
            lanes = _lanes(hw, prof.speed)
            sw = switch_headroom(rb, prof, lanes)
            rows.append({"role": role, "sku": hw.describe() if hw is not None else "generic", "model": rb.model,
                         "speed": prof.speed, "cable_m": prof.cable_m, "mtu": prof.mtu,
                         "fabricgen": {"xon": prof.xon, "xoff": prof.xoff, "size": prof.size},
                         "switch": {"xon": sw.xon, "xoff": sw.xoff, "size": sw.size}, "source": sw.source,
                         "flagged": sw.flagged})
    return rows


def _lanes(hw: RoleHardware | None, speed: int) -> int:
    if hw is not None and hw.sku is not None:
        for p in hw.sku.ports_at(speed):
            if p.lanes:
                return len(p.lanes.split(","))
    return 8 if speed >= 400 else 4


def buffer_warnings(plan: Plan) -> list[Problem]:
    """Flags for `plan` and `render`: headroom fabricgen extrapolated, buffers left to the device."""
    out: list[Problem] = []
    seen_roles: set[str] = set()
    for row in headroom_table(plan):
        role = row["role"]
        if row["flagged"]:
            sw = row["switch"]
            out.append(Problem(f"switch_models.{role}.sku", (
                f"{row['sku']} (traditional buffer model) lists no {row['speed']}G row as long as {row['cable_m']:g} m "
                f"in its pg_profile_lookup.ini: fabricgen extrapolated xon {sw['xon']}, xoff {sw['xoff']}, "
                f"size {sw['size']} B from its longest rows (flagged: not the vendor's own number)"),
                "check the value with the vendor, or use a cable length the SKU's table lists"))
        if row["model"] == "device" and role not in seen_roles:
            seen_roles.add(role)
            out.append(Problem(f"switch_models.{role}.sku", (
                f"fabricgen does not know the buffer objects of SKU {row['sku']} (no buffer templates in the SONiC "
                "platform data): it renders no buffer tables, and the lossless PG is left to the device's buffer "
                "manager (PFC and CABLE_LENGTH are set)"),
                "verify BUFFER_PG on the device after the first deploy, or use a SKU whose buffer templates are known"))
    return out


def device_base(plan: Plan, sw: Switch) -> dict[str, Any]:
    """The device-owned ConfigDB a switch's rendered part goes into, as far as its SKU data tells: each
    planned port's PORT entry exactly as SONiC builds it from the SKU's port_config.ini (lanes, alias,
    index, ...), and the SKU buffer objects the rendered part names.  `check` validates the merge of
    the two against SONiC's YANG models; the tests compare it with SONiC's own sonic-cfggen output."""
    hw = plan.hardware.get(sw.role)
    lpp = int(plan.settings.models[sw.role].lanes_per_port)
    ports: dict[str, Any] = {}
    for itf in sw.interfaces:
        if hw is not None:
            sku_port = hw.port(sw.platform, itf.cage, itf.subport, itf.breakout, lpp, itf.speed)
            ports[sku_port.name] = dict(sku_port.fields)
    panel = front_panel(plan, sw)  # the ports the plan leaves free exist on the device too
    for name, at in zip(panel.unused, panel.positions, strict=True):
        if hw is not None and hw.sku is not None:
            found = hw.sku.port(name)
            if found is not None:
                ports[name] = dict(found.fields)
        elif at is not None:
            ports[name] = dict(generic_port(sw.platform, at[0], at[1], at[2], lpp, at[3]).fields)
    base: dict[str, Any] = {"PORT": ports}
    objects = role_buffers(hw).objects
    if objects is not None:
        base["BUFFER_POOL"] = {name: dict(entry) for name, entry in objects.pools.items()}
        base["BUFFER_PROFILE"] = {name: dict(entry) for name, entry in objects.profiles.items()}
    return base
