"""Cisco Nexus models for AI back-end fabrics: one declarative record per model (front panel, breakouts, DLB).

`fabricgen.catalog.skus` turns each record into the `HardwareSku` that `switch_models.<role>.sku` names, so
the plan, cabling sheet and configs use the model's own port names and cage count.  Add a model
here; nothing else needs to change.

Sources (fetched through the search tools, 2026-12; the reference file's grades):

* [A] Cisco Nexus 9000 Series NX-OS Interfaces Configuration Guide, Release 10.6(x), chapter
  "Overview": "Breakout port support on Cisco Nexus switches", Table 3 "Breakout Modes Support
  Matrix" (rows N9K-C9364D-GX2A, N9K-C9332D-GX2B, N9K-C9348D-GX2A: 4x10G, 4x25G, 2x100G, 2x200G;
  N9364E-SG2-Q: 2x400G and 8x100G; 4x100G is the QSFP-DD-400G-DR4 breakout the guide documents for
  the 400G GX cages), "Breakout considerations on Cisco
  Nexus 93C64E-SG2-Q switch" (64 QSFP-DD800 ports; 2x400G and 8x100G breakouts from 10.5(3)F),
  and the breakout command itself: ``interface breakout module <module> port <port-range> map
  <speed>g-<n>x`` (e.g. ``map 25g-4x``, ``map 50g-2x``); a broken-out port N is named
  ``Ethernet1/N/M`` (``show interface fec`` lists ``Eth1/3/1`` .. ``Eth1/3/4``).
* [A] Cisco product IDs: the PID encodes the front panel (N9K-C93 + 64 ports + D = 400G QSFP-DD,
  E = 800G); the GX2 data sheets list 64 / 32 / 48 x 400/100-Gbps QSFP-DD ports and 2 x 1/10-Gbps
  SFP+ ports, the N9364E-SG2 data sheet 64 x 800G QSFP-DD (-Q) or OSFP (-O) ports with 2x400G /
  8x100G breakout.  [C] corroboration: public switch catalogues list "N9K-C9364D-GX2A
  64*400G+2*10G" and "N9364E-SG2-Q 64 x 800G QSFP-DD, breakout 2x400G / 8x100G".
* [A] Cisco "Building AI/ML Data Center Fabric using VXLAN EVPN for GPUaaS" (2026) and the AI POD /
  Cloud Partner reference architectures use N9364D-GX2A and N9332D-GX2B leaves/spines and
  N9364E-SG2 back-end switches; the "Cisco Data Center Networking Blueprint for AI/ML
  Applications" builds its 400G back end from Nexus 9300-GX2 switches.
* Dynamic load balancing (vendor reference §1.10): Cloud Scale 9300-GX2 does flowlet and per-packet
  DLB from NX-OS 10.5(1)F ([C]); N9364E-SG2 (Silicon One G200) does *policy-driven* DLB from
  10.5(3)F ([A], Cisco 10.6(x) QoS guide), configured differently, which fabricgen does not render:
  its record carries no adaptive-routing mode, so the plan warns instead of rendering.
"""

from __future__ import annotations

from dataclasses import dataclass

# The 400G QSFP-DD breakouts of the Cloud Scale GX2 switches (Table 3), as (logical ports, Gb/s).
GX2_BREAKOUTS: tuple[tuple[int, int], ...] = ((2, 200), (4, 100), (2, 100), (4, 25), (4, 10))
# Silicon One G200 800G cages (Table 3 and the 93C64E-SG2-Q breakout section).
SG2_BREAKOUTS: tuple[tuple[int, int], ...] = ((2, 400), (8, 100))
CLOUD_SCALE_DLB = frozenset({"flowlet", "per-packet"})


@dataclass(frozen=True, slots=True)
class NxosModel:
    """One Nexus model's front panel as NX-OS names it, and what fabricgen may render on it."""

    name: str  # what `switch_models.<role>.sku` says: "N9364D-GX2A"
    pid: str  # Cisco product ID, also accepted: "N9K-C9364D-GX2A"
    cages: int  # breakout-capable front-panel cages, Ethernet1/1 .. Ethernet1/<cages>
    cage_speed: int  # Gb/s of an unbroken cage
    cage: str  # cage type as fabricgen.plan.physical names it ("qsfp-dd", "osfp")
    lanes: int  # electrical lanes per cage
    breakouts: tuple[tuple[int, int], ...]  # (logical ports, Gb/s each) a cage can be broken out into
    fixed: tuple[tuple[int, int], ...] = ()  # (count, Gb/s) of other front-panel ports after the cages (SFP+)
    adaptive_routing_modes: frozenset[str] = frozenset()  # DLB modes fabricgen renders on it
    asic: str = ""
    buffer_bytes: int = 0  # the ASIC's packet buffer: what no-drop reservations can never exceed (0: unknown)
    source: str = "fabricgen/nxos_models.py (Cisco NX-OS 10.6(x) Interfaces guide, data sheets)"

    def breakout_map(self, ports: int, speed: int) -> str:
        """The `map` keyword of ``interface breakout module 1 port N map <...>`` ("100g-4x")."""
        return breakout_map(ports, speed)


def breakout_map(ports: int, speed: int) -> str:
    """NX-OS's breakout map keyword: ``<speed>g-<ports>x`` (``25g-4x``, ``400g-2x``)."""
    return f"{speed}g-{ports}x"


MB = 1_000_000
# Packet buffers as Cisco's data sheets state them [C: data-sheet figures, decimal MB]: Cloud Scale GX2 120 MB,
# Silicon One G200 256 MB (fully shared).  A model fabricgen does not know is held to the smallest of these.
GX2_BUFFER = 120 * MB
G200_BUFFER = 256 * MB

NXOS_MODEL_RECORDS: tuple[NxosModel, ...] = (
    NxosModel("N9364D-GX2A", "N9K-C9364D-GX2A", 64, 400, "qsfp-dd", 8, GX2_BREAKOUTS, ((2, 10),),
              CLOUD_SCALE_DLB, "Cloud Scale GX2", GX2_BUFFER),
    NxosModel("N9332D-GX2B", "N9K-C9332D-GX2B", 32, 400, "qsfp-dd", 8, GX2_BREAKOUTS, ((2, 10),),
              CLOUD_SCALE_DLB, "Cloud Scale GX2", GX2_BUFFER),
    NxosModel("N9348D-GX2A", "N9K-C9348D-GX2A", 48, 400, "qsfp-dd", 8, GX2_BREAKOUTS, ((2, 10),),
              CLOUD_SCALE_DLB, "Cloud Scale GX2", GX2_BUFFER),
    NxosModel("N9364E-SG2-Q", "N9364E-SG2-Q", 64, 800, "qsfp-dd", 8, SG2_BREAKOUTS, (),
              frozenset(), "Silicon One G200", G200_BUFFER),
    NxosModel("N9364E-SG2-O", "N9364E-SG2-O", 64, 800, "osfp", 8, SG2_BREAKOUTS, (),
              frozenset(), "Silicon One G200", G200_BUFFER),
)


def no_drop_budget(model: str) -> tuple[int, str]:
    """(bytes, where from) of the no-drop buffer a Nexus model can reserve at most: its packet buffer; a model
    fabricgen does not know (by name or PID) is held to the smallest buffer of the models it knows."""
    for m in NXOS_MODEL_RECORDS:
        if model in (m.name, m.pid) and m.buffer_bytes:
            return m.buffer_bytes, f"{m.name} ({m.asic}) packet buffer"
    least = min((m for m in NXOS_MODEL_RECORDS if m.buffer_bytes), key=lambda m: m.buffer_bytes)
    return least.buffer_bytes, f"model {model!r} unknown: held to the smallest known packet buffer ({least.name})"
