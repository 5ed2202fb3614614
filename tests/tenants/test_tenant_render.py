"""Tenants rendered (issue 25): the example intents through every platform's renderer, then the vendors'
own checkers (SONiC YANG with libyang, FRR's parser) over the result, and the lines that make a VRF
a tenant's: its VNI, RD, RTs and ports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricgen.check.run import run_checks
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render.build import render_all
from tests.conftest import ROOT
from tests.tenants.test_tenant_plan import GPU_EVPN, SERVER_VRFLITE, lab_with


def build(plan: Plan, tmp_path: Path) -> Path:
    out = tmp_path / "build"
    render_all(plan, out)
    return out / "configs"


@pytest.mark.parametrize("intent", [GPU_EVPN, SERVER_VRFLITE], ids=["gpu-evpn", "server-vrflite"])
def test_examples_pass_sonic_yang_and_frr_parser(intent: Path, tmp_path: Path, sonic_yang_models: Path) -> None:
    plan = load_plan(intent)
    configs = build(plan, tmp_path)
    findings = run_checks(plan, configs, yang_dir=sonic_yang_models, cache=False)
    assert [f for f in findings if f.severity == "error"] == []
    db = json.loads((configs / f"{plan.settings.name}-leaf01" / "config_db.json").read_text())
    assert db["VRF"]["Vrfred"] == ({"vni": "10001"} if intent == GPU_EVPN else {})
    assert db["INTERFACE"]["Ethernet0"] == {"vrf_name": "Vrfred"}
    if intent == GPU_EVPN:
        assert db["VXLAN_TUNNEL"] == {"vtep": {"src_ip": plan.switches[f"{plan.settings.name}-leaf01"].loopback}}
        assert db["VXLAN_TUNNEL_MAP"]["vtep|map_10001_Vlan3001"] == {"vlan": "Vlan3001", "vni": "10001"}
        assert db["VLAN_INTERFACE"]["Vlan3001"] == {"vrf_name": "Vrfred"}
        assert db["PORT"]["Ethernet0"]["mtu"] == "9166"  # tenant port lowered by the VXLAN header


def test_sonic_yang_refuses_a_bad_vrf_name(tmp_path: Path, sonic_yang_models: Path) -> None:
    """The YANG check does read the tenant tables: a VRF not named Vrf... fails it."""
    plan = load_plan(GPU_EVPN)
    configs = build(plan, tmp_path)
    path = configs / "gpucloud-leaf01" / "config_db.json"
    db = json.loads(path.read_text())
    db["VRF"]["red"] = db["VRF"].pop("Vrfred")
    path.write_text(json.dumps(db))
    findings = run_checks(plan, configs, yang_dir=sonic_yang_models, cache=False)
    assert any(f.rule == "sonic-yang" and f.device == "gpucloud-leaf01" for f in findings)


@pytest.mark.parametrize("mechanism", ["evpn-vxlan", "vrf-lite"])
def test_frr_lab_fabric_passes_frr_parser(mechanism: str, tmp_path: Path) -> None:
    plan = load_plan(lab_with(tmp_path, {"scope": "server", "mechanism": mechanism}))
    configs = build(plan, tmp_path)
    assert [f for f in run_checks(plan, configs, cache=False) if f.severity == "error"] == []
    leaf = (configs / "lab-leaf03" / "frr.conf").read_text()
    assert "interface Ethernet0 vrf blue\n" in leaf and "interface Ethernet16 vrf green\n" in leaf
    assert "router bgp 4200000002 vrf green\n" in leaf
    spine = (configs / "lab-spine01" / "frr.conf").read_text()
    if mechanism == "evpn-vxlan":
        assert "vrf green\n vni 10003\n netns /run/netns/green\nexit-vrf\n" in leaf
        kernel = (configs / "lab-leaf03" / "tenants.sh").read_text()  # the Linux side FRR binds to
        # each object it creates is recorded with its removal and its redo (tests below run the script)
        assert ("if [ ! -e /run/netns/green ]; then\n  ip netns add green\n  journal \"rm -f $state/green\"\n"
                "  record green '[ ! -e /run/netns/green ] || ip netns del green #redo: [ -e /run/netns/green ] || "
                "{ ip netns add green && nsenter --net=/run/netns/green ip link set lo up && "
                "nsenter --net=/run/netns/green sysctl -qw net.ipv4.ip_forward=1; }'\nfi\n") in kernel
        assert "then\n  ip link set Ethernet16 netns /run/netns/green\n  record green 'if ip -n green link show " \
               "Ethernet16 >/dev/null 2>&1; then ip -n green link set Ethernet16 netns $$ && ip link set Ethernet16 " \
               "up; fi #redo: if ip link show Ethernet16 >/dev/null 2>&1; then ip link set Ethernet16 netns " \
               "/run/netns/green && nsenter --net=/run/netns/green ip link set Ethernet16 up; fi'\nfi\n" in kernel
        assert plan.tenancy is not None
        vtep = plan.switches["lab-leaf03"].loopback
        assert (f"ip link add vx3 mtu {plan.tenancy.tenant_mtu} type vxlan id 10003 local {vtep} dstport 4789 "
                "nolearning tos inherit df inherit") in kernel
        assert "nsenter --net=/run/netns/green ip link set vx3 master br3\n" in kernel
        assert not (configs / "lab-spine01" / "tenants.sh").exists()
        assert "  rd 198.18.0.5:3\n  route-target import 65000:10003\n  route-target import 65000:10002\n" \
               "  route-target export 65000:10003\n" in leaf
        assert "  advertise-all-vni\n" in leaf
        assert "198.18.32.20/31" not in leaf.split("router bgp")[0].split("ip prefix-list")[1]  # not in default VRF
        assert "  neighbor 198.18.16.1 activate\n" in spine.split("address-family l2vpn evpn")[1]
        assert "attribute-unchanged" not in spine  # FRR's default for l2vpn evpn, never shown (frr/tenants.py)
    else:
        assert "vni" not in leaf and "l2vpn" not in spine
        assert "vxlan" not in (configs / "lab-leaf03" / "tenants.sh").read_text()
        assert " match source-vrf green\n set community 65000:3 additive\n" in leaf
        assert "bgp community-list standard CL-green seq 10 permit 65000:2\n" in leaf  # green reaches blue


def test_no_tenants_renders_what_it_rendered_before(tmp_path: Path) -> None:
    """A fabric without tenants gets no tenant line: the golden files stay as they are."""
    plan = load_plan(ROOT / "inventory" / "lab" / "fabric.yaml")
    configs = build(plan, tmp_path)
    text = (configs / "lab-leaf01" / "frr.conf").read_text()
    assert " vrf " not in text and "l2vpn" not in text


def test_nxos_renders_evpn_and_passes_its_structural_check(tmp_path: Path) -> None:
    from tests.tenants.test_tenant_check import nxos_intent

    plan = load_plan(nxos_intent(tmp_path))
    configs = build(plan, tmp_path)
    assert [f for f in run_checks(plan, configs, cache=False) if f.severity == "error"] == []
    leaf = (configs / "gpucloud-leaf05" / "nxos.cfg").read_text()  # red and blue (NICs 4-7), not green
    for line in ("feature nv overlay\n", "feature vn-segment-vlan-based\n", "nv overlay evpn\n",
                 "vlan 3003\n  vn-segment 10003\nvrf context blue\n  vni 10003\n",
                 "    route-target import 65000:10002 evpn\n    route-target export 65000:10003 evpn\n",
                 "  member vni 10001 associate-vrf\n  member vni 10003 associate-vrf\n",
                 "  vrf blue\n    address-family ipv4 unicast\n      advertise l2vpn evpn\n"):
        assert line in leaf, line
    assert "vrf context green" not in leaf and "qos-mode" not in leaf
    spine = (configs / "gpucloud-spine01" / "nxos.cfg").read_text()
    assert "  address-family l2vpn evpn\n    retain route-target all\n" in spine
    assert "      send-community extended\n      route-map RM-NH-UNCHANGED out\n" in spine
    assert "vrf context" not in spine and "feature nv overlay" not in spine


@pytest.mark.parametrize("leaf", ["sonic", "nxos", "frr"])
def test_server_vrflite_example_renders_and_checks_on_every_leaf_platform(leaf: str, tmp_path: Path,
                                                                          request: pytest.FixtureRequest) -> None:
    """Done-when of issue 25: the 3-tenant server-scope vrf-lite intent renders on NX-OS, SONiC and FRR leaves
    and passes every check (NX-OS: fabricgen's structural rules; SONiC: its YANG models, which the SONiC case
    needs like every YANG test; the tenant rules everywhere)."""
    from tests.tenants.test_tenant_check import vrflite_intent

    yang = request.getfixturevalue("sonic_yang_models") if leaf == "sonic" else None
    plan = load_plan(vrflite_intent(tmp_path, leaf))
    configs = build(plan, tmp_path)
    assert [f for f in run_checks(plan, configs, yang_dir=yang, cache=False) if f.severity == "error"] == []
    assert plan.tenancy is not None and list(plan.tenancy.tenants) == ["red", "green", "blue"]
    assert all(plan.tenancy.leaf_tenants[leaf_] == ["red", "green", "blue"]
               for leaf_ in plan.switches if leaf_.split("-")[-1].startswith("leaf"))


def test_nxos_renders_vrf_lite(tmp_path: Path) -> None:
    """NX-OS vrf-lite: the RT leaks of the intent's reach, the default-VRF leak with the tenant's tag, the
    import filter of its own and its reach's tags, the ports in their VRFs with their RoCE QoS unchanged."""
    from tests.tenants.test_tenant_check import vrflite_intent

    plan = load_plan(vrflite_intent(tmp_path, "nxos"))
    configs = build(plan, tmp_path)
    leaf = (configs / "gpuhall-leaf01" / "nxos.cfg").read_text()
    loopback = plan.switches["gpuhall-leaf01"].loopback
    blue = (f"vrf context blue\n  rd {loopback}:3\n  address-family ipv4 unicast\n"
            "    route-target import 65000:10003\n    route-target import 65000:10002\n"
            "    route-target export 65000:10003\n"
            "    import vrf default map RM-IMPORT-blue\n    export vrf default map RM-TAG-blue\n")
    for line in (blue, "ip community-list standard CL-blue seq 5 permit 65000:3\n",
                 "ip community-list standard CL-blue seq 10 permit 65000:2\n",
                 "route-map RM-TAG-blue permit 10\n  set community 65000:3 additive\n",
                 "route-map RM-IMPORT-blue permit 10\n  match community CL-blue\n",
                 "  vrf blue\n    address-family ipv4 unicast\n      redistribute direct route-map RM-TENANT-DIRECT\n"):
        assert line in leaf, line
    assert "evpn" not in leaf and "nve1" not in leaf and "vn-segment" not in leaf and "allow-vpn" not in leaf
    assert "ip community-list standard CL-red seq 10" not in leaf  # red reaches no one
    ports = leaf.split("\ninterface ")
    tenant_port = next(p for p in ports if p.startswith("Ethernet1/1\n"))
    plain_port = next(p for p in ports if "leaf_spine" in p.split("\n")[1])
    assert "  vrf member red\n" in tenant_port and "vrf member" not in plain_port
    qos = [line for line in tenant_port.splitlines() if "priority-flow-control" in line or "service-policy" in line]
    assert qos and qos == [line for line in plain_port.splitlines()
                           if "priority-flow-control" in line or "service-policy" in line]
    lines = tenant_port.splitlines()
    layer3 = min(i for i, line in enumerate(lines) if line.startswith(("  ip ", "  no ip ", "  no bfd")))
    assert lines.index("  vrf member red") < layer3
    spine = (configs / "gpuhall-spine01" / "nxos.cfg").read_text()
    assert "vrf context" not in spine and "      send-community\n" in spine


def test_lab_runs_the_kernel_script_before_zebra_with_netns_vrfs(tmp_path: Path) -> None:
    """The tenant lab (inventory/lab/tenants.yaml): each leaf runs its rendered tenants.sh before zebra, which
    then runs with its netns VRF backend; the fabric links carry the raised underlay MTU, server links the
    tenant MTU; spines and a fabric without tenants are as before."""
    from fabricgen.lab.daemons import NodePaths, setup_script
    from fabricgen.lab.from_plan import lab_topology

    plan = load_plan(ROOT / "inventory" / "lab" / "tenants.yaml")
    assert plan.tenancy is not None
    topo = lab_topology(plan, tmp_path)
    leaf, spine = topo.node("tlab-leaf01"), topo.node("tlab-spine01")
    assert leaf.kernel_script.startswith("#!/bin/sh\n# tlab-leaf01: the Linux side of its tenant VRFs")
    assert spine.kernel_script == ""
    paths = NodePaths(tmp_path / "leaf")
    script = setup_script(leaf, paths).splitlines()
    kernel = next(i for i, line in enumerate(script) if line.startswith(f"sh {paths.kernel_script}"))
    zebra = next(i for i, line in enumerate(script) if "/zebra " in line)
    assert kernel < zebra and " -n " in script[zebra]
    assert " -n " not in next(line for line in setup_script(spine, paths).splitlines() if "/zebra " in line)
    mtus = {(link.a, link.z): link.mtu for link in topo.links}
    assert mtus[("gpu0001", "tlab-leaf01")] == plan.tenancy.tenant_mtu == 9216
    assert mtus[("tlab-leaf01", "tlab-spine01")] == plan.tenancy.underlay_mtu == 9216 + 50
    plain = lab_topology(load_plan(ROOT / "inventory" / "lab" / "fabric.yaml"), tmp_path)
    assert {link.mtu for link in plain.links} == {9216}
    assert all(not n.kernel_script for n in plain.nodes)


def test_boot_config_leaves_the_netns_binding_to_zebra(tmp_path: Path) -> None:
    from fabricgen.platforms.frr.tenants import boot_config

    plan = load_plan(ROOT / "inventory" / "lab" / "tenants.yaml")
    text = (build(plan, tmp_path) / "tlab-leaf01" / "frr.conf").read_text()
    assert " netns /run/netns/red\n" in text
    booted = boot_config(text)
    assert "netns" not in booted and "vrf red\n vni 10011\nexit-vrf\n" in booted
    assert booted.splitlines() == [line for line in text.splitlines() if not line.startswith(" netns ")]
    assert "vrf red\n vni 10011\n netns /run/netns/red\nexit-vrf\n" in text  # FRR's order: vni, then netns


STUB = """#!/bin/sh
# records every call; the port is found in the switch's namespace (`ip link show`), nothing in the tenant's
# (`nsenter ... link show`: all is created), `-o link show` prints the VXLAN device's MAC
echo "$(basename "$0") $*" >> "$CALLS"
case "$(basename "$0") $*" in
  *"-o link show"*) echo "5: vx3: <BROADCAST> mtu 9216 link/ether 0a:00:00:00:00:03 brd ff:ff:ff:ff:ff:ff";;
  "nsenter "*"link show"*) exit 1;;
esac
exit 0
"""


def _run_tenants_sh(tmp_path: Path, vrfs: int, undo: str, rc: int = 0, mode: str = "") -> tuple[Path, str]:
    """tenants.sh of tlab-leaf03 with its first ``vrfs`` tenants, run by a real shell (with ``mode``, e.g.
    "remove") against `ip`, `nsenter` and `sysctl` stand-ins that record each call (no namespace is made); its
    namespace and state directories in ``tmp_path``; it must exit ``rc``.  Returns (the calls file, the
    script's stdout and stderr)."""
    import dataclasses
    import subprocess

    from fabricgen.platforms.frr.tenants import kernel_tenancy
    from fabricgen.render.build import environment

    plan = load_plan(ROOT / "inventory" / "lab" / "tenants.yaml")
    kernel = kernel_tenancy(plan.switches["tlab-leaf03"], plan)
    assert kernel is not None
    mine = dataclasses.replace(kernel, netns_dir=str(tmp_path / "netns"), state_dir=str(tmp_path / "state"),
                               vrfs=kernel.vrfs[:vrfs])
    script = environment().get_template("frr/tenants.sh.j2").render(k=mine)
    calls = _stubs(tmp_path)
    env = {**_stub_env(tmp_path), "FABRICGEN_UNDO": undo}
    out = subprocess.run(["sh", "-c", script, "tenants.sh", *([mode] if mode else [])], env=env, check=False,
                         capture_output=True, text=True)
    assert out.returncode == rc, out.stderr
    return calls, out.stdout + out.stderr


def _stubs(tmp_path: Path) -> Path:
    """`ip`, `nsenter` and `sysctl` stand-ins (STUB) in ``tmp_path``/bin; returns their calls file, emptied."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("ip", "nsenter", "sysctl"):
        (bin_dir / tool).write_text(STUB)
        (bin_dir / tool).chmod(0o755)
    calls = tmp_path / "calls"
    calls.write_text("")
    return calls


def _stub_env(tmp_path: Path) -> dict[str, str]:
    import os

    return {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "CALLS": str(tmp_path / "calls")}


def _run_journal(tmp_path: Path, journal: Path) -> str:
    """The journal run newest first, as napalm_frr `_undo_setup` runs it; returns the undo shell's PID."""
    import subprocess

    _stubs(tmp_path)
    undo = subprocess.run(["sh", "-c", f"tac {journal} | sh -e & echo $!; wait"], env=_stub_env(tmp_path),
                          check=True, capture_output=True, text=True)
    return undo.stdout.split()[0]


def test_the_journal_of_tenants_sh_undoes_what_it_created_newest_first(tmp_path: Path) -> None:
    """With FABRICGEN_UNDO, tenants.sh journals one removal per object it creates; the journal read newest
    first (as napalm_frr `_undo_setup` runs it) deletes the bridge and the VXLAN device, moves the port back to
    the undo shell's own namespace (`$$`, expanded when the undo runs) and up, deletes the namespace, then the
    tenant's record."""
    journal = tmp_path / "undo.sh"
    calls, _ = _run_tenants_sh(tmp_path, 1, str(journal))
    state = tmp_path / "state"
    lines = journal.read_text().splitlines()
    assert [line.split(" #redo: ")[0].split(";")[0] for line in lines] == [
        f"rm -f {state}/red", f"[ ! -e {tmp_path}/netns/red ] || ip netns del red",
        "if ip -n red link show Ethernet0 >/dev/null 2>&1", "if ip -n red link show vx11 >/dev/null 2>&1",
        "if ip -n red link show br11 >/dev/null 2>&1"]
    assert all(" #redo: " in line for line in lines[1:])  # each object's record line carries its redo
    assert (state / "red").read_text().splitlines() == lines[1:]  # the tenant's record: the same, kept
    shell = _run_journal(tmp_path, journal)  # its namespace is the one the port returns to
    assert calls.read_text().splitlines() == [
        "ip -n red link show br11", "ip -n red link del br11", "ip -n red link show vx11", "ip -n red link del vx11",
        "ip -n red link show Ethernet0", f"ip -n red link set Ethernet0 netns {shell}", "ip link set Ethernet0 up"]
    assert not (state / "red").exists()  # (no /run/netns/red here, so no `ip netns del`)


def test_tenants_sh_removes_a_dropped_tenant_only_when_told_and_journals_how_to_make_it_again(tmp_path: Path) -> None:
    """A build without tenant green, on a switch where an earlier run created green (its record): a plain run
    (deploy's setup, before FRR's reload) only names green and touches nothing of it; `tenants.sh remove` (after
    the reload that took FRR off green) removes what green's record lists, newest first, sets the record aside
    and journals each object's redo; the journal run newest first (a failed commit's undo) puts the record back
    and makes green again in creation order: namespace, port moved in, VXLAN device, bridge with the same MAC."""
    _run_tenants_sh(tmp_path, 2, "")  # red and green, as at boot: records, no journal
    state = tmp_path / "state"
    records = {p.name: p.read_text() for p in state.iterdir()}
    assert sorted(records) == ["green", "red"]
    journal = tmp_path / "undo.sh"
    calls, out = _run_tenants_sh(tmp_path, 1, str(journal))
    assert "tenant green no longer in the build" in out
    assert not [c for c in calls.read_text().splitlines() if "green" in c or "Ethernet8" in c or "12" in c]
    assert (state / "green").read_text() == records["green"]  # (red's grows: the stand-ins make nothing)
    assert "green" not in journal.read_text()

    journal.write_text("")
    calls, out = _run_tenants_sh(tmp_path, 1, str(journal), mode="remove")
    assert out.splitlines() == ["tenant green removed: what fabricgen created for it, newest first"]
    assert calls.read_text().splitlines() == [  # red untouched; green's objects newest first
        "ip -n green link show br12", "ip -n green link del br12", "ip -n green link show vx12",
        "ip -n green link del vx12", "ip -n green link show Ethernet8",
        *[c for c in calls.read_text().splitlines() if c.startswith("ip -n green link set Ethernet8 netns ")],
        "ip link set Ethernet8 up"]
    assert sorted(p.name for p in state.iterdir()) == [".green.removed", "red"]
    redo = journal.read_text().splitlines()
    assert [line.split(" then ")[-1].split(";")[0] for line in redo[:3]] == [
        f"nsenter --net={tmp_path}/netns/green ip link add br12 address 0a:00:00:00:00:03 type bridge stp_state 0 && "
        f"nsenter --net={tmp_path}/netns/green ip link set vx12 master br12 && nsenter --net={tmp_path}/netns/green "
        f"ip link set vx12 type bridge_slave learning off && nsenter --net={tmp_path}/netns/green ip link set br12 "
        f"mtu 9216 up && nsenter --net={tmp_path}/netns/green ip link set vx12 up",
        "ip link add vx12 mtu 9216 type vxlan id 10012 local 198.18.0.5 dstport 4789 nolearning tos inherit df "
        f"inherit ttl 64 && ip link set vx12 netns {tmp_path}/netns/green",
        f"ip link set Ethernet8 netns {tmp_path}/netns/green && nsenter --net={tmp_path}/netns/green ip link set "
        "Ethernet8 up"]
    assert redo[3].startswith(f"[ -e {tmp_path}/netns/green ] || {{ ip netns add green && ")
    assert redo[4] == f"mv -f {state}/.green.removed {state}/green"

    _run_journal(tmp_path, journal)
    assert (state / "green").read_text() == records["green"] and not (state / ".green.removed").exists()
    made = calls.read_text().splitlines()
    assert made[0] == "ip netns add green" and made.index("ip link set Ethernet8 netns " + f"{tmp_path}/netns/green") \
        < made.index("ip link add vx12 mtu 9216 type vxlan id 10012 local 198.18.0.5 dstport 4789 nolearning tos "
                     "inherit df inherit ttl 64") < made.index(
            f"nsenter --net={tmp_path}/netns/green ip link add br12 address 0a:00:00:00:00:03 type bridge stp_state 0")


def test_tenants_sh_refuses_a_record_it_could_not_make_again(tmp_path: Path) -> None:
    """A record line without its redo (an older fabricgen's): deploy could not restore that tenant if the
    commit failed, so a plain run exits 3 naming it before it creates or removes anything."""
    _run_tenants_sh(tmp_path, 2, "")
    green = tmp_path / "state" / "green"
    green.write_text("".join(line.split(" #redo: ")[0] + "\n" for line in green.read_text().splitlines()))
    journal = tmp_path / "undo.sh"
    calls, out = _run_tenants_sh(tmp_path, 1, str(journal), rc=3)
    assert "tenant green runs here, but its record" in out and "nothing changed" in out
    assert calls.read_text() == "" and not journal.exists()
