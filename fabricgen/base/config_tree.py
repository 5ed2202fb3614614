"""The indentation tree of a CLI configuration (NX-OS running-config and other IOS-style text).

NX-OS prints its configuration as a tree drawn by indentation: a line's parent is the closest
config line above it with a smaller indent.  Blank lines and ``!`` comments are not
configuration and belong to no one.  The body of a ``banner <kind> <delimiter>`` runs to the
next line holding the delimiter; it is text, not configuration.  Every node keeps its 1-based
line number, so a finding can point at the line at fault.

A stack of open ancestors builds the tree in one pass: ~1 us a line, where ciscoconfparse2 (the
parser this replaces) spends ~40 us building an object graph the checks never needed.  Nodes hold
no parent link, so a tree is acyclic and freed by reference counting alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

COMMENT = "!"
_BANNER = re.compile(r"^banner \S+ (\S)")


@dataclass(slots=True)
class ConfigLine:
    """One config line: its 1-based line number, its text without surrounding blanks, its indent."""

    line: int
    text: str
    indent: int
    children: list[ConfigLine] = field(default_factory=list)

    def descendants(self, depth: int = 1) -> Iterator[tuple[ConfigLine, int]]:
        """Every line below this one in file order, with its depth (1: a direct child)."""
        for child in self.children:
            yield child, depth
            yield from child.descendants(depth + 1)


def parse_tree(lines: Iterable[str]) -> list[ConfigLine]:
    """The top of the tree: every config line that has no parent, in file order (see the module docstring)."""
    roots: list[ConfigLine] = []
    open_: list[ConfigLine] = []  # the last line read and its ancestors, innermost last
    banner_end = ""  # delimiter that closes the banner body being skipped
    for number, raw in enumerate(lines, 1):
        if banner_end:
            if banner_end in raw:
                banner_end = ""
            continue
        body = raw.lstrip()
        if not body or body[0] == COMMENT:
            continue
        indent = len(raw) - len(body)
        node = ConfigLine(number, body.rstrip(), indent)
        while open_ and open_[-1].indent >= indent:
            open_.pop()
        (open_[-1].children if open_ else roots).append(node)
        open_.append(node)
        if body[0] == "b" and (m := _BANNER.match(node.text)):  # the pattern's call costs more than the test
            delimiter = m.group(1)
            rest = node.text[m.end():]
            if delimiter not in rest:
                banner_end = delimiter
    return roots
