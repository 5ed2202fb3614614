"""The lab's SONiC node, without a lab: what it takes from SONiC's scripts, and its GCU stand-in's refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabricgen.catalog import skus
from fabricgen.lab import sonic_box, sonic_cli
from fabricgen.lab.from_plan import lab_topology, sonic_boot_config
from fabricgen.lab.topology import LabError
from fabricgen.plan.build import load_plan
from tests.conftest import ROOT

SONIC_LAB = ROOT / "inventory" / "lab" / "sonic.yaml"


def test_daemons_are_the_templates_with_debians_fpm_module(sonic_platform: Path) -> None:
    conf = sonic_box.supervisord_conf(sonic_platform, {"docker_routing_config_mode": "split-unified",
                                                       "frr_mgmt_framework_config": "true"})
    template = sonic_box.supervisord_programs(conf)
    assert "-M dplane_fpm_sonic" in template["zebra"]
    daemons, not_run = sonic_box.container_daemons(conf)
    argv = dict(daemons)
    assert daemons[0][0] == "zebra"
    assert argv["zebra"] == template["zebra"].replace("dplane_fpm_sonic", "dplane_fpm_nl").replace(" -M snmp", "")
    assert argv["bfdd"] == template["bfdd"]
    assert any(p.startswith("fpmsyncd ") for p in not_run) and "bgpcfgd" not in template
    # without the flag the container starts bgpcfgd and no bfdd
    plain, _ = sonic_box.container_daemons(sonic_box.supervisord_conf(sonic_platform, {}))
    assert "bfdd" not in dict(plain)


def test_a_container_restart_starts_what_the_template_starts_for_the_configdb_of_then(
        sonic_platform: Path, tmp_path: Path) -> None:
    """`systemctl restart bgp` (sonic_cli.systemctl_main) picks its daemons by frr_mgmt_framework_config
    as it is at the restart: both sets come from the template, rendered when the node is built."""
    from fabricgen.lab.daemons import NodePaths, write_sonic_node

    db = {"DEVICE_METADATA": {"localhost": {"docker_routing_config_mode": "split-unified"}}}
    box = sonic_box.sonic_box(sonic_platform, db)
    assert "bfdd" not in box.daemon_names  # boots without the flag ...
    variants = dict(box.restart_daemons)
    for key, meta in ((sonic_cli.MGMT_TRUE, {"frr_mgmt_framework_config": "true"}), (sonic_cli.MGMT_OTHER, {})):
        conf = sonic_box.supervisord_conf(sonic_platform, {"docker_routing_config_mode": "split-unified", **meta})
        assert variants[key] == sonic_box.container_daemons(conf)[0]
    assert "bfdd" in dict(variants[sonic_cli.MGMT_TRUE]) and "bfdd" not in dict(variants[sonic_cli.MGMT_OTHER])
    paths = NodePaths(tmp_path)
    paths.run.mkdir(parents=True)
    (tmp_path / "etc-sonic").mkdir()
    write_sonic_node(box, paths)
    spec = json.loads((paths.sonic_bin / sonic_cli.CONTAINER_FILE).read_text())
    assert spec["stop"][-1] == "zebra" and "bfdd" in spec["stop"]  # ... but a restart may have started bfdd
    first = spec["start"][sonic_cli.MGMT_TRUE][0]
    assert first[0] == "/usr/lib/frr/zebra" and "-d" in first and "/run/frr/zebra.pid" in first
    wrapper = (paths.sonic_bin / "systemctl").read_text()
    assert f"systemctl {paths.sonic_bin / sonic_cli.CONTAINER_FILE}" in wrapper


def test_init_script_is_docker_inits_branch(sonic_platform: Path) -> None:
    script = sonic_box.init_script(sonic_platform, "split-unified")
    assert sonic_box.docker_init_function(sonic_platform) in script
    assert script.rstrip().endswith("write_default_zebra_config /etc/frr/frr.conf")
    with pytest.raises(LabError, match="sonic-cfggen"):
        sonic_box.init_script(sonic_platform, "unified")


def test_boot_config_is_the_skus_with_the_rendered_container_fields(sonic_platform: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(skus.PLATFORM_ENV, str(sonic_platform))  # the lab runs SONiC's scripts from the user's tree
    plan = load_plan(SONIC_LAB)
    leaf = next(sw for sw in plan.switches.values() if sw.platform == "sonic")
    db = sonic_boot_config(plan, leaf)
    assert db["DEVICE_METADATA"]["localhost"] == {
        "hostname": leaf.hostname, "hwsku": "Mellanox-SN5600-O128",
        "docker_routing_config_mode": "split-unified", "frr_mgmt_framework_config": "true"}
    assert db["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3" and db["PORT"]["Ethernet0"]["alias"] == "etp1a"
    node = lab_topology(plan, "/nonexistent").node(leaf.hostname)
    assert node.sonic is not None and json.loads(node.sonic.config_db) == db


def _db() -> dict[str, Any]:
    return {"PORT": {"Ethernet0": {"lanes": "0,1,2,3", "admin_status": "up"}},
            "BUFFER_PROFILE": {"p": {"pool": "ingress_lossless_pool"}},
            "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic"}},
            "BUFFER_PG": {"Ethernet0|3-4": {"profile": "p"}}}


@pytest.mark.parametrize(("change", "error"), [
    (lambda db: db["BUFFER_PG"].update({"Ethernet0|3-4": {"profile": "gone"}}), "Given patch will produce invalid"),
    (lambda db: db["PORT"]["Ethernet0"].update(lanes="4,5,6,7"), "There is no possible sorting"),
    (lambda db: db.update(ACL_TABLE={}), "Given config has empty tables. Table: ACL_TABLE"),
    (lambda db: db.update(PORT=["Ethernet0"]), "PORT is not a table of entries"),
])
def test_gcu_stand_in_refuses(change: Any, error: str) -> None:
    new = _db()
    change(new)
    with pytest.raises(sonic_cli.GcuError, match=error):
        sonic_cli.validate(_db(), new)


def test_gcu_stand_in_takes_a_valid_change() -> None:
    new = _db()
    new["PORT"]["Ethernet0"]["admin_status"] = "down"
    new["BUFFER_PG"]["Ethernet0|0"] = {"profile": "p"}
    sonic_cli.validate(_db(), new)


def test_counter_stand_ins_read_as_sonic_prints_them(tmp_path: Path) -> None:
    """Issue 23 D10: `validate --health` could not read a lab SONiC leaf's counters (its `show` knew none).
    The stand-ins serve the lab's per-port counter files in pfcstat's and queuestat's shapes, read back by
    the SONiC driver's own parsers."""
    from fabricgen.lab import lossless_counters
    from fabricgen.platforms.sonic.health import parse_pfc_counters, parse_pfcwd_stats, parse_queue_counters

    lossless_counters.write_zero(tmp_path, ["Ethernet8", "Ethernet0"])
    lossless_counters.bump(tmp_path, "Ethernet8", {"rx_pause_prio_3": 1234, "tx_pause_prio_3": 5,
                                                   "tx_frames_prio_3": 7, "tx_octets_prio_3": 7000,
                                                   "tc_no_buffer_discard_uc_tc_3": 2})
    stats = sonic_cli.lab_port_counters(tmp_path)
    assert list(stats) == ["Ethernet0", "Ethernet8"]
    text = sonic_cli.show_pfc_counters(stats)
    assert "Ethernet8" in text and "1,234" in text
    pfc = parse_pfc_counters(text)
    assert pfc["Ethernet8"][3] == {"rx_pause_frames": 1234, "tx_pause_frames": 5}
    assert pfc["Ethernet0"][3] == {"rx_pause_frames": 0, "tx_pause_frames": 0}
    assert set(pfc["Ethernet0"]) == set(range(8))
    queues = parse_queue_counters(sonic_cli.show_queue_counters(stats))
    q3 = queues["Ethernet8"][3]
    assert (q3["tx_packets"], q3["tx_bytes"], q3["dropped_packets"]) == (7, 7000, 2)
    assert parse_pfcwd_stats(sonic_cli._simple_table(sonic_cli.PFCWD_HEADER, [])) == {}


def test_the_stand_ins_run_on_the_copies_the_node_gets(tmp_path: Path) -> None:
    """The node runs sonic_cli.py with the system Python on a copy of the modules it imports (a node sees no
    checkout): every one of them must be copied (a missing lossless_counters broke every `show` once)."""
    import subprocess

    sonic_box.write_bin(tmp_path)
    lib = tmp_path / "lib"
    probe = ("import sonic_cli, fabricgen.lab.lossless_counters as c; "
             "print(sonic_cli.show_pfc_counters({'Ethernet0': c.zero_stats()}).splitlines()[0].split()[:3])")
    out = subprocess.run([sonic_box.SYSTEM_PYTHON, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin"}, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['Port', 'Rx', 'PFC0']"
    assert (lib / "fabricgen" / "lab" / "__init__.py").read_text() == ""  # not the real package (engine, ...)
