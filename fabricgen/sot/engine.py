"""Push, diff and pull over any provider: the ownership rule, the comparison and the write count.

The ownership rule (docs/sot.md): fabricgen writes only objects that carry its tag; an interface
belongs to its device (the device type made it), so the interfaces of a tagged device are fabricgen's
too.  Everything else in the source of truth is read, compared and reported, never changed and never
deleted:

* missing in the source of truth -> created (tagged) by `push`;
* owned and different -> an update, listed by `push` and `diff`, written only by `push --apply`;
* not owned and different, or in the way (a port on another cable, an address someone else holds)
  -> a conflict, listed and left alone;
* owned and no longer in the plan -> stale, listed (fabricgen deletes nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from fabricgen.sot.objects import KINDS, Desired, Found, Obj

Action = Literal["create", "update", "conflict", "stale"]
COMPONENTS = ("interface", "interface_template")  # a device's or type's own ports: never stale (unused ports stay)


class Provider(Protocol):
    """What a source of truth must do for fabricgen (one module per server kind)."""

    name: str  # "netbox", "nautobot"
    bulk: bool  # it creates and updates lists of objects in one request

    def prepare(self, desired: Desired, write: bool) -> int:
        """Adapt `desired` to what this server can hold (in place) and, with `write`, create the supporting
        objects it needs (custom fields, RIRs, namespaces ...).  Returns the writes it made."""

    def read(self, kind: str, want: dict[str, Obj]) -> dict[str, Found]:
        """Every object of `kind` the fabric's scope holds (wanted keys, and owned ones of this fabric)."""

    def create(self, kind: str, objs: list[Obj]) -> None:
        """Create `objs`, tagged as fabricgen's."""

    def update(self, kind: str, pairs: list[tuple[Obj, Found]]) -> None:
        """Write `obj`'s fields over `found` (and tag it)."""

    def facts(self, desired: Desired) -> dict[str, Any]:
        """The hand-editable facts (fabricgen.plan.pulled.FIELDS) the source of truth holds for this fabric."""


@dataclass(slots=True)
class Change:
    kind: str
    key: str
    action: Action
    fields: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # field -> (source of truth, plan)
    obj: Obj | None = None
    found: Found | None = None
    note: str = ""
    live: str = ""  # what the live fabric's LLDP shows (three-way diff of cables)

    def line(self) -> str:
        what = f"{self.kind} {self.key}"
        detail = "; ".join(f"{f}: source of truth {_show(s)}, plan {_show(p)}" for f, (s, p) in self.fields.items())
        text = {
            "create": f"+ {what}: missing in the source of truth",
            "update": f"~ {what}: {detail}",
            "conflict": f"! {what}: {self.note or detail} (not fabricgen's: left alone)",
            "stale": f"- {what}: fabricgen's, no longer in the plan (left in place)",
        }[self.action]
        if self.note and self.action != "conflict":
            text += f" ({self.note})"
        if self.live:
            text += f"; live LLDP: {self.live}"
        return text


def _show(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value) or "(none)"
    return str(value)


@dataclass
class Result:
    """What a push or diff found and did."""

    provider: str
    changes: list[Change] = field(default_factory=list)
    writes: int = 0
    objects: int = 0  # objects the plan puts in the source of truth
    read: int = 0  # objects read back
    seconds: float = 0.0
    applied: bool = False
    cables: dict[str, Found] = field(default_factory=dict)  # the cables read (the three-way diff's middle)

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def drift(self) -> bool:
        return bool(self.changes)

    @property
    def rate(self) -> float:
        """Objects handled per second: those written on a push that wrote, else those compared."""
        n = self.writes if self.writes else self.objects
        return n / self.seconds if self.seconds > 0 else 0.0


def _norm(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def compare(obj: Obj, found: Found) -> dict[str, tuple[Any, Any]]:
    """Fields whose value in the source of truth differs from the plan's: field -> (theirs, ours)."""
    out = {}
    for name, want in obj.fields.items():
        have = found.fields.get(name)
        if _norm(have) != _norm(want) and not (want in (None, "") and have in (None, "")):
            out[name] = (have, want)
    return out


def _swap_cable(obj: Obj, found: Found) -> None:
    """A cable recorded B to A is the same cable."""
    f = found.fields
    if "a" in f and "b" in f and tuple(f["a"]) == obj.fields.get("b") and tuple(f["b"]) == obj.fields.get("a"):
        f["a"], f["b"] = f["b"], f["a"]


def classify(kind: str, want: dict[str, Obj], found: dict[str, Found]) -> list[Change]:
    changes: list[Change] = []
    port_cable: dict[str, Found] = {}
    if kind == "cable":
        for f in found.values():
            for end in (*f.fields.get("a", ()), *f.fields.get("b", ())):
                port_cable[end] = f
    missing: list[Obj] = []
    for key, obj in want.items():
        have = found.get(key)
        if have is None:
            if kind == "cable":
                busy = [(end, port_cable[end]) for end in (*obj.fields["a"], *obj.fields["b"]) if end in port_cable]
                if busy:
                    end, other = busy[0]
                    owner = "fabricgen's" if other.owned else "not fabricgen's"
                    changes.append(Change(kind, key, "conflict", obj=obj, found=other,
                                          note=f"port {end} is on cable {other.key} ({owner}: "
                                               f"{_show(other.fields.get('a'))} - {_show(other.fields.get('b'))})"))
                    continue
            missing.append(obj)
            continue
        if kind == "cable":
            _swap_cable(obj, have)
        diff = compare(obj, have)
        if have.owned:
            if diff:
                changes.append(Change(kind, key, "update", diff, obj, have))
        elif diff and kind not in ("tag",):
            changes.append(Change(kind, key, "conflict", diff, obj, have))
    stale = {k: f for k, f in found.items() if f.owned and k not in want and kind not in COMPONENTS}
    if kind == "ip":
        # an address edited by hand: the planned one missing and an owned one on its interface instead
        by_itf: dict[str, str] = {f.fields["interface"]: k for k, f in stale.items() if f.fields.get("interface")}
        for obj in list(missing):
            held = by_itf.get(obj.fields["interface"])
            if held is not None and held in stale:
                have = stale.pop(held)
                missing.remove(obj)
                changes.append(Change(kind, obj.key, "update", compare(obj, have), obj, have,
                                      note=f"the source of truth holds {held} there"))
    changes += [Change(kind, obj.key, "create", obj=obj) for obj in missing]
    changes += [Change(kind, k, "stale", found=f) for k, f in sorted(stale.items())]
    return changes


Progress = Callable[[str], None]


def run(provider: Provider, desired: Desired, *, write: bool, apply: bool,
        progress: Progress | None = None) -> Result:
    """Compare (and with `write`, push) kind by kind, in dependency order; count every write."""
    say = progress or (lambda _msg: None)
    result = Result(provider.name, objects=desired.count(), applied=apply and write)
    t0 = time.perf_counter()
    result.writes += provider.prepare(desired, write)
    for kind in KINDS:
        want = desired.of(kind)
        if not want:
            continue
        t_kind = time.perf_counter()
        found = provider.read(kind, want)
        t_read = time.perf_counter() - t_kind
        result.read += len(found)
        if kind == "cable":
            result.cables = found
        changes = classify(kind, want, found)
        result.changes += changes
        if not write:
            continue
        creates = [c.obj for c in changes if c.action == "create" and c.obj is not None]
        updates = [(c.obj, c.found) for c in changes
                   if c.obj is not None and c.found is not None
                   and c.action == "update" and apply]
        if creates:
            provider.create(kind, creates)
        if updates:
            provider.update(kind, updates)
        n = len(creates) + len(updates)
        result.writes += n
        spent = time.perf_counter() - t_kind
        say(f"{kind}: {len(found)} read in {t_read:.1f} s" + (
            f", {len(creates)} created, {len(updates)} updated in {spent - t_read:.1f} s "
            f"({n / max(spent - t_read, 1e-9):.0f}/s)" if n else ""))
    result.seconds = time.perf_counter() - t0
    return result
