"""FRR config text as FRR itself lays it out: the lines that matter, canonical order for exact diffs, policy
objects per daemon, secrets removed, and the unified diff both drivers' compare_config returns.

``show running-config`` prints top-level stanzas in a fixed order (interfaces, ``router
bgp``, prefix-lists, route-maps, ``bfd``), whatever order the file had.  Diffing a rendered
file against it line by line shows every stanza that merely moved; :func:`canonical_lines`
puts both sides in FRR's order first, so a no-op is an empty diff.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from napalm_frr.parsers.decode import natural_key

# Lines that carry no configuration: show running-config's banner, "!" separators and
# comments, the "end" trailer, the "frr version" stamp (frr-reload never removes it) and
# the bare "exit" FRR 8.x prints after every top-level block (indentation carries the nesting).
_NOISE_RE = re.compile(r"^(Building configuration\.\.\.|Current configuration:|end|exit|exit-vrf|frr version .*)$")


def normalise_frr_config(text: str) -> list[str]:
    """FRR config text -> the lines that matter for a diff (right-stripped, no separators)."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or stripped.startswith("#"):
            continue
        if _NOISE_RE.match(line):
            continue
        lines.append(line)
    return lines


def unified_diff(old: Iterable[str], new: Iterable[str], fromfile: str, tofile: str) -> str:
    """Unified diff text ("" when equal), each line newline-terminated."""
    return "".join(
        line if line.endswith("\n") else line + "\n"
        for line in difflib.unified_diff(list(old), list(new), fromfile=fromfile, tofile=tofile, lineterm="")
    )


_SECRET_RE = re.compile(
    r"^(\s*(?:neighbor\s+\S+\s+password|.*authentication-key|.*message-digest-key\s+\d+\s+md5|"
    r"password|enable password|.*\bkey-string)\s+)(\S.*)$",
    re.MULTILINE,
)


def sanitize_frr_config(text: str) -> str:
    """Replace secrets (BGP/OSPF/ISIS passwords, key strings) with ``<removed>``."""
    return _SECRET_RE.sub(lambda m: m.group(1) + "<removed>", text)


# Rank of each kind of top-level stanza in FRR 8.4's `show running-config` (lower prints first).
_ORDER = (
    (re.compile(r"^(frr |hostname |log |service |password |enable password )"), 0),
    (re.compile(r"^(vrf |interface )"), 1),
    (re.compile(r"^(router |segment-routing)"), 2),
    (re.compile(r"^ip prefix-list "), 3),
    (re.compile(r"^ipv6 prefix-list "), 4),
    (re.compile(r"^(bgp (as-path|community-list|extcommunity-list|large-community-list) )"), 5),
    (re.compile(r"^route-map "), 6),
    (re.compile(r"^ip (route|nht) "), 7),
    (re.compile(r"^bfd$"), 8),
    (re.compile(r"^line vty"), 9),
)
_POLICY_RE = re.compile(r"^(ip prefix-list|ipv6 prefix-list|route-map|bgp community-list (?:standard|expanded)) (\S+)")


def _rank(head: str) -> int:
    for pattern, rank in _ORDER:
        if pattern.match(head):
            return rank
    return 5


def stanzas(text: str) -> list[list[str]]:
    """Top-level stanzas (a top-level line and its indented lines) of normalised FRR config."""
    out: list[list[str]] = []
    for line in normalise_frr_config(text):
        if line[:1] != " " or not out:
            out.append([line])
        else:
            out[-1].append(line)
    return out


# A stanza of a non-default VRF: `vrf X`, `interface Y vrf X`, `router bgp N vrf X`.
_VRF_STANZA_RE = re.compile(r"^(?:vrf (\S+)|interface \S+ vrf (\S+)|router bgp \S+ vrf (\S+))$")


def _stanza_key(item: tuple[int, list[str]]) -> tuple[object, ...]:
    """FRR prints the stanzas of non-default VRFs in the order of their VRF ids, which the kernel hands out
    (a netns VRF's id follows the order zebra found the namespaces in): those go after the default VRF's
    stanzas of their kind, by VRF name and then name, on both sides alike; every other stanza keeps its place."""
    index, stanza = item
    head = stanza[0]
    m = _VRF_STANZA_RE.match(head)
    if m is None:
        return (_rank(head), 0, "", (), index)
    vrf = next(g for g in m.groups() if g)
    return (_rank(head), 1, vrf, natural_key(head), index)


def canonical_lines(text: str) -> list[str]:
    """The config's lines with top-level stanzas in FRR's print order (stable within a kind; the stanzas of
    non-default VRFs in a fixed order, `_stanza_key`)."""
    ordered = sorted(enumerate(stanzas(text)), key=_stanza_key)
    return [line for _, stanza in ordered for line in stanza]


def touched_stanzas(lines: list[str], listed: list[str]) -> list[str]:
    """The top-level stanzas of canonical ``lines`` that frr-reload's listing (``--test``: lines to delete
    and add, with their context) names at least one line of; the others are not changes by FRR's own
    judgment: lines another writer manages (SONiC's docker_init.sh: the FPM lines; ``segment-routing``,
    ``service integrated-vtysh-config``), implicit defaults, stanzas merely printed in another order.
    A diff of what is left shows, and labels, only what frr-reload will change (issue 23 D11).  A context
    frr-reload deletes whole is listed as its ``no`` line (``no router bgp 65001 vrf amber``): that names
    the stanza too (a removed tenant's BGP instance)."""
    names = {ln.strip() for ln in listed if ln.strip()}
    names |= {name[3:] for name in names if name.startswith("no ")}
    groups: list[list[str]] = []
    for line in lines:
        if line[:1] != " " or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    return [ln for stanza in groups if any(ln.strip() in names for ln in stanza) for ln in stanza]


def policy_objects(text: str) -> dict[str, list[str]]:
    """``"route-map RM-IMPORT"`` / ``"ip prefix-list PL-LOCAL-V4"`` -> the config lines defining it."""
    out: dict[str, list[str]] = {}
    for stanza in stanzas(text):
        m = _POLICY_RE.match(stanza[0])
        if m:
            out.setdefault(f"{m.group(1)} {m.group(2)}", []).extend(stanza)
    return out


def missing_policy(candidate: str, daemon_running: str) -> dict[str, list[str]]:
    """Policy objects of ``candidate`` that a daemon's own running config lacks or holds differently."""
    want = policy_objects(candidate)
    have = policy_objects(daemon_running)
    return {name: lines for name, lines in want.items()
            if [ln.strip() for ln in lines] != [ln.strip() for ln in have.get(name, [])]}
