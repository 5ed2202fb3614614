"""Validate each distinct SONiC ConfigDB *shape* once: most switches' config_db.json files differ only in
per-switch values the YANG models check by type alone (hostname, ASN, router id, descriptions, neighbour
names, interface addresses), so a 32K-GPU fabric's 2,048 ConfigDBs are a handful of shapes.

The canonical renaming.  Two ConfigDBs (after the device-owned merge) have the same shape when they are equal
after this renaming: every string at an *opaque* leaf (a list key part or a field) is replaced by the index of
its first occurrence among all opaque strings of the file, tagged with the JSON type libyang gives it.  A
string is renamed only if libyang accepts it alone for its leaf (`lyd_value_validate`: pattern, length, range,
union member) and it is already libyang's canonical form; any other string stays as written.

A leaf is opaque when nothing in the models that can run on this file compares or computes with its value:

* its type checks a value on its own (string, integer, decimal64, or a union of those): no leafref,
  instance-identifier, identityref, boolean, empty or enumeration, and it is not a leaf-list;
* no leafref anywhere in the models points at it;
* no `must` or `when` that libyang evaluates on this file names it (a step with its name, in its module
  when unprefixed, in any module when prefixed), sits on it, or reads its own list entry's value as a whole
  (`current()` or `.` on a list or container).  An expression is evaluated only on instances: one on a
  list or container counts when the file has an instance of that list or container, one on a leaf when an
  instance sets the leaf, the leaf is a key or has a default.  One on a node whose module has no data in the
  file never runs (libyang validates with LYD_VALIDATE_PRESENT).

Why that is a proof.  Let A and B have the same shape.  Then B is A with a bijection applied to its opaque
strings (the same index means the same string in each file, so equal strings stay equal and unequal ones
unequal), every renamed string on both sides is valid alone and canonical, and everything else is identical.
YANG can tell A from B only by a value's type (valid on both sides), by equality (key uniqueness, `unique`:
kept by the bijection; leafrefs: none reach an opaque leaf), or by an XPath expression (none that runs
reads one).  So libyang reports an error in A exactly when it reports one in B; and fabricgen's own
conversion findings (non-string values, unknown fields and tables) depend only on what the renaming keeps.

The shortcut is taken only for a shape whose first file validated *clean*: that B is then clean too.  A shape
with any finding is validated file by file, so every reported finding comes from a full validation of its own
file with its own values and locations.  `tests/check/test_sonic_shapes.py` checks that the shortcut reports
exactly what validating every file reports, over rendered fabrics and the mutation catalogue.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from fabricgen.base.findings import Finding

if TYPE_CHECKING:
    from fabricgen.check.sonic_yang import SonicYangValidator
    from fabricgen.check.yang_schema import Leaf, Table

_NAME = re.compile(r"(?:([A-Za-z_][\w.-]*+):)?([A-Za-z_][\w.-]*+)(?!\s*\()")  # a step name, not a function
_SELF = re.compile(r"current\(\)|(?<![\w.])\.(?![\w./])")  # the context node's own value
_WILDCARD = re.compile(r"(?:^|[/\[(:]|::)\s*\*|node\(\)")  # a step that matches any name


@dataclass(frozen=True)
class _Expr:
    """One must/when of the models and where it sits: (table, child) is the list or container directly under
    the table (None when the expression sits above), leaf the leaf it sits on (None: a list or container)."""

    module: str  # the module whose data tree holds the node
    node_module: str  # the module that defines the node (differs for an augment)
    table: str | None
    child: str | None
    in_list: bool  # child is a list: the expression runs only on the file's entries of that list
    leaf: str | None
    leaf_always: bool  # the leaf is a key or has a default: an entry always has it
    names: frozenset[tuple[str | None, str]]  # (prefix, name) of every step
    reads_self: bool  # on a list/container: reads the node's own value, so every leaf under it counts


def _exprs(validator: SonicYangValidator) -> tuple[list[_Expr], bool, set[tuple[str, str]]]:
    """Every must and when in the loaded models, whether one has a wildcard step (then no shortcut), and the
    (table, list) pairs with a `unique` statement."""
    from _libyang import ffi, lib
    from libyang.util import c2str, ly_array_iter

    data_nodes = lib.LYS_CONTAINER | lib.LYS_LEAF | lib.LYS_LEAFLIST | lib.LYS_LIST | lib.LYS_ANYDATA | lib.LYS_ANYXML
    out: list[_Expr] = []
    wildcard = False
    unique: set[tuple[str, str]] = set()

    def visit(node: Any, module: str, path: tuple[str, ...], in_list: bool) -> None:
        nonlocal wildcard
        name = c2str(node.name)
        if node.nodetype & data_nodes:  # choice and case are not steps of a data path
            path = (*path, name)
        if len(path) == 3:
            in_list = bool(node.nodetype & lib.LYS_LIST)
        if node.nodetype & lib.LYS_LIST and ffi.cast("struct lysc_node_list *", node).uniques != ffi.NULL:
            unique.add((path[1], path[2]) if len(path) > 2 else ("", ""))
        texts = []
        for arr in (lib.lysc_node_musts(node), lib.lysc_node_when(node)):
            if arr != ffi.NULL:
                texts += [c2str(lib.lyxp_get_expr(item.cond)) for item in ly_array_iter(arr)]  # type: ignore[no-untyped-call]
        is_leaf = bool(node.nodetype & (lib.LYS_LEAF | lib.LYS_LEAFLIST))
        always = bool(node.flags & lib.LYS_KEY) or (
            node.nodetype == lib.LYS_LEAF and ffi.cast("struct lysc_node_leaf *", node).dflt != ffi.NULL)
        for text in texts:
            wildcard = wildcard or bool(_WILDCARD.search(text))
            out.append(_Expr(module, c2str(node.module.name), path[1] if len(path) > 1 else None,
                             path[2] if len(path) > 2 else None, in_list,
                             name if is_leaf and len(path) == 4 else None, always,
                             frozenset((m.group(1), m.group(2)) for m in _NAME.finditer(text)),
                             not is_leaf and bool(_SELF.search(text))))
        child = lib.lysc_node_child(node)
        while child != ffi.NULL:
            visit(child, module, path, in_list)
            child = child.next

    for mod in validator.ctx:
        for top in mod.children():
            visit(top.cdata, mod.name(), (), False)
    return out, wildcard or ("", "") in unique, unique


def _children(table: Table) -> Iterator[tuple[str, dict[str, Leaf]]]:
    yield from ((lst.name, lst.leaves) for lst in table.lists.values())
    yield from ((c.name, c.leaves) for c in table.containers.values())


_UNSEEN = "\x02"  # not a JSON kind: a value not looked at yet
_Spec = dict[tuple[str, str], dict[str, tuple["Leaf", dict[str, str | None], bool]]]


class Shapes:
    """The shape of ConfigDBs for one validator, and which shapes validated clean in this process."""

    def __init__(self, validator: SonicYangValidator) -> None:
        from _libyang import ffi
        from libyang.schema import Type

        from fabricgen.check.yang_schema import json_kind

        self.validator = validator
        self.exprs, self.disabled, compared = _exprs(validator)
        targets = {ref for t in validator.tables.values() for _, leaves in _children(t)
                   for leaf in leaves.values() for ref in leaf.refs}
        for t in validator.tables.values():
            for lst in t.lists.values():
                if lst.inner is not None:
                    targets |= {ref for leaf in (lst.inner.key, lst.inner.value) if leaf for ref in leaf.refs}
        self._plain_types = {Type.STRING, Type.DEC64, *Type.NUM_TYPES}
        # (table, child, leaf) -> does equality of its values matter (a key, or a list with `unique`); absent:
        # never opaque (its type is not checked alone, or a leafref points at it)
        self._typed: dict[tuple[str, str, str], bool] = {}
        for t in validator.tables.values():
            for child, leaves in _children(t):
                keys = _keys_of(t, child)
                for leaf in leaves.values():
                    if (not leaf.is_list and not leaf.refs and leaf.kind in ("str", "num", "union")
                            and f"/{t.top}/{t.name}/{child}/{leaf.name}" not in targets and self._plain(leaf.snode)):
                        self._typed[(t.name, child, leaf.name)] = leaf.name in keys or (t.name, child) in compared
        self._specs: dict[bytes, _Spec] = {}
        self._structures: dict[tuple[str, bytes], dict[tuple[str, str], set[str]]] = {}
        self._renamed: dict[tuple[bytes, str, bytes], str] = {}
        self._values: dict[int, dict[str, str | None]] = {}  # id(snode) -> value -> JSON kind (None: as written)
        self._kinds = {base: json_kind(base) for base in range(32)}  # LY_DATA_TYPE -> JSON kind
        self._realtype = ffi.new("struct lysc_type **")  # lyd_value_validate's outputs, reused
        self._canonical = ffi.new("char **")
        self.clean: set[bytes] = set()
        self.validated = 0
        self.skipped = 0

    def _plain(self, snode: Any) -> bool:
        """The compiled type checks a value on its own (no leafref, identity, enum, bits, boolean, empty)."""
        from _libyang import ffi
        from libyang.schema import Type

        return self._plain_type(Type(self.validator.ctx, ffi.cast("struct lysc_node_leaf *", snode).type, None))

    def _plain_type(self, ltype: Any) -> bool:
        from libyang.schema import Type

        base = ltype.base()
        if base == Type.UNION:
            return all(self._plain_type(Type(ltype.context, m.cdata, None)) for m in ltype.union_types())
        return bool(base in self._plain_types)

    # ------------------------------------------------------------------ per file

    def _table_structure(self, tname: str, entries: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
        """(table, list or container) -> the field names its entries set (which expressions run)."""
        out: dict[tuple[str, str], set[str]] = {}
        table = self.validator.tables[tname]
        for key, fields in entries.items():
            child = _child(table, key)
            if child is not None:
                out.setdefault((tname, child), set()).update(fields if isinstance(fields, dict) else ())
        return out

    def _opaque(self, structure: dict[tuple[str, str], set[str]]) -> dict[tuple[str, str, str], bool]:
        """The opaque (table, child, leaf) of a file with this structure (see the module docstring), each with
        whether equality of its values matters."""
        tables = self.validator.tables
        present = {tables[t].module for t, _ in structure}
        by_module: set[tuple[str, str]] = set()  # (module, leaf name) an expression reads
        anywhere: set[str] = set()  # a prefixed name: taken to mean that name in every module
        excluded: set[tuple[str, str, str]] = set()
        for e in self.exprs:
            if e.module not in present:
                continue
            if e.table is not None and e.child is not None:
                # A list has no entry the file does not write; a container may be made by libyang for its
                # defaults, so its expressions count whenever its module has data.
                fields = structure.get((e.table, e.child))
                if e.in_list and fields is None:
                    continue  # no entry of the list it sits in
                if e.in_list and e.leaf is not None and not e.leaf_always and e.leaf not in (fields or ()):
                    continue  # on a leaf no entry sets
                if e.leaf is not None:
                    excluded.add((e.table, e.child, e.leaf))
                if e.reads_self:
                    excluded |= {k for k in self._typed if k[0] == e.table and k[1] == e.child}
            elif e.reads_self:
                excluded |= {k for k in self._typed if e.table is None or k[0] == e.table}
            for prefix, name in e.names:
                if prefix is None:
                    by_module |= {(e.module, name), (e.node_module, name)}
                else:
                    anywhere.add(name)
        return {k: eq for k, eq in self._typed.items() if k not in excluded and k[2] not in anywhere
                and (tables[k[0]].module, k[2]) not in by_module}

    def _spec(self, structure: dict[tuple[str, str], set[str]]) -> tuple[bytes, _Spec]:
        """Per (table, child): its opaque fields, each with its leaf, its value memo and whether equality counts."""
        sig = orjson.dumps(sorted((t, c, sorted(f)) for (t, c), f in structure.items()))
        spec = self._specs.get(sig)
        if spec is None:
            spec = {}
            tables = self.validator.tables
            for (t, c, name), eq in self._opaque(structure).items():
                table = tables[t]
                leaves = table.containers[c].leaves if c in table.containers else _list(table, c).leaves
                leaf = leaves[name]
                spec.setdefault((t, c), {})[name] = (leaf, self._values.setdefault(id(leaf.snode), {}), eq)
            self._specs[sig] = spec
        return sig, spec

    def _kind(self, leaf: Leaf, value: str, memo: dict[str, str | None]) -> str | None:
        """libyang's JSON kind of a value valid alone for the leaf and already canonical, else None."""
        from _libyang import ffi, lib

        raw = value.encode()
        ctx = self.validator.ctx.cdata
        ret = lib.lyd_value_validate(ctx, leaf.snode, raw, len(raw), ffi.NULL, self._realtype, self._canonical)
        lib.ly_err_clean(ctx, ffi.NULL)
        kind = None
        # (the canonical string is kept in libyang's dictionary, once per distinct value, until the context goes)
        if ret == lib.LY_SUCCESS and self._realtype[0] != ffi.NULL and self._canonical[0] != ffi.NULL \
                and ffi.string(self._canonical[0]) == raw:
            kind = self._kinds.get(self._realtype[0].basetype)
        memo[value] = kind
        return kind

    def key(self, config: Any) -> bytes | None:
        """The digest of a ConfigDB's canonical renaming; None when the shortcut does not apply.

        Most tables are byte-identical across switches: each table's structure and renaming is computed once
        per distinct content (by its SHA-256) and reused."""
        if self.disabled or not isinstance(config, dict):
            return None
        tables = self.validator.tables
        parts: list[tuple[str, bytes, Any]] = []
        structure: dict[tuple[str, str], set[str]] = {}
        for tname, entries in config.items():
            try:
                digest = hashlib.sha256(orjson.dumps(entries)).digest()
            except TypeError:  # an integer beyond 64 bits: no shortcut
                return None
            parts.append((tname, digest, entries))
            if tname in tables and isinstance(entries, dict):
                known = self._structures.get((tname, digest))
                if known is None:
                    known = self._structures[(tname, digest)] = self._table_structure(tname, entries)
                structure.update(known)
        sig, spec = self._spec(structure)
        out: list[tuple[str, str]] = []
        for tname, digest, entries in parts:
            memo = (sig, tname, digest)
            renamed = self._renamed.get(memo)
            if renamed is None:
                renamed = self._renamed[memo] = self._rename_table(tname, entries, spec)
            out.append((tname, renamed))
        return hashlib.sha256(orjson.dumps(out)).digest()

    def _rename_table(self, tname: str, entries: Any, spec: _Spec) -> str:
        """The hex digest of one table's canonical renaming."""
        table = self.validator.tables.get(tname)
        if table is None or not isinstance(entries, dict):
            return hashlib.sha256(orjson.dumps(("\x01", entries))).hexdigest()
        indices: dict[int, dict[str, int]] = {}  # per leaf whose equality counts: value -> first-occurrence index
        none: dict[str, tuple[Leaf, dict[str, str | None], bool]] = {}

        # Encoding (injective): a renamed string -> ["\x00", kind] or ["\x00", kind, index]; any other
        # non-string -> ["\x01", it]; any other string as it is.
        def rename(opaque: dict[str, tuple[Leaf, dict[str, str | None], bool]], name: str, value: Any) -> Any:
            if type(value) is not str:
                return ("\x01", value)
            found = opaque.get(name)
            if found is None:
                return value
            leaf, memo, eq = found
            kind = memo.get(value, _UNSEEN)
            if kind is _UNSEEN:
                kind = self._kind(leaf, value, memo)
            if kind is None:
                return value
            if not eq:
                return ("\x00", kind)
            index = indices.setdefault(id(memo), {})
            return ("\x00", kind, index.setdefault(value, len(index)))

        rows: list[Any] = []
        for key, fields in entries.items():
            if key in table.containers:
                opaque = spec.get((tname, key), none)
                ckey: Any = ("c", key)
            else:
                parts = key.split("|")
                lst = table.lists.get(len(parts))
                if lst is None or lst.inner is not None:  # no such list, or nested map entries: as written
                    rows.append(("?", key, ("\x01", fields)))
                    continue
                opaque = spec.get((tname, lst.name), none)
                ckey = ("l", [rename(opaque, k, p) for k, p in zip(lst.keys, parts, strict=True)])
            if isinstance(fields, dict):
                rows.append((ckey, [(f, rename(opaque, f, v)) for f, v in fields.items()]))
            else:
                rows.append((ckey, ("\x01", fields)))
        return hashlib.sha256(orjson.dumps(rows)).hexdigest()

    def validate(self, config: Any, device: str, file: str) -> list[Finding]:
        """Findings of one ConfigDB: none without running libyang when its shape validated clean here."""
        key = self.key(config)
        if key is not None and key in self.clean:
            self.skipped += 1
            return []
        self.validated += 1
        found = self.validator.validate(config, device, file)
        if key is not None and not found:
            self.clean.add(key)
        return found


def _child(table: Table, key: str) -> str | None:
    """The list or container a native key names (as SonicYangValidator.convert picks it)."""
    if key in table.containers:
        return key
    lst = table.lists.get(key.count("|") + 1)
    return lst.name if lst is not None else None


def _list(table: Table, name: str) -> Any:
    return next(lst for lst in table.lists.values() if lst.name == name)


def _keys_of(table: Table, child: str) -> tuple[str, ...]:
    return next((lst.keys for lst in table.lists.values() if lst.name == child), ())
