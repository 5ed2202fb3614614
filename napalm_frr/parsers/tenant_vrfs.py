"""What the tenant VRF setup reads: the VRFs, L3VNIs and per-VRF stanzas a candidate frr.conf binds to
network namespaces, and zebra's ``show vrf`` / ``show evpn vni <vni> json`` / ``show interface vrf X json``
saying which of them are live."""

from __future__ import annotations

import json


def netns_lines(config: str) -> dict[str, str]:
    """Each VRF an frr.conf binds to a network namespace and its ``netns <path>`` line (stripped)."""
    out: dict[str, str] = {}
    vrf = ""
    for line in config.splitlines():
        if line.startswith("vrf ") and len(line.split()) == 2:
            vrf = line.split()[1]
        elif not line.startswith(" "):
            vrf = ""
        elif vrf and line.split()[:1] == ["netns"]:
            out[vrf] = line.strip()
    return out


def netns_vrfs(config: str) -> set[str]:
    """The VRFs an frr.conf binds to a network namespace (``vrf X`` with a ``netns <path>`` line)."""
    return set(netns_lines(config))

def netns_l3vnis(config: str) -> dict[str, int]:
    """The L3VNI of each VRF an frr.conf binds to a network namespace (``vrf X`` with ``vni N`` and ``netns``)."""
    vnis: dict[str, int] = {}
    vrf = ""
    for line in config.splitlines():
        words = line.split()
        if line.startswith("vrf ") and len(words) == 2:
            vrf = words[1]
        elif not line.startswith(" "):
            vrf = ""
        elif vrf and len(words) == 2 and words[0] == "vni" and words[1].isdigit():
            vnis[vrf] = int(words[1])
    bound = netns_vrfs(config)
    return {vrf: vni for vrf, vni in sorted(vnis.items()) if vrf in bound}


def vrf_bgp_stanzas(config: str, leave_out: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Per VRF, its ``router bgp <asn> vrf <vrf>`` stanza of an frr.conf as vtysh takes it line by line
    (indent and ``!`` stripped, its ``exit``), without the lines that start with one of ``leave_out``."""
    out: dict[str, list[str]] = {}
    vrf = ""
    for line in config.splitlines():
        words = line.split()
        if line.startswith("router bgp ") and len(words) == 5 and words[3] == "vrf":
            vrf = words[4]
            out[vrf] = [line]
        elif vrf and line == "exit":
            out[vrf].append(line)
            vrf = ""
        elif not line.startswith(" "):
            vrf = ""
        elif vrf and line.strip() != "!" and not line.strip().startswith(leave_out):
            out[vrf].append(line.strip())
    return out


def vrf_interface_stanzas(config: str) -> dict[str, list[list[str]]]:
    """Per VRF, the ``interface <port> vrf <vrf>`` stanzas of an frr.conf, each as its lines (indent stripped,
    without ``exit``/``!``)."""
    out: dict[str, list[list[str]]] = {}
    stanza: list[str] | None = None
    for line in config.splitlines():
        words = line.split()
        if line.startswith("interface ") and len(words) == 4 and words[2] == "vrf":
            stanza = [line]
            out.setdefault(words[3], []).append(stanza)
        elif not line.startswith(" "):
            stanza = None
        elif stanza is not None and line.strip() not in ("!", "exit"):
            stanza.append(line.strip())
    return out


def default_vrf_interfaces(config: str) -> set[str]:
    """The ports an frr.conf has ``interface <port>`` stanzas for in the default VRF (no ``vrf`` word)."""
    return {words[1] for words in (line.split() for line in config.splitlines())
            if len(words) == 2 and words[0] == "interface"}


def l3vni_up(show_evpn_vni_json: str, vrf: str) -> bool:
    """zebra's ``show evpn vni <vni> json``: the VNI is an L3VNI of ``vrf`` whose VXLAN device and SVI zebra
    has mapped and sees up (``"state": "Up"``, zebra_vxlan.c ``zl3vni_print``); "" or an L2VNI: False."""
    try:
        doc = json.loads(show_evpn_vni_json or "{}")
    except ValueError:
        return False
    return (isinstance(doc, dict) and doc.get("type") == "L3" and doc.get("state") == "Up"
            and vrf in (doc.get("tenantVrf"), doc.get("vrf")))


def active_interfaces(show_interface_json: str) -> set[str]:
    """zebra's ``show interface vrf X json``: the interfaces it has as kernel devices in that VRF (an ``index``),
    not the ``pseudoInterface`` entries it keeps for config whose device is elsewhere (a port moved out)."""
    try:
        doc = json.loads(show_interface_json or "{}")
    except ValueError:
        return set()
    if not isinstance(doc, dict):
        return set()
    return {name for name, itf in doc.items()
            if isinstance(itf, dict) and "index" in itf and not itf.get("pseudoInterface")}


def bound_vrfs(show_vrf: str) -> set[str]:
    """zebra's ``show vrf``: the active VRFs (``vrf X id N netns <path>`` / ``... table T``; not ``inactive``)."""
    return {words[1] for words in (line.split() for line in show_vrf.splitlines())
            if len(words) >= 4 and words[0] == "vrf" and words[2] == "id"}
