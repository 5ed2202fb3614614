"""The indentation tree of an NX-OS config, and what the NX-OS check reads through it."""

from __future__ import annotations

import re

import pytest

from fabricgen.base.config_tree import ConfigLine, parse_tree
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.nxos import render as nxos
from fabricgen.platforms.nxos.check import check_nxos_text, parse
from fabricgen.render.build import environment
from tests.conftest import EXAMPLE

SPINE = "ai256-spine01"


def shape(nodes: list[ConfigLine]) -> list[tuple[int, str, list]]:  # type: ignore[type-arg]
    return [(n.line, n.text, shape(n.children)) for n in nodes]


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def spine_text(plan: Plan) -> str:
    return str(nxos.render(plan.switches[SPINE], plan, environment())["nxos.cfg"])


def test_parent_is_the_closest_config_line_above_with_a_smaller_indent() -> None:
    text = """\
router bgp 65000
  router-id 198.18.0.1
  neighbor 198.18.16.1
    remote-as 65001
      address-family ipv4 unicast
   description odd indent
 neighbor 198.18.16.3
    remote-as 65003
interface Ethernet1/1
  mtu 9216
"""
    assert shape(parse_tree(text.splitlines())) == [
        (1, "router bgp 65000", [
            (2, "router-id 198.18.0.1", []),
            (3, "neighbor 198.18.16.1", [
                (4, "remote-as 65001", [(5, "address-family ipv4 unicast", [])]),
                (6, "description odd indent", []),
            ]),
            (7, "neighbor 198.18.16.3", [(8, "remote-as 65003", [])]),
        ]),
        (9, "interface Ethernet1/1", [(10, "mtu 9216", [])]),
    ]  # fmt: skip


def test_comments_and_blank_lines_are_no_config_but_keep_line_numbers() -> None:
    text = "!Command: show running-config\n\nfeature bgp\n  ! a comment\n   \n\t\n  bgp child\r\n!\nvrf context x\n"
    assert shape(parse_tree(text.splitlines())) == [
        (3, "feature bgp", [(7, "bgp child", [])]),
        (9, "vrf context x", []),
    ]


def test_an_indented_line_without_a_parent_is_a_root() -> None:
    (node,) = parse_tree(["  mtu 9216", "    child"])
    assert (node.indent, node.text, [c.text for c in node.children]) == (2, "mtu 9216", ["child"])


def test_banner_body_is_text_not_config() -> None:
    text = """\
banner motd #
router bgp 1
  neighbor 9.9.9.9
#
banner exec @one line@
hostname x
"""
    assert shape(parse_tree(text.splitlines())) == [
        (1, "banner motd #", []),
        (5, "banner exec @one line@", []),
        (6, "hostname x", []),
    ]


def test_descendants_in_file_order_with_depth() -> None:
    (root,) = parse_tree(["a", "  b", "    c", "  d"])
    assert [(n.text, depth) for n, depth in root.descendants()] == [("b", 1), ("c", 2), ("d", 1)]


# --------------------------------------------------------------------------- the NX-OS check on top


def test_rendered_config_parses_to_every_planned_port(plan: Plan, spine_text: str) -> None:
    cfg = parse(spine_text.splitlines())
    sw = plan.switches[SPINE]
    routed = {itf.name for itf in nxos.roce_interfaces(sw)}
    assert routed <= set(cfg.interfaces)
    assert all(cfg.interfaces[name].pfc_on and cfg.interfaces[name].mtu for name in routed)
    assert len(cfg.neighbors) == sum(1 for ln in spine_text.splitlines() if ln.startswith("  neighbor "))
    assert cfg.bgp_line == spine_text.splitlines().index(next(
        ln for ln in spine_text.splitlines() if ln.startswith("router bgp "))) + 1


def test_a_comment_is_not_a_route_map_reference(plan: Plan, spine_text: str) -> None:
    peer = re.search(r"^  neighbor \S+$", spine_text, flags=re.M)
    assert peer
    text = spine_text.replace(peer.group(0), peer.group(0) + "\n    ! route-map RM-COMMENTED out", 1)
    assert check_nxos_text(text, SPINE, plan) == []
    used = text.replace("! route-map RM-COMMENTED out", "route-map RM-USED out", 1)
    (finding,) = check_nxos_text(used, SPINE, plan)
    assert (finding.rule, finding.message) == ("nxos-undefined-ref", "route-map RM-USED is used but not defined")


def test_a_banner_cannot_hide_or_fake_config(plan: Plan, spine_text: str) -> None:
    lines = spine_text.splitlines()
    fake = ["banner motd #", "router bgp 1", "  neighbor 9.9.9.9 route-map NOWHERE out", "#"]
    cfg = parse(fake + lines)
    assert cfg == parse(["banner motd #one line#", "", "", "", *lines]) and cfg.bgp_line > len(fake)
    assert check_nxos_text("\n".join(fake + lines), SPINE, plan) == []


def test_a_neighbor_nested_under_another_line_is_not_a_bgp_peer(plan: Plan, spine_text: str) -> None:
    """`neighbor` lines count as peers only directly under `router bgp`; deeper ones are sub-commands."""
    m = re.search(r"^  neighbor (\S+)$", spine_text, flags=re.M)
    assert m
    cfg = parse(spine_text.replace(m.group(0), "    neighbor " + m.group(1), 1).splitlines())
    assert m.group(1) not in {n.name for n in cfg.neighbors}
    assert len(cfg.neighbors) == len(parse(spine_text.splitlines()).neighbors) - 1
