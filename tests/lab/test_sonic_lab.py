"""SONiC leaves in the live lab: FRR as the bgp container starts it, deployed by the real SONiC driver.

inventory/lab/sonic.yaml: two SONiC leaves (HWSKU Mellanox-SN5600-O128) and two Linux + FRR spines.
Each leaf runs docker_init.sh's own treatment of frr.conf (split-unified: the FPM lines) and only
the FRR daemons the bgp container's supervisord template starts for its DEVICE_METADATA, with
zebra on `-M dplane_fpm_nl`; the SONiC driver talks to it over real SSH (`sudo -n docker exec -i bgp
...`, `config checkpoint|replace|save`, `show runningconfiguration all`), served by the lab's ConfigDB
stand-in (fabricgen.lab.sonic_cli).  The tests share one lab and run in file order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.catalog import skus
from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, DeployReport, run_deploy
from fabricgen.lab import LabState, netns, node_exec
from fabricgen.lab.from_plan import lab_topology
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render import manifest
from fabricgen.render.manifest import Build
from tests.lab.conftest import fabric_lab
from tests.lab.test_fabric_workflow import wait_for

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]

ROOT = Path(__file__).resolve().parents[2]
SONIC_INTENT = ROOT / "inventory" / "lab" / "sonic.yaml"
FPM_LINES = ("no fpm use-next-hop-groups", "fpm address 127.0.0.1")


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(SONIC_INTENT)


@pytest.fixture(scope="module")
def leaves(plan: Plan) -> list[str]:
    names = sorted(h for h, sw in plan.switches.items() if sw.platform == "sonic")
    assert len(names) == 2 and all(plan.switches[h].platform == "frr" for h in plan.switches if h not in names)
    return names


@pytest.fixture(scope="module")
def build(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Build:
    out = tmp_path_factory.mktemp("render") / "build"
    assert main(["render", "-i", str(SONIC_INTENT), "-o", str(out)]) == 0
    return manifest.load(out, plan)


@pytest.fixture(scope="module")
def lab(plan: Plan, sonic_platform: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    """The SONiC boxes run SONiC's own bgp container scripts, which the user names (--sonic-platform)."""
    workdir = tmp_path_factory.mktemp("sonic-lab")
    namespaces: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(skus.PLATFORM_ENV, str(sonic_platform))
        with fabric_lab(plan, workdir) as state:
            namespaces = state.namespaces
            yield state
    assert not set(namespaces) & netns.list_netns(), "the lab left network namespaces behind"


def sh(lab: LabState, node: str, *argv: str) -> str:
    out = node_exec(lab.workdir, node, list(argv))
    assert out.returncode == 0, f"{node}: {' '.join(argv)}: {out.stderr}"
    return out.stdout


def running(lab: LabState, node: str) -> list[str]:
    return sh(lab, node, "vtysh", "-c", "show running-config").splitlines()


def sonic_cmd(lab: LabState, node: str, *argv: str) -> tuple[int, str, str]:
    """A SONiC command as the driver's SSH session finds it (the node's stand-in, first on its PATH)."""
    tool = Path(lab.nodes[node].dir) / "sonic-bin" / argv[0]
    out = node_exec(lab.workdir, node, [str(tool), *argv[1:]])
    return out.returncode, out.stdout, out.stderr


def config_db(lab: LabState, node: str) -> dict:  # type: ignore[type-arg]
    rc, out, err = sonic_cmd(lab, node, "show", "runningconfiguration", "all")
    assert rc == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def deploy(plan: Plan, build: Build, lab: LabState) -> DeployReport:
    return run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir))


def test_leaves_start_frr_as_the_bgp_container(plan: Plan, lab: LabState, leaves: list[str]) -> None:
    topo = lab_topology(plan, lab.workdir)
    for leaf in leaves:
        box = topo.node(leaf).sonic
        assert box is not None
        # only the supervisord template's FRR daemons run: bfdd (frr_mgmt_framework_config), no bgpcfgd
        assert {"zebra", "bgpd", "staticd", "bfdd"} <= set(box.daemon_names)
        assert set(lab.nodes[leaf].frr_daemons) == set(box.daemon_names)
        for daemon in box.daemon_names:
            pid = netns.read_pidfile(str(Path(lab.nodes[leaf].dir) / "run" / "frr" / f"{daemon}.pid"))
            assert pid and Path(f"/proc/{pid}").exists(), f"{leaf}: {daemon} is not running"
        zebra = Path(f"/proc/{netns.read_pidfile(str(Path(lab.nodes[leaf].dir) / 'run/frr/zebra.pid'))}/cmdline")
        assert b"dplane_fpm_nl" in zebra.read_bytes().split(b"\0")
        # docker_init.sh appended the FPM lines at start; zebra (with the FPM module) took them
        config = running(lab, leaf)
        assert all(line in config for line in FPM_LINES)
    spine = next(h for h in plan.switches if h not in leaves)
    assert not any(line in running(lab, spine) for line in FPM_LINES)


def test_deploy_keeps_the_fpm_lines_and_brings_bfd_up(plan: Plan, lab: LabState, build: Build,
                                                     leaves: list[str]) -> None:
    before = {leaf: config_db(lab, leaf) for leaf in leaves}
    report = deploy(plan, build, lab)
    assert report.ok, report.failed
    assert sorted(report.changed) == sorted(plan.switches)
    for leaf in leaves:
        assert all(line in running(lab, leaf) for line in FPM_LINES), f"{leaf}: a deploy removed the FPM lines"
        db = config_db(lab, leaf)
        rendered = json.loads(build.config_files(plan.switches[leaf])["config_db.json"].read_text())
        assert {k: db["INTERFACE"][k] for k in rendered["INTERFACE"]} == rendered["INTERFACE"]
        assert db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == str(plan.switches[leaf].asn)
        for port, entry in db["PORT"].items():  # device-owned fields kept by the driver's merge
            assert entry["lanes"] == before[leaf]["PORT"][port]["lanes"]
        assert "fpm address 127.0.0.1" in db["bgpraw"]
        # the stand-in put INTERFACE's addresses on the ports, as intfmgrd does
        addresses = json.loads(sh(lab, leaf, "ip", "-j", "-4", "address", "show"))
        on_kernel = {f"{a['ifname']}|{i['local']}/{i['prefixlen']}" for a in addresses for i in a["addr_info"]}
        assert {k for k in rendered["INTERFACE"] if "|" in k} <= on_kernel
        # saved: `config save -y` wrote CONFIG_DB to /etc/sonic/config_db.json
        assert json.loads(sh(lab, leaf, "cat", "/etc/sonic/config_db.json"))["INTERFACE"] == db["INTERFACE"]
    sessions = {}
    for leaf in leaves:
        bgp = plan.switches[leaf].bgp
        assert bgp is not None and bgp.bfd
        sessions[leaf] = sum(1 for n in bgp.neighbors if n.bfd)
    assert all(sessions.values())

    def bfd_up() -> bool:
        for leaf in leaves:
            peers = json.loads(sh(lab, leaf, "vtysh", "-c", "show bfd peers json"))
            if len(peers) != sessions[leaf] or any(p.get("status") != "up" for p in peers):
                return False
        return True

    wait_for(bfd_up, what="every BFD session of the SONiC leaves to come up")


def test_the_sonic_lab_validates(plan: Plan, lab: LabState, build: Build, leaves: list[str]) -> None:
    """Issue 23 D10: this kernel has no dummy driver; Loopback0 must exist all the same (a port-less bridge),
    carry the leaf's loopback, and the whole fabric must validate (routes and ECMP need the loopbacks)."""
    from fabricgen.validate import CHECKS, run_validate

    for leaf in leaves:
        [link] = json.loads(sh(lab, leaf, "ip", "-j", "-d", "address", "show", "dev", "Loopback0"))
        assert "LOWER_UP" in link["flags"]
        assert f"{plan.switches[leaf].loopback}/32" in {f"{a['local']}/{a['prefixlen']}" for a in link["addr_info"]}
    deadline = time.monotonic() + 90  # BGP and BFD converge after the deploy
    while True:
        found = run_validate(plan, CHECKS, lab_dir=lab.workdir, build=build).failures
        if not found or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert not found, "\n".join(f"{f.device} {f.check} {f.item}: {f.actual}" for f in found)
    # --health: the leaves' counters read through the SONiC driver's `show` commands (the lab's stand-ins)
    report = run_validate(plan, ("bgp",), lab_dir=lab.workdir, health_window=2.0)
    assert report.health is not None
    counted = {o.device for o in report.outcomes if o.check == "counters" and o.ok}
    assert set(leaves) <= counted, [o for o in report.outcomes if o.check == "counters"]
    assert not report.failures, "\n".join(f"{f.device} {f.check} {f.item}: {f.actual}" for f in report.failures)


def test_a_timer_change_is_labelled_by_what_frr_reload_changes(plan: Plan, lab: LabState, leaves: list[str],
                                                               tmp_path: Path) -> None:
    """Issue 23 D11: the leaves' running FRR config holds lines SONiC's scripts manage (the FPM lines, ...);
    a keepalive/hold change must show and label only the timers (bgp-reset), never daemon-restart."""
    import yaml

    data = yaml.safe_load(SONIC_INTENT.read_text())
    data["bgp"]["keepalive"], data["bgp"]["holdtime"] = 2, 6
    intent = tmp_path / "timers.yaml"
    intent.write_text(yaml.safe_dump(data))
    assert main(["render", "-i", str(intent), "-o", str(tmp_path / "build")]) == 0
    timers = load_plan(intent)
    report = run_deploy(timers, manifest.load(tmp_path / "build", timers),
                        DeployOptions(lab_dir=lab.workdir, dry_run=True, limit=",".join(leaves)))
    assert sorted(report.changed) == leaves, report.failed
    for leaf in leaves:
        o = report.outcomes[leaf]
        assert o.impact is not None and o.impact.worst is not None and o.impact.worst.label == "bgp-reset", o.diff
        changed = [ln for ln in o.diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        assert changed and all("timers bgp" in ln for ln in changed), changed


def test_redeploy_is_unchanged(plan: Plan, lab: LabState, build: Build, leaves: list[str]) -> None:
    report = deploy(plan, build, lab)
    assert report.ok and report.changed == {} and sorted(report.unchanged) == sorted(plan.switches)
    for leaf in leaves:
        assert all(line in running(lab, leaf) for line in FPM_LINES)


def test_validate_reads_the_hash_from_the_running_configdb(plan: Plan, lab: LabState, leaves: list[str]) -> None:
    """`validate`'s hash rule on SONiC reads the running ConfigDB over SSH (`show runningconfiguration all`): as
    deployed it passes; a leaf whose SWITCH_HASH loses L4_DST_PORT through `config replace` is named alone."""
    from fabricgen.validate import run_validate

    assert not run_validate(plan, ("hash",), lab_dir=lab.workdir).failures
    leaf = leaves[0]
    db = config_db(lab, leaf)
    db.pop("bgpraw", None)
    edited = json.loads(json.dumps(db))
    edited["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = [f for f in db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"]
                                                    if f != "L4_DST_PORT"]
    files = Path(lab.nodes[leaf].dir)
    (files / "hash-edited.json").write_text(json.dumps(edited))
    (files / "hash-deployed.json").write_text(json.dumps(db))
    assert sonic_cmd(lab, leaf, "config", "replace", str(files / "hash-edited.json"))[0] == 0
    try:
        found = run_validate(plan, ("hash",), lab_dir=lab.workdir).failures
        assert [(f.device, f.item) for f in found] == [(leaf, "SWITCH_HASH|GLOBAL ecmp_hash")]
        assert "L4_DST_PORT" in found[0].expected and "L4_DST_PORT" not in found[0].actual
    finally:
        assert sonic_cmd(lab, leaf, "config", "replace", str(files / "hash-deployed.json"))[0] == 0
    assert not run_validate(plan, ("hash",), lab_dir=lab.workdir).failures


def test_a_box_without_bfdd_gets_it_from_a_deploy(plan: Plan, lab: LabState, build: Build, leaves: list[str],
                                                  tmp_path: Path) -> None:
    """A box set up before fabricgen: no frr_mgmt_framework_config, so its bgp container runs no bfdd.
    The deploy must restart the container (the only way bfdd starts) before FRR's bfd block goes in."""
    leaf = leaves[0]
    db = config_db(lab, leaf)
    db.pop("bgpraw")
    del db["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"]
    target = tmp_path / "without-bfd.json"
    target.write_text(json.dumps(db))
    assert sonic_cmd(lab, leaf, "config", "replace", str(target))[0] == 0
    rc, _, err = sonic_cmd(lab, leaf, "systemctl", "restart", "bgp")
    assert rc == 0, err

    def daemons() -> set[str]:
        return set(sh(lab, leaf, "vtysh", "-c", "show daemons").split())

    assert {"zebra", "bgpd", "staticd"} <= daemons() and "bfdd" not in daemons()  # the template without the flag

    dry = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir, dry_run=True, limit=leaf))
    assert dry.ok and list(dry.changed) == [leaf]
    assert leaf in dry.impacts()["daemon-restart"]
    assert "bfdd" not in daemons()  # a dry run changes nothing

    report = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir, limit=leaf))
    assert report.ok and list(report.changed) == [leaf], report.failed
    assert "bfdd" in daemons()
    assert config_db(lab, leaf)["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] == "true"
    assert all(line in running(lab, leaf) for line in FPM_LINES)  # docker_init.sh ran again at the restart
    bgp = plan.switches[leaf].bgp
    assert bgp is not None
    want = sum(1 for n in bgp.neighbors if n.bfd)

    def bfd_up() -> bool:
        peers = json.loads(sh(lab, leaf, "vtysh", "-c", "show bfd peers json"))
        return len(peers) == want and all(p.get("status") == "up" for p in peers)

    wait_for(bfd_up, what=f"{leaf}'s BFD sessions after its bgp container restart")
    assert deploy(plan, build, lab).unchanged == sorted(plan.switches)


def test_config_replace_refuses_what_gcu_refuses(lab: LabState, leaves: list[str], tmp_path: Path) -> None:
    leaf = leaves[0]
    db = config_db(lab, leaf)
    db.pop("bgpraw")
    port = next(iter(db["PORT"]))
    cases = {
        "not-json": ("{", "Expecting property name"),
        "dangling": (json.dumps({**db, "BUFFER_PG": {**db.get("BUFFER_PG", {}),
                                                      f"{port}|3-4": {"profile": "no_such_profile"}}}),
                     "Given patch will produce invalid config"),
        "lanes": (json.dumps({**db, "PORT": {**db["PORT"], port: {**db["PORT"][port], "lanes": "1000,1001"}}}),
                  "There is no possible sorting"),
        "empty-table": (json.dumps({**db, "ACL_TABLE": {}}), "Given config has empty tables. Table: ACL_TABLE"),
    }
    for name, (text, error) in cases.items():
        target = tmp_path / f"{name}.json"
        target.write_text(text)
        rc, out, err = sonic_cmd(lab, leaf, "config", "replace", str(target))
        assert rc == 2, name
        assert err.startswith("Failed to replace config\nUsage: config replace") and error in err, err
    after = config_db(lab, leaf)
    after.pop("bgpraw")
    assert after == db  # nothing refused was applied
    rc, _, err = sonic_cmd(lab, leaf, "config", "rollback", "no-such-checkpoint")
    assert rc == 2 and "Checkpoint 'no-such-checkpoint' does not exist" in err
    rc, out, _ = sonic_cmd(lab, leaf, "config", "list-checkpoints")
    assert rc == 0 and any(n.startswith("fabricgen-") for n in json.loads(out))  # the deploys' checkpoints
