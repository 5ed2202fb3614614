"""The lab's GPU servers are configured by their rendered NIC scripts, and the routes they set work.

Each server namespace runs `hosts/<server>.sh` exactly as `fabricgen render` writes it; only
the ConnectX side is emulated (lab.nic_emulation: RDMA sysfs of the inbox driver, mlnx-tools
stubs), because the lab's NICs are veths.  After a deploy, GPU-to-GPU pings from every NIC to
a NIC on another rail prove the per-NIC tables: traffic leaves and returns on its own rail.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, run_deploy
from fabricgen.lab import LabState, node_exec
from fabricgen.lab.nic_emulation import STUB_LOG
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import NicAttachment, Plan
from fabricgen.render import manifest
from tests.lab.conftest import fabric_lab

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]

ROOT = Path(__file__).resolve().parents[2]
LAB_INTENT = ROOT / "inventory" / "lab" / "fabric.yaml"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(LAB_INTENT)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("render") / "build"
    assert main(["render", "-i", str(LAB_INTENT), "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def lab(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    with fabric_lab(plan, tmp_path_factory.mktemp("lab")) as state:
        yield state


def sh(lab: LabState, node: str, *argv: str) -> str:
    out = node_exec(lab.workdir, node, list(argv))
    assert out.returncode == 0, f"{node}: {' '.join(argv)}: {out.stderr}"
    return out.stdout


def test_each_server_ran_its_rendered_script(plan: Plan, lab: LabState, rendered: Path) -> None:
    for srv in plan.servers:
        node = Path(lab.nodes[srv.name].dir)
        assert (node / "nic.sh").read_text() == (rendered / "hosts" / f"{srv.name}.sh").read_text()
        log = (node / "nic.log").read_text()
        assert "export NCCL_IB_TC=106" in log and "export NCCL_IB_GID_INDEX=3" in log
        assert "ERROR" not in log
        # the emulated inbox driver has no OFED-only files: warned, not fatal
        assert "only with the NVIDIA MLNX_OFED / DOCA-OFED driver" in log
        rules = sh(lab, srv.name, "ip", "rule", "show")
        for i, nic in enumerate(sorted(srv.nics, key=lambda n: (n.nic, n.port))):
            src = nic.ip.split("/")[0]
            assert f"from {src} lookup {100 + i}" in rules
            assert nic.ip in sh(lab, srv.name, "ip", "-4", "address", "show", "dev", nic.ifname)


def test_rdma_devices_mapped_from_sysfs(plan: Plan, lab: LabState) -> None:
    """The emulation numbers RDMA devices backwards; the script still pairs each netdev with its own."""
    srv = plan.servers[0]
    calls = sh(lab, srv.name, "cat", STUB_LOG).splitlines()
    nics = sorted(srv.nics, key=lambda n: (n.nic, n.port))
    for i, nic in enumerate(nics):
        dev = f"mlx5_{len(nics) - 1 - i}"
        assert f"mlnx_qos -i {nic.ifname} --trust dscp" in calls
        assert f"mlnx_qos -i {nic.ifname} --pfc 0,0,0,1,0,0,0,0" in calls
        assert f"cma_roce_tos -d {dev} -t 106" in calls
    log = (Path(lab.nodes[srv.name].dir) / "nic.log").read_text()
    assert "export NCCL_IB_HCA==" + ",".join(f"mlx5_{len(nics) - 1 - i}:1" for i in range(len(nics))) in log


def _route_dev(lab: LabState, node: str, dst: str, src: str) -> str:
    words = sh(lab, node, "ip", "route", "get", dst, "from", src).split()
    return words[words.index("dev") + 1]


def test_gpu_pings_across_rails_use_each_nics_own_rail(plan: Plan, lab: LabState, rendered: Path) -> None:
    build = manifest.load(rendered, plan)
    report = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir))
    assert report.ok, report
    pairs: list[tuple[str, NicAttachment, str, NicAttachment]] = []
    servers = plan.servers
    for a, b in zip(servers, servers[1:] + servers[:1], strict=True):
        for nic in a.nics:
            other = next(n for n in b.nics if n.rail != nic.rail)
            pairs.append((a.name, nic, b.name, other))
    deadline = time.monotonic() + 60
    pending = list(pairs)
    while pending and time.monotonic() < deadline:
        pending = [p for p in pending if node_exec(lab.workdir, p[0], ["ping", "-c1", "-W1", "-I",
                                                                       p[1].ip.split("/")[0],
                                                                       p[3].ip.split("/")[0]]).returncode]
        if pending:
            time.sleep(1)
    assert not pending, [f"{a}:{x.ifname} -> {b}:{y.ifname}" for a, x, b, y in pending]
    for a, nic, b, other in pairs:
        src, dst = nic.ip.split("/")[0], other.ip.split("/")[0]
        assert _route_dev(lab, a, dst, src) == nic.ifname  # leaves on the rail it is sourced from
        assert _route_dev(lab, b, src, dst) == other.ifname  # and the reply on the replier's rail
