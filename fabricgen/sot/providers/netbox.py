"""NetBox provider (pynetbox): the neutral objects as NetBox 4 records, in bulk.

Lists are created and updated with one request per chunk (NetBox's bulk POST / PATCH), several
chunks at a time; reads ask only for the fields compared (NetBox's `fields=` parameter).  A breakout
cable is one NetBox cable with several terminations per end.  ASNs are ipam ASNs under a private RIR
of fabricgen's, and each switch's ASN is also its custom field `fabricgen_asn`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fabricgen.sot.objects import TAG, Desired, Found, Obj
from fabricgen.sot.providers import SotError, chunks, parallel

ASN_FIELD = "fabricgen_asn"
RIR_SLUG = "fabricgen-private"
ENDPOINTS = {
    "tag": ("extras", "tags"), "manufacturer": ("dcim", "manufacturers"), "device_type": ("dcim", "device_types"),
    "interface_template": ("dcim", "interface_templates"), "role": ("dcim", "device_roles"),
    "platform": ("dcim", "platforms"), "site": ("dcim", "sites"), "device": ("dcim", "devices"),
    "interface": ("dcim", "interfaces"), "prefix": ("ipam", "prefixes"), "ip": ("ipam", "ip_addresses"),
    "asn": ("ipam", "asns"), "cable": ("dcim", "cables"), "vrf": ("ipam", "vrfs"),
    "route_target": ("ipam", "route_targets"),
}
FIELDS = {
    "interface": "id,device,name,type,description,mtu,enabled,mgmt_only,tags",
    "ip": "id,address,status,role,assigned_object_type,assigned_object,tags",
    "device": "id,name,device_type,role,platform,site,status,description,custom_fields,tags",
    "cable": "id,label,a_terminations,b_terminations,type,length,length_unit,status,description,tags",
    "interface_template": "id,device_type,name,type,label,mgmt_only",
}
BY_NAME = {"manufacturer": "name", "device_type": "model", "role": "name", "platform": "name", "site": "name",
           "tag": "slug", "prefix": "prefix", "asn": "asn", "vrf": "name", "route_target": "name"}
CHUNK = {"device": 50, "interface_template": 500, "cable": 200}


def _value(v: Any) -> Any:
    """A choice field's value ({"value": "active", "label": ...} -> "active")."""
    return v.get("value") if isinstance(v, dict) else v


def _name(v: Any, attr: str = "name") -> Any:
    return v.get(attr) if isinstance(v, dict) else None


def _end(term: dict[str, Any]) -> str:
    obj = term.get("object") or {}
    device = _name(obj.get("device")) or "?"
    return f"{device}:{obj.get('name', term.get('object_id'))}"


class NetBox:
    name = "netbox"
    bulk = True

    def __init__(self, url: str, token: str, workers: int = 4, chunk: int = 500) -> None:
        import pynetbox

        self.url = url.rstrip("/")
        self.api = pynetbox.api(self.url, token=token, threading=True, max_workers=workers)
        self.workers, self.chunk = workers, chunk
        self.ids: dict[str, dict[str, int]] = {k: {} for k in ENDPOINTS}
        self.tag_id = 0
        self.rir_id = 0
        self.site_id = 0
        self.pools: list[str] = []  # the fabric's pools: the addresses read are those inside them
        self.owned_devices: set[str] = set()  # their untagged interfaces are fabricgen's to claim
        self._choices: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ plumbing

    def _ep(self, kind: str) -> Any:
        app, name = ENDPOINTS[kind]
        return getattr(getattr(self.api, app), name)

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        import pynetbox
        import requests

        try:
            yield
        except pynetbox.RequestError as exc:
            raise SotError(f"NetBox at {self.url} refused {what}: {exc.error}") from None
        except requests.RequestException as exc:
            raise SotError(f"NetBox at {self.url} cannot be reached ({what}): {type(exc).__name__}") from None

    def _list(self, kind: str, **filters: Any) -> list[dict[str, Any]]:
        if kind in FIELDS:
            filters["fields"] = FIELDS[kind]
        with self._errors(f"reading {kind}"):
            return [dict(r) for r in self._ep(kind).filter(limit=1000, **filters)]

    def _by_values(self, kind: str, attr: str, values: list[Any]) -> list[dict[str, Any]]:
        """Records whose `attr` is one of `values`, asked for in URL-sized chunks."""
        return parallel(lambda part: self._list(kind, **{attr: part}), chunks(sorted(set(values)), 60),
                        self.workers)

    def _write(self, kind: str, payloads: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
        ep = self._ep(kind)
        size = CHUNK.get(kind, self.chunk)

        def send(part: list[dict[str, Any]]) -> list[dict[str, Any]]:
            with self._errors(f"{'creating' if method == 'create' else 'updating'} {len(part)} {kind}"):
                out = getattr(ep, method)(part)
            return [dict(r) for r in (out if isinstance(out, list) else [out])]

        return parallel(send, chunks(payloads, size), self.workers)

    def _tags(self, found: Found | None) -> list[int]:
        have = list(found.ref[1]) if found is not None and found.ref else []
        return have if self.tag_id in have else [*have, self.tag_id]

    def _owned(self, rec: dict[str, Any]) -> tuple[bool, tuple[int, ...]]:
        tags = rec.get("tags") or []
        return any(t.get("slug") == TAG for t in tags), tuple(t["id"] for t in tags)

    def _choice_set(self, kind: str, field: str) -> set[str]:
        key = f"{kind}.{field}"
        if key not in self._choices:
            with self._errors(f"reading the {kind} {field} choices"):
                self._choices[key] = {c["value"] for c in self._ep(kind).choices().get(field, [])}
        return self._choices[key]

    # ------------------------------------------------------------------ Provider

    def prepare(self, desired: Desired, write: bool) -> int:
        self.pools = [o.fields["prefix"] for o in desired.of("prefix").values()]
        types = self._choice_set("interface", "type")
        for kind in ("interface", "interface_template"):
            for obj in desired.of(kind).values():
                if obj.fields["type"] not in types:
                    obj.fields["type"] = "other"
        for obj in desired.of("cable").values():
            obj.fields.pop("links", None)
        writes = 0
        with self._errors("reading custom fields"):
            have_field = list(self.api.extras.custom_fields.filter(name=ASN_FIELD))
        if not have_field and write:
            with self._errors("creating the ASN custom field"):
                self.api.extras.custom_fields.create(
                    name=ASN_FIELD, label="BGP ASN (fabricgen)", type="integer", object_types=["dcim.device"],
                    description="The switch's BGP ASN, written by fabricgen", required=False)
            writes += 1
        if desired.of("asn"):
            with self._errors("reading RIRs"):
                rirs = list(self.api.ipam.rirs.filter(slug=RIR_SLUG))
            if rirs:
                self.rir_id = rirs[0].id
            elif write:
                tag = self._ensure_tag(desired)
                writes += tag
                with self._errors("creating the private-ASN RIR"):
                    self.rir_id = self.api.ipam.rirs.create(
                        name="Private ASNs (fabricgen)", slug=RIR_SLUG, is_private=True, tags=[self.tag_id],
                        description="RFC 6996 private ASNs of fabricgen's fabrics").id
                writes += 1
        return writes

    def _ensure_tag(self, desired: Desired) -> int:
        """The tag, created ahead of the kinds when a supporting object needs it first."""
        if self.tag_id:
            return 0
        found = self.read("tag", desired.of("tag"))
        if found:
            return 0
        self.create("tag", list(desired.of("tag").values()))
        return 1

    def read(self, kind: str, want: dict[str, Obj]) -> dict[str, Found]:
        if kind in ("device", "interface", "cable") and not self.site_id:
            return {}
        reader: Callable[[dict[str, Obj]], list[Found]] | None = getattr(self, f"_read_{kind}", None)
        out = {f.key: f for f in (reader(want) if reader is not None else self._read_named(kind, want))}
        for f in out.values():
            if f.ref:
                self.ids[kind][f.key] = f.ref[0]
        if kind == "tag" and TAG in out:
            self.tag_id = out[TAG].ref[0]
        if kind == "device":
            self.owned_devices = {k for k, f in out.items() if f.owned}
        if kind == "site" and want:
            site = out.get(next(iter(want)))
            self.site_id = site.ref[0] if site else 0
        return out

    def _read_named(self, kind: str, want: dict[str, Obj]) -> list[Found]:
        attr = BY_NAME[kind]
        values = [o.fields[attr] for o in want.values()]
        out = []
        for rec in self._by_values(kind, attr, values):
            fields = {k: _value(rec.get(k)) for k in next(iter(want.values())).fields}
            if kind == "device_type":
                fields["manufacturer"] = _name(rec.get("manufacturer"))
            owned, tags = self._owned(rec)
            key = str(rec[attr])
            out.append(Found(kind, key, fields, owned or kind == "tag", (rec["id"], tags)))
        return out

    def _read_interface_template(self, want: dict[str, Obj]) -> list[Found]:
        types = {o.fields["device_type"] for o in want.values()}
        dt_ids = {self.ids["device_type"][t]: t for t in types if t in self.ids["device_type"]}
        out = []
        for rec in self._by_values("interface_template", "device_type_id", list(dt_ids)):
            dt = dt_ids[rec["device_type"]["id"]]
            fields = {"device_type": dt, "name": rec["name"], "type": _value(rec["type"]), "label": rec["label"],
                      "mgmt_only": rec["mgmt_only"]}
            out.append(Found("interface_template", f"{dt}:{rec['name']}", fields, True, (rec["id"], ())))
        return out

    def _read_device(self, want: dict[str, Obj]) -> list[Found]:
        out = []
        for rec in self._list("device", site_id=self.site_id):
            owned, tags = self._owned(rec)
            fields = {"name": rec["name"], "device_type": _name(rec.get("device_type"), "model"),
                      "role": _name(rec.get("role")), "platform": _name(rec.get("platform")),
                      "site": _name(rec.get("site")), "status": _value(rec.get("status")),
                      "asn": (rec.get("custom_fields") or {}).get(ASN_FIELD), "description": rec.get("description")}
            out.append(Found("device", str(rec["name"]), fields, owned, (rec["id"], tags)))
        return out

    def _read_interface(self, want: dict[str, Obj]) -> list[Found]:
        owned_devices = self.owned_devices
        out = []
        for rec in self._list("interface", site_id=self.site_id):
            device = _name(rec.get("device"))
            owned, tags = self._owned(rec)
            fields = {"device": device, "name": rec["name"], "type": _value(rec["type"]),
                      "description": rec["description"], "mtu": rec["mtu"], "enabled": rec["enabled"],
                      "mgmt_only": rec["mgmt_only"]}
            out.append(Found("interface", f"{device}:{rec['name']}", fields, owned, (rec["id"], tags),
                             claimable=not owned and device in owned_devices))
        return out

    def _read_prefix(self, want: dict[str, Obj]) -> list[Found]:
        return self._read_named("prefix", want)

    def _read_ip(self, want: dict[str, Obj]) -> list[Found]:
        pools = self.pools
        out = []
        recs = parallel(lambda p: self._list("ip", parent=p[0]), [[p] for p in pools], self.workers)
        for rec in recs:
            owned, tags = self._owned(rec)
            itf = rec.get("assigned_object") if rec.get("assigned_object_type") == "dcim.interface" else None
            where = f"{_name(itf.get('device'))}:{itf.get('name')}" if itf else None
            fields = {"address": rec["address"], "interface": where, "status": _value(rec.get("status")),
                      "role": _value(rec.get("role")) or None}
            out.append(Found("ip", str(rec["address"]), fields, owned, (rec["id"], tags)))
        return out

    def _read_asn(self, want: dict[str, Obj]) -> list[Found]:
        return self._read_named("asn", want)

    def _read_cable(self, want: dict[str, Obj]) -> list[Found]:
        out = []
        for rec in self._list("cable", site_id=self.site_id):
            owned, tags = self._owned(rec)
            a = tuple(sorted(_end(t) for t in rec.get("a_terminations") or []))
            b = tuple(sorted(_end(t) for t in rec.get("b_terminations") or []))
            fields = {"label": rec.get("label"), "a": a, "b": b, "type": _value(rec.get("type")) or None,
                      "length": rec.get("length"), "length_unit": _value(rec.get("length_unit")),
                      "status": _value(rec.get("status")), "description": rec.get("description")}
            key = rec.get("label") or f"#{rec['id']}"
            out.append(Found("cable", str(key), fields, owned, (rec["id"], tags)))
        return out

    # ------------------------------------------------------------------ writes

    def _payload(self, obj: Obj, found: Found | None = None) -> dict[str, Any]:
        f = obj.fields
        kind = obj.kind
        body: dict[str, Any]
        if kind == "tag":
            return {k: f[k] for k in ("name", "slug", "color", "description")}
        if kind == "interface_template":
            return {"device_type": self.ids["device_type"][f["device_type"]], "name": f["name"], "type": f["type"],
                    "label": f["label"], "mgmt_only": f["mgmt_only"]}
        if kind == "device_type":
            body = {"manufacturer": self.ids["manufacturer"][f["manufacturer"]], "model": f["model"],
                    "slug": f["slug"], "part_number": f["part_number"], "u_height": f["u_height"]}
        elif kind == "device":
            body = {"name": f["name"], "device_type": self.ids["device_type"][f["device_type"]],
                    "role": self.ids["role"][f["role"]], "site": self.ids["site"][f["site"]],
                    "platform": self.ids["platform"][f["platform"]] if f["platform"] else None,
                    "status": f["status"], "description": f["description"], "custom_fields": {ASN_FIELD: f["asn"]}}
        elif kind == "interface":
            body = {k: f[k] for k in ("name", "type", "description", "mtu", "enabled", "mgmt_only")}
            body["device"] = self.ids["device"][f["device"]]
        elif kind == "ip":
            body = {"address": f["address"], "status": f["status"], "role": f["role"] or ""}
            itf = self.ids["interface"].get(f["interface"])
            body.update(assigned_object_type="dcim.interface" if itf else None, assigned_object_id=itf)
        elif kind == "asn":
            body = {"asn": f["asn"], "rir": self.rir_id, "description": f["description"]}
        elif kind == "cable":
            body = {k: f[k] for k in ("label", "type", "length", "length_unit", "status", "description")}
            for end, side in (("a_terminations", "a"), ("b_terminations", "b")):
                body[end] = [{"object_type": "dcim.interface", "object_id": self.ids["interface"][e]}
                             for e in f[side]]
        else:
            body = dict(f)
        body["tags"] = self._tags(found)
        return body

    def create(self, kind: str, objs: list[Obj]) -> None:
        recs = self._write(kind, [self._payload(o) for o in objs], "create")
        for obj, rec in zip(objs, recs, strict=True):
            self.ids[kind][obj.key] = rec["id"]
            if kind == "tag":
                self.tag_id = rec["id"]
            if kind == "site":
                self.site_id = rec["id"]
            if kind == "device":
                self.owned_devices.add(obj.key)

    def update(self, kind: str, pairs: list[tuple[Obj, Found]]) -> None:
        payloads = []
        for obj, found in pairs:
            body = self._payload(obj, found)
            same_ends = (found.fields.get("a"), found.fields.get("b")) == (obj.fields.get("a"), obj.fields.get("b"))
            if kind == "cable" and same_ends:  # terminations rewritten only when they moved (paths re-traced)
                body.pop("a_terminations")
                body.pop("b_terminations")
            body["id"] = found.ref[0]
            payloads.append(body)
        self._write(kind, payloads, "update")

    # ------------------------------------------------------------------ hooks the engine calls

    def facts(self, desired: Desired) -> dict[str, Any]:
        self.read("site", desired.of("site"))
        self.pools = [o.fields["prefix"] for o in desired.of("prefix").values()]
        reserved = []
        for f in self._read_ip({}):
            if not f.owned:
                reserved.append({"address": f.key, "status": f.fields["status"], "owner": f.fields["interface"]})
        devices: dict[str, dict[str, Any]] = {}
        if self.site_id:
            for rec in self._device_facts():
                devices[rec["name"]] = {"serial": rec.get("serial") or "", "asset_tag": rec.get("asset_tag") or "",
                                        "rack": _name(rec.get("rack")) or "", "position": rec.get("position")}
        return {"reserved": reserved, "devices": devices}

    def _device_facts(self) -> list[dict[str, Any]]:
        with self._errors("reading devices"):
            return [dict(r) for r in self._ep("device").filter(
                site_id=self.site_id, limit=1000, fields="id,name,serial,asset_tag,rack,position")]
