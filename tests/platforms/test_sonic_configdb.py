"""ConfigDB ownership: fabricgen's part goes into the device's table by table, never dangling."""

from __future__ import annotations

from typing import Any

import pytest

from fabricgen.platforms.sonic.configdb import OwnershipError, dangling_references, merge_owned

DEVICE: dict[str, Any] = {
    "DEVICE_METADATA": {"localhost": {"hwsku": "Mellanox-SN5600-O128", "mac": "02:00:00:00:00:01",
                                      "platform": "x86_64-nvidia_sn5600-r0"}},
    "PORT": {"Ethernet0": {"alias": "etp1a", "index": "1", "lanes": "0,1,2,3", "speed": "400000"},
             "Ethernet4": {"alias": "etp1b", "index": "1", "lanes": "4,5,6,7", "speed": "400000"}},
    "BUFFER_POOL": {"ingress_lossy_pool": {"type": "ingress", "mode": "dynamic"},
                    "egress_lossless_pool": {"type": "egress", "mode": "dynamic"}},
    "BUFFER_PROFILE": {"ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
                       "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"}},
    "BUFFER_PG": {"Ethernet0|0": {"profile": "ingress_lossy_profile"}, "Ethernet0|3-4": {"profile": "NULL"},
                  "Ethernet4|0": {"profile": "ingress_lossy_profile"}},
    "BUFFER_PORT_INGRESS_PROFILE_LIST": {"Ethernet0": {"profile_list": "ingress_lossy_profile"}},
    "SCHEDULER": {"scheduler.0": {"type": "DWRR", "weight": "14"}},
    "QUEUE": {"Ethernet0|0": {"scheduler": "scheduler.0"}, "Ethernet4|0": {"scheduler": "scheduler.0"}},
    "MGMT_INTERFACE": {"eth0|198.18.253.21/24": {"gwaddr": "198.18.253.1"}},
}
OURS: dict[str, Any] = {
    "DEVICE_METADATA": {"localhost": {"hostname": "leaf1", "buffer_model": "dynamic"}},
    "PORT": {"Ethernet0": {"admin_status": "up", "mtu": "9216", "speed": "400000"}},
    "BUFFER_PG": {"Ethernet0|0": {"profile": "ingress_lossy_profile"}, "Ethernet0|3": {"profile": "NULL"}},
    "SCHEDULER": {"AI_ROCE_DWRR": {"type": "DWRR", "weight": "50"}},
    "QUEUE": {"Ethernet0|3": {"scheduler": "AI_ROCE_DWRR"}},
}


def test_each_table_by_its_rule() -> None:
    merged = merge_owned(DEVICE, OURS)
    assert merged["DEVICE_METADATA"]["localhost"] == {**DEVICE["DEVICE_METADATA"]["localhost"], "hostname": "leaf1",
                                                      "buffer_model": "dynamic"}
    assert merged["PORT"]["Ethernet0"] == {"alias": "etp1a", "index": "1", "lanes": "0,1,2,3", "speed": "400000",
                                           "admin_status": "up", "mtu": "9216"}
    assert merged["PORT"]["Ethernet4"] == DEVICE["PORT"]["Ethernet4"]
    # per port: the device's 3-4 of Ethernet0 goes (it would overlap ours), Ethernet4's stays
    assert merged["BUFFER_PG"] == {**OURS["BUFFER_PG"], "Ethernet4|0": {"profile": "ingress_lossy_profile"}}
    assert merged["QUEUE"] == {"Ethernet0|3": {"scheduler": "AI_ROCE_DWRR"},
                               "Ethernet4|0": {"scheduler": "scheduler.0"}}
    assert set(merged["SCHEDULER"]) == {"scheduler.0", "AI_ROCE_DWRR"}  # named objects: added, the device's kept
    for table in ("BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PORT_INGRESS_PROFILE_LIST", "MGMT_INTERFACE"):
        assert merged[table] == DEVICE[table]  # never touched
    assert dangling_references(merged) == []


def test_dangling_references_are_found() -> None:
    db = {**DEVICE, "BUFFER_PROFILE": {}}
    found = dangling_references(db)
    assert "BUFFER_PG|Ethernet0|0.profile -> BUFFER_PROFILE|ingress_lossy_profile" in found
    assert "BUFFER_PORT_INGRESS_PROFILE_LIST|Ethernet0.profile_list -> BUFFER_PROFILE|ingress_lossy_profile" in found
    assert not any("NULL" in f for f in found)
    legacy = {"BUFFER_POOL": {"p": {}}, "BUFFER_PROFILE": {"x": {"pool": "[BUFFER_POOL|p]"}}}
    assert dangling_references(legacy) == []  # the pre-db_migrator reference form resolves too


@pytest.mark.parametrize(("candidate", "message"), [
    ({"BGP_NEIGHBOR": {"198.18.0.1": {}}}, "tables fabricgen does not own: BGP_NEIGHBOR"),
    ({"PORT": {"Ethernet8": {"mtu": "9216"}}}, "the device has no port Ethernet8"),
    ({"PORT": {"Ethernet0": {"alias": "x"}}}, "alias belong to the device"),
    ({"QUEUE": {"Ethernet0|3": {"scheduler": "AI_MISSING"}}}, "QUEUE|Ethernet0|3.scheduler -> SCHEDULER|AI_MISSING"),
])
def test_refused(candidate: dict[str, Any], message: str) -> None:
    with pytest.raises(OwnershipError, match=message.replace("|", r"\|")):
        merge_owned(DEVICE, candidate)
