"""SONiC's YANG models loaded into one libyang context, and the index of config_db tables that context yields.

All modules of a SONiC `sonic-yang-models` folder (``yang-models/`` plus the rendered templates in
``yang-rendered/``; rendered here on the fly from ``yang-templates/`` when a plain SONiC checkout lacks them)
are loaded into ONE context, built once per process and reused for every file.  The index maps each
config_db table to module -> top container -> table container -> list(s) or container(s), and each leaf to
the JSON encoding RFC 7951 wants for it and the words that explain its errors (its range, pattern, enum or
the table its leafref points into).

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

import logging
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.check.yang_models import SonicYangSetupError


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


def load_context(yang_dir: Path) -> Any:
    """One libyang context holding every module of the folder, so the must/when expressions that reach into
    other modules (mostly DEVICE_METADATA) are evaluated; SonicYangSetupError names a module it cannot load."""
    import libyang

    quiet_libyang_log()
    with tempfile.TemporaryDirectory(prefix="fabricgen-yang-") as scratch:
        files = _module_files(yang_dir, Path(scratch))
        search = ":".join(sorted({str(f.parent) for f in files}))
        ctx = libyang.Context(search)
        for f in files:
            try:
                ctx.load_module(f.name.split("@")[0].removesuffix(".yang"))
            except libyang.LibyangError as exc:
                raise SonicYangSetupError(f"{f}: libyang cannot load this YANG module: {exc} (fix: use the "
                                          "models of the pinned commit: `make sonic-yang`)") from exc
    return ctx


def quiet_libyang_log() -> None:
    """libyang only records error paths while logging is on; send its log to a silent logger."""
    import libyang

    logging.getLogger("libyang").propagate = False
    libyang.configure_logging(True, logging.ERROR)


@dataclass
class Leaf:
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


def _separators(table: str, leaves: dict[str, Leaf]) -> dict[str, Leaf]:
    for name, leaf in leaves.items():
        leaf.separator = STRING_LEAF_LIST_SEPARATORS.get((table, name), leaf.separator)
    return leaves


@dataclass
class NestedList:
    """A nested one-key list whose entries are the native entry's fields (QoS maps, CABLE_LENGTH)."""

    name: str
    key: Leaf
    value: Leaf | None


def _plain(leaves: dict[str, Leaf], keys: tuple[str, ...]) -> dict[str, bool]:
    """Fields a config_db string converts without a look at the leaf: name -> True for a JSON number."""
    return {name: leaf.kind == "num" for name, leaf in leaves.items()
            if leaf.kind in ("str", "num") and not leaf.is_list and name not in keys}


@dataclass
class TableList:
    """A list of a table: its config_db keys split on "|" are the list keys."""

    name: str
    keys: tuple[str, ...]
    leaves: dict[str, Leaf]
    inner: NestedList | None = None
    str_keys: bool = False  # every key leaf is a plain string: the key parts go in as they are
    plain: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.str_keys = all(self.leaves[k].kind == "str" for k in self.keys)
        self.plain = _plain(self.leaves, self.keys)


@dataclass
class TableContainer:
    """A container of a table: the config_db key equal to its name selects it (localhost, GLOBAL, PFCWD)."""

    name: str
    leaves: dict[str, Leaf]
    plain: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.plain = _plain(self.leaves, ())


@dataclass
class Table:
    """A config_db table: its module and top container, its lists by key count, its containers by name."""

    name: str
    module: str
    top: str
    lists: dict[int, TableList]  # by key count
    containers: dict[str, TableContainer]

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


def json_kind(base: int) -> str:
    """RFC 7951 JSON encoding of a built-in type: numbers up to 32 bits, booleans, empty; else a string."""
    from libyang.schema import Type

    if base in (Type.INT8, Type.INT16, Type.INT32, Type.UINT8, Type.UINT16, Type.UINT32):
        return "num"
    if base == Type.BOOL:
        return "bool"
    if base == Type.EMPTY:
        return "empty"
    return "str"  # (u)int64, decimal64, string, enumeration, bits, identityref, ...


def _leaf_info(snode: Any, leaf_path: str) -> Leaf:
    """Pick the JSON encoding from the compiled leaf type (RFC 7951 section 6)."""
    from libyang.schema import SLeafList, Type

    ltype = snode.type()
    base = ltype.base()
    if base == Type.LEAFREF:
        target = ltype.leafref_type()
        if target is not None:
            base = target.base()
    kind = "union" if base == Type.UNION else json_kind(base)
    refs: list[str] = []
    hint = _describe(ltype, leaf_path, refs)
    musts = tuple(snode.must_conditions())
    return Leaf(snode.name(), kind, isinstance(snode, SLeafList), snode.cdata, hint, tuple(refs), musts)


def _leaves(node: Any, path: str) -> dict[str, Leaf]:
    from libyang.schema import SLeaf, SLeafList

    return {c.name(): _leaf_info(c, f"{path}/{c.name()}") for c in node.children() if isinstance(c, SLeaf | SLeafList)}


def _list_keys(node: Any) -> tuple[str, ...]:
    return tuple(k.name() for k in node.keys())  # noqa: SIM118 - libyang's keys(), not a dict's


def build_tables(ctx: Any) -> dict[str, Table]:
    """Walk every implemented module: top container -> table containers -> lists/containers."""
    from libyang.schema import SContainer, SList

    tables: dict[str, Table] = {}
    for mod in ctx:
        for top in mod.children():
            if not isinstance(top, SContainer):
                continue
            for tbl in top.children():
                if not isinstance(tbl, SContainer):
                    continue
                table = Table(tbl.name(), mod.name(), top.name(), {}, {})
                base = f"/{top.name()}/{tbl.name()}"
                for child in tbl.children():
                    if isinstance(child, SList):
                        lpath = f"{base}/{child.name()}"
                        lst = TableList(child.name(), _list_keys(child), _separators(tbl.name(), _leaves(child, lpath)))
                        nested = [c for c in child.children() if isinstance(c, SList)]
                        if len(nested) == 1 and set(lst.leaves) == set(lst.keys):
                            inner = nested[0]
                            ikeys = _list_keys(inner)
                            ileaves = _leaves(inner, f"{lpath}/{inner.name()}")
                            others = [v for k, v in ileaves.items() if k not in ikeys]
                            if len(ikeys) == 1 and len(others) <= 1:
                                value = others[0] if others else None
                                lst.inner = NestedList(inner.name(), ileaves[ikeys[0]], value)
                        # Two lists with the same key count would make the split ambiguous;
                        # none exists in the SONiC models, keep the first if one appears.
                        table.lists.setdefault(len(lst.keys), lst)
                    elif isinstance(child, SContainer):
                        table.containers[child.name()] = TableContainer(
                            child.name(), _separators(tbl.name(), _leaves(child, f"{base}/{child.name()}"))
                        )
                if table.lists or table.containers:
                    tables.setdefault(table.name, table)
    return tables
