"""A switch's front panel as the plan lays it out: which cages are broken out, which ports stay free.

Vendor-neutral and read off the plan (the design's cages per side, the role's SKU or model, the
switch's interfaces), so the NX-OS renderer and the NX-OS check rules take the same expectation
from the plan instead of one from the other:

* every cage of a side the design breaks out is broken out -- also the cages no server or
  switch uses yet, so growth adds cables and configs, never a breakout (which reloads ports);
  spare cages beyond the design, and a model's fixed ports (SFP+), stay unbroken;
* every front-panel port the plan does not use is *unused*: free sub-ports of the design's
  cages, spare cages, and the model's other front-panel ports.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.plan.model import Design, Plan, Switch
from fabricgen.plan.topology import cage_port_name


@dataclass(frozen=True, slots=True)
class CageBreakout:
    """One front-panel cage split into `ports` logical ports of `speed` Gb/s."""

    cage: int  # front-panel port number, 1-based (NX-OS `interface breakout module 1 port <cage>`)
    ports: int
    speed: int


@dataclass(frozen=True, slots=True)
class FrontPanel:
    breakouts: tuple[CageBreakout, ...]  # broken-out cages, in cage order
    unused: tuple[str, ...]  # ports the plan leaves free, in front-panel order
    # (cage, sub-port, breakout, Gb/s) of each free port in `unused` order; None for a SKU's other ports
    positions: tuple[tuple[int, int, int, int] | None, ...] = ()


def front_panel(plan: Plan, sw: Switch) -> FrontPanel:
    """The breakouts and free ports of `sw` (see the module docstring)."""
    d: Design = plan.envelope
    model = plan.settings.models[sw.role]
    hw = plan.hardware.get(sw.role)
    fixed_names = hw is not None and hw.sku is not None and not hw.sku.breakouts  # SONiC SKU: its own names

    def name(cage: int, sub: int, breakout: int) -> str:
        if fixed_names:
            assert hw is not None
            return hw.cages[cage][sub].name
        return cage_port_name(sw.platform, model.lanes_per_port, cage, sub, breakout)

    down, up = d.sides(sw.role)
    used = {(itf.cage, itf.subport) for itf in sw.interfaces}
    breakouts: list[CageBreakout] = []
    unused: list[str] = []
    positions: list[tuple[int, int, int, int] | None] = []
    for side, first in ((down, 0), (up, down.cages)):
        for cage in range(first, first + side.cages):
            if side.breakout > 1:
                breakouts.append(CageBreakout(cage + 1, side.breakout, side.speed))
            for sub in range(side.breakout):
                if (cage, sub) not in used:
                    unused.append(name(cage, sub, side.breakout))
                    positions.append((cage, sub, side.breakout, side.speed))
    for cage in range(down.cages + up.cages, model.ports):
        unused.append(name(cage, 0, 1))
        positions.append((cage, 0, 1, model.port_speed))
    if hw is not None and hw.sku is not None:  # the model's other front-panel ports (other speeds, SFP+)
        in_cages = {p.name for cage in hw.cages for p in cage}
        extra = [p.name for p in hw.sku.ports if p.name not in in_cages]
        unused += extra
        positions += [None] * len(extra)
    return FrontPanel(tuple(breakouts), tuple(unused), tuple(positions))
