"""What a change does on Linux + FRR (and to SONiC's frr.conf), and how to drain the switch first.

Drain: ``bgp graceful-shutdown`` under ``router bgp``: every route leaves with the GRACEFUL_SHUTDOWN
community (RFC 8326), which fabricgen's import policy turns into LOCAL_PREF 0 on the receivers.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from fabricgen.platforms.change import Change, Context, Hunk, Impact, Label, with_bgp_line
from fabricgen.platforms.linuxptp import CONF_FILE as PTP_CONF

DRAIN_LINE = " bgp graceful-shutdown"

_BGP_RESET_NEIGHBOR = re.compile(r"^neighbor \S+ (remote-as|timers|update-source|ebgp-multihop|password|local-as|"
                                 r"capability|shutdown|port|ttl-security|interface)\b")
_HITLESS_NEIGHBOR = re.compile(r"^neighbor \S+ (description|bfd|route-map|prefix-list|filter-list|allowas-in|"
                               r"soft-reconfiguration|next-hop-self|send-community|weight|maximum-prefix|"
                               r"advertisement-interval|default-originate|as-override|remove-private-AS)\b")


_NEIGHBOR_AS = re.compile(r"^neighbor (\S+) remote-as ")


def session_changes(changes: Iterable[Change]) -> tuple[set[str], set[str]]:
    """Neighbors a diff adds and removes as a whole (a ``remote-as`` line on one side only)."""
    added: set[str] = set()
    removed: set[str] = set()
    for c in changes:
        m = _NEIGHBOR_AS.match(c.text)
        if m:
            (added if c.sign == "+" else removed).add(m.group(1))
    return added - removed, removed - added


def frr_rule(c: Change, new_sessions: set[str] | None = None, gone_sessions: set[str] | None = None) -> Impact:
    """FRR config lines (frr.conf on Linux + FRR and SONiC); ``new_sessions``/``gone_sessions`` are the
    neighbors the whole diff adds or removes (their other lines share that fate)."""
    text, top = c.text, c.path[0] if c.path else c.text
    m = re.match(r"^neighbor (\S+) ", text)
    if m and top.startswith("router bgp ") and not _NEIGHBOR_AS.match(text):
        if m.group(1) in (new_sessions or set()):
            return Impact(Label.HITLESS, f"part of the new session to {m.group(1)}")
        if m.group(1) in (gone_sessions or set()):
            return Impact(Label.BGP_RESET, f"part of the session to {m.group(1)}, which is removed")
    if text.startswith("frr version") or text in ("end", "exit", "!", "exit-address-family"):
        return Impact(Label.HITLESS, "not config (a version banner or a stanza end)")
    tenant = _tenant_rule(c, text, top)
    if tenant is not None:
        return tenant
    if not c.path:
        if text.startswith("frr defaults"):
            return Impact(Label.DAEMON_RESTART, "FRR reads `frr defaults` only when its daemons start: restart them")
        if text.startswith("router bgp "):
            return Impact(Label.BGP_RESET, "the BGP instance is deleted and created again: every session resets")
        if text.startswith(("hostname ", "log ", "service ", "line vty", "ip route ", "ipv6 route ")):
            return Impact(Label.HITLESS, "host setting or static route")
        if text.startswith(("ip prefix-list ", "ipv6 prefix-list ", "route-map ", "bgp as-path ",
                            "bgp community-list ", "bgp large-community-list ")):
            return Impact(Label.HITLESS, "routing policy: applied by a route refresh, sessions stay up")
        if re.match(r"^interface \S+ vrf \S+$", text):
            return Impact(Label.BGP_RESET, "the port moves between VRFs: its address leaves the old VRF, and traffic "
                                           "and sessions over it drop")
        if text.startswith(("interface ", "bfd")):
            return Impact(Label.HITLESS, "stanza header; its lines carry the impact")
        return Impact(Label.DAEMON_RESTART, f"no impact rule for `{text}`: assumed the worst short of a reload")
    if top.startswith("interface "):
        if text.startswith(("ip address", "ipv6 address")):
            if c.sign == "-":
                return Impact(Label.BGP_RESET, "an address is removed: the sessions over it drop")
            return Impact(Label.HITLESS, "an address is added")
        if text == "shutdown":
            return Impact(Label.PORT_FLAP, "the port is shut down") if c.sign == "+" else \
                Impact(Label.PORT_FLAP, "the port comes up")
        if text.startswith("description"):
            return Impact(Label.HITLESS, "description only")
        return Impact(Label.PORT_FLAP, f"interface setting `{text}`: assumed to flap the port")
    if top.startswith(("ip prefix-list", "ipv6 prefix-list", "route-map ", "bgp as-path", "bgp community-list")):
        return Impact(Label.HITLESS, "routing policy: applied by a route refresh, sessions stay up")
    if top == "bfd":
        return Impact(Label.HITLESS, "BFD timers: renegotiated with a poll sequence, sessions stay up")
    if top.startswith("router bgp "):
        if text.startswith("bgp router-id"):
            return Impact(Label.BGP_RESET, "a new router-id resets every session")
        if text.startswith("timers bgp") or re.match(r"^neighbor \S+ timers", text):
            return Impact(Label.BGP_RESET, "keepalive/hold apply only when a session re-establishes (validate's "
                                     "`timers` check names sessions still on the old ones)")
        if text.startswith("address-family") and len(c.path) == 1:
            return Impact(Label.HITLESS, "stanza header; its lines carry the impact")
        if re.match(r"^neighbor \S+ activate", text):
            return Impact(Label.BGP_RESET, "activating or deactivating an address family renegotiates the session")
        if re.match(r"^neighbor \S+ remote-as", text):
            if c.sign == "+":
                return Impact(Label.HITLESS, "a new session (a changed peer AS shows its removal too)")
            return Impact(Label.BGP_RESET, "the session is removed or its peer AS changes")
        if _BGP_RESET_NEIGHBOR.match(text):
            return Impact(Label.BGP_RESET, f"`{text.split()[2]}` resets the session")
        if _HITLESS_NEIGHBOR.match(text):
            return Impact(Label.HITLESS, "per-session policy or description: route refresh, the session stays up")
        if text.startswith(("bgp bestpath", "maximum-paths", "redistribute", "network ", "no bgp default",
                            "bgp log-neighbor-changes", "aggregate-address", "bgp deterministic-med")):
            return Impact(Label.HITLESS, "best-path or origination: routes are recomputed, sessions stay up")
        return Impact(Label.BGP_RESET, f"no impact rule for `{text}` under router bgp: assumed to reset sessions")
    return Impact(Label.DAEMON_RESTART,
                  f"no impact rule for `{text}` under `{top}`: assumed the worst short of a reload")


_VRF_BGP = re.compile(r"^router bgp \S+ vrf \S+$")


def _tenant_rule(c: Change, text: str, top: str) -> Impact | None:
    """A tenant VRF (`vrf X`, its `vni`/`netns`) and its BGP instance (`router bgp N vrf X`) touch only that
    tenant: added, nothing running changes (hitless); removed or changed, that tenant's routes are withdrawn
    and advertised again (bgp-reset of that tenant only).  None: not a tenant line."""
    if not c.path and (text.startswith("vrf ") or _VRF_BGP.match(text)):
        what = "tenant VRF" if text.startswith("vrf ") else "tenant's BGP instance"
        if c.sign == "+":
            return Impact(Label.HITLESS, f"a new {what}: the default VRF and every other tenant are untouched")
        return Impact(Label.BGP_RESET, f"the {what} goes: that tenant's routes are withdrawn")
    if top.startswith("vrf ") or _VRF_BGP.match(top):
        if c.sign == "+":
            return Impact(Label.HITLESS, f"part of {top}: one tenant's VRF, nothing else changes")
        return Impact(Label.BGP_RESET, f"part of {top}: that tenant's routes are withdrawn and advertised again")
    return None


def removed_tenants(changes: Iterable[Change]) -> dict[str, str]:
    """The tenant VRFs a diff removes as a whole (its ``vrf X`` stanza removed, not added back) and the ports they
    held: {port: VRF}, each VRF also under its own name's key ``vrf X``."""
    changes = list(changes)
    gone = {c.text.split()[1] for c in changes if not c.path and c.sign == "-" and re.match(r"^vrf \S+$", c.text)}
    gone -= {c.text.split()[1] for c in changes if not c.path and c.sign == "+" and re.match(r"^vrf \S+$", c.text)}
    out = {f"vrf {v}": v for v in gone}
    for c in changes:
        m = re.match(r"^interface (\S+) vrf (\S+)$", c.path[0] if c.path else c.text)
        if m and m.group(2) in gone and c.sign == "-":
            out[m.group(1)] = m.group(2)
    return out


def label_removed_tenants(hunks: list[Hunk]) -> None:
    """Relabel what removing a tenant as a whole changes (docs/tenants.md "Deploy"): its VRF and BGP instance
    withdraw that tenant's routes (bgp-reset, "tenant X removed"); each of its ports leaves the tenant's namespace
    for the switch's, where it comes back up with its default-VRF address (port-flap: the link goes down and up).
    Every other line keeps its label: the other tenants' are untouched."""
    gone = removed_tenants(c for h in hunks for c in h.changes)
    if not gone:
        return
    for hunk in hunks:
        for i, c in enumerate(hunk.changes):
            top = c.path[0] if c.path else c.text
            words = top.split()
            vrf = gone.get(top) if top.startswith("vrf ") else (
                gone.get(f"vrf {words[-1]}") if _VRF_BGP.match(top) else None)
            if vrf is not None:
                hunk.impacts[i] = Impact(Label.BGP_RESET, f"tenant {vrf} removed: its VRF goes and its routes are "
                                                          "withdrawn (the namespace goes after FRR lets go of it)")
            elif words[:1] == ["interface"] and len(words) > 1 and words[1] in gone:
                hunk.impacts[i] = Impact(Label.PORT_FLAP, f"tenant {gone[words[1]]} removed: port {words[1]} goes back "
                                                          "to the switch's namespace (its link goes down and up) and "
                                                          "takes its default-VRF address")


PTP_ONLY = Impact(Label.HITLESS, "PTP only (linuxptp's ptp4l.conf): ptp4l restarts and the clocks behind it re-sync; "
                                 "no route, session or port changes, traffic flows on")


def impact(hunks: list[Hunk], ctx: Context, sides: dict[str, tuple[Sequence[str], Sequence[str]]] | None) -> None:
    """frr.conf rules, sessions a diff adds or removes as a whole known across the file's hunks; a service file
    beside it (napalm_frr.services: ptp4l.conf) restarts its own daemon only."""
    for hunk in hunks:
        if posixpath.basename(hunk.file) == PTP_CONF:
            hunk.impacts = [PTP_ONLY for _ in hunk.changes]
    frr = [h for h in hunks if posixpath.basename(h.file) != PTP_CONF]
    label_frr(frr, frr_rule)
    label_removed_tenants(frr)


def label_frr(hunks: list[Hunk], rule: Callable[[Change, set[str] | None, set[str] | None], Impact]) -> None:
    """Label FRR-like config text (FRR, EOS) with `rule`, given the sessions the diff adds and removes."""
    added, removed = session_changes(c for h in hunks for c in h.changes)
    for hunk in hunks:
        hunk.impacts = [rule(c, added, removed) for c in hunk.changes]


def drained(candidate: str, on: bool = True) -> str:
    """The candidate with (or without) the drain line; a bundle's (render.manifest.candidate_config) frr.conf."""
    if not candidate.lstrip().startswith("{"):
        return with_bgp_line(candidate, on, DRAIN_LINE)
    bundle = json.loads(candidate)
    bundle["frr.conf"] = with_bgp_line(bundle["frr.conf"], on, DRAIN_LINE)
    return json.dumps(bundle, indent=2, sort_keys=True)
