"""get_bgp_neighbors and get_bgp_neighbors_detail: ``show bgp vrf all summary json`` with ``show bgp vrf all
neighbors json`` (router-ids, accepted prefixes, timers and message counts exist only there)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from napalm.base import models

from napalm_frr.parsers.decode import to_int

_AFI_NAMES = {
    "ipv4Unicast": "ipv4",
    "ipv6Unicast": "ipv6",
    "ipv4Multicast": "ipv4_multicast",
    "ipv6Multicast": "ipv6_multicast",
    "ipv4LabeledUnicast": "ipv4_labeled_unicast",
    "ipv6LabeledUnicast": "ipv6_labeled_unicast",
    "ipv4Vpn": "ipv4_vpn",
    "ipv6Vpn": "ipv6_vpn",
    "ipv4Flowspec": "ipv4_flowspec",
    "ipv6Flowspec": "ipv6_flowspec",
    "l2VpnEvpn": "l2vpn_evpn",
}


def afi_name(frr_afi: str) -> str:
    if frr_afi in _AFI_NAMES:
        return _AFI_NAMES[frr_afi]
    return re.sub(r"(?<!^)([A-Z])", r"_\1", frr_afi).lower()


def napalm_vrf(vrf: str) -> str:
    """napalm names the default VRF ``global``."""
    return "global" if vrf == "default" else vrf


def _neighbor_entries(vrf_obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Peers in one VRF of ``show bgp vrf all neighbors json`` (mixed with vrfId/vrfName keys)."""
    for key, val in vrf_obj.items():
        if isinstance(val, dict) and ("remoteAs" in val or "bgpState" in val):
            yield key, val


def _peer_disabled(state: str, peer_state: str = "") -> bool:
    return peer_state == "Admin" or "(Admin)" in state


def parse_bgp_neighbors(
    summary: dict[str, Any], neighbors: dict[str, Any] | None = None
) -> dict[str, models.BGPStateNeighborsPerVRFDict]:
    """``show bgp vrf all summary json`` (+ ``show bgp vrf all neighbors json``) -> get_bgp_neighbors().

    Per address family: received_prefixes = pfxRcd, sent_prefixes = pfxSnt (summary);
    accepted_prefixes = acceptedPrefixCounter from the neighbors output (pfxRcd when
    that is missing).  remote_id (the peer's router-id) only exists in the neighbors
    output; without it remote_id is "".
    """
    neighbors = neighbors or {}
    out: dict[str, models.BGPStateNeighborsPerVRFDict] = {}
    for vrf, afis in summary.items():
        if not isinstance(afis, dict):
            continue
        vrf_name = napalm_vrf(vrf)
        detail = dict(_neighbor_entries(neighbors.get(vrf, {}))) if isinstance(neighbors.get(vrf), dict) else {}
        entry = out.setdefault(vrf_name, {"router_id": "", "peers": {}})
        for frr_afi, af in afis.items():
            if not isinstance(af, dict):
                continue
            if not entry["router_id"] and af.get("routerId"):
                entry["router_id"] = str(af["routerId"])
            for peer, p in (af.get("peers") or {}).items():
                d = detail.get(peer, {})
                state = str(p.get("state", ""))
                peer_entry = entry["peers"].get(peer)
                if peer_entry is None:
                    peer_entry = {
                        "local_as": to_int(p.get("localAs", af.get("as"))),
                        "remote_as": to_int(p.get("remoteAs")),
                        "remote_id": str(d.get("remoteRouterId", "")),
                        "is_up": state == "Established",
                        "is_enabled": not _peer_disabled(state, str(p.get("peerState", ""))),
                        "description": str(p.get("desc", d.get("nbrDesc", "")) or ""),
                        "uptime": to_int(p.get("peerUptimeMsec")) // 1000,
                        "address_family": {},
                    }
                    entry["peers"][peer] = peer_entry
                afi_detail = (d.get("addressFamilyInfo") or {}).get(frr_afi, {})
                received = to_int(p.get("pfxRcd"))
                peer_entry["address_family"][afi_name(frr_afi)] = {
                    "received_prefixes": received,
                    "accepted_prefixes": to_int(afi_detail.get("acceptedPrefixCounter", received)),
                    "sent_prefixes": to_int(p.get("pfxSnt", afi_detail.get("sentPrefixCounter"))),
                }
    return out


def parse_bgp_neighbors_detail(neighbors: dict[str, Any], neighbor_address: str = "") -> dict[str, Any]:
    """``show bgp vrf all neighbors json`` -> get_bgp_neighbors_detail(): {vrf: {remote_as: [PeerDetailsDict]}}."""
    out: dict[str, dict[int, list[models.PeerDetailsDict]]] = {}
    for vrf, vrf_obj in neighbors.items():
        if not isinstance(vrf_obj, dict):
            continue
        for peer, d in _neighbor_entries(vrf_obj):
            if neighbor_address and peer != neighbor_address:
                continue
            afis = d.get("addressFamilyInfo") or {}
            accepted = sum(to_int(a.get("acceptedPrefixCounter")) for a in afis.values() if isinstance(a, dict))
            sent = sum(to_int(a.get("sentPrefixCounter")) for a in afis.values() if isinstance(a, dict))
            msgs = d.get("messageStats") or {}
            import_pol = ",".join(
                str(a.get("routeMapForIncomingAdvertisements", "")) for a in afis.values()
                if isinstance(a, dict) and a.get("routeMapForIncomingAdvertisements"))
            export_pol = ",".join(
                str(a.get("routeMapForOutgoingAdvertisements", "")) for a in afis.values()
                if isinstance(a, dict) and a.get("routeMapForOutgoingAdvertisements"))
            state = str(d.get("bgpState", ""))
            remote_as = to_int(d.get("remoteAs"))
            record: models.PeerDetailsDict = {
                "up": state == "Established",
                "local_as": to_int(d.get("localAs")),
                "remote_as": remote_as,
                "router_id": str(d.get("localRouterId", "")),
                "local_address": str(d.get("hostLocal", "")),
                "routing_table": str(vrf_obj.get("vrfName", vrf)),
                "local_address_configured": bool(d.get("updateSource")),
                "local_port": to_int(d.get("portLocal")),
                "remote_address": str(d.get("hostForeign", peer)),
                "remote_port": to_int(d.get("portForeign")),
                "multihop": to_int(d.get("externalBgpNbrMaxHopsAway"), 1) > 1,
                "multipath": False,
                "remove_private_as": any(
                    isinstance(a, dict) and any(k.startswith("privateAsNumsRemoved") for k in a)
                    for a in afis.values()),
                "import_policy": import_pol,
                "export_policy": export_pol,
                "input_messages": to_int(msgs.get("totalRecv")),
                "output_messages": to_int(msgs.get("totalSent")),
                "input_updates": to_int(msgs.get("updatesRecv")),
                "output_updates": to_int(msgs.get("updatesSent")),
                "messages_queued_out": to_int(msgs.get("depthOutq")),
                "connection_state": state,
                "previous_connection_state": "",
                "last_event": str(d.get("lastResetDueTo", "")),
                "suppress_4byte_as": (d.get("neighborCapabilities") or {}).get("4byteAs") is None,
                "local_as_prepend": False,
                "holdtime": to_int(d.get("bgpTimerHoldTimeMsecs")) // 1000,
                "configured_holdtime": to_int(d.get("bgpTimerConfiguredHoldTimeMsecs")) // 1000,
                "keepalive": to_int(d.get("bgpTimerKeepAliveIntervalMsecs")) // 1000,
                "configured_keepalive": to_int(d.get("bgpTimerConfiguredKeepAliveIntervalMsecs")) // 1000,
                "active_prefix_count": accepted,
                "received_prefix_count": accepted,
                "accepted_prefix_count": accepted,
                "suppressed_prefix_count": 0,
                "advertised_prefix_count": sent,
                "flap_count": to_int(d.get("connectionsDropped")),
            }
            out.setdefault(napalm_vrf(vrf), {}).setdefault(remote_as, []).append(record)
    return out
