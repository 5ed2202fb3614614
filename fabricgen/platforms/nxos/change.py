"""What a change does on NX-OS, and how to drain the switch first (``graceful-shutdown activate``)."""

from __future__ import annotations

from collections.abc import Sequence

from fabricgen.platforms.change import Change, Context, Hunk, Impact, Label, with_bgp_line

DRAIN_LINE = "  graceful-shutdown activate"

_NXOS_PORT_FLAP = ("mtu", "speed", "fec", "duplex", "channel-group", "switchport", "no switchport")


def nxos_rule(c: Change) -> Impact:
    text, top = c.text, c.path[0] if c.path else c.text
    if c.whole and c.sign == "+":
        return Impact(Label.HITLESS, f"part of the new `{c.path[-1]}`")
    if not c.path:
        if text.startswith("feature "):
            return Impact(Label.HITLESS, "a feature is enabled") if c.sign == "+" else \
                Impact(Label.DAEMON_RESTART, "a feature is disabled: its process stops")
        if text.startswith("hardware profile dlb"):
            return Impact(Label.RELOAD_REQUIRED, "NX-OS applies `hardware profile dlb` only after a reload")
        if text.startswith("interface breakout"):
            return Impact(Label.PORT_FLAP, "breakout re-creates the ports")
        if text.startswith("router bgp "):
            return Impact(Label.BGP_RESET, "the BGP instance is removed and created again: every session resets")
        if text.startswith(("hostname ", "ip load-sharing", "bfd interval", "priority-flow-control watch-dog",
                            "priority-flow-control auto-restore")):
            why = {"ip load-sharing": "ECMP rehash: flows may move to other paths (brief reordering)"}
            return Impact(Label.HITLESS, next((v for k, v in why.items() if text.startswith(k)),
                                        "global timer or name: applies at once"))
        if text.startswith(("interface ", "route-map ", "ip prefix-list ", "ipv6 prefix-list ", "system qos",
                            "policy-map ", "class-map ")):
            return _nxos_stanza(text, text, c.sign, header=True)
        return Impact(Label.DAEMON_RESTART, f"no impact rule for `{text}`: assumed the worst short of a reload")
    return _nxos_stanza(top, text, c.sign, path=c.path)


def _nxos_stanza(top: str, text: str, sign: str, header: bool = False, path: tuple[str, ...] = ()) -> Impact:
    if top.startswith("hardware profile dlb"):
        return Impact(Label.RELOAD_REQUIRED, "NX-OS applies `hardware profile dlb` only after a reload")
    if top == "system qos" or top.startswith(("policy-map type network-qos", "class-map type network-qos")):
        return Impact(Label.BUFFER_RECARVE, "network-qos (no-drop, pause, class MTU): buffers re-carved, lossless "
                                      "traffic pauses")
    if top.startswith(("policy-map type qos", "class-map type qos")):
        return Impact(Label.BUFFER_RECARVE, "DSCP classification: traffic changes queue mid-flight")
    if top.startswith("policy-map type queuing"):
        if text.startswith("pause"):
            return Impact(Label.BUFFER_RECARVE, "ingress pause buffer and thresholds re-carved")
        return Impact(Label.HITLESS, "scheduling or ECN of a queue: applies at once")
    if top.startswith(("class-map type queuing", "route-map ", "ip prefix-list", "ipv6 prefix-list")):
        return Impact(Label.HITLESS, "matching or routing policy: applies at once, sessions stay up")
    if top.startswith("interface "):
        if header:
            return Impact(Label.HITLESS, "stanza header; its lines carry the impact")
        if text.startswith("description") or text in ("no ip redirects", "no shutdown"):
            return Impact(Label.HITLESS, "description or a port coming up")
        if text == "shutdown":
            return Impact(Label.PORT_FLAP, "the port is shut down")
        if text.startswith(_NXOS_PORT_FLAP):
            return Impact(Label.PORT_FLAP, f"`{text.split()[0]}` takes the port down and up")
        if text.startswith(("priority-flow-control", "service-policy")):
            if "watch-dog" in text:
                return Impact(Label.HITLESS, "PFC watchdog on the port")
            return Impact(Label.BUFFER_RECARVE, "PFC or QoS policy on the port re-programs its buffers")
        if text.startswith(("ip address", "ipv6 address")):
            return Impact(Label.BGP_RESET, "an address is removed: the sessions over it drop") if sign == "-" else \
                Impact(Label.HITLESS, "an address is added")
        return Impact(Label.PORT_FLAP, f"interface setting `{text}`: assumed to flap the port")
    if top.startswith("router bgp "):
        if header:
            return Impact(Label.BGP_RESET, "the BGP instance is removed and created again")
        inner = path[1] if len(path) > 1 else ""
        if text.startswith("router-id"):
            return Impact(Label.BGP_RESET, "a new router-id resets every session")
        if text.startswith("timers bgp") or (inner.startswith("neighbor ") and text.startswith("timers")):
            return Impact(Label.BGP_RESET, "keepalive/hold apply only when a session re-establishes")
        if text.startswith("neighbor ") and len(path) == 1:
            return Impact(Label.HITLESS, "a new session") if sign == "+" else \
                Impact(Label.BGP_RESET, "a session is removed")
        if inner.startswith("neighbor "):
            if text.startswith(("remote-as", "update-source", "password", "local-as", "ebgp-multihop")):
                return Impact(Label.BGP_RESET, f"`{text.split()[0]}` resets the session")
            if text.startswith("address-family"):
                return Impact(Label.BGP_RESET, "activating or removing an address family renegotiates the session")
            return Impact(Label.HITLESS, "per-session policy, BFD or description: the session stays up")
        return Impact(Label.HITLESS, "best-path, multipath or origination: routes are recomputed, sessions stay up")
    return Impact(Label.DAEMON_RESTART,
                  f"no impact rule for `{text}` under `{top}`: assumed the worst short of a reload")


def impact(hunks: list[Hunk], ctx: Context, sides: dict[str, tuple[Sequence[str], Sequence[str]]] | None) -> None:
    for hunk in hunks:
        hunk.impacts = [nxos_rule(c) for c in hunk.changes]


def drained(candidate: str, on: bool = True) -> str:
    return with_bgp_line(candidate, on, DRAIN_LINE)
