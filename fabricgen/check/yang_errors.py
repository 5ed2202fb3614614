"""libyang's errors on the instance data -> findings located in config_db, one parse at a time.

libyang stops at the first data error, so validation loops: report the error at its config_db JSON pointer,
drop the offending leaf/entry from the instance data, parse again.  Errors that merely follow from one already
reported (leafrefs to a dropped entry, musts comparing with a dropped leaf) are not reported again.  A key that
fails its type is located by checking the candidate entries' keys with libyang.  The messages are libyang's,
made concrete where they are terse: the value and what the leaf accepts (check.yang_schema's hint).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from fabricgen.check.configdb_to_yang import Converted, as_text, pointer
from fabricgen.check.yang_schema import Leaf, Table


def _same_value(data_value: Any, path_value: str) -> bool:
    """Compare a key in our instance data with libyang's canonical rendering of it."""
    mine = as_text(data_value)
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


@dataclass
class _Step:
    """One hop of a path through the instance data: obj sits at holder[index]."""

    name: str
    holder: Any
    index: Any
    obj: Any


@dataclass
class LoopState:
    """What one file's validation loop dropped so far, to tell a new error from one that only follows."""

    dropped_leaves: set[tuple[int, str]] = field(default_factory=set)
    dropped_names: set[str] = field(default_factory=set)
    dropped_keys: set[tuple[str, str]] = field(default_factory=set)  # (list key schema path, value)


class YangErrorLocator:
    """libyang's first error on the instance data -> findings at config_db JSON pointers, and the node to drop."""

    def __init__(self, ctx: Any, tables: dict[str, Table]) -> None:
        self.ctx = ctx
        self.tables = tables

    def first_error(self, data: dict[str, Any]) -> tuple[str, str, str] | None:
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

    def resolve(
        self, conv: Converted, state: LoopState, msg: str, where: str, apptag: str
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
        self, conv: Converted, state: LoopState, msg: str, path: str, apptag: str
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
    def _follows(state: LoopState, leaf: Leaf | None, value: Any, apptag: str) -> bool:
        """An error that only follows from one already reported (and dropped), so not worth a finding.

        A reference to an entry dropped for its own error, or a must that compares with a
        leaf dropped for its own error (e.g. detection_time >= a bad GLOBAL POLL_INTERVAL).
        """
        if leaf is None:
            return False
        if value is not None and any((ref, as_text(value)) in state.dropped_keys for ref in leaf.refs):
            return True
        if apptag == "must-violation" and state.dropped_names:
            words = {w for m in leaf.musts for w in re.findall(r"[A-Za-z_][\w-]*", m)}
            return bool(words & state.dropped_names)
        return False

    @staticmethod
    def _explain(leaf: Leaf | None, value: Any, msg: str, apptag: str) -> str:
        """libyang's message, made concrete for references and terse type errors."""
        if leaf is None:
            return msg
        if leaf.refs and value is not None and (msg.startswith("Invalid leafref") or msg.startswith("Invalid union")):
            return f'{leaf.name} "{as_text(value)}" is not {leaf.hint}'
        if apptag == "must-violation" or msg.startswith(("Must condition", "When condition", "Mandatory")):
            return msg
        if leaf.hint and leaf.hint.strip("'") not in msg and not leaf.refs:
            return f"{msg.rstrip('.')} (expected {leaf.hint})"
        return msg

    def _leaf_for(self, names: list[str]) -> Leaf | None:
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

    def _walk(self, conv: Converted, segs: list[tuple[str, list[tuple[str, str]]]]) -> list[_Step]:
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
        self, conv: Converted, names: list[str], entries: list[Any], preds: list[tuple[str, str]], nxt: str | None
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

    def _valid_value(self, leaf: Leaf, value: Any) -> bool:
        """Does the value pass the leaf's type (leafref targets are not looked up)?"""
        from _libyang import ffi, lib

        raw = as_text(value).encode()
        ret = lib.lyd_value_validate(self.ctx.cdata, leaf.snode, raw, len(raw), ffi.NULL, ffi.NULL, ffi.NULL)
        lib.ly_err_clean(self.ctx.cdata, ffi.NULL)
        return bool(ret in (lib.LY_SUCCESS, lib.LY_EINCOMPLETE))

    def _drop(self, conv: Converted, state: LoopState, steps: list[_Step]) -> bool:
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
                        state.dropped_keys.add((f"/{names}/{k}", as_text(step.obj[k])))
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
        self, conv: Converted, state: LoopState, msg: str, path: str
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
