"""The field types every intent section is built from: strings that fit where they go, numbers that are no booleans.

Every string of the intent ends up in a file name, a hostname or a config line, so each has a type
that fits where it goes (`HostLabel`, `HostPrefix`, `Token`, `Text`, `MacAddress`); every number
field rejects booleans (`Int`, `Float`) and non-finite values.  New fields use these types, and
every section model derives from `IntentModel`.  A module of its own so that the section modules
(tenants, ptp, load_balancing) and `model` share them without importing one another.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from fractions import Fraction
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict
from pydantic_core import PydanticCustomError


def invalid(problem: str, fix: str, at: str = "") -> PydanticCustomError:
    """A validation error that carries its fix; `load_intent` prints it as `problem (fix: fix)`.

    `at` names the field (relative to the model that raises) a cross-field rule blames.
    """
    return PydanticCustomError("fabricgen", "{problem}", {"problem": problem, "fix": fix, "at": at})


# --------------------------------------------------------------------------- strings
#
# Every string of the intent ends up in a file name, a hostname or a config line, so
# each has a type that fits where it goes.  New string fields use one of these; the
# templates escape nothing by hand because the model guarantees the values.

_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
_TEXT_CHARS = frozenset(map(chr, range(0x20, 0x7F)))
_MAC = re.compile(r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}")


def _shown(ch: str) -> str:
    """A character as an operator can read it in an error message: '/' or U+000A LINE FEED."""
    if ch.isprintable() and ch != " " and ch.isascii():
        return repr(ch)
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"


def _string_check(what: str, allowed: frozenset[str], max_len: int, rule: str,
                  shape: Callable[[str], bool] = lambda v: True) -> Callable[[str], str]:
    """A validator: only `allowed` characters, at most `max_len` of them, and `shape` holds."""

    def check(value: str) -> str:
        for i, ch in enumerate(value):
            if ch not in allowed:
                raise invalid(f"character {i + 1} of {what} is {_shown(ch)}, which is not allowed there", rule)
        if len(value) > max_len:
            raise invalid(f"{what} has {len(value)} characters, more than {max_len}", rule)
        if not shape(value):
            raise invalid(f"{value!r} is not {what}", rule)
        return value

    return check


def label(max_len: int, prefix: bool) -> Callable[[str], str]:
    if prefix:
        return _string_check("a hostname prefix", _LABEL_CHARS, max_len,
                             f"use 1-{max_len} characters from a-z, 0-9 and '-', starting with a letter or digit",
                             lambda v: v[:1].isalnum())
    return _string_check("a hostname label (RFC 1123)", _LABEL_CHARS, max_len,
                         f"use 1-{max_len} characters from a-z, 0-9 and '-', "
                         "starting and ending with a letter or digit",
                         lambda v: v[:1].isalnum() and v[-1:].isalnum())


def _mac_check(value: str) -> str:
    if not _MAC.fullmatch(value):
        raise invalid(f"{value!r} is not a MAC address", "write six hex octets separated by ':' (00:cc:cc:cc:cc:cc)")
    if int(value[:2], 16) & 1:
        raise invalid(f"{value!r} is a multicast MAC address", "use a unicast MAC (even first octet)")
    return value.lower()


HostLabel = Annotated[str, AfterValidator(label(32, prefix=False))]
"""A lower-case RFC 1123 label: a fabric name, anything that becomes a hostname or a file name."""
HostPrefix = Annotated[str, AfterValidator(label(32, prefix=True))]
"""The start of a hostname that digits complete (`gpu` -> gpu0001): may end with '-'."""
Token = Annotated[str, AfterValidator(_string_check(
    "a name", _TOKEN_CHARS, 64,
    "use 1-64 characters from A-Z, a-z, 0-9, '.', '_' and '-', starting with a letter or digit",
    lambda v: v[:1].isalnum() and ".." not in v))]
"""One word naming a vendor thing (a SKU, a platform name): letters, digits, '.', '_', '-'."""
Text = Annotated[str, AfterValidator(_string_check(
    "a one-line text", _TEXT_CHARS, 128,
    "keep it to one line of at most 128 printable ASCII characters (no newline, tab or control character)"))]
"""Free text that lands in a config comment or description: one printable ASCII line."""
MacAddress = Annotated[str, AfterValidator(_mac_check)]
"""A unicast MAC address, normalised to lower case."""


# --------------------------------------------------------------------------- numbers


def number(value: Any) -> Any:
    """YAML's true/false/yes/no are booleans: never let one count as 1 or 0."""
    if isinstance(value, bool):
        raise invalid(f"{str(value).lower()} is a boolean where a number is expected", "write a number")
    return value


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise invalid(f"{value!r} is not a boolean", "write true or false")
    return value


def _parse_speed(value: Any) -> Any:
    """Accept 400, "400", "400G", "400g", "400Gb" as 400 (Gb/s)."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+)\s*(g|gb|gbps|gbe)?\s*", value, re.IGNORECASE | re.ASCII)
        if not m:
            raise invalid(f"speed {value!r} is not a speed", "write it like 400G")
        return int(m.group(1))
    return number(value)


def parse_ratio(value: Any) -> Any:
    """Accept "1:1", "3:1", 1, 1.5 as a down:up bandwidth ratio."""
    if isinstance(value, str):
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*", value, re.ASCII)
        if not m:
            raise invalid(f"oversubscription {value!r} is not a down:up ratio", "write it like '1:1' or '3:1'")
        down, up = Fraction(m.group(1)), Fraction(m.group(2))
        if not down or not up:
            raise invalid(f"oversubscription {value!r} has a zero side", "write two positive numbers, like '1:1'")
        return float(down / up)
    return number(value)


Int = Annotated[int, BeforeValidator(number)]
Float = Annotated[float, BeforeValidator(number)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Speed = Annotated[int, BeforeValidator(_parse_speed)]
Ratio = Annotated[float, BeforeValidator(parse_ratio)]


class IntentModel(BaseModel):
    """Unknown fields are errors, values are immutable, and no number is infinite or NaN."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
