"""The fast NX-OS parse is the plain one: the ciscoconfparse2 shim (check.ccp) and the trimmed
parse (nxos.parse_config) change no line, parent, child, finding or fact."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from loguru import logger

from fabricgen.check import ccp
from fabricgen.check.nxos import check_nxos_text, check_parsed, kept_lines, parse, parse_config, trailing_bgp
from fabricgen.check.roce import analyze_nxos, nxos_facts
from fabricgen.model import Plan
from fabricgen.plan import load_plan
from fabricgen.platforms import nxos
from fabricgen.render import environment
from tests.conftest import EXAMPLE

SPINE = "ai256-spine01"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def spine_text(plan: Plan) -> str:
    return str(nxos.render(plan.switches[SPINE], plan, environment())["nxos.cfg"])


@contextmanager
def plain_ciscoconfparse2() -> Iterator[None]:
    """ciscoconfparse2 exactly as installed (wrappers back, loguru=False) for the duration."""
    assert ccp.enabled()
    ccp.disable()
    try:
        yield
    finally:
        ccp.enable()


def graph(parsed: Any) -> list[tuple[Any, ...]]:
    """Everything of a CiscoConfParse result the checks can see, per line."""
    return [(o.linenum, o.text, o.indent, o.is_comment, o.is_config_line, o.parent.linenum,
             [c.linenum for c in o.children], [c.linenum for c in o.all_children]) for o in parsed.objs]


# Edits that leave the rendered layout: each stresses one rule of the line scan or of the trimming.
def _lines_after(header: str, extra: str) -> Callable[[str], str]:
    return lambda t: t.replace(header + "\n", header + "\n" + extra, 1)


WEIRD: list[tuple[str, Callable[[str], str]]] = [
    ("as-rendered", lambda t: t),
    ("bgp-comments-blanks-tabs", lambda t: re.sub(r"\n(  neighbor )", r"\n!\n\n   \n\1", t, count=2)
     .replace("  address-family ipv4 unicast\n", "\taddress-family ipv4 unicast\n", 1)),
    ("bgp-neighbor-deeper", lambda t: re.sub(r"^  neighbor (\S+)$", r"    neighbor \1", t, count=1, flags=re.M)),
    ("bgp-neighbor-shallower", lambda t: re.sub(r"^  neighbor (\S+)$", r" neighbor \1", t, count=1, flags=re.M)),
    ("bgp-route-map-anywhere", lambda t: re.sub(r"^(router bgp \S+)$", r"\1\n  description route-map RM-A\n"
                                                r"    ! route-map RM-B\n  neighbor 9.9.9.9 route-map RM-C out",
                                                t, count=1, flags=re.M)),
    ("bgp-not-trailing", lambda t: t + "interface Ethernet1/99\n  description late\n  mtu 1500\n"),
    ("bgp-head-not-parsed", lambda t: re.sub(r"^router bgp (\S+)$", r"router bgp \1 extra", t, count=1,
                                             flags=re.M)),
    ("two-bgp-blocks", lambda t: re.sub(r"^(router bgp \S+)$", r"router bgp 1\n  neighbor 9.9.9.9\n\1", t,
                                        count=1, flags=re.M)),
    ("description-with-child", lambda t: re.sub(r"^(  description .*)$", r"\1\n   mtu 1234", t, count=1, flags=re.M)),
    ("description-blank-then-child", lambda t: re.sub(r"^(  description .*)$", r"\1\n\n!\n   mtu 1234", t, count=1,
                                                      flags=re.M)),
    ("description-outside-interface", lambda t: re.sub(r"^(route-map .*)$", r"\1\n  description route-map RM-D",
                                                       t, count=1, flags=re.M)),
    ("tab-indented-description", lambda t: re.sub(r"^  description (.*)$", "  \tdescription \\1\n    mtu 1234", t,
                                                  count=1, flags=re.M)),
    ("no-switchport-then-switchport", lambda t: t.replace("  no switchport\n", "  no switchport\n  switchport\n", 1)),
    ("interface-at-indent-1", lambda t: re.sub(r"^interface (Ethernet\S+)$", r" interface \1", t, count=1,
                                               flags=re.M)),
    ("banner", lambda t: t.replace("feature bgp\n", "banner motd #\n  description x\nrouter bgp 1\n#\nfeature bgp\n")),
    ("crlf-and-truncated", lambda t: "\r\n".join(t.splitlines()[: len(t.splitlines()) // 2])),
]


def test_shim_unwraps_only_reraising_catch_wrappers() -> None:
    wrapped_reraise = logger.catch(reraise=True)(lambda x: x + 1)
    wrapped_swallow = logger.catch()(lambda x: x + 1)
    wrapped_onerror = logger.catch(reraise=True, onerror=lambda e: None)(lambda x: x + 1)
    assert ccp._unwrapped(wrapped_reraise) is not wrapped_reraise
    assert ccp._unwrapped(wrapped_reraise)(1) == 2
    assert ccp._unwrapped(wrapped_swallow) is wrapped_swallow  # it returns a default instead of raising
    assert ccp._unwrapped(wrapped_onerror) is wrapped_onerror  # it calls back on errors
    prop = property(wrapped_reraise)
    assert ccp._unwrapped(prop).fget is not wrapped_reraise


def test_shim_unwraps_ciscoconfparse2() -> None:
    from ciscoconfparse2.ccp_abc import BaseCfgLine

    assert ccp.enabled()
    assert BaseCfgLine.__dict__["text"].fget.__code__.co_name != "catch_wrapper"
    with plain_ciscoconfparse2():
        assert BaseCfgLine.__dict__["text"].fget.__code__.co_name == "catch_wrapper"
    assert BaseCfgLine.__dict__["text"].fget.__code__.co_name != "catch_wrapper"


@pytest.mark.parametrize("edit", [e for _, e in WEIRD], ids=[i for i, _ in WEIRD])
def test_shim_parse_is_identical(spine_text: str, edit: Callable[[str], str]) -> None:
    lines = edit(spine_text).splitlines()
    fast = graph(ccp.parse_nxos(lines))
    fast_cfg = parse(lines)
    with plain_ciscoconfparse2():
        assert graph(ccp.parse_nxos(lines)) == fast
        assert parse(lines) == fast_cfg


def test_shim_keeps_exceptions() -> None:
    def error(call: Callable[[], Any]) -> tuple[type, str]:
        with pytest.raises(Exception) as exc:  # noqa: PT011 - whatever ciscoconfparse2 raises, both must agree
            call()
        return type(exc.value), str(exc.value)

    bad: Any = ["hostname x", 42]
    fast = error(lambda: ccp.parse_nxos(bad))
    with plain_ciscoconfparse2():
        assert error(lambda: ccp.parse_nxos(bad)) == fast


def test_shim_leaves_no_loguru_handler(spine_text: str) -> None:
    handler = logger.add(lambda _msg: None)
    try:
        ccp.parse_nxos(spine_text.splitlines())
        assert not logger._core.handlers  # type: ignore[attr-defined]  # as loguru=False leaves it
    finally:
        with suppress(ValueError):
            logger.remove(handler)


@pytest.mark.parametrize("edit", [e for _, e in WEIRD], ids=[i for i, _ in WEIRD])
def test_trimmed_parse_is_the_full_parse(plan: Plan, spine_text: str, edit: Callable[[str], str],
                                         tmp_path: Path) -> None:
    text = edit(spine_text)
    lines = text.splitlines()
    full = parse(lines)
    assert parse_config(lines).cfg == full
    for p in (plan, None):
        assert check_parsed(full, SPINE, p, "nxos.cfg") == check_nxos_text(text, SPINE, p, "nxos.cfg")
    path = tmp_path / SPINE / "nxos.cfg"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    findings, facts = analyze_nxos(plan, tmp_path, SPINE)
    assert findings == check_parsed(full, SPINE, plan, str(path))
    assert facts == nxos_facts(plan, SPINE, lines, full, str(path), bgp_line=trailing_bgp(lines) or None)


def test_trimming_drops_what_it_should(spine_text: str) -> None:
    lines = spine_text.splitlines()
    bgp = trailing_bgp(lines)
    assert bgp and lines[bgp - 1].startswith("router bgp ")
    kept = kept_lines(lines, bgp - 1)
    dropped = {lines[i].strip().split()[0] for i in range(bgp - 1) if i not in set(kept)}
    assert dropped == {"description", "no", "shutdown"} or dropped == {"description", "no"}
    assert len(kept) < 0.8 * (bgp - 1)
    assert all(lines[i].strip() != "no switchport" for i in range(bgp - 1) if i not in set(kept))


def test_non_trailing_bgp_block_facts(plan: Plan, spine_text: str, tmp_path: Path) -> None:
    """A `router bgp` block followed by another section is parsed whole, and its facts come from its own line."""
    text = spine_text + "interface Ethernet1/99\n  description late\n  no shutdown\n"
    path = tmp_path / SPINE / "nxos.cfg"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    findings, facts = analyze_nxos(plan, tmp_path, SPINE)
    head = next(i for i, raw in enumerate(text.splitlines(), 1) if raw.startswith("router bgp "))
    assert facts.bgp_loc == f"L{head}"
    assert facts.bgp_asn == plan.switches[SPINE].asn
    assert len(facts.neighbors) == sum(1 for ln in text.splitlines() if ln.startswith("  neighbor "))
    assert findings == []
