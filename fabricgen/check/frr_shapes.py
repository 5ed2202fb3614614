"""Run FRR's parser once per frr.conf *shape*: most switches' frr.conf files differ only in values FRR's parser
treats alike (addresses, ASNs, neighbour descriptions, the hostname), so the 2,048 SONiC frr.confs of a
32K-GPU fabric are a handful of shapes, and `vtysh --dryrun` runs on one real file of each.

What `vtysh --dryrun` does with a line (FRR 8.4, the facts this module rests on):

* It reads the file with fgets (lines of up to VTY_BUFSIZ = 4096 bytes, lib/vty.h), splits a line into words
  at " \\t\\r\\n" (lib/command.c cmd_make_strvec) and matches the words against the command graph of the
  current node, walking up to the parent nodes if nothing matches (command_config_read_one_line).
* The matcher (lib/command_match.c) looks at a word only through `match_token`: a keyword (WORD_TKN) matches
  a word that equals it or is a prefix of it; a variable (WORD, LINE, NAME ...) matches any word; RANGE, IPv4,
  IPv4 prefix, IPv6, IPv6 prefix, MAC and MAC prefix tokens count only when they match exactly.  Which command
  wins, and whether the line is ambiguous or incomplete, follows from those match results alone.
* A daemon command (DEFSH) is not executed in a dry run: `cmd_execute` returns CMD_SUCCESS_DAEMON for it.
  vtysh's own node commands (DEFUNSH in vtysh/vtysh.c: `router bgp`, `interface`, `route-map` ...) only set
  the node and read no argument.  The commands libfrr runs inside vtysh in config mode (lib/command.c
  cmd_init: `hostname`, `domainname`) do read theirs; of these only `hostname` is abstracted, with its two
  checks (config_hostname: the first byte alphanumeric, at most HOSTNAME_LEN = 255 bytes) kept in its class
  (an IPv4 word starts with a digit: `domainname`'s isalpha check fails alike).  vtysh's exec-mode commands
  (reached after a stray `exit` leaves config mode) answer alike whatever their argument, but for
  `copy FILENAME running-config`, which reads the file: a file with a line that can be `copy` has no shape.

The shape.  Words are replaced by a class; everything else (other words, whitespace, line breaks) is kept:

* everywhere: a canonical IPv4 address (four decimal octets 0-255 without leading zeros), also as the
  address of `A.B.C.D/len` (the length is kept).  Every such word matches exactly IPv4 (resp. IPv4 prefix)
  tokens and variables, and nothing else, whatever its value;
* on `neighbor ...` lines (daemon commands only: no vtysh or libfrr command starts with a word that
  `neighbor` can match) and in the arguments of `router bgp ...` (a DEFUNSH that reads none):
  - a decimal number (1 to 18 digits, no leading zero) that is no prefix of a keyword becomes the interval
    it falls in among every range bound of the installed FRR's grammar: two numbers of one interval are
    inside exactly the same `(a-b)` ranges, and no other exact-match token takes a bare number;
  - a word that is no prefix of any keyword, has a character that no number, IPv4/IPv6 address or prefix
    or MAC can hold, and is no signed number, matches only variables: it becomes one class (an *inert* word);
* the value of `hostname X` when it is inert: its class adds the two config_hostname checks.

The grammar facts (every `(a-b)` bound and every keyword) are read from the vtysh binary and the libfrr it
links: FRR compiles every command string into them as a literal, so the sets read are a superset of the
grammar's (`tests/check/test_frr_shapes.py` checks it against vtysh's own `list` output), and a superset
only splits classes further.  Without them only addresses are abstracted.

Why that is a proof.  Two files of one shape have the same lines with the same words, but for words of one
class; both sides' words of a class match exactly the same tokens, so every line matches the same command
(or fails the same way) in the same node, and the node sequence is the same; the only handlers that run see
equal classes.  A line of 4,000 bytes or more, or a NUL byte, puts the file in a shape of its own (fgets
would split the line where the byte count, which the classes do not keep, says).

The shortcut is taken only for a shape whose first file is clean: every other member is then clean too.  A
shape with any finding is re-checked file by file, so every finding quotes its own file's line.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
# a whole word that is a canonical IPv4 address, or the address part of address/len (len 0-32, canonical)
_IPV4_WORD = re.compile(rf"(?<![^ \t\r\n]){_OCTET}(?:\.{_OCTET}){{3}}(?=(?:/(?:3[0-2]|[12]?[0-9]))?(?![^ \t\r\n]))")
_SPLIT = re.compile(r"([ \t\r]+)")  # cmd_make_strvec's word separators (a line has no \n)
_NUMBER = re.compile(r"[1-9][0-9]{0,17}")
_SIGNED = re.compile(r"[+-]?[0-9]+")  # what strtoll takes whole (a RANGE token)
_ADDRESS_CHARS = frozenset("0123456789abcdefABCDEF:./")  # every IPv4/IPv6/MAC address or prefix, every number
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# FRR's grammar lexer (lib/command_lex.l): a keyword, and a range with its two numbers
_KEYWORD = re.compile(rb"[-+]?[a-zA-Z0-9*][-+_a-zA-Z0-9*]*")
_RANGE = re.compile(rb"\(([-+]?[0-9]{1,20}) ?- ?([-+]?[0-9]{1,20})\)")
# a line whose first word is `copy` or an abbreviation of it (the first line: _COPY.match, the others: search)
_COPY = re.compile(r"[ \t\r]*(?:c|co|cop|copy)[ \t\r]")
_COPY_AFTER_BREAK = re.compile(r"\n[ \t\r]*(?:c|co|cop|copy)[ \t\r]")
MAX_LINE = 4000  # bytes; vtysh reads lines of up to VTY_BUFSIZ (4096) - 1
HOSTNAME_LEN = 255  # lib/command.h

A = "\x00a"  # the class of an IPv4 address


@dataclass(frozen=True)
class Grammar:
    """Every range bound and keyword of the installed FRR's command strings (a superset: see the module doc)."""

    bounds: tuple[int, ...]  # sorted
    keywords: tuple[str, ...]  # sorted

    def interval(self, n: int) -> int:
        """Same value <=> same side of, or equal to, every bound."""
        i = bisect.bisect_left(self.bounds, n)
        return 2 * i + (i < len(self.bounds) and self.bounds[i] == n)

    def keyword_prefix(self, word: str) -> bool:
        """A keyword equals the word or starts with it (match_word: exact or partial)."""
        i = bisect.bisect_left(self.keywords, word)
        return i < len(self.keywords) and self.keywords[i].startswith(word)


def _linked_frr(binary: str) -> list[str]:
    """The FRR libraries the binary links (ldd), where libfrr's own commands (hostname ...) live."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [parts[2] for line in out.splitlines() if "frr" in line and len(parts := line.split()) > 2
            and parts[1] == "=>" and parts[2].startswith("/")]


@functools.lru_cache(maxsize=4)
def _grammar_of(binary: str, stamp: tuple[int, int]) -> Grammar | None:
    del stamp  # part of the cache key only: a replaced binary is read again
    libraries = _linked_frr(binary)
    if not libraries:
        return None
    bounds: set[int] = set()
    keywords: set[bytes] = set()
    for path in [binary, *libraries]:
        try:
            data = Path(path).read_bytes()
        except OSError:
            return None
        keywords.update(_KEYWORD.findall(data))
        bounds.update(int(x) for pair in _RANGE.findall(data) for x in pair)
    return Grammar(tuple(sorted(bounds)), tuple(sorted(k.decode() for k in keywords)))


def grammar(binary: str) -> Grammar | None:
    """The grammar facts of this vtysh (None: not readable here, so only addresses are abstracted)."""
    try:
        st = os.stat(binary)
    except OSError:
        return None
    return _grammar_of(os.path.realpath(binary), (st.st_size, st.st_mtime_ns))


class Shaper:
    """The shape of frr.conf texts for one vtysh; words and lines are classified once each."""

    def __init__(self, facts: Grammar | None) -> None:
        self.grammar = facts
        # each word and each line is classified once: a fabric's files repeat them thousands of times
        self.word: Callable[[str], str] = functools.cache(self._classify)
        self.line: Callable[[str], str] = functools.cache(self._abstract)

    def _classify(self, w: str) -> str:
        """The class of a word on a line whose words only the matcher sees (module doc); itself if none."""
        g = self.grammar
        if g is None or w[0] == "\x00" or g.keyword_prefix(w):
            return w
        if _NUMBER.fullmatch(w):
            return f"\x00n{g.interval(int(w))}"
        if _SIGNED.fullmatch(w) or _ADDRESS_CHARS.issuperset(w):
            return w
        return "\x00w"

    def _hostname(self, w: str) -> str:
        cls = self.word(w)
        if cls != "\x00w":
            return w
        return f"\x00h{int(w[0] in _ALNUM)}{int(len(w.encode()) <= HOSTNAME_LEN)}"

    def _abstract(self, line: str) -> str:
        """One line (its IPv4 words already abstracted) with its abstractable words replaced."""
        parts = _SPLIT.split(line)  # word, separator, word, ... (the first word "" if the line is indented)
        words = parts[0::2]
        first = 1 if words and not words[0] else 0
        head = words[first:first + 2]
        if head[:1] == ["neighbor"]:
            classify, skip = self.word, first + 1
        elif head == ["router", "bgp"]:
            classify, skip = self.word, first + 2
        elif head[:1] == ["hostname"] and len(words) - first - (not words[-1]) == 2:
            classify, skip = self._hostname, first + 1
        else:
            return line
        for i in range(2 * skip, len(parts), 2):
            if parts[i]:
                parts[i] = classify(parts[i])
        return "".join(parts)

    def key(self, text: str) -> str | None:
        """The digest of a file's shape; None when the file must be checked on its own."""
        if "\x00" in text:
            return None
        if long_line(text) or _COPY.match(text) or _COPY_AFTER_BREAK.search(text):
            return None
        lines = _IPV4_WORD.sub(A, text).split("\n")
        return hashlib.sha256("\n".join(map(self.line, lines)).encode()).hexdigest()


def long_line(text: str) -> bool:
    """A line vtysh may read as several (fgets into VTY_BUFSIZ bytes)."""
    raw = text.split("\n")
    return max(map(len, raw)) >= MAX_LINE // 4 and any(len(x.encode()) >= MAX_LINE for x in raw)


T = TypeVar("T")


def group(items: Sequence[T], text: Callable[[T], str], shaper: Shaper) -> list[list[T]]:
    """The items grouped by the shape of their text, in first-seen order (the first item represents a group)."""
    groups: dict[str, list[T]] = {}
    order: list[list[T]] = []
    for item in items:
        key = shaper.key(text(item))
        if key is None:
            order.append([item])
            continue
        members = groups.get(key)
        if members is None:
            members = groups[key] = []
            order.append(members)
        members.append(item)
    return order

