"""Test and benchmark support: empty a test server of everything fabricgen pushed (fabricgen itself never deletes).

    python -m tests.sot.wipe netbox|nautobot

Deletes, through the same client libraries, every object tagged `fabricgen` (cables first, then
addresses, devices and the rest), the untaggable types fabricgen creates, and what the live tests
make by hand (HAND: reserved addresses, a moved cable; left behind when a run stops half-way), on
the test servers tests/sot/servers.py started.  Only ever pointed at those servers.
"""

from __future__ import annotations

import sys
from typing import Any

from tests.sot.servers import read_state

# endpoint (app, name) in deletion order; "tag" = only objects carrying the fabricgen tag
NETBOX = [("dcim", "cables"), ("ipam", "ip_addresses"), ("ipam", "asns"), ("dcim", "devices"),
          ("ipam", "prefixes"), ("dcim", "device_types"), ("dcim", "sites"), ("dcim", "device_roles"),
          ("dcim", "platforms"), ("dcim", "manufacturers"), ("ipam", "rirs")]
NAUTOBOT = [("dcim", "cables"), ("ipam", "ip_addresses"), ("dcim", "devices"), ("ipam", "prefixes"),
            ("dcim", "device_types"), ("dcim", "locations")]
NAUTOBOT_NAMED = [("extras", "roles", ("leaf", "spine", "super-spine", "gpu-server", "storage-endpoint",
                                       "ufm-endpoint", "management-endpoint", "other-endpoint")),
                  ("dcim", "platforms", ("sonic", "nxos", "frr", "eos")),
                  ("dcim", "manufacturers", ("NVIDIA", "Cisco", "Arista", "Dell", "Generic")),
                  ("dcim", "location_types", ("Fabric",))]


# what tests/sot/test_live.py creates by hand, untagged: endpoint -> filter
HAND = [(("dcim", "cables"), {"label": "moved by hand"}),
        (("ipam", "ip_addresses"), {"description": "held by the DC team"})]


def server(name: str) -> tuple[str, str]:
    state = read_state().get(name, {})
    if state.get("status") != "ready":
        raise SystemExit(f"{name} is not ready (python3 tests/sot/servers.py up)")
    with open(state["token_file"], encoding="utf-8") as fh:
        return str(state["url"]), fh.read().strip()


def _delete_all(endpoint: Any, records: list[Any]) -> int:
    ids = [r.id for r in records]
    for i in range(0, len(ids), 500):
        endpoint.delete(ids[i:i + 500])
    return len(ids)


def _delete_hand(api: Any) -> int:
    n = 0
    for (app, ep), filters in HAND:
        endpoint = getattr(getattr(api, app), ep)
        n += _delete_all(endpoint, list(endpoint.filter(**filters, limit=1000)))
    return n


def wipe(name: str) -> int:
    url, token = server(name)
    n = 0
    if name == "netbox":
        import pynetbox

        api = pynetbox.api(url, token=token)
        n += _delete_hand(api)
        if api.extras.tags.get(slug="fabricgen") is None:  # a fresh server: nothing was ever pushed
            return n
        for app, ep in NETBOX:
            endpoint = getattr(getattr(api, app), ep)
            n += _delete_all(endpoint, list(endpoint.filter(tag="fabricgen", limit=1000)))
        return n
    import pynautobot

    api = pynautobot.api(url, token=token)
    n += _delete_hand(api)
    tagged = api.extras.tags.get(name="fabricgen") is not None  # absent on a fresh server
    for app, ep in NAUTOBOT:
        endpoint = getattr(getattr(api, app), ep)
        # every cable of the test server: cables made before fabricgen tagged them after creating them
        if ep == "cables":
            found = endpoint.all(limit=1000)
        elif tagged:
            found = endpoint.filter(tags="fabricgen", limit=1000)
        else:
            continue
        n += _delete_all(endpoint, list(found))
    for app, ep, names in NAUTOBOT_NAMED:
        endpoint = getattr(getattr(api, app), ep)
        n += _delete_all(endpoint, [r for r in endpoint.filter(name=list(names)) if r is not None])
    return n


if __name__ == "__main__":
    print(f"deleted {wipe(sys.argv[1])} objects")
