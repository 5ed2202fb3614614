"""Validate SONiC config_db.json files against SONiC's own YANG models (libyang).

Why: SONiC only rejects a bad config_db entry at runtime (or silently ignores it), so a
generated fabric must pass the same YANG models that `config apply-patch` / GCU use
before it ever reaches a switch.

How:
* All modules of a SONiC `sonic-yang-models` folder (``yang-models/`` plus the rendered
  templates in ``yang-rendered/``; rendered here on the fly from ``yang-templates/`` when
  a plain SONiC checkout lacks them) are loaded into ONE libyang context, so must/when
  expressions that reach into other modules (mostly DEVICE_METADATA) are evaluated.
  The context is built once per process and reused for every file.
* Native config_db (``{"PORT": {"Ethernet0": {...}}}``) is translated into YANG-JSON
  instance data using only the loaded schema: module -> top container -> table
  container -> list(s) or container(s).  A table with several lists is split by key
  shape (the number of ``|``-separated parts equals the list's key count); a key equal
  to a container name (``localhost``, ``GLOBAL``, ``PFCWD``) selects that container; a
  list whose only payload is a nested one-key/one-leaf list (the QoS maps,
  CABLE_LENGTH) takes the entry's fields as nested entries.  config_db strings are
  re-typed per leaf type as RFC 7951 wants: (u)int8..32 -> JSON number, (u)int64 and
  decimal64 -> string, boolean -> true/false, empty -> [null]; union members are
  resolved by libyang itself (``lyd_value_validate``), leaf-lists accept a JSON list or
  a comma-separated string (";" where SONiC says so: NTP src_intf).
* libyang stops at the first data error, so validation loops: report the error at its
  config_db JSON pointer, drop the offending leaf/entry from the instance data, parse
  again.  Errors that merely follow from one already reported (leafrefs to a dropped
  entry, musts comparing with a dropped leaf) are not reported again.  A key that fails
  its type is located by checking the candidate entries' keys with libyang.

Table -> (module, lists) mapping found in the vendored models (sonic-buildimage
086b03bd70f9) for the tables fabricgen renders:

    DEVICE_METADATA           sonic-device_metadata  containers localhost, bmc
    PORT                      sonic-port             PORT_LIST[name]
    INTERFACE                 sonic-interface        INTERFACE_LIST[name] | INTERFACE_IPPREFIX_LIST[name,ip-prefix]
    LOOPBACK_INTERFACE        sonic-loopback-interface  LOOPBACK_INTERFACE_LIST[name]
                                                     | LOOPBACK_INTERFACE_IPPREFIX_LIST[name,ip-prefix]
    BGP_NEIGHBOR              sonic-bgp-neighbor     BGP_NEIGHBOR_TEMPLATE_LIST[neighbor] ("198.18.1.1")
                                                     | BGP_NEIGHBOR_LIST[vrf_name,neighbor] ("default|198.18.1.1",
                                                       vrf_name must exist in BGP_GLOBALS or VNET)
    DSCP_TO_TC_MAP            sonic-dscp-tc-map      DSCP_TO_TC_MAP_LIST[name] / DSCP_TO_TC_MAP[dscp] tc
    TC_TO_QUEUE_MAP           sonic-tc-queue-map     TC_TO_QUEUE_MAP_LIST[name] / TC_TO_QUEUE_MAP[tc] qindex
    TC_TO_PRIORITY_GROUP_MAP  sonic-tc-priority-group-map  ..._LIST[name] / TC_TO_PRIORITY_GROUP_MAP[tc] pg
    MAP_PFC_PRIORITY_TO_QUEUE sonic-pfc-priority-queue-map ..._LIST[name] / ..._QUEUE[pfc_priority] qindex
    PORT_QOS_MAP              sonic-port-qos-map     PORT_QOS_MAP_LIST[ifname]   (ifname: a port or "global")
    QUEUE                     sonic-queue            QUEUE_LIST[ifname,qindex] | VOQ_QUEUE_LIST[4 keys]
    SCHEDULER                 sonic-scheduler        SCHEDULER_LIST[name]
    WRED_PROFILE              sonic-wred-profile     WRED_PROFILE_LIST[name]
    BUFFER_POOL               sonic-buffer-pool      BUFFER_POOL_LIST[name]
    BUFFER_PROFILE            sonic-buffer-profile   BUFFER_PROFILE_LIST[name]
    BUFFER_PG                 sonic-buffer-pg        BUFFER_PG_LIST[port,pg_num]
    BUFFER_QUEUE              sonic-buffer-queue     BUFFER_QUEUE_LIST[port,qindex] | VOQ_BUFFER_QUEUE_LIST[4 keys]
    CABLE_LENGTH              sonic-cable-length     CABLE_LENGTH_LIST[name] / CABLE_LENGTH[port] length
    PFC_WD                    sonic-pfcwd            PFC_WD_LIST[ifname]   (ifname: a port or "GLOBAL")
    SWITCH_HASH               sonic-hash             container GLOBAL
    FLEX_COUNTER_TABLE        sonic-flex_counter     one container per counter group (PFCWD, QUEUE, WRED_ECN_QUEUE, ...)
    DEVICE_NEIGHBOR           sonic-device_neighbor  DEVICE_NEIGHBOR_LIST[peer_name]  (native key = local port)
    LOOPBACK                  (none: no model defines it -> reported as "table not covered")

(A / B = nested list: each config_db field of an A entry is one B entry, key = field name.)
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from fabricgen.base.findings import Finding, Severity
from fabricgen.catalog.rules import ids
from fabricgen.check.yang_models import ENV_VAR as ENV_VAR  # re-exported: where the models are looked for
from fabricgen.check.yang_models import ReleaseModels, find_models, for_release
from fabricgen.check.yang_models import SonicYangSetupError as SonicYangSetupError

(RULE,) = ids("config", "sonic-yang")
MAX_ERRORS_PER_FILE = 200
# Below this many files a process pool costs more (one context per worker) than it saves.
_POOL_MIN_FILES = 16


def resolve_yang_dir(yang_dir: Path | str | None = None, release: str | None = None) -> Path:
    """The models folder: `yang_dir` if given, else $FABRICGEN_SONIC_YANG, else the fetched cache
    (check.yang_models); within it, `release`'s models where present (`yang_models.for_release`).
    SonicYangSetupError if none holds models."""
    return release_models(yang_dir, release).path


def release_models(yang_dir: Path | str | None = None, release: str | None = None) -> ReleaseModels:
    """Which models the check uses for a SONiC release, and where the release's own were looked for."""
    return for_release(find_models(yang_dir), release)


def _render_templates(templates: Path, out: Path) -> None:
    """Render sonic-types & co. like SONiC's own packaging does (yang_model_type="py")."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), trim_blocks=True)
    for tpl in sorted(templates.glob("*.yang.j2")):
        (out / tpl.name[: -len(".j2")]).write_text(env.get_template(tpl.name).render(yang_model_type="py"))


def _module_files(root: Path, scratch: Path) -> list[Path]:
    """Every .yang file to load: yang-models/, yang-rendered/ (or templates rendered into scratch)."""
    dirs = [d for d in (root / "yang-models", root / "yang-rendered") if d.is_dir()] or [root]
    files = [f for d in dirs for f in sorted(d.glob("*.yang"))]
    if not any(f.name.startswith("sonic-types") for f in files) and (root / "yang-templates").is_dir():
        _render_templates(root / "yang-templates", scratch)
        files += sorted(scratch.glob("*.yang"))
    if not any(f.name.startswith("sonic-types") for f in files):
        raise SonicYangSetupError(
            f"{root}: sonic-types.yang is missing (neither yang-rendered/ nor yang-templates/ provides it) "
            "(fix: use a complete sonic-yang-models folder: `make sonic-yang` fetches one)"
        )
    return files


# --------------------------------------------------------------------------- schema index


@dataclass
class _Leaf:
    """How one leaf's config_db string becomes a YANG-JSON value, and how to explain its errors."""

    name: str
    kind: str  # "num" | "str" | "bool" | "empty" | "union"
    is_list: bool
    snode: Any  # compiled schema node (cdata), needed for union resolution
    hint: str = ""  # allowed values/range (the leaf's own restrictions; typedef ones are not visible)
    refs: tuple[str, ...] = ()  # leafref targets as prefix-free absolute schema paths
    musts: tuple[str, ...] = ()  # must expressions, to spot errors that follow from a dropped leaf
    union_cache: dict[str, str] = field(default_factory=dict)
    separator: str = ","  # a leaf-list that config_db holds as one string: its delimiter


# Leaf-lists that config_db stores as one string with a delimiter other than ",": SONiC's own
# exceptions (sonic-yang-mgmt, sonic_yang_ext.LEAF_LIST_WITH_STRING_VALUE_DICT).
STRING_LEAF_LIST_SEPARATORS = {("NTP", "src_intf"): ";"}


def _separators(table: str, leaves: dict[str, _Leaf]) -> dict[str, _Leaf]:
    for name, leaf in leaves.items():
        leaf.separator = STRING_LEAF_LIST_SEPARATORS.get((table, name), leaf.separator)
    return leaves


@dataclass
class _Inner:
    """A nested one-key list whose entries are the native entry's fields (QoS maps, CABLE_LENGTH)."""

    name: str
    key: _Leaf
    value: _Leaf | None


def _plain(leaves: dict[str, _Leaf], keys: tuple[str, ...]) -> dict[str, bool]:
    """Fields a config_db string converts without a look at the leaf: name -> True for a JSON number."""
    return {name: leaf.kind == "num" for name, leaf in leaves.items()
            if leaf.kind in ("str", "num") and not leaf.is_list and name not in keys}


@dataclass
class _List:
    name: str
    keys: tuple[str, ...]
    leaves: dict[str, _Leaf]
    inner: _Inner | None = None
    str_keys: bool = False  # every key leaf is a plain string: the key parts go in as they are
    plain: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.str_keys = all(self.leaves[k].kind == "str" for k in self.keys)
        self.plain = _plain(self.leaves, self.keys)


@dataclass
class _Container:
    name: str
    leaves: dict[str, _Leaf]
    plain: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.plain = _plain(self.leaves, ())


@dataclass
class _Table:
    name: str
    module: str
    top: str
    lists: dict[int, _List]  # by key count
    containers: dict[str, _Container]

    def shapes(self) -> str:
        forms = ["|".join(lst.keys) for lst in self.lists.values()] + list(self.containers)
        return " or ".join(repr(f) for f in forms)


def _strip_prefixes(path: str) -> str:
    """'/dtm:sonic-dscp-tc-map/dtm:X[..]' -> '/sonic-dscp-tc-map/X' (predicates dropped)."""
    return "/".join(part.split(":")[-1] for part in re.sub(r"\[[^\]]*\]", "", path).split("/"))


def _absolute(ref: str, leaf_path: str) -> str:
    """Resolve a leafref path relative to its leaf ('../../X_LIST/name') into an absolute one."""
    ref = _strip_prefixes(ref)
    if ref.startswith("/"):
        return ref
    parts = leaf_path.strip("/").split("/")
    for seg in ref.split("/"):
        if seg == "..":
            parts.pop()
        elif seg not in ("", "."):
            parts.append(seg)
    return "/" + "/".join(parts)


def _ref_table(ref: str) -> str:
    """'/sonic-port/PORT/PORT_LIST/name' -> 'PORT' (with the list name when a table has several)."""
    parts = ref.strip("/").split("/")
    if len(parts) >= 3 and parts[2] != parts[1] + "_LIST":
        return f"{parts[1]} ({parts[2]})"
    return parts[1] if len(parts) > 1 else ref


def _describe(ltype: Any, leaf_path: str, refs: list[str]) -> str:
    """Short human text for what a type accepts; collects leafref targets on the way."""
    from _libyang import ffi
    from libyang.schema import Type
    from libyang.util import ly_array_iter

    base = ltype.base()
    if base == Type.LEAFREF:
        target = _absolute(ltype.leafref_path() or "", leaf_path)
        refs.append(target)
        return f"a {_ref_table(target)} key"
    if base == Type.UNION:
        parsed = ltype.cdata_parsed
        members = list(ly_array_iter(parsed.types)) if parsed is not None and parsed.types != ffi.NULL else []  # type: ignore[no-untyped-call]
        texts = []
        for i, member in enumerate(ltype.union_types()):
            typed = Type(ltype.context, member.cdata, members[i] if i < len(members) else None)
            texts.append(_describe(typed, leaf_path, refs))
        name = ltype.name()
        return name if name not in ("union", "") and not members else " or ".join(t for t in texts if t)
    if base == Type.BOOL:
        return "'true' or 'false'"
    if base in Type.NUM_TYPES:
        rng = ltype.range()
        return f"{ltype.basename()} {rng}" if rng else ""
    if base == Type.ENUM:
        names = [e.name() for e in ltype.enums()]
        return "one of " + ", ".join(names) if len(names) <= 32 else ""
    if base == Type.STRING:
        pats = [p for p, invert in ltype.patterns() if not invert]
        if pats and len(pats[-1]) <= 60:
            return f"'{pats[-1]}'"
        name = ltype.name()
        return name if name != "string" else ""
    return ""


def _json_kind(base: int) -> str:
    """RFC 7951 JSON encoding of a built-in type: numbers up to 32 bits, booleans, empty; else a string."""
    from libyang.schema import Type

    if base in (Type.INT8, Type.INT16, Type.INT32, Type.UINT8, Type.UINT16, Type.UINT32):
        return "num"
    if base == Type.BOOL:
        return "bool"
    if base == Type.EMPTY:
        return "empty"
    return "str"  # (u)int64, decimal64, string, enumeration, bits, identityref, ...


def _leaf_info(snode: Any, leaf_path: str) -> _Leaf:
    """Pick the JSON encoding from the compiled leaf type (RFC 7951 section 6)."""
    from libyang.schema import SLeafList, Type

    ltype = snode.type()
    base = ltype.base()
    if base == Type.LEAFREF:
        target = ltype.leafref_type()
        if target is not None:
            base = target.base()
    kind = "union" if base == Type.UNION else _json_kind(base)
    refs: list[str] = []
    hint = _describe(ltype, leaf_path, refs)
    musts = tuple(snode.must_conditions())
    return _Leaf(snode.name(), kind, isinstance(snode, SLeafList), snode.cdata, hint, tuple(refs), musts)


def _leaves(node: Any, path: str) -> dict[str, _Leaf]:
    from libyang.schema import SLeaf, SLeafList

    return {c.name(): _leaf_info(c, f"{path}/{c.name()}") for c in node.children() if isinstance(c, SLeaf | SLeafList)}


def _list_keys(node: Any) -> tuple[str, ...]:
    return tuple(k.name() for k in node.keys())  # noqa: SIM118 - libyang's keys(), not a dict's


def _build_tables(ctx: Any) -> dict[str, _Table]:
    """Walk every implemented module: top container -> table containers -> lists/containers."""
    from libyang.schema import SContainer, SList

    tables: dict[str, _Table] = {}
    for mod in ctx:
        for top in mod.children():
            if not isinstance(top, SContainer):
                continue
            for tbl in top.children():
                if not isinstance(tbl, SContainer):
                    continue
                table = _Table(tbl.name(), mod.name(), top.name(), {}, {})
                base = f"/{top.name()}/{tbl.name()}"
                for child in tbl.children():
                    if isinstance(child, SList):
                        lpath = f"{base}/{child.name()}"
                        lst = _List(child.name(), _list_keys(child), _separators(tbl.name(), _leaves(child, lpath)))
                        nested = [c for c in child.children() if isinstance(c, SList)]
                        if len(nested) == 1 and set(lst.leaves) == set(lst.keys):
                            inner = nested[0]
                            ikeys = _list_keys(inner)
                            ileaves = _leaves(inner, f"{lpath}/{inner.name()}")
                            others = [v for k, v in ileaves.items() if k not in ikeys]
                            if len(ikeys) == 1 and len(others) <= 1:
                                value = others[0] if others else None
                                lst.inner = _Inner(inner.name(), ileaves[ikeys[0]], value)
                        # Two lists with the same key count would make the split ambiguous;
                        # none exists in the SONiC models, keep the first if one appears.
                        table.lists.setdefault(len(lst.keys), lst)
                    elif isinstance(child, SContainer):
                        table.containers[child.name()] = _Container(
                            child.name(), _separators(tbl.name(), _leaves(child, f"{base}/{child.name()}"))
                        )
                if table.lists or table.containers:
                    tables.setdefault(table.name, table)
    return tables


# --------------------------------------------------------------------------- helpers


def pointer(*parts: str) -> str:
    """RFC 6901 JSON pointer (the form GCU's apply-patch uses): '/' -> '~1', '~' -> '~0'."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def device_name(config_db: Any, path: Path | str) -> str:
    """Hostname from DEVICE_METADATA.localhost, else the file's directory name."""
    meta = config_db.get("DEVICE_METADATA") if isinstance(config_db, dict) else None
    local = meta.get("localhost") if isinstance(meta, dict) else None
    host = local.get("hostname") if isinstance(local, dict) else None
    if isinstance(host, str) and host:
        return host
    return Path(path).resolve().parent.name or str(path)


def _as_text(value: Any) -> str:
    """What Redis ends up holding: sonic-cfggen writes str(value), so True becomes "True"."""
    return value if isinstance(value, str) else str(value)


def _same_value(data_value: Any, path_value: str) -> bool:
    """Compare a key in our instance data with libyang's canonical rendering of it."""
    mine = _as_text(data_value)
    if mine == path_value:
        return True
    for conv in (ipaddress.ip_address, ipaddress.ip_interface):
        try:
            return str(conv(mine)) == str(conv(path_value))
        except ValueError:
            continue
    return mine.lower() == path_value.lower()


_SEG = re.compile(r"/([^/\[]+)((?:\[(?:[^\]'\"]|'[^']*'|\"[^\"]*\")*\])*)")
_PRED = re.compile(r"\[\s*([^=\]]+?)\s*=\s*(?:'([^']*)'|\"([^\"]*)\")\s*\]|\[(\d+)\]")


def _parse_path(path: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Split a libyang data/schema path into (name, [(key, value), ...]) segments."""
    segs = []
    for m in _SEG.finditer(path):
        preds = []
        for p in _PRED.finditer(m.group(2) or ""):
            if p.group(4) is not None:
                preds.append(("#", p.group(4)))
            else:
                preds.append((p.group(1), p.group(2) if p.group(2) is not None else p.group(3)))
        segs.append((m.group(1), preds))
    return segs


# --------------------------------------------------------------------------- conversion


@dataclass
class _Converted:
    """YANG-JSON instance data plus what is needed to map errors back to config_db."""

    data: dict[str, Any]
    origin: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id(entry/container) -> config_db path
    keys: dict[int, tuple[str, ...]] = field(default_factory=dict)  # id(list entry) -> its key leaf names
    inner: set[int] = field(default_factory=set)  # nested map entries: all their leaves are one native field
    findings: list[tuple[str, str, Severity]] = field(default_factory=list)  # found while converting


@dataclass
class _Step:
    """One hop of a path through the instance data: obj sits at holder[index]."""

    name: str
    holder: Any
    index: Any
    obj: Any


@dataclass
class _LoopState:
    dropped_leaves: set[tuple[int, str]] = field(default_factory=set)
    dropped_names: set[str] = field(default_factory=set)
    dropped_keys: set[tuple[str, str]] = field(default_factory=set)  # (list key schema path, value)


class SonicYangValidator:
    """One libyang context with every SONiC module; validate many config_db dicts with it."""

    def __init__(self, yang_dir: Path | None = None) -> None:
        import libyang

        self.yang_dir = resolve_yang_dir(yang_dir)
        self._ensure_logging()
        with tempfile.TemporaryDirectory(prefix="fabricgen-yang-") as scratch:
            files = _module_files(self.yang_dir, Path(scratch))
            search = ":".join(sorted({str(f.parent) for f in files}))
            self.ctx = libyang.Context(search)
            for f in files:
                try:
                    self.ctx.load_module(f.name.split("@")[0].removesuffix(".yang"))
                except libyang.LibyangError as exc:
                    raise SonicYangSetupError(f"{f}: libyang cannot load this YANG module: {exc} (fix: use the "
                                              "models of the pinned commit: `make sonic-yang`)") from exc
        self.tables = _build_tables(self.ctx)

    @staticmethod
    def _ensure_logging() -> None:
        """libyang only records error paths while logging is on; send its log to a silent logger."""
        import libyang

        logging.getLogger("libyang").propagate = False
        libyang.configure_logging(True, logging.ERROR)

    # ---------------------------------------------------------------- typing values

    def _encode(self, leaf: _Leaf, value: Any) -> Any:
        """config_db value -> YANG-JSON value for this leaf (see module docstring)."""
        if leaf.is_list:
            items = value if isinstance(value, list) else [v for v in _as_text(value).split(leaf.separator) if v]
            return [self._scalar(leaf, v) for v in items]
        return self._scalar(leaf, value)

    def _scalar(self, leaf: _Leaf, value: Any) -> Any:
        text = _as_text(value)
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

    def _union_kind(self, leaf: _Leaf, text: str) -> str:
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
            kind = _json_kind(base)
        leaf.union_cache[text] = kind
        return kind

    # ---------------------------------------------------------------- config_db -> YANG-JSON

    def convert(self, config_db: dict[str, Any]) -> _Converted:
        """Translate native config_db into YANG-JSON, noting what cannot be translated."""
        conv = _Converted({})
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

    def _convert_entry(self, conv: _Converted, table: _Table, tdata: dict[str, Any], key: str, fields: Any) -> None:
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
    def _check_scalar(conv: _Converted, where: tuple[str, ...], value: Any) -> bool:
        """config_db holds strings: warn on numbers/booleans (Redis gets str(value): True -> "True")."""
        if isinstance(value, str):
            return True
        if isinstance(value, dict | list) or value is None:
            msg = f"must be a string, not {type(value).__name__}"
            conv.findings.append((pointer(*where), msg, "error"))
            return False
        msg = f"value {json.dumps(value)} is not a string; SONiC stores {_as_text(value)!r}: write it as a string"
        conv.findings.append((pointer(*where), msg, "warning"))
        return True

    def _convert_fields(
        self,
        conv: _Converted,
        leaves: dict[str, _Leaf],
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
                if fname in keys and _as_text(fval) == _as_text(out.get(fname)):
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

    # ---------------------------------------------------------------- validation loop

    def validate(self, config_db: dict[str, Any], device: str, file: str) -> list[Finding]:
        """All YANG errors of one config_db, each located by JSON pointer into config_db."""
        if not isinstance(config_db, dict):
            return [Finding(device, file, "", RULE, "config_db must be a JSON object of tables")]
        self._ensure_logging()
        conv = self.convert(config_db)
        out = [Finding(device, file, loc, RULE, msg, sev) for loc, msg, sev in conv.findings]
        state = _LoopState()
        for _ in range(MAX_ERRORS_PER_FILE):
            err = self._parse(conv.data) if conv.data else None
            if err is None:
                break
            report, progressed = self._resolve(conv, state, *err)
            out.extend(Finding(device, file, loc, RULE, msg) for loc, msg in report)
            if not progressed:
                break
        else:
            out.append(Finding(device, file, "", RULE, f"more than {MAX_ERRORS_PER_FILE} YANG errors; stopped here"))
        return out

    def _parse(self, data: dict[str, Any]) -> tuple[str, str, str] | None:
        """Parse+validate once; None when valid, else libyang's first (message, location, app-tag)."""
        from _libyang import ffi, lib

        try:
            raw = orjson.dumps(data)
        except TypeError:  # an integer beyond 64 bits: let libyang report it out of range
            raw = json.dumps(data, separators=(",", ":")).encode()
        inp = ffi.new("struct ly_in **")
        if lib.ly_in_new_memory(raw, inp) != lib.LY_SUCCESS:
            raise MemoryError("libyang: cannot create input")
        tree = ffi.new("struct lyd_node **")
        try:
            flags = lib.LYD_PARSE_STRICT  # unknown nodes are errors, never silently dropped
            ret = lib.lyd_parse_data(
                self.ctx.cdata, ffi.NULL, inp[0], lib.LYD_JSON, flags, lib.LYD_VALIDATE_PRESENT, tree
            )
        finally:
            lib.ly_in_free(inp[0], 0)
            if tree[0] != ffi.NULL:
                lib.lyd_free_all(tree[0])
        first: tuple[str, str, str] | None = None
        err = lib.ly_err_first(self.ctx.cdata)
        while err != ffi.NULL and first is None:
            if err.level == lib.LY_LLERR and err.msg != ffi.NULL:
                first = (
                    ffi.string(err.msg).decode(errors="replace"),
                    ffi.string(err.path).decode(errors="replace") if err.path != ffi.NULL else "",
                    ffi.string(err.apptag).decode(errors="replace") if err.apptag != ffi.NULL else "",
                )
            err = err.next
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)
        if ret == lib.LY_SUCCESS:
            return None
        return first or (f"libyang error {ret}", "", "")

    def _resolve(
        self, conv: _Converted, state: _LoopState, msg: str, where: str, apptag: str
    ) -> tuple[list[tuple[str, str]], bool]:
        """Turn one libyang error into findings and drop the offending node so the next parse gets further."""
        data_m = re.search(r'[Dd]ata location "(.*)"(?:, line number \d+)?\.?\s*$', where)
        if data_m:
            return self._resolve_data(conv, state, msg, data_m.group(1), apptag)
        schema_m = re.search(r'[Ss]chema location "([^"]*)"', where)
        if schema_m:
            return self._resolve_schema(conv, state, msg, schema_m.group(1))
        return [("", f"{msg} {where}".strip())], False

    def _resolve_data(
        self, conv: _Converted, state: _LoopState, msg: str, path: str, apptag: str
    ) -> tuple[list[tuple[str, str]], bool]:
        steps = self._walk(conv, _parse_path(path))
        if not steps:
            return [("", f"{msg} (at {path})")], False
        last = steps[-1]
        entry_step = next((s for s in reversed(steps) if isinstance(s.obj, dict)), None)
        entry = entry_step.obj if entry_step else None
        origin = conv.origin.get(id(entry), ()) if entry is not None else ()
        is_leaf = not isinstance(last.obj, dict)
        is_key = is_leaf and last.name in conv.keys.get(id(entry), ())
        loc = origin
        if is_leaf and not is_key and id(entry) not in conv.inner:
            loc = (*origin, last.name)
        unknown = re.match(r'Node "(.+?)" not found as a child of', msg)
        if unknown and not is_leaf:
            loc = (*origin, unknown.group(1))
        leaf = self._leaf_for([s.name for s in steps]) if is_leaf else None
        value = last.obj if is_leaf and not isinstance(last.obj, list) else None
        report: list[tuple[str, str]] = []
        if not self._follows(state, leaf, value, apptag):
            report.append((pointer(*loc), self._explain(leaf, value, msg, apptag)))
        return report, self._drop(conv, state, steps)

    @staticmethod
    def _follows(state: _LoopState, leaf: _Leaf | None, value: Any, apptag: str) -> bool:
        """An error that only follows from one already reported (and dropped), so not worth a finding.

        A reference to an entry dropped for its own error, or a must that compares with a
        leaf dropped for its own error (e.g. detection_time >= a bad GLOBAL POLL_INTERVAL).
        """
        if leaf is None:
            return False
        if value is not None and any((ref, _as_text(value)) in state.dropped_keys for ref in leaf.refs):
            return True
        if apptag == "must-violation" and state.dropped_names:
            words = {w for m in leaf.musts for w in re.findall(r"[A-Za-z_][\w-]*", m)}
            return bool(words & state.dropped_names)
        return False

    @staticmethod
    def _explain(leaf: _Leaf | None, value: Any, msg: str, apptag: str) -> str:
        """libyang's message, made concrete for references and terse type errors."""
        if leaf is None:
            return msg
        if leaf.refs and value is not None and (msg.startswith("Invalid leafref") or msg.startswith("Invalid union")):
            return f'{leaf.name} "{_as_text(value)}" is not {leaf.hint}'
        if apptag == "must-violation" or msg.startswith(("Must condition", "When condition", "Mandatory")):
            return msg
        if leaf.hint and leaf.hint.strip("'") not in msg and not leaf.refs:
            return f"{msg.rstrip('.')} (expected {leaf.hint})"
        return msg

    def _leaf_for(self, names: list[str]) -> _Leaf | None:
        """The leaf at a data path given as node names (module:top, table, list/container, ..., leaf)."""
        if len(names) < 4:
            return None
        table = self.tables.get(names[1])
        if table is None:
            return None
        if names[2] in table.containers:
            return table.containers[names[2]].leaves.get(names[-1])
        for lst in table.lists.values():
            if lst.name == names[2]:
                if lst.inner is not None and len(names) > 4:
                    inner = lst.inner
                    return inner.key if names[-1] == inner.key.name else inner.value
                return lst.leaves.get(names[-1])
        return None

    def _walk(self, conv: _Converted, segs: list[tuple[str, list[tuple[str, str]]]]) -> list[_Step]:
        """Follow a libyang data path through our instance data as far as it matches."""
        steps: list[_Step] = []
        node: Any = conv.data
        for i, (name, preds) in enumerate(segs):
            if not isinstance(node, dict) or name not in node:
                break
            val = node[name]
            if isinstance(val, list) and val and all(isinstance(v, dict) for v in val):
                nxt = segs[i + 1][0] if i + 1 < len(segs) else None
                j = self._pick(conv, [*(s.name for s in steps), name], val, preds, nxt)
                if j is None:
                    break
                steps.append(_Step(name, val, j, val[j]))
                node = val[j]
                continue
            if isinstance(val, list):  # leaf-list: [.='x'] or [n] picks one item, else the whole field
                pos = None
                for k, v in preds:
                    if k == "#" and 0 < int(v) <= len(val):
                        pos = int(v) - 1
                    elif k == ".":
                        pos = next((j for j, x in enumerate(val) if _same_value(x, v)), None)
                steps.append(_Step(name, node, name, val) if pos is None else _Step(name, val, pos, val[pos]))
                break
            steps.append(_Step(name, node, name, val))
            node = val
        return steps

    def _pick(
        self, conv: _Converted, names: list[str], entries: list[Any], preds: list[tuple[str, str]], nxt: str | None
    ) -> int | None:
        """Index of the list entry a path step means.

        A key that fails its type stops libyang before the entry exists, so the path
        names only the keys parsed so far ([port='Ethernet0']/pg_num): among the entries
        matching those, take the one whose next key is the invalid value.
        """
        matches = [
            j for j, e in enumerate(entries) if all(k == "#" or (k in e and _same_value(e[k], v)) for k, v in preds)
        ]
        if not matches:
            return None
        if nxt is not None and nxt in conv.keys.get(id(entries[matches[0]]), ()) and nxt not in dict(preds):
            leaf = self._leaf_for([*names, nxt])
            for j in matches:
                if leaf is not None and not self._valid_value(leaf, entries[j].get(nxt)):
                    return j
        return matches[0]

    def _valid_value(self, leaf: _Leaf, value: Any) -> bool:
        """Does the value pass the leaf's type (leafref targets are not looked up)?"""
        from _libyang import ffi, lib

        raw = _as_text(value).encode()
        ret = lib.lyd_value_validate(self.ctx.cdata, leaf.snode, raw, len(raw), ffi.NULL, ffi.NULL, ffi.NULL)
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)
        return bool(ret in (lib.LY_SUCCESS, lib.LY_EINCOMPLETE))

    def _drop(self, conv: _Converted, state: _LoopState, steps: list[_Step]) -> bool:
        """Remove the failing leaf, or its whole entry when the leaf is a key or the error is on the entry."""
        last = steps[-1]
        if not isinstance(last.obj, dict):  # a leaf, a whole leaf-list or one leaf-list item
            entry = steps[-2].obj if len(steps) >= 2 else None
            if isinstance(entry, dict) and last.name in conv.keys.get(id(entry), ()):
                steps = steps[:-1]  # a bad key: the entry cannot exist without it
            else:
                if isinstance(last.holder, list):
                    last.holder.pop(last.index)
                    if not last.holder and isinstance(entry, dict):
                        entry.pop(last.name, None)
                else:
                    del last.holder[last.index]
                state.dropped_leaves.add((id(entry), last.name))
                state.dropped_names.add(last.name)
                return True
        while steps:
            step = steps[-1]
            holder = step.holder
            if isinstance(holder, list):  # a list entry: remember its keys, then remove it
                names = "/".join(s.name.split(":")[-1] for s in steps)
                for k in conv.keys.get(id(step.obj), ()):
                    if k in step.obj:
                        state.dropped_keys.add((f"/{names}/{k}", _as_text(step.obj[k])))
                holder[:] = [o for o in holder if o is not step.obj]
                if holder:
                    return True
                parent = steps[-2].obj if len(steps) >= 2 else conv.data
                for name in [n for n, v in parent.items() if v is holder]:
                    del parent[name]
                steps = steps[:-1]
                if parent or parent is conv.data:
                    return True
                continue  # the table is empty now: remove it from its module too
            holder.pop(step.index, None)
            if holder or holder is conv.data:
                return True
            steps = steps[:-1]
        return True

    def _resolve_schema(
        self, conv: _Converted, state: _LoopState, msg: str, path: str
    ) -> tuple[list[tuple[str, str]], bool]:
        """Schema-only locations (a missing mandatory leaf): find every instance lacking it."""
        segs = [name for name, _ in _parse_path(path)]
        missing = re.match(r'Mandatory node "(.+?)" instance does not exist', msg)
        if not missing or len(segs) < 2:
            return [("", f"{msg} (schema {path})")], False
        leaf = missing.group(1)
        report: list[tuple[str, str]] = []
        progressed = False
        for steps in list(_instances(conv.data, segs[:-1])):
            obj = steps[-1].obj
            if not isinstance(obj, dict) or leaf in obj:
                continue
            if (id(obj), leaf) not in state.dropped_leaves:
                report.append((pointer(*conv.origin.get(id(obj), ()), leaf), f"mandatory field {leaf!r} is missing"))
            progressed = self._drop(conv, state, steps) or progressed
        if not report and not progressed:
            report.append(("", f"{msg} (schema {path})"))
        return report, progressed


# --------------------------------------------------------------------------- walking instance data


def _instances(data: dict[str, Any], names: list[str]) -> Iterator[list[_Step]]:
    """Every instance (list entry or container) at a schema path, with the steps leading to it."""

    def rec(node: Any, i: int, steps: list[_Step]) -> Iterator[list[_Step]]:
        if i == len(names):
            yield steps
            return
        if not isinstance(node, dict) or names[i] not in node:
            return
        name = names[i]
        val = node[name]
        if isinstance(val, list):
            for j, e in enumerate(list(val)):
                if isinstance(e, dict):
                    yield from rec(e, i + 1, [*steps, _Step(name, val, j, e)])
        else:
            yield from rec(val, i + 1, [*steps, _Step(name, node, name, val)])

    yield from rec(data, 0, [])


# --------------------------------------------------------------------------- many files

_WORKER: SonicYangValidator | None = None


def _worker_init(yang_dir: str) -> None:
    global _WORKER
    _WORKER = SonicYangValidator(Path(yang_dir))


def check_sonic_file(validator: SonicYangValidator, path: Path, base: dict[str, Any] | None = None,
                     validate: Callable[[Any, str, str], list[Finding]] | None = None) -> list[Finding]:
    """Every finding of one config_db.json file (unreadable, not JSON, or YANG).

    `validate` replaces `validator.validate`: check.sonic_shapes.Shapes.validate runs libyang once per clean
    ConfigDB shape (that module says why a file of a clean shape then has exactly no findings).

    With `base` (the device-owned part: platforms.sonic_buffers.device_base) the file is fabricgen's
    part of a ConfigDB: what is validated is the merge of the two, as the SONiC driver pushes it
    (platforms.sonic_configdb.merge_owned); a table or field the device owns is a finding.
    """
    try:
        text = path.read_text()
    except OSError as exc:
        return [Finding(device_name(None, path), str(path), "", RULE, f"cannot read: {exc.strerror}")]
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        return [Finding(device_name(None, path), str(path), f"L{exc.lineno}", RULE, f"not valid JSON: {exc.msg}")]
    if base is not None and isinstance(config, dict):
        from fabricgen.platforms.sonic.configdb import OwnershipError, merge_owned

        try:
            config = merge_owned(base, config, check_references=False)  # libyang resolves the leafrefs
        except OwnershipError as exc:
            return [Finding(device_name(config, path), str(path), "", RULE, f"not deployable on the device: {exc}")]
    return (validate or validator.validate)(config, device_name(config, path), str(path))


def _check_in_worker(path: str) -> list[Finding]:
    assert _WORKER is not None
    return check_sonic_file(_WORKER, Path(path))


def check_sonic_configs(paths: list[Path], yang_dir: Path | None = None, workers: int | None = None) -> list[Finding]:
    """Validate many config_db.json files; one libyang context per worker process.

    `workers=None` uses every CPU once there are enough files to pay for the extra
    contexts (~0.35 s each); `workers=1` stays in this process.
    """
    root = resolve_yang_dir(yang_dir)
    if not paths:
        return []
    n = workers if workers is not None else (os.cpu_count() or 1)
    if workers is None and len(paths) < _POOL_MIN_FILES:
        n = 1
    n = max(1, min(n, len(paths)))
    if n == 1:
        validator = SonicYangValidator(root)
        return [f for p in paths for f in check_sonic_file(validator, Path(p))]
    chunk = max(1, min(64, len(paths) // (n * 4)))
    with ProcessPoolExecutor(max_workers=n, initializer=_worker_init, initargs=(str(root),)) as pool:
        results = pool.map(_check_in_worker, [str(p) for p in paths], chunksize=chunk)
        return [f for batch in results for f in batch]
