"""The PTP lab's files, off line: each planned boundary clock's switch node carries its rendered ptp4l.conf
(its planned ports, the plan's domain) and its setup starts ptp4l on it; servers start one per NIC config
their script writes; a lab without `ptp:` starts none."""

from __future__ import annotations

from pathlib import Path

from fabricgen.lab.daemons import NODE_MOUNTS, NodePaths, login_path, setup_script
from fabricgen.lab.from_plan import lab_topology
from fabricgen.plan.build import load_plan
from fabricgen.platforms.ptp_facts import read_ptp4l
from tests.conftest import ROOT


def test_switches_carry_their_rendered_boundary_clock(tmp_path: Path) -> None:
    plan = load_plan(ROOT / "inventory" / "lab" / "ptp.yaml")
    assert plan.ptp is not None
    topo = lab_topology(plan, tmp_path)
    for node in (n for n in topo.nodes if n.kind == "switch"):
        clock = plan.ptp.clocks[node.name]
        conf = tmp_path / f"{node.name}.conf"
        conf.write_text(node.ptp_config)
        facts = read_ptp4l(conf)
        assert facts is not None and facts.domain == plan.ptp.domain
        assert sorted(facts.ports) == sorted(p.name for p in clock.ports)
        script = setup_script(node, NodePaths(tmp_path / node.name))
        # on the file deploy writes (/etc/linuxptp/fabricgen-ptp4l.conf: the node's own /etc/linuxptp), restarted
        # by deploy through the node's systemctl stand-in, first on its login PATH
        assert f"setsid /usr/sbin/ptp4l -m -f {tmp_path / node.name / 'linuxptp' / 'fabricgen-ptp4l.conf'}" in script
        assert ("linuxptp", "/etc/linuxptp") in NODE_MOUNTS
        assert login_path(node, NodePaths(tmp_path / node.name)).startswith(f"{tmp_path / node.name / 'ptp-bin'}:")
    server = next(n for n in topo.nodes if n.kind == "server")
    assert "fabricgen-*.conf" in setup_script(server, NodePaths(tmp_path / server.name))
    assert "PTP_CONF_DIR=" in server.host_script


def test_a_lab_without_ptp_runs_no_boundary_clock(tmp_path: Path) -> None:
    topo = lab_topology(load_plan(ROOT / "inventory" / "lab" / "fabric.yaml"), tmp_path)
    switches = [n for n in topo.nodes if n.kind == "switch"]
    assert switches and not any(n.ptp_config for n in switches)
    assert not any("ptp4l" in setup_script(n, NodePaths(tmp_path / n.name)) for n in switches)
