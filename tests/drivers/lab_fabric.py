"""The 2-switch lab the driver's live tests (and the output recorder) run against.

sw1 Ethernet0 <-> sw2 Ethernet0 and sw1 Ethernet8 <-> sw2 Ethernet8: two parallel
eBGP sessions, so each switch reaches the other's loopback over 2 ECMP next hops.
The lab starts with FRR holding only ``hostname``; the driver pushes the real configs
(``frr defaults datacenter``, so no ``no bgp ebgp-requires-policy``: like fabricgen's
templates, they restate no default, which keeps ``frr-reload --test`` empty after a commit).
Every address is in 198.18.0.0/15.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from fabricgen.lab import LabLink, LabNode, LabTopology

T = TypeVar("T")

MGMT_SUBNET = "198.18.253.0/24"
MGMT = {"sw1": "198.18.253.11", "sw2": "198.18.253.12"}
LOOPBACK = {"sw1": "198.19.250.1", "sw2": "198.19.250.2"}
ASN = {"sw1": 65001, "sw2": 65002}
# (port, sw1 address, sw2 address)
LINKS = (("Ethernet0", "198.19.10.0", "198.19.10.1"), ("Ethernet8", "198.19.10.2", "198.19.10.3"))


def frr_config(node: str, extra_bgp: str = "", extra_top: str = "") -> str:
    """The FRR config fabricgen would render for ``node`` (sw1 or sw2)."""
    peer = "sw2" if node == "sw1" else "sw1"
    mine = 1 if node == "sw1" else 2
    lines = ["frr defaults datacenter", f"hostname {node}", "service integrated-vtysh-config", "!"]
    if extra_top:
        lines += [extra_top.rstrip("\n"), "!"]
    for port, a1, a2 in LINKS:
        addr = a1 if mine == 1 else a2
        lines += [f"interface {port}", f" description to {peer} {port}", f" ip address {addr}/31", "!"]
    lines += ["interface lo", f" ip address {LOOPBACK[node]}/32", "!"]
    lines += [f"router bgp {ASN[node]}", f" bgp router-id {LOOPBACK[node]}",
              " bgp bestpath as-path multipath-relax"]
    for port, a1, a2 in LINKS:
        nbr = a2 if mine == 1 else a1
        lines += [f" neighbor {nbr} remote-as {ASN[peer]}", f" neighbor {nbr} description {peer}-{port}",
                  f" neighbor {nbr} timers 3 9", f" neighbor {nbr} timers connect 1"]
    if extra_bgp:
        lines.append(extra_bgp.rstrip("\n"))
    lines += [" !", " address-family ipv4 unicast", f"  network {LOOPBACK[node]}/32", "  maximum-paths 64",
              " exit-address-family", "exit", "!"]
    return "\n".join(lines) + "\n"


def topology(workdir: str, name: str) -> LabTopology:
    return LabTopology(
        name=name,
        nodes=tuple(LabNode(n, "switch", MGMT[n]) for n in ("sw1", "sw2")),
        links=tuple(LabLink("sw1", port, "sw2", port) for port, _, _ in LINKS),
        mgmt_subnet=MGMT_SUBNET,
        workdir=workdir,
    )


def optional_args(key_file: str, known_hosts: str) -> dict[str, Any]:
    """Key auth with the lab key, host keys checked against the lab's known_hosts;
    verify_reload on: these configs restate no FRR default."""
    return {"key_file": key_file, "use_keys": True, "allow_agent": False, "known_hosts": known_hosts,
            "verify_reload": True}


def poll(fn: Callable[[], T | None], timeout: float, what: str) -> T:
    """Retry ``fn`` until it returns something truthy; raise TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 - a getter may fail while daemons converge
            result, last = None, exc
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last error: {last})")
        time.sleep(0.3)


def bgp_up(driver: Any, count: int = 2) -> bool:
    peers = driver.get_bgp_neighbors().get("global", {}).get("peers", {})
    return sum(1 for p in peers.values() if p["is_up"] and p["address_family"]["ipv4"]["received_prefixes"]) \
        >= count


def lldp_ports(driver: Any, count: int = 2) -> bool:
    return len(driver.get_lldp_neighbors()) >= count
