"""Native config_db (``{"PORT": {"Ethernet0": {...}}}``) -> YANG-JSON instance data libyang can parse, using
only the loaded schema (check.yang_schema's table index), noting what cannot be translated.

A table with several lists is split by key shape (the number of ``|``-separated parts equals the list's key
count); a key equal to a container name (``localhost``, ``GLOBAL``, ``PFCWD``) selects that container; a list
whose only payload is a nested one-key/one-leaf list (the QoS maps, CABLE_LENGTH) takes the entry's fields as
nested entries.  config_db strings are re-typed per leaf type as RFC 7951 wants: (u)int8..32 -> JSON number,
(u)int64 and decimal64 -> string, boolean -> true/false, empty -> [null]; union members are resolved by libyang
itself (``lyd_value_validate``), leaf-lists accept a JSON list or a comma-separated string (";" where SONiC
says so: NTP src_intf).  Each entry remembers its config_db path, so an error libyang reports on the instance
data is located in config_db (check.yang_errors).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fabricgen.base.findings import Severity
from fabricgen.check.yang_schema import Leaf, Table, json_kind


def pointer(*parts: str) -> str:
    """RFC 6901 JSON pointer (the form GCU's apply-patch uses): '/' -> '~1', '~' -> '~0'."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def as_text(value: Any) -> str:
    """What Redis ends up holding: sonic-cfggen writes str(value), so True becomes "True"."""
    return value if isinstance(value, str) else str(value)


@dataclass
class Converted:
    """YANG-JSON instance data plus what is needed to map errors back to config_db."""

    data: dict[str, Any]
    origin: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id(entry/container) -> config_db path
    keys: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id(list entry) -> its key leaf names
    inner: set[int] = field(default_factory=set)  # nested map entries: all their leaves are one native field
    findings: list[tuple[str, str, Severity]] = field(default_factory=list)  # found while converting


class ConfigDbToYang:
    """Native config_db -> YANG-JSON instance data, typed by the schema index of one libyang context."""

    def __init__(self, ctx: Any, tables: dict[str, Table]) -> None:
        self.ctx = ctx
        self.tables = tables

    # ---------------------------------------------------------------- typing values

    def _encode(self, leaf: Leaf, value: Any) -> Any:
        """config_db value -> YANG-JSON value for this leaf (see module docstring)."""
        if leaf.is_list:
            items = value if isinstance(value, list) else [v for v in as_text(value).split(leaf.separator) if v]
            return [self._scalar(leaf, v) for v in items]
        return self._scalar(leaf, value)

    def _scalar(self, leaf: Leaf, value: Any) -> Any:
        text = as_text(value)
        kind = leaf.kind
        if kind == "union":
            kind = leaf.union_cache.get(text) or self._union_kind(leaf, text)
        if kind == "num":
            try:
                return int(text, 10)
            except ValueError:
                return text  # libyang reports the bad value with its path
        if kind == "bool":
            return {"true": True, "false": False}.get(text, text)
        if kind == "empty":
            return [None]
        return text

    def _union_kind(self, leaf: Leaf, text: str) -> str:
        """Ask libyang which union member takes this value; encode for that member."""
        from _libyang import ffi, lib
        from libyang.schema import Type

        realtype = ffi.new("const struct lysc_type **")
        raw = text.encode()
        ret = lib.lyd_value_validate(self.ctx.cdata, leaf.snode, raw, len(raw), ffi.NULL, realtype, ffi.NULL)
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)
        kind = "str"
        if ret in (lib.LY_SUCCESS, lib.LY_EINCOMPLETE) and realtype[0] != ffi.NULL:
            base = realtype[0].basetype
            if base == Type.LEAFREF:
                base = ffi.cast("struct lysc_type_leafref *", realtype[0]).realtype.basetype
            kind = json_kind(base)
        leaf.union_cache[text] = kind
        return kind

    # ---------------------------------------------------------------- config_db -> YANG-JSON

    def convert(self, config_db: dict[str, Any]) -> Converted:
        """Translate native config_db into YANG-JSON, noting what cannot be translated."""
        conv = Converted({})
        for tname, entries in config_db.items():
            table = self.tables.get(tname)
            if table is None:
                msg = (
                    f"table {tname} not covered: no SONiC YANG model defines it, so it cannot be validated "
                    "(and SONiC would store it unchecked)"
                )
                conv.findings.append((pointer(tname), msg, "error"))
                continue
            if not isinstance(entries, dict):
                conv.findings.append((pointer(tname), f"table {tname} must be a JSON object of entries", "error"))
                continue
            module = conv.data.setdefault(f"{table.module}:{table.top}", {})
            tdata = module.setdefault(tname, {})
            conv.origin[id(tdata)] = (tname,)
            for key, fields in entries.items():
                self._convert_entry(conv, table, tdata, key, fields)
            if not tdata:
                del module[tname]
        for mname in [m for m, v in conv.data.items() if not v]:
            del conv.data[mname]
        return conv

    def _convert_entry(self, conv: Converted, table: Table, tdata: dict[str, Any], key: str, fields: Any) -> None:
        where = (table.name, key)
        if not isinstance(fields, dict):
            conv.findings.append((pointer(*where), "entry must be a JSON object of field: value", "error"))
            return
        if key in table.containers:
            cont = table.containers[key]
            out: dict[str, Any] = {}
            self._convert_fields(conv, cont.leaves, (), fields, out, where, f"{table.name}|{key}", cont.plain)
            tdata[key] = out
            conv.origin[id(out)] = where
            return
        parts = key.split("|")
        lst = table.lists.get(len(parts))
        if lst is None:
            msg = f"key {key!r} does not fit table {table.name}: expected {table.shapes()}"
            conv.findings.append((pointer(*where), msg, "error"))
            return
        if lst.str_keys:
            entry: dict[str, Any] = dict(zip(lst.keys, parts, strict=True))
        else:
            entry = {k: v if lst.leaves[k].kind == "str" else self._encode(lst.leaves[k], v)
                     for k, v in zip(lst.keys, parts, strict=True)}
        if lst.inner is not None:
            inner = lst.inner
            rows = []
            for fname, fval in fields.items():
                row = {inner.key.name: self._encode(inner.key, fname)}
                if inner.value is not None:
                    self._check_scalar(conv, (*where, fname), fval)
                    row[inner.value.name] = self._encode(inner.value, fval)
                rows.append(row)
                conv.origin[id(row)] = (*where, fname)
                conv.inner.add(id(row))
                conv.keys[id(row)] = (inner.key.name,)
            if rows:
                entry[inner.name] = rows
        else:
            self._convert_fields(conv, lst.leaves, lst.keys, fields, entry, where, lst.name, lst.plain)
        tdata.setdefault(lst.name, []).append(entry)
        conv.origin[id(entry)] = where
        conv.keys[id(entry)] = lst.keys

    @staticmethod
    def _check_scalar(conv: Converted, where: tuple[str, ...], value: Any) -> bool:
        """config_db holds strings: warn on numbers/booleans (Redis gets str(value): True -> "True")."""
        if isinstance(value, str):
            return True
        if isinstance(value, dict | list) or value is None:
            msg = f"must be a string, not {type(value).__name__}"
            conv.findings.append((pointer(*where), msg, "error"))
            return False
        msg = f"value {json.dumps(value)} is not a string; SONiC stores {as_text(value)!r}: write it as a string"
        conv.findings.append((pointer(*where), msg, "warning"))
        return True

    def _convert_fields(
        self,
        conv: Converted,
        leaves: dict[str, Leaf],
        keys: tuple[str, ...],
        fields: dict[str, Any],
        out: dict[str, Any],
        where: tuple[str, ...],
        what: str,
        plain: dict[str, bool],
    ) -> None:
        for fname, fval in fields.items():
            number = plain.get(fname)
            if number is not None and type(fval) is str:  # fast path: most fields of every table
                if not number:
                    out[fname] = fval
                    continue
                if fval.isascii() and fval.isdigit():
                    out[fname] = int(fval)
                    continue
            leaf = leaves.get(fname)
            here = (*where, fname)
            if leaf is None or fname in keys:
                if fname in keys and as_text(fval) == as_text(out.get(fname)):
                    continue  # a field repeating the key is harmless
                conv.findings.append(
                    (pointer(*here), f"unknown field {fname!r}: not in the YANG model of {what}", "error")
                )
                continue
            if leaf.is_list:
                # Both forms occur in SONiC: JSON lists (SWITCH_HASH) and comma strings (PORT adv_speeds).
                if isinstance(fval, list) and not all(isinstance(v, str) for v in fval):
                    conv.findings.append((pointer(*here), f"{fname} items must be strings", "warning"))
            elif not self._check_scalar(conv, here, fval):
                continue
            out[fname] = self._encode(leaf, fval)
