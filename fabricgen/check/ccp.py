"""ciscoconfparse2 without its logging overhead; the parse result is the same object graph.

ciscoconfparse2 (0.9) costs ~20 ms for a 450-line NX-OS config; more than half of that is
logging machinery, not parsing:

* ~1,200 of its functions and properties are wrapped in loguru's
  ``@logger.catch(reraise=True)``.  Such a wrapper only logs an exception on its way
  out and raises it again (``reraise=True``), and ciscoconfparse2 never installs an
  ``onerror`` callback.  Every call still pays a Python frame plus a context manager.
* ``CiscoConfParse(..., loguru=False)`` adds a stdout handler with ``enqueue=True`` (a
  queue and a writer thread) on every call, only to remove every loguru handler again.

`enable()` swaps each such wrapper for the function it wraps (after checking, on each
wrapper, that it is a ``catch`` with ``reraise=True`` and no ``onerror``; any other wrapper
is left alone), and `parse_nxos` passes ``loguru=True`` after removing the loguru handlers
itself: the state ``loguru=False`` leaves behind (no handler at all, so nothing is ever
logged) without creating a writer thread per file.  Exceptions still propagate unchanged;
without a handler there was nothing to log them to.  `disable()` restores the wrappers
(tests compare both parses); FABRICGEN_CCP_PLAIN=1 keeps ciscoconfparse2 untouched.

``CiscoConfParse.__init__`` also ends with ``self.commit()``, which builds the whole object
graph a second time from the text of the graph it just built (``get_text()``).  `parse_nxos`
skips that one commit when that text is exactly the lines it passed in (bootstrap is a pure
function of the lines, so the second graph would be the same); otherwise it commits as usual.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import types
from typing import Any

PLAIN_ENV = "FABRICGEN_CCP_PLAIN"
_SKIP_MODULES = frozenset({"__main__", "cli_script"})  # command-line entry points, never used here

_patched: list[tuple[Any, str, Any]] = []  # (owner, attribute, original value) to restore
_enabled = False


def _catch_target(obj: Any) -> Any:
    """The function a loguru ``catch(reraise=True)`` wrapper calls; None if `obj` is no such wrapper."""
    if not isinstance(obj, types.FunctionType) or obj.__code__.co_name != "catch_wrapper" or not obj.__closure__:
        return None
    cells = dict(zip(obj.__code__.co_freevars, obj.__closure__, strict=True))
    if "catcher" not in cells or "function" not in cells:
        return None
    exit_ = getattr(type(cells["catcher"].cell_contents), "__exit__", None)
    if not isinstance(exit_, types.FunctionType) or not exit_.__closure__:
        return None
    options = {name: cell.cell_contents
               for name, cell in zip(exit_.__code__.co_freevars, exit_.__closure__, strict=True)}
    if options.get("reraise") is not True or options.get("onerror", 0) is not None:
        return None
    inner = cells["function"].cell_contents
    return inner if callable(inner) else None


def _unwrapped(obj: Any) -> Any:
    """`obj` without its catch(reraise=True) layers (property / static / class methods included)."""
    if isinstance(obj, property):
        parts = [_unwrapped(f) if f is not None else None for f in (obj.fget, obj.fset, obj.fdel)]
        if all(p is f for p, f in zip(parts, (obj.fget, obj.fset, obj.fdel), strict=True)):
            return obj
        return property(parts[0], parts[1], parts[2], obj.__doc__)
    if isinstance(obj, staticmethod | classmethod):
        inner = _unwrapped(obj.__func__)
        return obj if inner is obj.__func__ else type(obj)(inner)
    out = obj
    while (inner := _catch_target(out)) is not None:
        out = inner
    return out


def _modules() -> list[types.ModuleType]:
    import ciscoconfparse2

    return [importlib.import_module(f"ciscoconfparse2.{m.name}")
            for m in pkgutil.iter_modules(ciscoconfparse2.__path__) if m.name not in _SKIP_MODULES]


def _swap(owner: Any, name: str, value: Any) -> None:
    new = _unwrapped(value)
    if new is not value:
        _patched.append((owner, name, value))
        setattr(owner, name, new)


def enable() -> None:
    """Unwrap ciscoconfparse2's catch(reraise=True) wrappers (idempotent)."""
    global _enabled
    if _enabled:
        return
    for mod in _modules():
        for name, value in list(vars(mod).items()):
            if isinstance(value, type) and value.__module__.startswith("ciscoconfparse2"):
                if value.__module__ == mod.__name__:  # each class once, in its own module
                    for attr, member in list(vars(value).items()):
                        _swap(value, attr, member)
            else:
                _swap(mod, name, value)  # module functions, also where another module imported them
    from ciscoconfparse2 import CiscoConfParse

    global _plain_commit
    _plain_commit = vars(CiscoConfParse)["commit"]
    _patched.append((CiscoConfParse, "commit", _plain_commit))
    CiscoConfParse.commit = _commit
    _enabled = True


_initial: list[list[str]] = []  # the lines of the CiscoConfParse that parse_nxos is constructing
_plain_commit: Any = None


def _commit(self: Any) -> None:
    """CiscoConfParse.commit, except the redundant one at the end of parse_nxos's constructor."""
    if _initial:
        lines = _initial.pop()
        if self.get_text() == lines:
            return
    _plain_commit(self)


def disable() -> None:
    """Put every wrapper back."""
    global _enabled
    while _patched:
        owner, name, value = _patched.pop()
        setattr(owner, name, value)
    _enabled = False


def enabled() -> bool:
    return _enabled


def parse_nxos(lines: list[str]) -> Any:
    """``CiscoConfParse(lines, syntax="nxos", loguru=False, ignore_blank_lines=False)``, cheaper (see above)."""
    from ciscoconfparse2 import CiscoConfParse

    if not _enabled:
        return CiscoConfParse(lines, syntax="nxos", loguru=False, ignore_blank_lines=False)
    from loguru import logger

    logger.remove()  # what loguru=False ends with; cheap when there is no handler
    _initial[:] = [lines]
    try:
        return CiscoConfParse(lines, syntax="nxos", loguru=True, ignore_blank_lines=False)
    finally:
        _initial.clear()


def setup() -> None:
    """Import ciscoconfparse2 (~1 s), unwrap it unless FABRICGEN_CCP_PLAIN=1, and drop the stdout handler
    (with its writer thread) its import installs, so that forked workers inherit no thread."""
    import ciscoconfparse2  # noqa: F401
    from loguru import logger

    if os.environ.get(PLAIN_ENV, "") not in ("1", "true", "yes"):
        enable()
    logger.remove()
