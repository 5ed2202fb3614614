"""The provider-neutral source-of-truth objects: what fabricgen wants there, in the words every SoT shares.

An `Obj` is one object a source of truth holds (a device, an interface, a cable, an IP address ...):
its kind, a natural key unique within the fabric (a device's name, "device:interface", a cable's
label, an address with its mask) and the fields fabricgen owns, as plain values (str, int, float,
bool, None, tuples).  `fabricgen.sot.mapping` builds them from the plan; each provider reads its
server's records back into the same shape, so the diff is one comparison of dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The kinds, in the order a push writes them (each may refer to those before it).
KINDS: tuple[str, ...] = (
    "tag", "manufacturer", "device_type", "interface_template", "role", "platform", "site", "device",
    "interface", "prefix", "ip", "asn", "cable", "route_target", "vrf",
)
TAG = "fabricgen"  # the tag that marks what fabricgen owns (its slug and name)
TAG_COLOR = "2196f3"


@dataclass(slots=True)
class Obj:
    """One object fabricgen wants in the source of truth."""

    kind: str
    key: str
    fields: dict[str, Any]


@dataclass(slots=True)
class Found:
    """One object as the source of truth holds it: its fields in `Obj`'s words, whether fabricgen owns it
    (it carries the tag, or is an interface of a device that does) and the provider's handle of it (its id)."""

    kind: str
    key: str
    fields: dict[str, Any]
    owned: bool
    ref: Any = None


@dataclass(slots=True)
class Desired:
    """Everything fabricgen wants in the source of truth, per kind, keyed by natural key."""

    fabric: str
    objects: dict[str, dict[str, Obj]] = field(default_factory=lambda: {k: {} for k in KINDS})

    def add(self, kind: str, key: str, **fields: Any) -> Obj:
        obj = Obj(kind, key, fields)
        self.objects[kind][key] = obj
        return obj

    def of(self, kind: str) -> dict[str, Obj]:
        return self.objects[kind]

    def count(self) -> int:
        return sum(len(v) for v in self.objects.values())
