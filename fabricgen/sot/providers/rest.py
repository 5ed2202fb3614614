"""The plumbing every REST source of truth shares: chunked parallel bulk writes, reads, id bookkeeping.

A provider subclasses `RestProvider` and supplies its server's words only: the client (`api`), its
endpoints, how a record reads as neutral fields (`_read_<kind>`) and the payload of an object
(`_payload`).  The ownership bookkeeping (the tag, the fabric's site, the devices fabricgen owns,
the pools whose addresses are read) lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fabricgen.sot.objects import TAG, Desired, Found, Obj
from fabricgen.sot.providers import SotError, chunks, parallel


class RestProvider:
    name = "rest"
    label = "REST server"
    bulk = True
    ENDPOINTS: dict[str, tuple[str, str]] = {}
    CHUNK: dict[str, int] = {}  # objects per bulk request, where a kind is heavy
    SCOPED = ("device", "interface", "cable")  # kinds read within the fabric's site (none before it exists)

    def __init__(self, url: str, api: Any, workers: int = 4, chunk: int = 500) -> None:
        self.url = url.rstrip("/")
        self.api = api
        self.workers, self.chunk = workers, chunk
        self.ids: dict[str, dict[str, Any]] = {k: {} for k in self.ENDPOINTS}
        self.tag_id: Any = None
        self.site_id: Any = None
        self.pools: list[str] = []  # the fabric's pools: the addresses read are those inside them
        self.owned_devices: set[str] = set()  # their interfaces are fabricgen's too
        self._choices: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ requests

    def _ep(self, kind: str) -> Any:
        app, name = self.ENDPOINTS[kind]
        return getattr(getattr(self.api, app), name)

    def _client_errors(self) -> tuple[type[Exception], ...]:
        """The client library's error for a refused request (its `.error` holds the server's words)."""
        raise NotImplementedError

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        import requests

        try:
            yield
        except self._client_errors() as exc:
            raise SotError(f"{self.label} at {self.url} refused {what}: {getattr(exc, 'error', exc)}") from None
        except requests.RequestException as exc:
            raise SotError(f"{self.label} at {self.url} cannot be reached ({what}): {type(exc).__name__}") from None

    def _filters(self, kind: str) -> dict[str, Any]:
        """Extra query parameters of a kind's reads (fields to return, depth)."""
        return {}

    def _list(self, kind: str, **filters: Any) -> list[dict[str, Any]]:
        with self._errors(f"reading {kind}"):
            return [dict(r) for r in self._ep(kind).filter(limit=1000, **self._filters(kind), **filters)]

    def _by_values(self, kind: str, attr: str, values: list[Any]) -> list[dict[str, Any]]:
        """Records whose `attr` is one of `values`, asked for in URL-sized chunks."""
        return parallel(lambda part: self._list(kind, **{attr: part}), chunks(sorted(set(values)), 50),
                        self.workers)

    def _write(self, kind: str, payloads: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
        ep = self._ep(kind)

        def send(part: list[dict[str, Any]]) -> list[dict[str, Any]]:
            with self._errors(f"{'creating' if method == 'create' else 'updating'} {len(part)} {kind}"):
                out = getattr(ep, method)(part)
            return [dict(r) for r in (out if isinstance(out, list) else [out])]

        return parallel(send, chunks(payloads, self.CHUNK.get(kind, self.chunk)), self.workers)

    def _choice_set(self, kind: str, field: str) -> set[str]:
        key = f"{kind}.{field}"
        if key not in self._choices:
            with self._errors(f"reading the {kind} {field} choices"):
                self._choices[key] = {c["value"] for c in self._ep(kind).choices().get(field, [])}
        return self._choices[key]

    def _known_types(self, desired: Desired) -> None:
        """Interface types the server lacks become `other` (so a re-read compares equal)."""
        types = self._choice_set("interface", "type")
        for kind in ("interface", "interface_template"):
            for obj in desired.of(kind).values():
                if obj.fields["type"] not in types:
                    obj.fields["type"] = "other"

    # ------------------------------------------------------------------ ownership

    def _owned(self, rec: dict[str, Any]) -> tuple[bool, tuple[Any, ...]]:
        tags = rec.get("tags") or []
        ids = tuple(t["id"] if isinstance(t, dict) else t for t in tags)
        named = any(isinstance(t, dict) and (t.get("slug") == TAG or t.get("name") == TAG) for t in tags)
        return named or (self.tag_id is not None and self.tag_id in ids), ids

    def _tags(self, found: Found | None) -> list[Any]:
        have = list(found.ref[1]) if found is not None and found.ref else []
        return have if self.tag_id in have else [*have, self.tag_id]

    # ------------------------------------------------------------------ Provider

    def read(self, kind: str, want: dict[str, Obj]) -> dict[str, Found]:
        if kind in self.SCOPED and not self.site_id:
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
            self.site_id = site.ref[0] if site else None
        return out

    def _read_named(self, kind: str, want: dict[str, Obj]) -> list[Found]:
        raise NotImplementedError

    def _payload(self, obj: Obj, found: Found | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def create(self, kind: str, objs: list[Obj]) -> None:
        recs = self._write(kind, [self._payload(o) for o in objs], "create")
        for obj, rec in zip(objs, recs, strict=True):
            self.ids[kind][obj.key] = rec["id"]
            self._created(kind, obj, rec)

    def _created(self, kind: str, obj: Obj, rec: dict[str, Any]) -> None:
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
            body["id"] = found.ref[0]
            payloads.append(body)
        self._write(kind, payloads, "update")

    def _ensure_tag(self, desired: Desired) -> int:
        """The tag, created ahead of the kinds when a supporting object needs it first."""
        if self.tag_id is not None or self.read("tag", desired.of("tag")):
            return 0
        self.create("tag", list(desired.of("tag").values()))
        return 1
