"""The bgp container as it really runs, with SONiC's own scripts and templates as the oracle.

../shared/sonic-platform/dockers/docker-fpm-frr/ (sonic-buildimage 086b03bd70): `docker_init.sh`
decides what happens to /etc/sonic/frr/frr.conf for the routing mode, `frr/supervisord/` which
daemons run.  fabricgen's frr.conf must survive docker_init.sh unchanged (else frr-reload.py would
delete on the next push what docker_init.sh added, and fpmsyncd loses the FPM link), BFD needs
bfdd running, and no template-driven daemon may write FRR config behind frr.conf's back.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabricgen.lab import sonic_box
from fabricgen.plan.build import load_plan
from fabricgen.platforms.sonic import render as sonic
from fabricgen.render.build import environment, render_switch
from tests.conftest import EXAMPLE

# frrcfgd's table_handler_list (src/sonic-frr-mgmt-framework/frrcfgd/frrcfgd.py @086b03bd70, not in the pack):
# the ConfigDB tables it turns into vtysh commands when they change (in split-unified mode it replays none at
# start).  DEVICE_METADATA's handler only records bgp_asn.
FRRCFGD_TABLES = frozenset({
    "VRF", "BGP_GLOBALS", "BGP_GLOBALS_AF", "PREFIX_SET", "PREFIX", "COMMUNITY_SET", "EXTENDED_COMMUNITY_SET",
    "ROUTE_MAP", "BGP_PEER_GROUP", "BGP_NEIGHBOR", "BGP_PEER_GROUP_AF", "BGP_NEIGHBOR_AF", "BGP_GLOBALS_LISTEN_PREFIX",
    "BGP_GLOBALS_EVPN_VNI", "BGP_GLOBALS_EVPN_RT", "BGP_GLOBALS_EVPN_VNI_RT", "BFD_PEER", "NEIGHBOR_SET",
    "NEXTHOP_SET", "TAG_SET", "AS_PATH_SET", "ROUTE_REDISTRIBUTE", "BGP_GLOBALS_AF_AGGREGATE_ADDR",
    "BGP_GLOBALS_AF_NETWORK", "BFD_PEER_SINGLE_HOP", "BFD_PEER_MULTI_HOP", "IP_SLA", "OSPFV2_ROUTER",
    "OSPFV2_ROUTER_AREA", "OSPFV2_ROUTER_AREA_VIRTUAL_LINK", "OSPFV2_ROUTER_AREA_NETWORK",
    "OSPFV2_ROUTER_AREA_POLICY_ADDRESS_RANGE", "OSPFV2_ROUTER_DISTRIBUTE_ROUTE", "OSPFV2_INTERFACE",
    "OSPFV2_ROUTER_PASSIVE_INTERFACE", "STATIC_ROUTE", "PIM_GLOBALS", "PIM_INTERFACE", "IGMP_INTERFACE",
    "IGMP_INTERFACE_QUERY", "SRV6_MY_LOCATORS", "SRV6_MY_SOURCE", "SRV6_MY_SIDS",
})


@pytest.fixture(scope="module")
def leaf() -> dict[str, Any]:
    plan = load_plan(EXAMPLE)
    files = render_switch(plan.switches["ai256-leaf01"], plan, environment())
    return {"frr": files[sonic.FRR_CONF], "db": json.loads(files[sonic.CONFIG_DB])}


def run_docker_init(pack: Path, frr_conf: Path) -> None:
    script = sonic_box.docker_init_function(pack) + f'write_default_zebra_config "{frr_conf}"\n'
    subprocess.run(["bash", "-c", script], check=True)


def test_frr_conf_survives_docker_init_unchanged(sonic_platform: Path, leaf: dict[str, Any], tmp_path: Path) -> None:
    conf = tmp_path / "frr.conf"
    conf.write_text(leaf["frr"], encoding="utf-8")
    run_docker_init(sonic_platform, conf)
    assert conf.read_text(encoding="utf-8") == leaf["frr"]


def test_the_lines_are_exactly_what_docker_init_adds(sonic_platform: Path, leaf: dict[str, Any],
                                                     tmp_path: Path) -> None:
    lines = sonic.BGP_CONTAINER_LINES[leaf["db"]["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"]]
    bare = tmp_path / "frr.conf"
    body = "".join(f"{x}\n" for x in leaf["frr"].splitlines() if x not in lines)
    bare.write_text(body, encoding="utf-8")
    run_docker_init(sonic_platform, bare)
    added = bare.read_text(encoding="utf-8")[len(body):].splitlines()
    assert tuple(added) == lines
    assert all(x in leaf["frr"].splitlines() for x in lines)


def supervisord_programs(pack: Path, metadata: dict[str, str]) -> set[str]:
    """[program:...] sections of the bgp container's supervisord.conf for this DEVICE_METADATA."""
    return set(sonic_box.supervisord_programs(sonic_box.supervisord_conf(pack, metadata)))


def test_bfdd_runs_and_bgpcfgd_does_not(sonic_platform: Path, leaf: dict[str, Any]) -> None:
    meta = leaf["db"]["DEVICE_METADATA"]["localhost"]
    programs = supervisord_programs(sonic_platform, meta)
    assert {"zebra", "bgpd", "staticd", "bfdd", "fpmsyncd", "frrcfgd", "vtysh_b"} <= programs
    assert not programs & {"bgpcfgd", "staticroutebfd", "bgpmon"}
    # without the flag, BFD would never come up: the container starts no bfdd (the bug this guards)
    default = supervisord_programs(sonic_platform, {k: v for k, v in meta.items() if k != "frr_mgmt_framework_config"})
    assert "bfdd" not in default and "bgpcfgd" in default
    assert "bfd profile FABRIC" in leaf["frr"] or " bfd " in leaf["frr"]


@pytest.mark.parametrize("mgmt", ["true", "false", None])
def test_the_daemons_the_driver_waits_for_are_the_ones_the_container_starts(
        sonic_platform: Path, leaf: dict[str, Any], mgmt: str | None) -> None:
    """After `systemctl restart bgp` the SONiC driver waits for `bgp_container_daemons`: every one of them
    must be a program of the supervisord.conf the container renders, and bfdd exactly when it starts it."""
    meta = {k: v for k, v in leaf["db"]["DEVICE_METADATA"]["localhost"].items() if k != "frr_mgmt_framework_config"}
    if mgmt is not None:
        meta["frr_mgmt_framework_config"] = mgmt
    programs = supervisord_programs(sonic_platform, meta)
    waited = set(sonic.bgp_container_daemons(meta))
    assert waited <= programs
    assert ("bfdd" in waited) == ("bfdd" in programs)
    assert set(sonic.BGP_CONTAINER_BOOT_FIELDS) <= set(leaf["db"]["DEVICE_METADATA"]["localhost"])


def test_no_table_frrcfgd_would_turn_into_frr_config(leaf: dict[str, Any]) -> None:
    assert set(leaf["db"]) & FRRCFGD_TABLES == set()
    assert "BGP_NEIGHBOR" not in leaf["db"]


def test_bgpcfgd_tables_are_not_rendered_either(sonic_platform: Path, leaf: dict[str, Any]) -> None:
    # bgpcfgd does not run (frr_mgmt_framework_config), and its peer tables are absent anyway
    main = (sonic_platform / "src/sonic-bgpcfgd/bgpcfgd/main.py").read_text(encoding="utf-8")
    peer_tables = set(re.findall(r'BGPPeerMgrBase\(common_objs, "CONFIG_DB", "(\w+)"', main))
    assert {"BGP_MONITORS", "BGP_PEER_RANGE"} <= peer_tables
    assert set(leaf["db"]) & (peer_tables | {"BGP_NEIGHBOR", "BGP_INTERNAL_NEIGHBOR", "STATIC_ROUTE"}) == set()
