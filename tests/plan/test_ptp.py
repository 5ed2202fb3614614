"""PTP as a fabric service (issue 26): the intent, the refusals by capability, the planned clocks and port
roles, each platform's rendering, linuxptp's own parser over the ptp4l.conf files, and `fabricgen check`."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.check.ptp import check_ptp
from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent, load_intent
from fabricgen.plan.build import build_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import render_all
from tests.conftest import ROOT, write_intent

LAB = ROOT / "inventory" / "lab" / "ptp.yaml"


def lab_intent(**ptp: Any) -> dict[str, Any]:
    data: dict[str, Any] = copy.deepcopy(yaml.safe_load(LAB.read_text()))
    data["ptp"].update(ptp)
    return data


def plan_of(data: dict[str, Any]) -> Plan:
    return build_plan(Intent.model_validate(data))


def render_to(plan: Plan, out: Path) -> Path:
    render_all(plan, out, workers=1)
    return out


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(FabricError) as exc:
        plan_of(data)
    return "\n".join(f"{p.path}: {p.message} (fix: {p.hint})" for p in exc.value.problems)


# --------------------------------------------------------------------------- intent and refusals


def load_problem(tmp_path: Path, data: dict[str, Any]) -> tuple[str, str, str, int | None]:
    with pytest.raises(FabricError) as exc:
        load_intent(write_intent(tmp_path, data))
    (p,) = exc.value.problems
    return p.path, p.message, p.hint, p.line


def test_domain_outside_the_profile_is_refused_naming_the_field(tmp_path: Path) -> None:
    path, message, hint, line = load_problem(tmp_path, lab_intent(profile="g8275.1", domain=0))
    assert path == "ptp.domain" and line is not None
    assert message == "domain 0 is outside the g8275.1 profile's domains 24-43"
    assert hint.startswith("use a domain from 24 to 43")


def test_the_grandmaster_group_must_be_an_endpoints_group(tmp_path: Path) -> None:
    path, message, hint, line = load_problem(tmp_path, lab_intent(grandmaster={"endpoints": "clock"}))
    assert path == "ptp.grandmaster.endpoints" and line is not None
    assert message == "no endpoints: group is named 'clock'" and hint == "use one of: gm"


def test_profile_default_domains() -> None:
    assert plan_of(lab_intent()).ptp.domain == 0  # type: ignore[union-attr]
    assert plan_of(lab_intent(profile="g8275.1")).ptp.domain == 24  # type: ignore[union-attr]
    assert plan_of(lab_intent(profile="g8275.2", domain=50)).ptp.domain == 50  # type: ignore[union-attr]


def test_sonic_boundary_clocks_are_a_named_refusal() -> None:
    data = lab_intent()
    data["platforms"] = {"leaf": "sonic", "spine": "frr"}
    message = refusal(data)
    assert "ptp.boundary_clocks: platform sonic (leaves) lacks the capability `ptp default-1588`" in message
    assert "SONiC has no PTP yet (sonic-net/SONiC#2324 is open)" in message


def test_a_profile_a_platform_lacks_is_refused() -> None:
    data = lab_intent(profile="g8275.1")
    data["platforms"] = {"leaf": "frr", "spine": "nxos"}
    message = refusal(data)
    assert "platform nxos (spines) lacks the capability `ptp g8275.1`" in message
    assert "leaves" not in message  # FRR's ptp4l has G.8275.1


def test_sonic_tier_left_out_of_boundary_clocks_plans_and_check_names_what_it_cuts_off(tmp_path: Path) -> None:
    data = lab_intent(boundary_clocks=["spine"])
    data["platforms"] = {"leaf": "sonic", "spine": "frr"}
    data["switch_models"]["leaf"] = {"model": "NVIDIA SN5600", "sku": "Mellanox-SN5600-O128"}
    data["addressing"]["gpu"] = "198.18.40.0/21"
    plan = plan_of(data)
    assert plan.ptp is not None and all(c.kind != "boundary" or c.hostname.startswith("plab-spine")
                                        for c in plan.ptp.clocks.values())
    out = render_to(plan, tmp_path / "build")
    findings = check_ptp(plan, out / "configs")
    unreachable = {f.device for f in findings if f.rule == "ptp-reachable"}
    assert "plab-spine01" in unreachable and "gpu0001/eth0" in unreachable


# --------------------------------------------------------------------------- the plan


def test_planned_clocks_steps_removed_and_port_roles() -> None:
    plan = plan_of(lab_intent())
    ptp = plan.ptp
    assert ptp is not None and ptp.grandmaster == "gm001"
    gm, standby = ptp.clocks["gm001"], ptp.clocks["gm002"]
    assert (gm.kind, gm.steps_removed, gm.priority1) == ("grandmaster", 0, 10)
    assert (standby.kind, standby.priority1) == ("standby", 11)
    gm_leaf = gm.ports[0].peer
    assert ptp.clocks[gm_leaf].steps_removed == 1 and ptp.clocks[gm_leaf].parents == ("gm001",)
    for sw in plan.by_role("spine"):
        clock = ptp.clocks[sw.hostname]
        assert clock.steps_removed == 2 and clock.parents == (gm_leaf,)
        # every spine port faces a leaf: toward the grandmaster's leaf upstream, toward the others downstream
        assert {p.name for p in clock.ports} == {i.name for i in sw.interfaces}
        assert all((p.role == "upstream") == (p.peer == gm_leaf) for p in clock.ports)
    for sw in plan.by_role("leaf"):
        if sw.hostname != gm_leaf:
            clock = ptp.clocks[sw.hostname]
            assert clock.steps_removed == 3
            assert set(clock.port_roles("upstream")) == {i.name for i in sw.interfaces if i.direction == "up"}
    for srv in plan.servers:
        for nic in srv.nics:
            client = ptp.clocks[f"{srv.name}/{nic.ifname}"]
            assert client.kind == "client" and client.port_roles("upstream") == [nic.ifname]
            assert client.steps_removed == (2 if nic.leaf == gm_leaf else 4)


def test_no_ptp_no_ptp_anywhere(tmp_path: Path) -> None:
    data = lab_intent()
    del data["ptp"]
    plan = plan_of(data)
    assert plan.ptp is None
    out = render_to(plan, tmp_path / "build")
    assert not list(out.glob("configs/*/ptp4l.conf"))
    assert "PTP" not in (out / "hosts" / "gpu0001.sh").read_text()


def test_growing_the_fabric_keeps_every_planned_clock() -> None:
    def grown(count: int) -> dict[str, Any]:
        data = lab_intent()
        data["switch_models"]["spine"]["ports"] = 16
        data["servers"]["count"] = count
        data["topology"]["max_servers"] = 16
        return data

    small, bigger = plan_of(grown(8)).ptp, plan_of(grown(16)).ptp
    assert small is not None and bigger is not None and len(bigger.clocks) > len(small.clocks)
    for key, clock in small.clocks.items():
        assert bigger.clocks[key].steps_removed == clock.steps_removed
        assert set(bigger.clocks[key].ports) >= set(clock.ports)


# --------------------------------------------------------------------------- rendering


def _mixed(profile: str = "default-1588") -> dict[str, Any]:
    data = lab_intent(profile=profile)
    data["platforms"] = {"leaf": "eos", "spine": "nxos"}
    data["switch_models"]["leaf"]["model"] = "7060X5"
    data["qos"] = {"mtu": 9214}
    return data


def test_nxos_and_eos_render_boundary_clocks_on_the_planned_ports(tmp_path: Path) -> None:
    plan = plan_of(_mixed())
    out = render_to(plan, tmp_path / "build")
    assert plan.ptp is not None
    spine = plan.by_role("spine")[0]
    nx = (out / "configs" / spine.hostname / "nxos.cfg").read_text()
    for line in ("feature ptp", f"ptp source {spine.loopback}", "ptp domain 0", "ptp priority1 128"):
        assert f"\n{line}\n" in nx
    ptp_ports = re.findall(r"interface (\S+)\n(?:  .*\n)*?  ptp\n", nx)
    assert sorted(ptp_ports) == sorted(p.name for p in plan.ptp.clocks[spine.hostname].ports)
    leaf = plan.by_role("leaf")[0]
    eos = (out / "configs" / leaf.hostname / "eos.cfg").read_text()
    for line in ("ptp mode boundary", "ptp domain 0", "ptp message-type event dscp 46 default",
                 f"ptp source ip {leaf.loopback}", "ptp monitor threshold offset-from-master 1000000"):
        assert f"\n{line}\n" in eos
    assert "ptp profile" not in eos  # the default profile is EOS's own default
    assert eos.count("   ptp enable\n") == len(plan.ptp.clocks[leaf.hostname].ports)
    assert check_ptp(plan, out / "configs") == []


def test_eos_renders_the_telecom_profile_through_pyavd(tmp_path: Path) -> None:
    data = _mixed("g8275.1")
    data["platforms"]["spine"] = "eos"
    data["switch_models"]["spine"]["model"] = "7060X5"
    plan = plan_of(data)
    out = render_to(plan, tmp_path / "build")
    eos = (out / "configs" / plan.by_role("spine")[0].hostname / "eos.cfg").read_text()
    assert "\nptp profile g8275.1\n" in eos and "\nptp domain 24\n" in eos


@pytest.mark.parametrize("profile", ["default-1588", "g8275.1", "g8275.2"])
def test_linuxptp_parses_every_rendered_ptp4l_conf(tmp_path: Path, profile: str) -> None:
    """ptp4l itself reads each file: an unknown key or bad value stops it with `failed to parse configuration
    file` before it touches an interface.  The port sections are renamed to interfaces that do not exist and
    the socket moved to tmp_path, so nothing runs PTP here."""
    ptp4l = shutil.which("ptp4l") or "/usr/sbin/ptp4l"
    if not Path(ptp4l).exists():
        pytest.fail("ptp4l (Debian package linuxptp) is not installed")
    plan = plan_of(lab_intent(profile=profile))
    out = render_to(plan, tmp_path / "build")
    files = sorted(out.glob("configs/*/ptp4l.conf"))
    assert len(files) == len(plan.switches)
    scripts = [(out / "hosts" / f"{h}.sh").read_text() for h in ("gm001", "gpu0001")]
    files_text = [f.read_text() for f in files] + [t for s in scripts for t in re.findall(r"<<'PTP4L'\n(.*?)PTP4L",
                                                                                              s, re.S)]
    assert len(files_text) == len(files) + 3  # the grandmaster's clock and gpu0001's two NIC clocks
    for i, text in enumerate(files_text):
        text = re.sub(r"^\[(?!global\]|unicast_master_table\])[^\]]+\]$", "[fgnoexist0]", text, flags=re.M)
        text = re.sub(r"^uds_address .*$", f"uds_address {tmp_path}/uds{i}", text, flags=re.M)
        conf = tmp_path / f"ptp4l-{i}.conf"
        conf.write_text(text)
        run = subprocess.run([ptp4l, "-f", str(conf), "-q"], capture_output=True, text=True, timeout=10)
        assert "failed to parse" not in run.stderr and "unknown option" not in run.stderr, run.stderr
        assert run.returncode != 0  # it got as far as the (missing) interface


def test_host_script_writes_one_client_config_per_nic(tmp_path: Path) -> None:
    plan = plan_of(lab_intent())
    out = render_to(plan, tmp_path / "build")
    script = out / "hosts" / "gpu0001.sh"
    conf_dir = tmp_path / "linuxptp"
    run = subprocess.run(["bash", str(script), "--dry-run"], capture_output=True, text=True, timeout=30,
                         env={"PATH": "/usr/bin:/bin", "PTP_CONF_DIR": str(conf_dir)})
    assert f"write {conf_dir}/fabricgen-eth0.conf" in run.stdout
    assert f"write {conf_dir}/fabricgen-eth1.conf" in run.stdout
    assert not conf_dir.exists()  # a dry run writes nothing
    text = script.read_text()
    assert "uds_address /var/run/ptp4l-eth0\n" in text and "uds_address /var/run/ptp4l-eth1\n" in text
    assert text.count("slaveOnly 1\n") == 2 and text.count("free_running 1\n") == 2


# --------------------------------------------------------------------------- check


def test_check_names_a_wrong_domain_a_missing_port_and_a_paused_dscp(tmp_path: Path) -> None:
    plan = plan_of(_mixed())
    out = render_to(plan, tmp_path / "build")
    assert plan.ptp is not None
    spine, leaf = plan.by_role("spine")[0], plan.by_role("leaf")[1]
    nx = out / "configs" / spine.hostname / "nxos.cfg"
    nx.write_text(nx.read_text().replace("\nptp domain 0\n", "\nptp domain 5\n"))
    eos = out / "configs" / leaf.hostname / "eos.cfg"
    eos.write_text(eos.read_text().replace("   ptp enable\n", "", 1))
    findings = check_ptp(plan, out / "configs")
    rules = {(f.device, f.rule) for f in findings}
    assert (spine.hostname, "ptp-domain") in rules and (leaf.hostname, "ptp-ports") in rules
    dropped = next(f for f in findings if f.rule == "ptp-ports")
    assert "no PTP on planned PTP port(s) Ethernet1/1" in dropped.message
    # the client behind the dropped port is cut off
    assert any(f.rule == "ptp-reachable" and f.device.endswith("/eth1") for f in findings)

    paused = plan_of(_mixed() | {"qos": {"mtu": 9214, "roce_dscp": [46]}})
    assert any(f.rule == "ptp-dscp" and "lossless class 3" in f.message
               for f in check_ptp(paused, out / "configs"))
