"""Nautobot provider (pynautobot): the neutral objects as Nautobot 2/3 records, in bulk.

Nautobot's words for fabricgen's objects: the site is a Location of LocationType "Fabric"; roles
are extras Roles for dcim.device; statuses are Status objects (Active, Connected); prefixes and
addresses live in the Global namespace and an address reaches its interface through an
IP-address-to-interface assignment; a switch's ASN is its custom field `fabricgen_asn` (ASN objects
belong to the BGP-models app, not to Nautobot's core).  Manufacturers, platforms and roles cannot
carry tags in Nautobot: fabricgen creates them when missing and never changes them.  A Nautobot
cable joins one port to one port (breakout cables need a cable type with connectors), so a
breakout cable becomes one cable per link, labelled <label>/<n>; Nautobot cables and devices have no
description field, and cable lengths are whole units.  Reads ask for depth 0 and map related ids back to names.
"""

from __future__ import annotations

import re
from typing import Any

from fabricgen.sot.objects import Desired, Found, Obj
from fabricgen.sot.providers import SotError, chunks, parallel
from fabricgen.sot.providers.rest import RestProvider

ASN_FIELD = "fabricgen_asn"
LOCATION_TYPE = "Fabric"
NAMESPACE = "Global"
ENDPOINTS = {
    "tag": ("extras", "tags"), "manufacturer": ("dcim", "manufacturers"), "device_type": ("dcim", "device_types"),
    "interface_template": ("dcim", "interface_templates"), "role": ("extras", "roles"),
    "platform": ("dcim", "platforms"), "site": ("dcim", "locations"), "device": ("dcim", "devices"),
    "interface": ("dcim", "interfaces"), "prefix": ("ipam", "prefixes"), "ip": ("ipam", "ip_addresses"),
    "cable": ("dcim", "cables"), "vrf": ("ipam", "vrfs"), "route_target": ("ipam", "route_targets"),
    "ip_interface": ("ipam", "ip_address_to_interface"),
}
TAGGED_TYPES = ["dcim.devicetype", "dcim.location", "dcim.device", "dcim.interface", "dcim.cable", "ipam.prefix",
                "ipam.ipaddress", "ipam.vrf", "ipam.routetarget"]
UNTAGGABLE = ("manufacturer", "platform", "role")  # created when missing, never changed
BY_NAME = {"tag": "name", "manufacturer": "name", "device_type": "model", "role": "name", "platform": "name",
           "site": "name", "prefix": "prefix", "vrf": "name", "route_target": "name"}
DROP = {"tag": ("slug",), "manufacturer": ("slug",), "device_type": ("slug",), "platform": ("slug",),
        "role": ("slug",), "site": ("slug",), "cable": ("description", "links"), "device": ("description",)}
CHUNK = {"device": 50, "cable": 200}
# The two big reads (every port of the fabric's devices, every address of its pools) go through
# Nautobot's GraphQL API: its REST records cost the server a natural key, display name, URLs and a
# full serializer per object (profiled: ~4 ms of server CPU per interface); the GraphQL query returns
# only the fields compared, about eight times faster here (docs/sot.md).
GQL_DEVICES = 20  # devices per interfaces query (a few thousand ports)
GQL_PAGE = 2000  # addresses per page (limit/offset over Nautobot's address ordering, unique in a namespace)
GQL_INTERFACES = """query ($devices: [String]) {
  interfaces(device_id: $devices) { id name type enabled mgmt_only device { id } } }"""
GQL_ADDRESSES = """query ($prefix: [String], $namespace: [String], $limit: Int, $offset: Int) {
  ip_addresses(prefix: $prefix, namespace: $namespace, limit: $limit, offset: $offset) {
    id address status { name } tags { id name } interface_assignments { id interface { id } } } }"""


def _id(v: Any) -> Any:
    return v.get("id") if isinstance(v, dict) else v


class Nautobot(RestProvider):
    name = "nautobot"
    label = "Nautobot"
    ENDPOINTS = ENDPOINTS
    CHUNK = CHUNK

    def __init__(self, url: str, token: str, workers: int = 4, chunk: int = 500) -> None:
        import pynautobot

        super().__init__(url, pynautobot.api(url.rstrip("/"), token=token, threading=True, max_workers=workers),
                         workers, chunk)
        self.status: dict[str, str] = {}  # lower-case name -> id
        self.status_name: dict[str, str] = {}  # id -> lower-case name
        self.namespace = ""
        self.location_type = ""

    def _client_errors(self) -> tuple[type[Exception], ...]:
        import pynautobot
        from pynautobot.core.graphql import GraphQLException

        return (pynautobot.RequestError, GraphQLException)

    def _graphql(self, what: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        with self._errors(f"reading {what}"):
            doc = self.api.graphql.query(query=query, variables=variables).json
        if doc.get("errors"):  # a GraphQL error may come with HTTP 200
            raise SotError(f"{self.label} at {self.url} refused reading {what}: {doc['errors'][0].get('message')}")
        data: dict[str, Any] = doc["data"]
        return data

    def _gql_type(self) -> dict[str, str]:
        """GraphQL's enum name of each interface type -> the type (graphene-django's naming: the value upper-cased,
        runs of other characters as "_", "A_" before a leading digit; a name two values share is left out)."""
        names: dict[str, list[str]] = {}
        for value in self._choice_set("interface", "type"):
            name = re.sub(r"\W+", "_", value).upper()
            names.setdefault(name if re.match(r"[_A-Za-z]", name) else f"A_{name}", []).append(value)
        return {n: v[0] for n, v in names.items() if len(v) == 1}

    def _filters(self, kind: str) -> dict[str, Any]:
        return {"depth": 0}  # related objects as ids (mapped back to names here); tags stay in

    def _names(self, kind: str) -> dict[Any, str]:
        return {v: k for k, v in self.ids[kind].items()}

    # ------------------------------------------------------------------ Provider

    def prepare(self, desired: Desired, write: bool) -> int:
        self.pools = [o.fields["prefix"] for o in desired.of("prefix").values()]
        self._known_types(desired)
        self._split_cables(desired)
        for kind, names in DROP.items():
            for obj in desired.of(kind).values():
                for n in names:
                    obj.fields.pop(n, None)
        for obj in desired.of("ip").values():
            obj.fields["role"] = None  # Nautobot's IP roles are Role objects; fabricgen sets none
        for obj in desired.of("cable").values():
            obj.fields["length"] = round(obj.fields["length"]) if obj.fields["length"] is not None else None
        desired.objects["asn"] = {}  # the device's custom field carries the ASN
        with self._errors("reading statuses"):
            for s in self.api.extras.statuses.all():
                self.status[s.name.lower()] = s.id
                self.status_name[s.id] = s.name.lower()
            spaces = list(self.api.ipam.namespaces.filter(name=NAMESPACE))
            types = list(self.api.dcim.location_types.filter(name=LOCATION_TYPE))
            fields = [c for c in self.api.extras.custom_fields.all() if c.key == ASN_FIELD]
        if not spaces:
            raise SotError(f"Nautobot at {self.url} has no namespace {NAMESPACE}")
        self.namespace = spaces[0].id
        writes = 0
        if types:
            self.location_type = types[0].id
        elif write:
            with self._errors("creating the location type Fabric"):
                self.location_type = self.api.dcim.location_types.create(
                    name=LOCATION_TYPE, description="A fabric of fabricgen's",
                    content_types=["dcim.device", "dcim.rack", "ipam.prefix"]).id
            writes += 1
        if not fields and write:
            with self._errors("creating the ASN custom field"):
                self.api.extras.custom_fields.create(key=ASN_FIELD, label="BGP ASN (fabricgen)", type="integer",
                                                     content_types=["dcim.device"],
                                                     description="The switch's BGP ASN, written by fabricgen")
            writes += 1
        return writes

    @staticmethod
    def _split_cables(desired: Desired) -> None:
        """One Nautobot cable per link of a breakout cable: <label>/<n>."""
        out: dict[str, Obj] = {}
        for obj in desired.of("cable").values():
            f = obj.fields
            pairs = f.pop("links", None) or ()
            if len(pairs) <= 1:
                out[obj.key] = obj
                continue
            for n, (a, b) in enumerate(pairs, start=1):
                key = f"{obj.key}/{n}"
                out[key] = Obj("cable", key, {**f, "label": key, "a": (a,), "b": (b,)})
        desired.objects["cable"] = out

    def _read_named(self, kind: str, want: dict[str, Obj]) -> list[Found]:
        attr = BY_NAME[kind]
        names = self._names("manufacturer")
        out = []
        wanted = next(iter(want.values())).fields if want else {}
        for rec in self._by_values(kind, attr, [o.fields[attr] for o in want.values()]):
            fields = {k: rec.get(k) for k in wanted}
            if "status" in fields:
                fields["status"] = self.status_name.get(_id(rec.get("status")))
            if kind == "device_type":
                fields["manufacturer"] = names.get(_id(rec.get("manufacturer")))
            owned, tags = self._owned(rec)
            out.append(Found(kind, str(rec[attr]), fields, (owned or kind == "tag") and kind not in UNTAGGABLE,
                             (rec["id"], tags)))
        return out

    def _read_interface_template(self, want: dict[str, Obj]) -> list[Found]:
        dts = self._names("device_type")
        wanted = [dts_id for name, dts_id in self.ids["device_type"].items()
                  if any(o.fields["device_type"] == name for o in want.values())]
        out = []
        for rec in self._by_values("interface_template", "device_type", wanted):
            dt = dts[_id(rec["device_type"])]
            fields = {"device_type": dt, "name": rec["name"], "type": _choice(rec["type"]), "label": rec["label"],
                      "mgmt_only": rec["mgmt_only"]}
            out.append(Found("interface_template", f"{dt}:{rec['name']}", fields, True, (rec["id"], ())))
        return out

    def _read_device(self, want: dict[str, Obj]) -> list[Found]:
        dts, roles, platforms = self._names("device_type"), self._names("role"), self._names("platform")
        sites = self._names("site")
        out = []
        for rec in self._list("device", location=self.site_id):
            owned, tags = self._owned(rec)
            fields = {"name": rec["name"], "device_type": dts.get(_id(rec["device_type"])),
                      "role": roles.get(_id(rec["role"])), "platform": platforms.get(_id(rec.get("platform"))),
                      "site": sites.get(_id(rec["location"])), "status": self.status_name.get(_id(rec["status"])),
                      "asn": (rec.get("custom_fields") or {}).get(ASN_FIELD)}
            out.append(Found("device", str(rec["name"]), fields, owned, (rec["id"], tags)))
        return out

    def _read_interface(self, want: dict[str, Obj]) -> list[Found]:
        """The ports of the site's devices (read just before), through GraphQL, a query per few devices."""
        devices = self._names("device")
        types = self._gql_type()

        def ports(part: list[Any]) -> list[dict[str, Any]]:
            return list(self._graphql("interfaces", GQL_INTERFACES, {"devices": [str(d) for d in part]})["interfaces"])

        out = []
        for rec in parallel(ports, chunks(sorted(devices, key=str), GQL_DEVICES), self.workers):
            dev = rec["device"]["id"]
            device = devices.get(dev, str(dev))
            fields = {"device": device, "name": rec["name"], "type": types.get(rec["type"], rec["type"]),
                      "enabled": rec["enabled"], "mgmt_only": rec["mgmt_only"]}
            out.append(Found("interface", f"{device}:{rec['name']}", fields, device in self.owned_devices,
                             (rec["id"], ())))
        return out

    def _read_ip(self, want: dict[str, Obj]) -> list[Found]:
        """The addresses in the fabric's pools with their tags and interface assignments: GraphQL, paged."""
        itfs = self._names("interface")

        def pool(p: list[str]) -> list[dict[str, Any]]:
            recs: list[dict[str, Any]] = []
            while True:
                page = self._graphql("addresses", GQL_ADDRESSES, {"prefix": p, "namespace": [str(self.namespace)],
                                                                  "limit": GQL_PAGE, "offset": len(recs)})
                recs += page["ip_addresses"]
                if len(page["ip_addresses"]) < GQL_PAGE:
                    return recs

        out = []
        for rec in parallel(pool, [[p] for p in self.pools], self.workers):
            owned, tags = self._owned(rec)
            links = rec.get("interface_assignments") or []
            itf, link_id = (links[0]["interface"]["id"], links[0]["id"]) if links else (None, None)
            fields = {"address": rec["address"], "interface": itfs.get(itf, str(itf)) if itf else None,
                      "status": (rec.get("status") or {}).get("name", "").lower() or None, "role": None}
            out.append(Found("ip", str(rec["address"]), fields, owned, (rec["id"], tags, link_id)))
        return out

    def _read_cable(self, want: dict[str, Obj]) -> list[Found]:
        itfs = self._names("interface")
        out = []
        for rec in self._list("cable", location_id=self.site_id):
            owned, tags = self._owned(rec)
            a = rec.get("termination_a_id")
            b = rec.get("termination_b_id")
            fields = {"label": rec.get("label"), "a": (itfs.get(a, str(a)),) if a else (),
                      "b": (itfs.get(b, str(b)),) if b else (), "type": _choice(rec.get("type")),
                      "length": rec.get("length"), "length_unit": _choice(rec.get("length_unit")),
                      "status": self.status_name.get(_id(rec["status"]))}
            out.append(Found("cable", str(rec.get("label") or f"#{rec['id']}"), fields, owned, (rec["id"], tags)))
        return out

    # ------------------------------------------------------------------ writes

    def _payload(self, obj: Obj, found: Found | None = None) -> dict[str, Any]:
        f, kind = obj.fields, obj.kind
        status = self.status.get(str(f.get("status")), None)
        body: dict[str, Any]
        if kind == "tag":
            return {"name": f["name"], "color": f["color"], "description": f["description"],
                    "content_types": TAGGED_TYPES}
        if kind in UNTAGGABLE:
            body = {k: v for k, v in f.items()}
            if kind == "role":
                body["content_types"] = ["dcim.device"]
            return body
        if kind == "interface_template":
            return {"device_type": self.ids["device_type"][f["device_type"]], "name": f["name"], "type": f["type"],
                    "label": f["label"], "mgmt_only": f["mgmt_only"]}
        if kind == "device_type":
            body = {"manufacturer": self.ids["manufacturer"][f["manufacturer"]], "model": f["model"],
                    "part_number": f["part_number"], "u_height": f["u_height"]}
        elif kind == "site":
            body = {"name": f["name"], "description": f["description"], "status": status,
                    "location_type": self.location_type}
        elif kind == "device":
            body = {"name": f["name"], "device_type": self.ids["device_type"][f["device_type"]],
                    "role": self.ids["role"][f["role"]], "location": self.ids["site"][f["site"]],
                    "platform": self.ids["platform"][f["platform"]] if f["platform"] else None,
                    "status": status, "custom_fields": {ASN_FIELD: f["asn"]}}
        elif kind == "interface":
            return {"device": self.ids["device"][f["device"]], "name": f["name"], "type": f["type"],
                    "enabled": f["enabled"], "mgmt_only": f["mgmt_only"], "status": self.status["active"]}
        elif kind == "prefix":
            body = {"prefix": f["prefix"], "status": status, "description": f["description"], "type": "network",
                    "namespace": self.namespace}
        elif kind == "ip":
            body = {"status": status, "type": "host"}
            if found is None:  # a host address cannot change once created (Nautobot refuses it)
                body.update(address=f["address"], namespace=self.namespace)
        elif kind == "cable":
            body = {k: f[k] for k in ("label", "type", "length", "length_unit")}
            body["status"] = status
            if found is None or (found.fields.get("a"), found.fields.get("b")) != (f["a"], f["b"]):
                body.update(termination_a_type="dcim.interface", termination_a_id=self.ids["interface"][f["a"][0]],
                            termination_b_type="dcim.interface", termination_b_id=self.ids["interface"][f["b"][0]])
        else:
            body = dict(f)
        body["tags"] = self._tags(found)
        return body

    def create(self, kind: str, objs: list[Obj]) -> None:
        super().create(kind, objs)
        if kind == "cable":  # Nautobot 3.2's cable serializer drops the tags of a create; its update keeps them
            self._write("cable", [{"id": self.ids["cable"][o.key], "tags": [self.tag_id]} for o in objs], "update")
        if kind == "ip":
            self._assign([(self.ids["ip"][o.key], o.fields["interface"]) for o in objs if o.fields["interface"]])

    def update(self, kind: str, pairs: list[tuple[Obj, Found]]) -> None:
        super().update(kind, pairs)
        if kind != "ip":
            return
        moved = [(o, f) for o, f in pairs if o.fields["interface"] != f.fields.get("interface")]
        stale = [f.ref[2] for _, f in moved if len(f.ref) > 2 and f.ref[2]]
        if stale:
            with self._errors(f"removing {len(stale)} address assignments"):
                self._ep("ip_interface").delete(stale)
        self._assign([(f.ref[0], o.fields["interface"]) for o, f in moved if o.fields["interface"]])

    def _assign(self, pairs: list[tuple[Any, str]]) -> None:
        payloads = [{"ip_address": ip, "interface": self.ids["interface"][itf]} for ip, itf in pairs
                    if itf in self.ids["interface"]]
        if payloads:
            self._write("ip_interface", payloads, "create")

    def facts(self, desired: Desired) -> dict[str, Any]:
        self.read("tag", desired.of("tag"))  # ownership: records name their tags by id at depth 0
        self.read("site", desired.of("site"))
        self.read("device", desired.of("device"))
        self.read("interface", desired.of("interface"))
        reserved = [{"address": f.key, "status": f.fields["status"], "owner": f.fields["interface"]}
                    for f in self._read_ip({}) if not f.owned]
        racks: dict[Any, str] = {}
        devices: dict[str, dict[str, Any]] = {}
        if self.site_id:
            recs = self._list("device", location=self.site_id)
            rack_ids = sorted({_id(r["rack"]) for r in recs if r.get("rack")})
            if rack_ids:
                with self._errors("reading racks"):
                    racks = {r.id: r.name for r in self.api.dcim.racks.filter(id=rack_ids)}
            for rec in recs:
                devices[rec["name"]] = {"serial": rec.get("serial") or "", "asset_tag": rec.get("asset_tag") or "",
                                        "rack": racks.get(_id(rec.get("rack")), "") if rec.get("rack") else "",
                                        "position": rec.get("position")}
        return {"reserved": reserved, "devices": devices}


def _choice(v: Any) -> Any:
    return v.get("value") if isinstance(v, dict) else (v or None)
