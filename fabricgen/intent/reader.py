"""Reading an intent file that may be hostile: bounded, typed YAML and a line index.

The file is read only if it is a regular file of at most `MAX_BYTES`, decoded as
strict UTF-8, and parsed event by event (libyaml's parser, PyYAML's event API)
into plain dicts, lists and scalars.  Nothing is ever expanded: an alias reuses
the value its anchor built, and the size of the document *as pydantic will see
it* (aliases counted at their full size) is bounded by `MAX_VALUES`, so an alias
bomb stops after a few events.  Nesting is bounded by `MAX_DEPTH` while parsing.

Scalars follow YAML 1.2's core schema, and every YAML 1.1 reading that would
silently change a value is an error instead: `yes`/`no`/`on`/`off`, leading-zero
integers (`030` is octal 24 in YAML 1.1), `.inf`/`.nan`, non-decimal integers.
`3:1` stays the text "3:1" (YAML 1.1 reads it as the base-60 number 181).
Mapping keys are names: they are taken as text, and a key that is a mapping, a
list or an alias is an error.  Merge keys (`<<: *anchor`) work as YAML defines.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricgen.errors import FabricError, Problem

MAX_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 16
MAX_VALUES = 20_000

Lines = dict[tuple[Any, ...], int]

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_YAML11_BOOL = frozenset({"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"})
_INT = re.compile(r"[-+]?(?:0|[1-9](?:_?[0-9])*)", re.ASCII)
_LEADING_ZERO = re.compile(r"[-+]?0[0-9_]+", re.ASCII)
_OTHER_BASE = re.compile(r"[-+]?0[xXoObB][0-9a-fA-F_]+", re.ASCII)
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_NON_FINITE = re.compile(r"[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)", re.ASCII)


class _Stop(Exception):
    """One problem found while reading; becomes the FabricError of the file."""

    def __init__(self, line: int | None, path: tuple[Any, ...], message: str, fix: str) -> None:
        super().__init__(message)
        self.line, self.path, self.message, self.fix = line, path, message, fix


def read_text(path: str | Path) -> str:
    """The file's text, or FabricError: missing, not a regular file, too large, not UTF-8."""
    source = str(path)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, pipe or socket)"
            raise FabricError.single(source, "", f"the intent is {kind}", "pass the intent YAML file with -i")
        if st.st_size > MAX_BYTES:
            raise FabricError.single(source, "", f"the file has {st.st_size} bytes, more than the "
                                     f"{MAX_BYTES // (1024 * 1024)} MB an intent may have",
                                     "pass the fabric intent itself (a few KB)")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FabricError.single(source, "", f"cannot read intent file: {exc.strerror}",
                                 "pass an existing, readable file with -i") from None
    if len(raw) > MAX_BYTES:
        raise FabricError.single(source, "", "the file grew past the 10 MB an intent may have while it was read",
                                 "pass the fabric intent itself (a few KB)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FabricError.single(source, "", f"byte 0x{raw[exc.start]:02x} at column {column} is not UTF-8 text",
                                 "save the file as UTF-8", line) from None


def _scalar(value: str, tag: str | None, plain: bool, line: int, path: tuple[Any, ...]) -> Any:
    """YAML 1.2 core schema, with every YAML 1.1 surprise turned into an error."""
    if tag is not None and tag != "!":
        kind = tag[len(_TAG):] if tag.startswith(_TAG) else ""
        if kind == "str":
            return value
        if kind not in ("int", "float", "bool", "null"):
            raise _Stop(line, path, f"the tag {tag} is not supported", "remove the tag")
        resolved: Any = _scalar(value, None, True, line, path)
        types: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "bool": (bool,),
                                              "null": (type(None),)}
        fits = isinstance(resolved, types[kind]) and (kind == "bool" or not isinstance(resolved, bool))
        if not fits:
            raise _Stop(line, path, f"{value!r} is not a valid !!{kind}", "remove the tag or fix the value")
        return float(resolved) if kind == "float" else resolved
    if not plain:
        return value
    if value in _NULL:
        return None
    if value in _BOOL:
        return _BOOL[value]
    if value in _YAML11_BOOL:
        raise _Stop(line, path, f"{value!r} is a boolean in YAML 1.1 but text in YAML 1.2",
                    f"write true or false, or quote it ('{value}') if you mean the text")
    if _INT.fullmatch(value):
        return int(value)
    if _LEADING_ZERO.fullmatch(value):
        plain_number = value.lstrip("+-").lstrip("0_") or "0"
        raise _Stop(line, path, f"{value} has a leading zero (YAML 1.1 reads it as an octal number)",
                    f"write {plain_number}, or quote it if you mean the text")
    if _OTHER_BASE.fullmatch(value):
        raise _Stop(line, path, f"{value} is not a decimal number", "write the number in decimal")
    if _NON_FINITE.fullmatch(value):
        raise _Stop(line, path, f"{value} is not a finite number", "write a finite number")
    if _FLOAT.fullmatch(value) and any(c in value for c in ".eE"):
        return float(value.replace("_", ""))
    return value


@dataclass
class _Container:
    value: dict[str, Any] | list[Any]
    path: tuple[Any, ...]
    anchor: str | None
    size: int = 1
    key: str | None = None  # mapping: the key waiting for its value
    key_line: int = 0
    merges: list[dict[str, Any]] = field(default_factory=list)
    key_lines: dict[str, int] = field(default_factory=dict)


class _Builder:
    """Builds plain values from parser events, with the limits of this module."""

    def __init__(self) -> None:
        self.stack: list[_Container] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.lines: Lines = {}
        self.root: Any = None
        self.documents = 0

    def _path(self) -> tuple[Any, ...]:
        if not self.stack:
            return ()
        top = self.stack[-1]
        if isinstance(top.value, list):
            return (*top.path, len(top.value))
        return (*top.path, top.key) if top.key is not None else top.path

    def _is_key(self) -> bool:
        return bool(self.stack) and isinstance(self.stack[-1].value, dict) and self.stack[-1].key is None

    def _add(self, value: Any, size: int, line: int, anchor: str | None) -> None:
        if anchor is not None:
            self.anchors[anchor] = (value, size)
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.size += size
        if sum(c.size for c in self.stack) > MAX_VALUES:
            raise _Stop(line, self._path(), f"the document holds more than {MAX_VALUES} values once its aliases "
                        "are expanded", "write the intent without nested aliases (an intent has a few hundred values)")
        if isinstance(top.value, list):
            self.lines[(*top.path, len(top.value))] = line
            top.value.append(value)
            return
        key, top.key = top.key, None
        assert key is not None
        if key == "<<":
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(s, dict) for s in sources):
                raise _Stop(line, top.path, "a merge key (<<) needs a mapping or a list of mappings",
                            "merge an anchored mapping: <<: *name")
            top.merges.extend(sources)
            return
        top.value[key] = value

    def key(self, name: str, line: int) -> None:
        top = self.stack[-1]
        if name in top.key_lines and name != "<<":
            raise _Stop(line, (*top.path, name), f"duplicate key {name!r} (first at line {top.key_lines[name]})",
                        "remove one of them")
        top.key_lines[name] = line
        top.key, top.key_line = name, line
        path = (*top.path, name)
        self.lines[path] = line
        if name.isdigit():  # numeric keys (qos.ecn.400) become ints in pydantic's error locations
            self.lines[(*top.path, int(name))] = line

    def event(self, ev: Any) -> None:
        line = ev.start_mark.line + 1
        if isinstance(ev, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _Stop(line, (), "the file holds more than one YAML document", "keep one document (one '---')")
            return
        if isinstance(ev, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)):
            return
        if self._is_key():
            if not isinstance(ev, (yaml.ScalarEvent, yaml.MappingEndEvent)):
                kind = "an alias" if isinstance(ev, yaml.AliasEvent) else "a mapping or a list"
                raise _Stop(line, self.stack[-1].path, f"a mapping key is {kind}", "use a plain name as the key")
            if isinstance(ev, yaml.ScalarEvent):
                self.key(ev.value, line)
                return
        if isinstance(ev, yaml.ScalarEvent):
            self._add(_scalar(ev.value, ev.tag, ev.implicit[0], line, self._path()), 1, line, ev.anchor)
        elif isinstance(ev, yaml.AliasEvent):
            if ev.anchor not in self.anchors:
                raise _Stop(line, self._path(), f"alias *{ev.anchor} names no anchor (or one still open)",
                            f"define &{ev.anchor} before using it")
            value, size = self.anchors[ev.anchor]
            self._add(value, size, line, None)
        elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            tag = ev.tag
            if tag is not None and tag not in (f"{_TAG}map", f"{_TAG}seq", "!"):
                raise _Stop(line, self._path(), f"the tag {tag} is not supported", "remove the tag")
            if len(self.stack) >= MAX_DEPTH:
                raise _Stop(line, self._path(), f"nesting is deeper than {MAX_DEPTH} levels",
                            "an intent is a few levels deep; check the indentation")
            path = self._path()
            self.lines.setdefault(path, line)
            empty: dict[str, Any] | list[Any] = {} if isinstance(ev, yaml.MappingStartEvent) else []
            self.stack.append(_Container(empty, path, ev.anchor))
        elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            done = self.stack.pop()
            value = done.value
            if isinstance(value, dict) and done.merges:
                merged: dict[str, Any] = {}
                for source in reversed(done.merges):  # earlier sources win, explicit keys win over all
                    merged.update(source)
                merged.update(value)
                value = merged
                done.size = 1 + _size(value)
            self._add(value, done.size, line, done.anchor)


def _size(value: Any) -> int:
    """Values in a merged mapping, without walking into shared aliases more than MAX_VALUES deep."""
    if isinstance(value, dict):
        return sum(1 + _size(v) for v in value.values())
    if isinstance(value, list):
        return sum(1 + _size(v) for v in value)
    return 0


def parse(text: str, source: str) -> tuple[Any, Lines]:
    """Plain data and an index of YAML path -> 1-based line, or FabricError naming the line."""
    builder = _Builder()
    loader = _Loader(text)
    try:
        while loader.check_event():
            builder.event(loader.get_event())
    except _Stop as stop:
        raise FabricError(source, [Problem(".".join(map(str, stop.path)), stop.message, stop.fix, stop.line)]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise FabricError.single(source, "", f"malformed YAML: {problem}",
                                 "fix the YAML syntax at that line", line) from None
    finally:
        loader.dispose()
    builder.lines.setdefault((), 1)
    return builder.root, builder.lines


def load(path: str | Path) -> tuple[Any, Lines]:
    return parse(read_text(path), str(path))
