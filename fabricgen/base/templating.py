"""The one Jinja2 environment every renderer uses: each platform's templates, shipped in its folder.

A template is named by its platform: "nxos/nxos.cfg.j2" is fabricgen/platforms/nxos/templates/nxos.cfg.j2,
so one platform's template can include another's ("frr/bgp.j2" from SONiC's frr.conf).

Python computes; templates only lay out text.  StrictUndefined makes a template that names a
missing value fail instead of printing nothing.  One environment per process: compiling a
template per device or server cost milliseconds each.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
import msgspec
import orjson

PLATFORMS_DIR = Path(__file__).resolve().parents[1] / "platforms"


def template_dirs() -> dict[str, Path]:
    """Platform name -> its templates folder."""
    return {d.parent.name: d for d in sorted(PLATFORMS_DIR.glob("*/templates"))}


_JSON = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def to_json(value: Any) -> str:
    """Deterministic JSON: sorted keys, 2-space indent, trailing newline added by the caller.

    orjson writes exactly what json.dumps(indent=2, sort_keys=True) writes for our ASCII
    data, ~14x faster: ConfigDB serialisation was 70% of SONiC render time.
    """
    return orjson.dumps(value, option=_JSON).decode()


def member_json(value: Any) -> str:
    """`to_json(value)` laid out as the value of a top-level key: each line break indented one level more.
    JSON strings hold no raw newline (orjson escapes it), so every newline is a line break of the layout."""
    return to_json(value).replace("\n", "\n  ")


def to_json_of_members(members: dict[str, str]) -> str:
    """`to_json` of a dict, byte for byte, from each value's `member_json`: lets a renderer serialise a value
    that many files share once (SONiC's QoS and buffer tables) and splice it in."""
    if not members:
        return "{}"
    return "{\n" + ",\n".join(f"  {orjson.dumps(key).decode()}: {text}" for key, text in sorted(members.items())) \
        + "\n}"


_COMPACT = msgspec.json.Encoder(order="deterministic")


def to_compact_json_file(value: Any) -> bytearray:
    """Deterministic JSON on one line, as the bytes of the file: dict keys sorted, dataclass fields in their
    declared order, as `to_json` lays them out.

    For machine-read artefacts too large to read by eye: plan.json is 766 MB indented at 128K GPUs and 476 MB
    compact; the indentation cost a second of orjson, the hashing and the writing of 290 MB more.
    `fabricgen plan --json` stays indented (`to_json`) for people.

    msgspec, not orjson: orjson writes a slotted dataclass about 3x slower than a dict of the same fields, and
    the switches of a 128K-GPU plan (650K interfaces) took it 3.1 to 3.5 s where msgspec takes 1.4 s.  The bytes
    are orjson's (a test compares them) but for floats of 1e16 and more, which msgspec writes as 1e16, not
    1e+16 (a plan has none).  Dict keys must be strings, the only keys msgspec sorts (JSON keys are text
    anyway).  Encoded into a bytearray, which the newline extends in place: `bytes + b"\\n"` copied all 476 MB.
    """
    out = bytearray()
    _COMPACT.encode_into(value, out)
    out += b"\n"
    return out


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PrefixLoader({name: jinja2.FileSystemLoader(str(d)) for name, d in template_dirs().items()}),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701 - network configs and shell scripts, not HTML
        # the templates ship inside the package and never change under a running process; with auto_reload
        # (Jinja's default) every get_template stats the file again ("For higher performance it's possible to
        # disable that", jinja.palletsprojects.com API, Environment): 5,120 switches x 2-5 templates at 128K GPUs
        auto_reload=False,
    )
    env.filters["to_json"] = to_json
    return env
