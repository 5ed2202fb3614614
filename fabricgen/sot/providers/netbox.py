"""NetBox provider (pynetbox): the neutral objects as NetBox 4 records, in bulk.

Lists are created and updated with one request per chunk (NetBox's bulk POST / PATCH), several
chunks at a time; reads ask only for the fields compared (NetBox's `fields=` parameter).  A breakout
cable is one NetBox cable with several terminations per end.  ASNs are ipam ASNs under a private RIR
of fabricgen's, and each switch's ASN is also its custom field `fabricgen_asn`.
"""

from __future__ import annotations

from typing import Any

from fabricgen.sot.objects import Desired, Found, Obj
from fabricgen.sot.providers import chunks, parallel
from fabricgen.sot.providers.rest import RestProvider

ASN_FIELD = "fabricgen_asn"
RIR_SLUG = "fabricgen-private"
ENDPOINTS = {
    "tag": ("extras", "tags"), "manufacturer": ("dcim", "manufacturers"), "device_type": ("dcim", "device_types"),
    "interface_template": ("dcim", "interface_templates"), "role": ("dcim", "device_roles"),
    "platform": ("dcim", "platforms"), "site": ("dcim", "sites"), "device": ("dcim", "devices"),
    "interface": ("dcim", "interfaces"), "prefix": ("ipam", "prefixes"), "ip": ("ipam", "ip_addresses"),
    "asn": ("ipam", "asns"), "cable": ("dcim", "cables"), "vrf": ("ipam", "vrfs"),
    "route_target": ("ipam", "route_targets"), "cable_termination": ("dcim", "cable_terminations"),
}
FIELDS = {
    "interface": "id,device,name,type,enabled,mgmt_only",
    "ip": "id,address,status,role,assigned_object_type,assigned_object,tags",
    "device": "id,name,device_type,role,platform,site,status,description,custom_fields,tags",
    "cable": "id,label,type,length,length_unit,status,description,tags",
    "cable_termination": "id,cable,cable_end,termination_type,termination_id",
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


class NetBox(RestProvider):
    name = "netbox"
    label = "NetBox"
    ENDPOINTS = ENDPOINTS
    CHUNK = CHUNK

    def __init__(self, url: str, token: str, workers: int = 4, chunk: int = 500) -> None:
        import pynetbox

        super().__init__(url, pynetbox.api(url.rstrip("/"), token=token, threading=True, max_workers=workers),
                         workers, chunk)
        self.rir_id = 0

    def _client_errors(self) -> tuple[type[Exception], ...]:
        import pynetbox

        return (pynetbox.RequestError,)

    def _filters(self, kind: str) -> dict[str, Any]:
        return {"fields": FIELDS[kind]} if kind in FIELDS else {}

    # ------------------------------------------------------------------ Provider

    def prepare(self, desired: Desired, write: bool) -> int:
        self.pools = [o.fields["prefix"] for o in desired.of("prefix").values()]
        self._known_types(desired)
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
            fields = {"device": device, "name": rec["name"], "type": _value(rec["type"]), "enabled": rec["enabled"],
                      "mgmt_only": rec["mgmt_only"]}
            out.append(Found("interface", f"{device}:{rec['name']}", fields, device in owned_devices,
                             (rec["id"], ())))
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
        """Cables of the site, their ends from the cable-terminations list (the cable list's nested
        terminations cost NetBox a query per end)."""
        cables = self._list("cable", site_id=self.site_id)
        itf_key = {v: k for k, v in self.ids["interface"].items()}
        ends: dict[int, dict[str, list[str]]] = {c["id"]: {"A": [], "B": []} for c in cables}
        terms = parallel(lambda part: self._list("cable_termination", cable_id=part),
                         chunks(sorted(ends), 100), self.workers)
        for t in terms:
            cable = t["cable"]["id"] if isinstance(t["cable"], dict) else t["cable"]
            if cable in ends and t.get("cable_end") in ("A", "B"):
                where = itf_key.get(t["termination_id"], f"{t['termination_type']}#{t['termination_id']}")
                ends[cable][t["cable_end"]].append(where)
        out = []
        for rec in cables:
            owned, tags = self._owned(rec)
            fields = {"label": rec.get("label"), "a": tuple(sorted(ends[rec["id"]]["A"])),
                      "b": tuple(sorted(ends[rec["id"]]["B"])), "type": _value(rec.get("type")) or None,
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
            return {"device": self.ids["device"][f["device"]], "name": f["name"], "type": f["type"],
                    "enabled": f["enabled"], "mgmt_only": f["mgmt_only"]}
        elif kind == "ip":
            body = {"address": f["address"], "status": f["status"], "role": f["role"] or ""}
            itf = self.ids["interface"].get(f["interface"])
            body.update(assigned_object_type="dcim.interface" if itf else None, assigned_object_id=itf)
        elif kind == "asn":
            body = {"asn": f["asn"], "rir": self.rir_id, "description": f["description"]}
        elif kind == "cable":
            body = {k: f[k] for k in ("label", "type", "length", "length_unit", "status", "description")}
            moved = found is None or (found.fields.get("a"), found.fields.get("b")) != (f["a"], f["b"])
            for end, side in (("a_terminations", "a"), ("b_terminations", "b")) if moved else ():
                body[end] = [{"object_type": "dcim.interface", "object_id": self.ids["interface"][e]}
                             for e in f[side]]
        else:
            body = dict(f)
        body["tags"] = self._tags(found)
        return body

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
