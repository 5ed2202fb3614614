"""Tenant isolation, live (issue 25): inventory/lab/tenants.yaml on the namespace lab, three tenants over
FRR's EVPN type-5 with kernel VXLAN, each tenant VRF a network namespace (zebra -n).

The switches boot with their rendered frr.conf and run their rendered tenants.sh before FRR starts, as a
provisioned Linux + FRR switch would.  Then, over real pings between the servers' NICs:

* every same-tenant pair of NICs (on the same leaf or across the spines) reaches the other with a
  full-size packet of the tenant MTU and don't-fragment set, and so do the servers left in the default VRF;
* every cross-tenant pair, and every tenant <-> default-VRF pair, fails;
* a probe's DSCP and ECN bits arrive unchanged at the far NIC, and the spines see them copied to the
  outer (VXLAN) header, where their PFC classifier looks;
* a dry run of the same build changes nothing, and adding a fourth tenant gives a dry-run diff that touches
  that tenant's lines and nothing else, labelled by what it does;
* deploying that fourth tenant to the running lab makes it complete, isolated and forwarding (all its own
  pairs answer), and deploying the 3-tenant build again removes it: its namespace and devices gone, its ports
  back in the default VRF with their planned addresses, and the whole matrix as at the start;
* before each of those two deploys, the same deploy with a line zebra refuses at the reload (after tenants.sh
  ran) fails on every leaf with the previous config restored: each leaf exactly as before, a tenant whose
  removal was undone forwarding again.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import itertools
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, run_deploy
from fabricgen.lab import LabState, lab_down, lab_up, node_exec, prune_stale_labs
from fabricgen.lab.from_plan import lab_topology
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.frr.tenants import boot_config
from fabricgen.render import manifest
from fabricgen.render.build import render_all

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]

ROOT = Path(__file__).resolve().parents[2]
INTENT = ROOT / "inventory" / "lab" / "tenants.yaml"
CONVERGE_S = 60.0
ROCE_DSCP_ECT0 = 26 << 2 | 0b10  # DSCP 26 (the RoCE class) + ECT(0): ToS 0x6a

Nic = tuple[str, str, str]  # (server, ifname, address)


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(INTENT)


@pytest.fixture(scope="module")
def build(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tenants") / "build"
    render_all(plan, out)
    return out


@pytest.fixture(scope="module")
def lab(plan: Plan, build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    """The lab with every switch provisioned: its rendered frr.conf loaded at start (`vtysh -b`, without the
    `netns` lines zebra adds itself), then saved by FRR (`write memory`), so the saved config is the build's."""
    prune_stale_labs()
    workdir = tmp_path_factory.mktemp("tenant-lab")
    topo = lab_topology(plan, workdir)
    nodes = tuple(dataclasses.replace(n, frr_config=boot_config((build / "configs" / n.name / "frr.conf").read_text()))
                  if n.kind == "switch" else n for n in topo.nodes)
    state = lab_up(dataclasses.replace(topo, nodes=nodes))
    try:
        for sw in plan.switches:  # saved = running, `netns` lines included, as on a provisioned switch
            out = node_exec(workdir, sw, ["vtysh", "-c", "write memory"])
            assert out.returncode == 0, out.stderr
        yield state
    finally:
        lab_down(workdir)


def build_checked(plan: Plan, tmp_path: Path) -> Path:
    """The lab intent rendered and checked by `fabricgen render`, as deploy requires."""
    out = tmp_path / "checked"
    assert main(["render", "-i", str(INTENT), "-o", str(out)]) == 0
    return out


def nics(plan: Plan) -> list[Nic]:
    return [(srv.name, n.ifname, n.ip.split("/")[0]) for srv in plan.servers for n in srv.nics]


def tenant_of(plan: Plan, nic: Nic) -> str:
    assert plan.tenancy is not None
    return plan.tenancy.nic_tenant.get((nic[0], nic[1]), "default")


def ping(lab: LabState, src: Nic, dst: Nic, size: int, tos: int = 0, count: int = 1) -> bool:
    """One full-size ping from a NIC's address with don't-fragment set (`-M do`): True if answered."""
    out = node_exec(lab.workdir, src[0], ["ping", "-n", "-q", "-c", str(count), "-i", "0.2", "-W", "1", "-M", "do",
                                          "-s", str(size - 28), "-Q", str(tos), "-I", src[2], dst[2]], timeout=15)
    return out.returncode == 0


def wait_converged(plan: Plan, lab: LabState) -> None:
    """Until, in every VRF (each tenant's and the default), a pair of NICs on different servers answers: its
    EVPN routes are in.  One VRF answering says nothing of another's (they converged seconds apart live)."""
    assert plan.tenancy is not None
    deadline = time.monotonic() + CONVERGE_S
    for vrf in sorted({tenant_of(plan, n) for n in nics(plan)}):
        mine = [n for n in nics(plan) if tenant_of(plan, n) == vrf]
        a, b = mine[0], next(n for n in mine if n[0] != mine[0][0])
        while not ping(lab, a, b, 1000):
            if time.monotonic() > deadline:
                pytest.fail(f"{a} -> {b} (VRF {vrf}) not reachable within {CONVERGE_S:.0f}s")
            time.sleep(1.0)


def check_matrix(plan: Plan, lab: LabState, deadline_s: float = 0.0) -> dict[tuple[Nic, Nic], bool]:
    """All 16 x 14 NIC pairs of different servers pinged at the tenant MTU with DF: reachable exactly when both
    are in the same VRF (asserted; pairs still wrong are pinged again until ``deadline_s`` has passed, for a
    fabric that has just changed).  Returns what each pair should do."""
    assert plan.tenancy is not None
    mtu = plan.tenancy.tenant_mtu
    pairs = [(a, b) for a, b in itertools.permutations(nics(plan), 2) if a[0] != b[0]]
    want = {p: tenant_of(plan, p[0]) == tenant_of(plan, p[1]) for p in pairs}
    deadline = time.monotonic() + deadline_s
    todo = pairs
    while True:
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            got = dict(zip(todo, pool.map(lambda p: ping(lab, p[0], p[1], mtu), todo), strict=True))
        todo = [p for p in todo if got[p] != want[p]]
        if not todo or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    wrong = [f"{a[0]}:{a[1]} ({tenant_of(plan, a)}) -> {b[0]}:{b[1]} ({tenant_of(plan, b)}): "
             f"{'reached' if got[a, b] else 'no answer'}" for a, b in todo]
    assert wrong == []
    return want


# A line FRR's parser accepts (`vtysh --dryrun`, the precheck) and zebra refuses when the reload applies it: a
# martian address ("% Invalid address": zebra/interface.c `ip_address_install`, `ipv4_martian`).  Only the live
# reload meets it, so the commit fails after tenants.sh has run.
REFUSED = " ip address 127.0.0.2/32"


def with_refused_line(build: Path, out: Path, stanzas: dict[str, str]) -> Path:
    """A copy of ``build`` whose leaves' frr.conf carry REFUSED at the end of a stanza (leaf -> its header line,
    e.g. ``interface Ethernet24``); deployed with --force, since it is no longer the checked build."""
    import shutil

    shutil.copytree(build, out)
    for leaf, header in stanzas.items():
        conf = out / "configs" / leaf / "frr.conf"
        lines = conf.read_text().splitlines()
        at = lines.index(header)
        end = next(i for i in range(at + 1, len(lines)) if lines[i] == "exit")
        conf.write_text("\n".join([*lines[:end], REFUSED, *lines[end:]]) + "\n")
    return out


def leaf_state(lab: LabState, leaf: str) -> dict[str, str | list[str]]:
    """What an undo must put back on a leaf: FRR's running config, its namespaces, fabricgen's tenant records,
    its links and each link's IPv4 addresses (in the switch's namespace)."""
    def run(*argv: str) -> str:
        out = node_exec(lab.workdir, leaf, list(argv))
        assert out.returncode == 0, (argv, out.stderr)
        return out.stdout

    return {"running": run("vtysh", "-c", "show running-config"),
            "netns": sorted(run("ls", "/run/netns").split()),
            "records": sorted(run("ls", "/run/fabricgen/tenants").split()),
            "links": sorted(line.split()[0].split("@")[0] for line in run("ip", "-br", "link").splitlines()),
            "addresses": sorted(line.split()[0].split("@")[0] + " " + " ".join(line.split()[2:])
                                for line in run("ip", "-br", "-4", "addr").splitlines())}


def failed_deploy(intent: Path, build: Path, lab: LabState, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """`fabricgen deploy --force` of ``build`` as an operator runs it: exit 1, no traceback; the FAILED lines.
    Its output is kept beside the build (deploy.out), for what the undo did (its "after the undo" notes)."""
    rc = main(["deploy", "-i", str(intent), "-b", str(build), "--lab-dir", lab.workdir, "--force"])
    text = capsys.readouterr()
    (build.parent / "deploy.out").write_text(text.out + text.err)
    assert rc == 1, text.out + text.err
    assert "Traceback" not in text.out + text.err
    failed: dict[str, str] = {}  # host -> its FAILED line and the reason's further (indented) lines
    host = ""
    for line in text.out.splitlines():
        if line.startswith(("FAILED ", "UNDETERMINED ")):
            host = line.split()[1]
            failed[host] = line
        elif host and line.startswith("    "):
            failed[host] += "\n" + line
        else:
            host = ""
    return failed


def test_reachability_matrix(plan: Plan, lab: LabState) -> None:
    """All 16 x 14 NIC pairs of different servers: reachable exactly when both are in the same VRF.  The lab has
    just booted: one answering pair per VRF does not mean every EVPN route is in (seen live beside the offline
    suite: gpu0001:eth0 -> gpu0005:eth1 in red, 2 runs of 4), so a pair still wrong is pinged again until
    CONVERGE_S has passed; a refused pair that answers still fails then."""
    wait_converged(plan, lab)
    want = check_matrix(plan, lab, deadline_s=CONVERGE_S)
    pairs = list(want)
    allowed = sum(want.values())
    assert allowed and len(pairs) - allowed  # the matrix has both kinds
    # each VRF (3 tenants and the default) holds 2 servers x 2 NICs: 8 ordered pairs of different servers
    assert (allowed, len(pairs) - allowed) == (4 * 8, 16 * 14 - 4 * 8)


def test_tenant_mtu_is_the_limit(plan: Plan, lab: LabState) -> None:
    """A packet one byte over the tenant MTU is refused at the sender's NIC with DF set, not fragmented."""
    assert plan.tenancy is not None
    red = [n for n in nics(plan) if tenant_of(plan, n) == "red"]
    a, b = red[0], next(n for n in red if n[0] != red[0][0])
    wait_converged(plan, lab)
    assert ping(lab, a, b, plan.tenancy.tenant_mtu)
    assert not ping(lab, a, b, plan.tenancy.tenant_mtu + 1)


# A packet capture on AF_PACKET (no tcpdump here): prints "ready", then one line per ICMP echo of the
# probe's addresses, plain ("icmp <tos>") or inside VXLAN ("vxlan <outer tos> <vni> <inner tos>").
SNIFF = r"""
import socket, struct, sys, time
src, dst, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.settimeout(0.2)
print("ready", flush=True)
end = time.time() + secs
def ip(b):
    return b[1], b[9], socket.inet_ntoa(b[12:16]), socket.inet_ntoa(b[16:20]), (b[0] & 15) * 4
while time.time() < end:
    try:
        pkt = s.recv(65535)
    except socket.timeout:
        continue
    if pkt[12:14] != b"\x08\x00":
        continue
    tos, proto, a, z, ihl = ip(pkt[14:])
    if proto == 17 and struct.unpack("!H", pkt[14 + ihl + 2:14 + ihl + 4])[0] == 4789:
        vni = int.from_bytes(pkt[14 + ihl + 12:14 + ihl + 15], "big")
        inner = pkt[14 + ihl + 8 + 8 + 14:]
        itos, iproto, ia, iz, _ = ip(inner)
        if iproto == 1 and (ia, iz) == (src, dst):
            print("vxlan", tos, vni, itos, flush=True)
    elif proto == 1 and (a, z) == (src, dst):
        print("icmp", tos, flush=True)
"""


def sniff(lab: LabState, node: str, src: str, dst: str, secs: float) -> subprocess.Popen[str]:
    holder = lab.nodes[node].holder
    assert holder is not None
    proc = subprocess.Popen(["nsenter", "-t", str(holder.pid), "-n", "--", "python3", "-c", SNIFF, src, dst, str(secs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.stderr
    return proc


def test_dscp_and_ecn_cross_the_overlay(plan: Plan, lab: LabState) -> None:
    """The RoCE DSCP (and ECT(0)) of a probe: copied to the outer header on the spines, intact at the far NIC."""
    assert plan.tenancy is not None
    red = [n for n in nics(plan) if tenant_of(plan, n) == "red"]
    a, b = red[0], next(n for n in red if n[0] != red[0][0])
    wait_converged(plan, lab)
    spines = [sw.hostname for sw in plan.by_role("spine")]
    procs = {node: sniff(lab, node, a[2], b[2], 4.0) for node in [b[0], *spines]}
    assert ping(lab, a, b, 1000, tos=ROCE_DSCP_ECT0, count=3)
    lines = {node: proc.communicate(timeout=15)[0].split("\n") for node, proc in procs.items()}
    far = [line for line in lines[b[0]] if line]
    assert far and all(line == f"icmp {ROCE_DSCP_ECT0}" for line in far), far
    vxlan = [line.split() for node in spines for line in lines[node] if line]
    red_vni = plan.tenancy.tenants["red"].vni
    assert vxlan and all(v == ["vxlan", str(ROCE_DSCP_ECT0), str(red_vni), str(ROCE_DSCP_ECT0)] for v in vxlan), vxlan


def with_amber(tmp_path: Path) -> tuple[Plan, Path]:
    """The lab intent with a fourth tenant (amber: the two servers left in the default VRF), rendered and
    checked by `fabricgen render`, as deploy requires."""
    intent = yaml.safe_load(INTENT.read_text())
    intent["tenants"].append({"name": "amber", "id": 14, "servers": ["gpu0004", "gpu0008"]})
    path = tmp_path / "tenants.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    out = tmp_path / "build"
    assert main(["render", "-i", str(path), "-o", str(out)]) == 0
    return load_plan(path), out


def test_adding_a_tenant_diffs_only_that_tenant(plan: Plan, lab: LabState, tmp_path: Path) -> None:
    """The dry run of a fourth tenant (the two servers left in the default VRF) against the running lab:
    every changed line is the new tenant's (its VRF, its ports, its BGP instance) and nothing else."""
    wait_converged(plan, lab)
    grown, out = with_amber(tmp_path)
    assert grown.tenancy is not None
    unchanged = run_deploy(plan, manifest.load(build_checked(plan, tmp_path), plan),
                           DeployOptions(lab_dir=lab.workdir, dry_run=True))
    assert unchanged.failed == {} and unchanged.changed == {}  # the running lab is its own build
    report = run_deploy(grown, manifest.load(out, grown), DeployOptions(lab_dir=lab.workdir, dry_run=True))
    assert report.failed == {}
    amber = grown.tenancy.tenants["amber"]
    leaves = set(amber.leaves)
    assert set(report.changed) == leaves and set(report.unchanged) == set(plan.switches) - leaves
    ports = {port for _, port in amber.ports}
    addresses = {itf.ipv4 for leaf in leaves for itf in grown.switches[leaf].interfaces if itf.name in ports}
    for host, diff in report.changed.items():
        foreign = foreign_lines(diff, "amber", ports, addresses)
        assert foreign == [], f"{host}: lines that are not tenant amber's:\n" + "\n".join(foreign)
        # labelled: the new VRF and its BGP instance are hitless; the port leaving the default VRF drops its address
        impact = report.outcomes[host].impact
        assert impact is not None
        assert any(n.startswith("the commit runs tenants.sh on the switch first") for n in report.outcomes[host].notes)
        labels = {(c.sign, c.text): i.label for h in impact.hunks for c, i in zip(h.changes, h.impacts, strict=True)}
        assert labels["+", "vrf amber"] == labels["+", f"router bgp {grown.switches[host].asn} vrf amber"] == "hitless"
        assert impact.worst is not None and impact.worst.label == "bgp-reset"


def foreign_lines(diff: str, tenant: str, ports: set[str], addresses: set[str]) -> list[str]:
    """The changed lines of a unified diff that are not the tenant's: not in its VRF's blocks (`vrf <t>`,
    `router bgp ... vrf <t>`), not in one of its ports' `interface` blocks, not naming its ports' subnets."""
    out: list[str] = []
    header = ""
    for text in diff.splitlines():
        if text.startswith(("---", "+++", "@@")) or not text:
            continue
        body = text[1:]
        if body and not body.startswith(" "):
            header = body
        if text[0] not in "+-":
            continue
        mine = (header.endswith(f"vrf {tenant}") or header == f"vrf {tenant}"
                or header.split(" vrf ")[0] in {f"interface {p}" for p in ports}
                or any(a in body for a in addresses) or body in ("exit-vrf", "exit", "!"))
        if not mine:
            out.append(text)
    return out


def test_validate_tenants_passes_then_names_a_leaked_route(plan: Plan, lab: LabState) -> None:
    """`validate --tenants` on the running lab: the sampled matrix, every switch's VRFs and every tenant VRF's
    router-MAC neighbours pass; a route of green's put into red's VRF by hand is then named, on its switch, and
    nothing else fails."""
    from fabricgen.validate import run_validate
    from fabricgen.validate.tenants import tenant_sample, tenant_subnets

    wait_converged(plan, lab)
    report = run_validate(plan, ("tenants",), lab_dir=lab.workdir)
    assert report.failures == [] and report.ok
    pings = sum(len(p) for p in tenant_sample(plan).pings.values())
    assert sum(1 for o in report.outcomes if o.item.count("->") == 1) == pings == 44
    assert "tenant VRFs read back on 6/6 switches" in report.coverage
    # every leaf's 3 tenant VRFs: each VTEP their kernel routes use has zebra's router-MAC neighbour
    macs = [o for o in report.outcomes if o.item.endswith(" router MACs")]
    assert len(macs) == 4 * 3 and all(o.ok for o in macs)
    green = next(s for s, t in sorted(tenant_subnets(plan).items()) if t == "green")
    leaf = plan.switches["tlab-leaf01"].hostname
    add = ["vtysh", "-c", "configure terminal", "-c", "vrf red", "-c", f"ip route {green} blackhole"]
    out = node_exec(lab.workdir, leaf, add)
    assert out.returncode == 0, out.stderr
    try:
        deadline = time.monotonic() + 20
        while True:
            failures = run_validate(plan, ("tenants",), lab_dir=lab.workdir).failures
            if failures or time.monotonic() > deadline:
                break
            time.sleep(1.0)
        assert [(f.device, f.item, f.actual) for f in failures] == [
            (leaf, f"route {green} in vrf red", "tenant green's route in VRF red")]
    finally:
        out = node_exec(lab.workdir, leaf, [*add[:5], "-c", f"no ip route {green} blackhole"])  # in vrf red
        assert out.returncode == 0, out.stderr


def test_a_failed_tenant_add_is_undone(plan: Plan, lab: LabState, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The fourth tenant deployed with a line zebra refuses in every one of its leaves' frr.conf: each leaf
    runs tenants.sh (amber's namespace made, its port moved in, its L3VNI devices) and binds amber in FRR, then
    the candidate's reload fails.  Deploy reports those leaves failed with the previous config restored (every
    device deploys at once by default, so nothing stops the others: the spines have nothing to change), and on
    each leaf the journal has removed amber's namespace, devices and record, its port is back in the default
    VRF with its planned address, and FRR runs exactly what it ran before.  The next test deploys the same
    tenant without the fault (and checks the other VRFs' reach)."""
    wait_converged(plan, lab)
    grown, out = with_amber(tmp_path)
    assert grown.tenancy is not None
    leaves = sorted(grown.tenancy.tenants["amber"].leaves)
    before = {leaf: leaf_state(lab, leaf) for leaf in leaves}
    faulty = with_refused_line(out, tmp_path / "faulty", {leaf: "interface lo" for leaf in leaves})
    failed = failed_deploy(tmp_path / "tenants.yaml", faulty, lab, capsys)
    assert sorted(failed) == leaves, failed
    for leaf, line in failed.items():
        assert line.startswith(f"FAILED {leaf} ") and "commit failed, previous config restored" in line, line
        assert "127.0.0.2/32" in line, line  # the reason names the refused line
    ports = {leaf: port for leaf, port in grown.tenancy.tenants["amber"].ports}
    for leaf in leaves:
        after = leaf_state(lab, leaf)
        assert "amber" not in after["netns"] and "amber" not in after["records"]
        assert "vx14" not in after["links"] and "br14" not in after["links"]
        planned = next(itf.ipv4 for itf in plan.switches[leaf].interfaces if itf.name == ports[leaf])
        assert f"{ports[leaf]} {planned}" in after["addresses"]
        assert after == before[leaf]


def test_deploy_adds_a_tenant_to_the_running_fabric(plan: Plan, lab: LabState, tmp_path: Path) -> None:
    """`fabricgen deploy` of a fourth tenant (amber: the two servers left in the default VRF) onto the running
    lab: each of its leaves runs its tenants.sh (amber's namespace, its ports moved in), waits for zebra to bind
    it, binds amber's L3VNI and waits until zebra has it up, reloads FRR and passes the post-commit check; every
    leaf's VRF amber then holds amber's L3VNI and all of its subnets as zebra sees them, every pair of amber's
    NICs answers a full-size ping of the tenant MTU with don't-fragment, no pair between amber and another VRF
    answers, red keeps its reach, and a dry run of the same build changes nothing.  Runs next to last: it
    leaves the lab with four tenants, for the removal test."""
    from fabricgen.platforms.frr.tenants import ROUTES_COMMAND, VNI_COMMAND, parse_live
    from fabricgen.validate.tenants import tenant_subnets

    wait_converged(plan, lab)
    grown, out = with_amber(tmp_path)
    assert grown.tenancy is not None
    leaves = set(grown.tenancy.tenants["amber"].leaves)
    report = run_deploy(grown, manifest.load(out, grown), DeployOptions(lab_dir=lab.workdir))
    assert report.failed == {}, {h: o.reason for h, o in report.outcomes.items() if o.reason}
    assert set(report.changed) == leaves and set(report.unchanged) == set(plan.switches) - leaves
    vni = grown.tenancy.tenants["amber"].vni
    for leaf in leaves:
        notes = report.outcomes[leaf].notes
        assert any("zebra bound VRF" in n and "amber" in n for n in notes), notes
        assert f"L3VNI {vni} (VRF amber) up in zebra before the reload" in notes, notes
    subnets = {s for s, t in tenant_subnets(grown).items() if t == "amber"}
    assert len(subnets) == 4
    deadline = time.monotonic() + CONVERGE_S
    while True:
        live = {leaf: parse_live(*(node_exec(lab.workdir, leaf, ["sh", "-c", c]).stdout
                                   for c in (VNI_COMMAND, ROUTES_COMMAND))) for leaf in sorted(leaves)}
        short = {leaf: sorted(subnets - v["amber"].prefixes) if "amber" in v else "no VRF amber"
                 for leaf, v in live.items() if "amber" not in v or not subnets <= v["amber"].prefixes}
        if not short or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert short == {}
    assert {v["amber"].vni for v in live.values()} == {grown.tenancy.tenants["amber"].vni}
    amber = [n for n in nics(grown) if tenant_of(grown, n) == "amber"]
    others = [n for n in nics(grown) if tenant_of(grown, n) != "amber"]
    red = [n for n in others if tenant_of(grown, n) == "red"]
    pairs = [p for x in amber for y in others for p in ((x, y), (y, x))]
    pairs.append((red[0], next(n for n in red if n[0] != red[0][0])))
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        got = dict(zip(pairs, pool.map(lambda p: ping(lab, p[0], p[1], grown.tenancy.tenant_mtu), pairs),
                       strict=True))
    want = {p: tenant_of(grown, p[0]) == tenant_of(grown, p[1]) for p in pairs}
    wrong = [f"{x[0]}:{x[1]} ({tenant_of(grown, x)}) -> {y[0]}:{y[1]} ({tenant_of(grown, y)}): "
             f"{'reached' if got[x, y] else 'no answer'}" for x, y in pairs if got[x, y] != want[x, y]]
    assert wrong == []
    assert sum(want.values()) == 1 and len(pairs) - 1 == 2 * 4 * 12
    # amber's own pairs: all 8 ordered pairs of NICs of its two servers (each across the spines), full size, DF
    own = [(x, y) for x in amber for y in amber if x[0] != y[0]]
    assert len(own) == 8
    deadline = time.monotonic() + 15  # the data plane follows the routes read back above within a second or two
    while True:
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            answered = list(pool.map(lambda p: ping(lab, p[0], p[1], grown.tenancy.tenant_mtu), own))
        silent = [f"{x[0]}:{x[1]} -> {y[0]}:{y[1]}" for (x, y), ok in zip(own, answered, strict=True) if not ok]
        if not silent or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert silent == [], "amber's own pairs silent; zebra's router MACs of L3VNI " + str(vni) + ":\n" + "\n".join(
        f"{leaf}: {node_exec(lab.workdir, leaf, ['vtysh', '-c', f'show evpn rmac vni {vni}']).stdout}"
        for leaf in sorted(leaves))
    again = run_deploy(grown, manifest.load(out, grown), DeployOptions(lab_dir=lab.workdir, dry_run=True))
    assert again.failed == {} and again.changed == {}  # deployed = the build: saved and running agree


def test_a_failed_tenant_removal_is_undone(plan: Plan, lab: LabState, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The lab's own 3-tenant build deployed onto the 4-tenant lab with a line zebra refuses in the default-VRF
    stanza of amber's port on every one of amber's leaves.  Each leaf unbinds amber's L3VNI, reloads FRR
    without amber (that reload leaves the port's default-VRF stanza out: the port is still in amber's
    namespace), runs `tenants.sh remove` (namespace, devices and record gone, the port back), and only then
    does the candidate's reload meet the refused line.  Deploy reports those leaves failed with the previous
    config restored; the undo dropped the port's default-VRF stanza while the port was still in the default
    VRF, the journal made amber again (record, namespace, port moved in, VXLAN device, bridge), and the rollback
    point was reloaded once zebra had amber and the port back, with nothing to forgive; FRR runs exactly what it
    ran before, and amber forwards: every one of its 8 own pairs answers a ping of the tenant MTU with
    don't-fragment.  The next test removes amber without the fault."""
    (tmp_path / "amber").mkdir()
    grown, _ = with_amber(tmp_path / "amber")
    assert grown.tenancy is not None
    amber = grown.tenancy.tenants["amber"]
    leaves = sorted(amber.leaves)
    ports = {leaf: port for leaf, port in amber.ports}
    before = {leaf: leaf_state(lab, leaf) for leaf in leaves}
    faulty = with_refused_line(build_checked(plan, tmp_path), tmp_path / "faulty",
                               {leaf: f"interface {ports[leaf]}" for leaf in leaves})
    failed = failed_deploy(INTENT, faulty, lab, capsys)
    assert sorted(failed) == leaves, failed
    for leaf, line in failed.items():
        assert line.startswith(f"FAILED {leaf} ") and "commit failed, previous config restored" in line, line
        assert "127.0.0.2/32" in line, line  # the candidate's reload, after tenants.sh remove, met the line
        assert "tenant amber removed" not in line, line  # undone: the removal's own note no longer holds
        # the undo's reloads failed at nothing (the rollback point's had no moved port's stanza to forgive)
        assert "moved into their tenant VRF" not in line and "runs all the same" not in line, line
    for leaf in leaves:
        after = leaf_state(lab, leaf)
        assert "amber" in after["netns"] and "amber" in after["records"]
        assert after == before[leaf]
        inside = node_exec(lab.workdir, leaf, ["ip", "-n", "amber", "-br", "link"]).stdout
        assert {"vx14", "br14", ports[leaf]} <= {ln.split()[0].split("@")[0] for ln in inside.splitlines()}, inside
    mine = [n for n in nics(grown) if tenant_of(grown, n) == "amber"]
    own = [(x, y) for x in mine for y in mine if x[0] != y[0]]
    assert len(own) == 8
    mtu = grown.tenancy.tenant_mtu
    deadline = time.monotonic() + 20  # the undo waited for amber's routes and their router MACs
    while True:
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            answered = list(pool.map(lambda p: ping(lab, p[0], p[1], mtu), own))
        silent = [f"{x[0]}:{x[1]} -> {y[0]}:{y[1]}" for (x, y), ok in zip(own, answered, strict=True) if not ok]
        if not silent or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    assert silent == [], "amber's own pairs silent after the undo; router MACs of L3VNI 10014:\n" + "\n".join(
        f"{leaf}: {node_exec(lab.workdir, leaf, ['vtysh', '-c', 'show evpn rmac vni 10014']).stdout}"
        for leaf in leaves)


def test_deploy_removes_a_tenant_from_the_running_fabric(plan: Plan, lab: LabState, tmp_path: Path) -> None:
    """The lab's own 3-tenant build deployed onto the 4-tenant lab the test above left.  The dry run: only
    amber's leaves change, every changed line is amber's, its VRF and BGP instance labelled "tenant removed",
    its ports not hitless.  The deploy: each leaf unbinds amber's L3VNI, reloads FRR without amber while its
    namespace still exists, removes what amber's record lists and returns its ports, then reloads the build;
    afterwards amber's namespace, devices and record are gone, its ports are back in the switch's namespace
    with their planned addresses, FRR has no `vrf amber` and runs exactly the build (a dry run changes nothing),
    and the whole matrix holds again: every same-VRF pair answers (amber's servers' in the default VRF now),
    every cross-VRF pair fails.  Runs last."""
    (tmp_path / "amber").mkdir()
    grown, _ = with_amber(tmp_path / "amber")
    assert grown.tenancy is not None
    amber = grown.tenancy.tenants["amber"]
    leaves = set(amber.leaves)
    ports = {port for _, port in amber.ports}
    addresses = {itf.ipv4 for leaf in leaves for itf in plan.switches[leaf].interfaces if itf.name in ports}
    build = manifest.load(build_checked(plan, tmp_path), plan)
    dry = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir, dry_run=True))
    assert dry.failed == {} and set(dry.changed) == leaves
    for host, diff in dry.changed.items():
        assert foreign_lines(diff, "amber", ports, addresses) == []
        impact = dry.outcomes[host].impact
        assert impact is not None
        why = {(c.sign, c.text): i for h in impact.hunks for c, i in zip(h.changes, h.impacts, strict=True)}
        for line in ("vrf amber", f"router bgp {plan.switches[host].asn} vrf amber"):
            assert why["-", line].why.startswith("tenant amber removed"), why["-", line]
        mine = [i for (sign, text), i in why.items() if text.startswith("interface ") and text.split()[1] in ports]
        assert mine and all(i.label != "hitless" for i in mine), mine
    report = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir))
    assert report.failed == {}, {h: o.reason for h, o in report.outcomes.items() if o.reason}
    assert set(report.changed) == leaves and set(report.unchanged) == set(plan.switches) - leaves
    for leaf in sorted(leaves):
        assert any(n.startswith("tenant amber removed") for n in report.outcomes[leaf].notes), report.outcomes[leaf]
        assert "amber" not in node_exec(lab.workdir, leaf, ["ls", "/run/netns"]).stdout.split()
        assert node_exec(lab.workdir, leaf, ["ls", "/run/fabricgen/tenants"]).stdout.split() == ["blue", "green", "red"]
        links = node_exec(lab.workdir, leaf, ["ip", "-br", "link"]).stdout
        assert "vx14" not in links and "br14" not in links
        addrs = {line.split()[0].split("@")[0]: line.split()[2:] for line in
                 node_exec(lab.workdir, leaf, ["ip", "-br", "-4", "addr"]).stdout.splitlines()}
        mine = {itf.name: itf.ipv4 for itf in plan.switches[leaf].interfaces if itf.name in ports}
        assert mine and all(addrs.get(name) == [ip] for name, ip in mine.items()), (mine, addrs)
        running = node_exec(lab.workdir, leaf, ["vtysh", "-c", "show running-config"]).stdout
        assert "vrf amber" not in running and "vni 10014" not in running
    again = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir, dry_run=True))
    assert again.failed == {} and again.changed == {}  # frr-reload --test: running = saved = the build
    check_matrix(plan, lab, deadline_s=CONVERGE_S)
