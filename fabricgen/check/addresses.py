"""Every address once across the fabric: duplicates in the rendered (or hand-edited) switch configs.

The plan gives out each address once (`underlay.check_unique`); this rule proves the files do
too, so a hand edit that reuses a loopback or a link address is caught before deploy.  It
reads the addresses `check.extract` takes from every platform's config (any interface:
fabric and GPU ports, loopbacks, management; IPv4 and IPv6).  NIC addresses in the server
scripts are compared with the plan by ``nic-address``.

Rule: ``addr-duplicate`` (catalog/rules.py).
"""

from __future__ import annotations

import ipaddress

from fabricgen.base.findings import Finding
from fabricgen.catalog.rules import ids
from fabricgen.plan.model import Plan
from fabricgen.plan.underlay import planned_addresses
from fabricgen.platforms.facts import DeviceFacts

RULES = ids("config", "addr-")
(DUPLICATE,) = RULES
_LOOPBACK_NAMES = ("lo", "loopback")


def _canonical(address: str) -> str:
    """'2001:DB8:0::1/128' and '2001:db8::1' are one address; IPv4 text is already canonical."""
    ip = address.partition("/")[0]
    if ":" not in ip:
        return ip
    try:
        return str(ipaddress.IPv6Address(ip))
    except ValueError:
        return ip


def _kind(interface: str) -> str:
    return "loopback" if interface.lower().startswith(_LOOPBACK_NAMES) else "address"


def check_addresses(plan: Plan, facts: dict[str, DeviceFacts]) -> list[Finding]:
    """One finding per holder of an address that more than one interface configures."""
    holders: dict[str, list[tuple[str, str, str, str]]] = {}  # address -> [(device, interface, text, loc)]
    for host, f in facts.items():
        for interface, text, loc in f.addresses:
            holders.setdefault(_canonical(text), []).append((host, interface, text, loc))
    dupes = {addr: where for addr, where in holders.items() if len(where) > 1}
    if not dupes:
        return []
    owner = {addr: device for addr, device, _ in planned_addresses(plan) if addr in dupes}
    findings = []
    for addr, where in dupes.items():
        planned = owner.get(addr)
        rightful = [w for w in where if w[0] == planned][:1]  # the plan's holder keeps it
        for device, interface, text, loc in where:
            if (device, interface, text, loc) in rightful:
                continue
            others = ", ".join(f"{d} {i}" for d, i, _, _ in where if (d, i) != (device, interface))
            whose = f"the plan gives it to {planned}" if planned else "the plan gives it to no device"
            findings.append(Finding(device, facts[device].file_for(loc), loc, DUPLICATE,
                                    f"{_kind(interface)} {text} on {interface} is also configured on {others} "
                                    f"({whose}): one of them must change"))
    return findings
