"""What a change does on Arista EOS, and how to drain the switch first.

Drain: maintenance mode for the whole switch (``maintenance`` / ``unit System`` / ``quiesce``; the
``maintenance.units[].quiesce`` key of Arista's AVD eos_cli_config_gen schema).  EOS then advertises
its routes with the GRACEFUL_SHUTDOWN community and LOCAL_PREF 0 (its default BGP maintenance
profile), and honours that community from its neighbors even outside maintenance mode.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricgen.platforms.change import Change, Context, Hunk, Impact, Label
from fabricgen.platforms.frr.change import frr_rule, label_frr

DRAIN = ("maintenance", "   unit System", "      quiesce")


def eos_rule(c: Change, new_sessions: set[str] | None = None, gone_sessions: set[str] | None = None) -> Impact:
    """EOS lines: global QoS maps and ``qos profile`` (applied through ``service-profile``), interfaces,
    ``router bfd`` and a flat ``router bgp`` much like FRR's."""
    text, top = c.text, c.path[0] if c.path else c.text
    if c.whole and c.sign == "+" and not top.startswith("router bgp"):
        return Impact(Label.HITLESS, f"part of the new `{c.path[-1]}`")
    if not c.path:
        if text.startswith("qos map "):
            return Impact(Label.BUFFER_RECARVE, "DSCP to traffic-class map: traffic changes queue mid-flight")
        if text.startswith("priority-flow-control pause watchdog"):
            return Impact(Label.HITLESS, "PFC watchdog timers or action: applies at once")
        if text.startswith("port-channel load-balance"):
            return Impact(Label.HITLESS, "ECMP rehash: flows may move to other paths (brief reordering)")
        if text.startswith("service routing protocols model "):
            return Impact(Label.RELOAD_REQUIRED, "the routing model (multi-agent / ribd) takes effect after a reload")
        if text.startswith(("hostname ", "ip routing", "ipv6 unicast-routing", "no ip routing")):
            return Impact(Label.HITLESS, "host setting")
        if text.startswith("router bgp "):
            return Impact(Label.BGP_RESET, "the BGP instance is removed and created again: every session resets")
        if text.startswith(("ip prefix-list ", "ipv6 prefix-list ", "route-map ")):
            return Impact(Label.HITLESS, "routing policy: applied by a route refresh, sessions stay up")
        if text.startswith(("interface ", "qos profile ", "router bfd")):
            return Impact(Label.HITLESS, "stanza header; its lines carry the impact")
        return Impact(Label.DAEMON_RESTART, f"no impact rule for `{text}`: assumed the worst short of a reload")
    if top.startswith("qos profile "):
        if "priority-flow-control" in text and "watchdog" not in text:
            return Impact(Label.BUFFER_RECARVE, "PFC / no-drop of the profile: the ports using it re-carve buffers")
        return Impact(Label.HITLESS, "scheduling, ECN or trust of a queue: applies at once")
    if top.startswith("interface "):
        if text.startswith("description"):
            return Impact(Label.HITLESS, "description only")
        if text.startswith(("ip address", "ipv6 address")):
            return Impact(Label.BGP_RESET, "an address is removed: the sessions over it drop") if c.sign == "-" else \
                Impact(Label.HITLESS, "an address is added")
        if text.startswith(("service-profile", "priority-flow-control")):
            return Impact(Label.BUFFER_RECARVE, "QoS profile or PFC of the port: its buffers are re-carved")
        if text == "no shutdown":
            return Impact(Label.HITLESS, "the port comes up")
        if text.startswith("speed "):
            return Impact(Label.PORT_FLAP, "lane speed of a split cage: the port re-initialises its SerDes lanes, "
                                     "as a breakout change does")
        return Impact(Label.PORT_FLAP, f"`{text.split()[0]}` takes the port down and up")
    if top == "router bfd":
        return Impact(Label.HITLESS, "BFD timers: renegotiated with a poll sequence, sessions stay up")
    if top.startswith("router bgp ") and text.startswith("router-id"):
        return Impact(Label.BGP_RESET, "a new router-id resets every session")
    if top.startswith("router bgp ") and text.startswith("maximum-paths"):
        return Impact(Label.HITLESS, "multipath: routes are recomputed, sessions stay up")
    return frr_rule(c, new_sessions, gone_sessions)


def impact(hunks: list[Hunk], ctx: Context, sides: dict[str, tuple[Sequence[str], Sequence[str]]] | None) -> None:
    label_frr(hunks, eos_rule)


def drained(candidate: str, on: bool = True) -> str:
    """The candidate with (or without) the switch in maintenance: the block goes before the final ``end``."""
    lines = candidate.splitlines()
    for i in range(len(lines) - len(DRAIN) + 1):
        if tuple(ln.rstrip() for ln in lines[i:i + len(DRAIN)]) == DRAIN:
            del lines[i:i + len(DRAIN)]
            if i < len(lines) and lines[i].strip() == "!" and i > 0 and lines[i - 1].strip() == "!":
                del lines[i]
            break
    if on:
        at = max((i for i, ln in enumerate(lines) if ln.strip() == "end"), default=len(lines))
        lines[at:at] = [*DRAIN, "!"]
    return "\n".join(lines) + "\n"
