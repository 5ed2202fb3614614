"""`fabricgen diagram`: the fabric as SVG, optionally as a heat map of an analysis result.

Tiers are rows (super-spines, spines, leaves, servers), ordered by plane, pod
and index; parallel cables between two switches are one line whose width grows
with their count.  Up to 2,048 GPUs every switch is drawn; above that switches
are aggregated per plane, pod and tier into one box each.  A heat map colours
lines by the most loaded direction of their cables (`analyze ecmp -o`), or
switches by the worst slowdown among failures that hit them (`analyze failures -o`).

Drawn with the standard library's ElementTree: the layout of a Clos is rows,
so no layout engine is needed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any

from fabricgen.analyze.fabric import Fabric

DETAIL_LIMIT_GPUS = 2048
ROW_Y = {2: 60, 1: 260, 0: 460}
BOX_H = 28
TIER_COLOUR = {0: "#4e79a7", 1: "#59a14f", 2: "#b07aa1"}


def _heat_colour(x: float) -> str:
    """0 -> green, 0.5 -> yellow, 1 -> red."""
    x = max(0.0, min(1.0, x))
    r = int(255 * min(1.0, 2 * x))
    g = int(255 * min(1.0, 2 * (1 - x)))
    return f"#{r:02x}{g:02x}30"


def _groups(fabric: Fabric, gpus: int) -> tuple[list[str], dict[int, int]]:
    """Box labels and the box of every switch (one box per switch, or per plane/pod/tier when aggregated)."""
    if gpus <= DETAIL_LIMIT_GPUS:
        return list(fabric.nodes), {i: i for i in range(len(fabric.nodes))}
    keys: dict[tuple[int, int, int], int] = {}
    labels: list[str] = []
    box: dict[int, int] = {}
    counts: dict[int, int] = defaultdict(int)
    for i in range(len(fabric.nodes)):
        rank = int(fabric.rank[i])
        key = (rank, int(fabric.plane[i]), int(fabric.pod[i]) if rank < 2 else -1)
        if key not in keys:
            keys[key] = len(labels)
            role = fabric.role[i].replace("_", "-")
            where = f"plane {key[1] + 1}" + (f" pod {key[2] + 1}" if key[2] >= 0 else "")
            labels.append(f"{role}s, {where}")
        box[i] = keys[key]
        counts[keys[key]] += 1
    return [f"{lab} ({counts[b]})" for b, lab in enumerate(labels)], box


def draw(fabric: Fabric, heat: dict[str, Any] | None = None) -> str:
    gpus = len(fabric.ep_leaf)
    labels, box = _groups(fabric, gpus)
    rank_of_box = {b: int(fabric.rank[i]) for i, b in box.items()}
    rows: dict[int, list[int]] = defaultdict(list)
    for b in range(len(labels)):
        rows[rank_of_box[b]].append(b)
    widest = max(len(r) for r in rows.values())
    box_w = 110 if len(labels) == len(fabric.nodes) else 170
    gap = 12
    width = max(800, widest * (box_w + gap) + 40)
    height = 600
    pos: dict[int, tuple[float, float]] = {}
    for rank, members in rows.items():
        span = len(members) * (box_w + gap)
        x0 = (width - span) / 2
        for k, b in enumerate(members):
            pos[b] = (x0 + k * (box_w + gap), ROW_Y[rank])
    # cables between boxes, with the heaviest direction's load when a heat map is given
    cables: dict[tuple[int, int], int] = defaultdict(int)
    for a in range(0, fabric.switch_arcs, 2):
        s, d = box[int(fabric.arc_src[a])], box[int(fabric.arc_dst[a])]
        cables[min(s, d), max(s, d)] += 1
    link_heat = _link_heat(fabric, box, heat)
    node_heat = _node_heat(fabric, box, heat)
    svg = ET.Element("svg", xmlns="http://www.w3.org/2000/svg", width=str(int(width)), height=str(height),
                     viewBox=f"0 0 {int(width)} {height}", style="font-family:sans-serif;font-size:10px")
    title = ET.SubElement(svg, "text", x="20", y="24", style="font-size:14px;font-weight:bold")
    title.text = (f"{fabric.name}: {gpus} GPU NIC ports, {len(fabric.nodes)} switches"
                  + ("" if len(labels) == len(fabric.nodes) else " (aggregated per plane, pod and tier)")
                  + (f"; heat: {heat.get('kind')}" if heat else ""))
    top = max(cables.values(), default=1)
    for (s, d), n in sorted(cables.items()):
        lo, hi = (s, d) if pos[s][1] > pos[d][1] else (d, s)  # lower box first
        (x1, y1), (x2, y2) = pos[lo], pos[hi]
        colour = _heat_colour(link_heat[s, d]) if (s, d) in link_heat else "#999999"
        ET.SubElement(svg, "line", {"x1": f"{x1 + box_w / 2:.1f}", "y1": f"{y1:.1f}", "x2": f"{x2 + box_w / 2:.1f}",
                                    "y2": f"{y2 + BOX_H:.1f}", "stroke": colour,
                                    "stroke-width": f"{0.4 + 2.6 * n / top:.2f}", "stroke-opacity": "0.7"})
    for b, label in enumerate(labels):
        x, y = pos[b]
        fill = _heat_colour(node_heat[b]) if b in node_heat else TIER_COLOUR[rank_of_box[b]]
        ET.SubElement(svg, "rect", x=f"{x:.1f}", y=f"{y:.1f}", width=str(box_w), height=str(BOX_H), rx="4",
                      fill=fill, stroke="#333333")
        t = ET.SubElement(svg, "text", {"x": f"{x + box_w / 2:.1f}", "y": f"{y + 18:.1f}", "fill": "#ffffff",
                                        "text-anchor": "middle"})
        t.text = label if len(label) <= 28 else label[:27] + "…"
    # servers: one box per leaf (or leaf group) with the GPU NIC ports it serves
    per_box: dict[int, int] = defaultdict(int)
    for leaf in fabric.ep_leaf.tolist():
        per_box[box[leaf]] += 1
    for b, n in sorted(per_box.items()):
        x, y = pos[b]
        ET.SubElement(svg, "line", x1=f"{x + box_w / 2:.1f}", y1=f"{y + BOX_H:.1f}", x2=f"{x + box_w / 2:.1f}",
                      y2=f"{y + 80:.1f}", stroke="#bbbbbb")
        t = ET.SubElement(svg, "text", {"x": f"{x + box_w / 2:.1f}", "y": f"{y + 94:.1f}", "text-anchor": "middle"})
        t.text = f"{n} GPU NICs"
    ET.indent(svg)
    return ET.tostring(svg, encoding="unicode") + "\n"


def _link_heat(fabric: Fabric, box: dict[int, int], heat: dict[str, Any] | None) -> dict[tuple[int, int], float]:
    if not heat or "link_load" not in heat:
        return {}
    load = heat["link_load"]
    util: dict[tuple[int, int], float] = defaultdict(float)
    for label, nbytes, cap in zip(load["arcs"], load["bytes"], load["capacity_gbps"], strict=True):
        src, _, dst = label.partition(" -> ")
        s, d = fabric.index.get(src.split(":")[0]), fabric.index.get(dst.split(":")[0])
        if s is None or d is None:
            continue
        key = (min(box[s], box[d]), max(box[s], box[d]))
        util[key] = max(util[key], float(nbytes) / float(cap) if cap else 0.0)
    top = max(util.values(), default=0.0)
    return {k: (v / top if top else 0.0) for k, v in util.items()}


def _node_heat(fabric: Fabric, box: dict[int, int], heat: dict[str, Any] | None) -> dict[int, float]:
    if not heat or "node_heat" not in heat:
        return {}
    values = {name: min(float(v), 4.0) for name, v in heat["node_heat"].items()}  # slowdown; >= 4x is red
    out: dict[int, float] = {}
    for name, v in values.items():
        i = fabric.index.get(name)
        if i is not None:
            out[box[i]] = max(out.get(box[i], 0.0), (v - 1.0) / 3.0)
    return out


def load_heat(path: str | Path) -> dict[str, Any]:
    from fabricgen.errors import FabricError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FabricError.single(str(path), "", f"cannot read the analysis result: {exc}",
                                 "write one with `fabricgen analyze ecmp|failures -o FILE`") from None
    if not isinstance(data, dict) or data.get("kind") not in ("ecmp", "failures"):
        raise FabricError.single(str(path), "kind", "not an `analyze ecmp` or `analyze failures` result",
                                 "write one with `fabricgen analyze ecmp|failures -o FILE`")
    return data


def write(svg: str, path: str | Path) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(svg, encoding="utf-8")
    tmp.replace(out)
