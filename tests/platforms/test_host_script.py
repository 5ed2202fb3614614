"""The NIC script that brings a GPU server up (fabricgen.platforms.host.render, platforms/host/templates/nic.sh.j2).

Issue 9: the scripts configured no address, MTU or route, used OFED-only sysfs paths under
`set -e` (aborting on the inbox driver) and paired ethN with mlx5_N by position.  Text tests
check what is rendered; the namespace tests (root) run the script for real in a private network
and mount namespace, on veth netdevs with the ConnectX side emulated as the lab does it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fabricgen.intent.model import Intent
from fabricgen.lab.nic_emulation import emulated_nics, sysfs_commands, write_stubs
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.host.render import nic_script, parse_nic_header, parse_nic_lines, roce_gid
from tests.conftest import EXAMPLE, small_intent


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def script(plan: Plan) -> str:
    return nic_script(plan.servers[0], plan)


# --------------------------------------------------------------------------- what is rendered


def test_header_and_per_nic_plan(plan: Plan, script: str) -> None:
    header = parse_nic_header(script)
    assert header["server"] == "gpu0001" and header["mtu"] == "9216" and header["roce_tos"] == "106"
    srv = plan.servers[0]
    nics = parse_nic_lines(script)
    assert [n["ifname"] for n in nics] == [f"eth{i}" for i in range(8)]
    for line, nic in zip(nics, sorted(srv.nics, key=lambda n: (n.nic, n.port)), strict=True):
        assert (line["address"], line["gateway"], line["leaf"], line["leaf_port"]) == (
            nic.ip, nic.gateway, nic.leaf, nic.leaf_port)
    assert len({n["table"] for n in nics}) == 8


def test_every_nic_gets_address_mtu_table_and_routes(plan: Plan, script: str) -> None:
    for i, nic in enumerate(sorted(plan.servers[0].nics, key=lambda n: (n.nic, n.port))):
        network = nic.gateway + "/31"
        assert f"nic_up {nic.ifname} {nic.ip} {network} {nic.gateway} {100 + i}\n" in script
        ip = nic.ip.split("/")[0]
        assert f"roce_qos {nic.ifname} {ip} {roce_gid(ip)}\n" in script
    assert "MTU=9216\n" in script
    assert f'POOLS="{plan.settings.pools.gpu} {plan.settings.pools.loopbacks}"' in script
    for setting in ("arp_ignore", "arp_announce", "rp_filter"):
        assert f'/proc/sys/net/ipv4/conf/$ifname/{setting}"' in script


def test_rdma_devices_come_from_sysfs_not_position(script: str) -> None:
    assert not re.search(r"mlx5_\d", script)  # no device name is guessed at render time
    assert '"$SYS"/class/infiniband/*/device/net/"$1"' in script
    assert 'tool cma_roce_tos -d "$dev" -t 106' in script


def test_ofed_only_paths_are_optional_and_named(script: str) -> None:
    assert "set -e" not in script.replace("set -euo", "")  # no abort halfway
    assert 'ofed_put 106 "$SYS/class/infiniband/$dev/tc/1/traffic_class"' in script
    assert 'ofed_put 1 "$SYS/class/net/$ifname/ecn/roce_np/enable/3"' in script
    assert "exists only with the NVIDIA MLNX_OFED / DOCA-OFED driver, not the inbox mlx5 driver" in script
    assert "install mlnx-tools" in script and "load mlx5_ib" in script


def test_script_follows_the_qos_policy() -> None:
    p = build_plan(Intent.model_validate(small_intent(
        qos={"roce_tc": 5, "lossless_tcs": [5], "nic": {"ecn_capable": False}})))
    text = nic_script(p.servers[0], p)
    assert parse_nic_header(text)["pfc_mask"] == "0,0,0,0,0,1,0,0"
    assert 'tool mlnx_qos -i "$ifname" --dscp2prio set,26,5\n' in text
    assert 'ofed_put 104 "$SYS/class/infiniband/$dev/tc/1/traffic_class"' in text  # DSCP 26, no ECT bit
    assert 'ofed_put 0 "$SYS/class/net/$ifname/ecn/roce_rp/enable/5"' in text
    assert "export NCCL_IB_TC=104" in text


def test_roce_gid_is_mlx5s_ipv4_mapped_form() -> None:
    assert roce_gid("198.18.32.1") == "0000:0000:0000:0000:0000:ffff:c612:2001"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_dry_run_is_stable(tmp_path: Path, script: str) -> None:
    path = tmp_path / "nic.sh"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0
    runs = [subprocess.run(["bash", str(path), "--dry-run"], capture_output=True, text=True, check=False)
            for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    lines = runs[0].stdout.splitlines()
    assert "ip address replace 198.18.32.1/31 dev eth0" in lines
    assert "ip rule add from 198.18.32.1 lookup 100 pref 100" in lines
    assert "mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0" in lines
    assert "export NCCL_IB_TC=106" in lines
    bad = subprocess.run(["bash", str(path), "--bogus"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "usage" in bad.stderr


# --------------------------------------------------------------------------- run for real (root)

needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                reason="runs the script in its own network and mount namespace (root)")


def run_in_namespace(tmp_path: Path, plan: Plan, *, netdevs: bool = True, emulate: bool = True,
                     runs: int = 1) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    """The server's script in a fresh netns + mount ns: veth netdevs named like its NICs, /sys of that
    netns, optionally the lab's ConnectX emulation and mlnx-tools stubs.  Returns the last run and state."""
    srv = plan.servers[0]
    nics = sorted(srv.nics, key=lambda n: (n.nic, n.port))
    (tmp_path / "nic.sh").write_text(nic_script(srv, plan))
    stubs = tmp_path / "stubs"
    write_stubs(stubs, str(tmp_path / "stubs.log"))
    lines = ["set -e", "ip link set lo up"]
    if netdevs:
        lines += [f"ip link add {n.ifname} type veth peer name peer{i}" for i, n in enumerate(nics)]
    lines.append("mount -t sysfs sysfs /sys")
    if emulate:
        lines += sysfs_commands(emulated_nics([(n.ifname, n.ip) for n in nics]), str(tmp_path / "stash"))
    path = f"{stubs}:$PATH" if emulate else "$PATH"
    lines.append("set +e")
    (tmp_path / "nccl.conf").write_text("NCCL_DEBUG=WARN\nNCCL_IB_TC=0\n")  # an admin's line, and a stale TC
    for i in range(runs):  # NCCL_CONF_FILE: never the host's own /etc/nccl.conf
        lines.append(f"PATH={path} NCCL_CONF_FILE={tmp_path}/nccl.conf bash {tmp_path}/nic.sh > {tmp_path}/out{i} "
                     f"2> {tmp_path}/err{i}; echo $? > {tmp_path}/rc")
    lines += [f"ip -j rule show > {tmp_path}/rules", f"ip -j route show table all > {tmp_path}/routes",
              f"ip -j address show > {tmp_path}/addrs",
              f"cat /proc/sys/net/ipv4/conf/{nics[0].ifname}/rp_filter > {tmp_path}/rp_filter 2>/dev/null || true"]
    driver = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "bash", "-c",
                             "\n".join(lines)], capture_output=True, text=True, check=False, timeout=60)
    assert driver.returncode == 0, driver.stderr
    last = runs - 1
    result = subprocess.CompletedProcess([], int((tmp_path / "rc").read_text()), (tmp_path / f"out{last}").read_text(),
                                         (tmp_path / f"err{last}").read_text())
    state: dict[str, object] = {name: json.loads((tmp_path / name).read_text() or "[]")
                                for name in ("rules", "routes", "addrs")}
    state["stubs"] = (tmp_path / "stubs.log").read_text() if (tmp_path / "stubs.log").exists() else ""
    state["rp_filter"] = (tmp_path / "rp_filter").read_text().strip() if (tmp_path / "rp_filter").exists() else ""
    state["nccl"] = (tmp_path / "nccl.conf").read_text()
    return result, state


@needs_root
def test_script_brings_the_server_up(tmp_path: Path, plan: Plan) -> None:
    result, state = run_in_namespace(tmp_path, plan, runs=2)  # twice: the second run must change nothing
    assert result.returncode == 0, result.stderr
    srv = plan.servers[0]
    nics = sorted(srv.nics, key=lambda n: (n.nic, n.port))
    addrs = {a["ifname"]: a for a in state["addrs"]}  # type: ignore[attr-defined]
    rules = state["rules"]
    routes = state["routes"]
    for i, nic in enumerate(nics):
        a = addrs[nic.ifname]
        assert a["mtu"] == 9216
        assert [f"{x['local']}/{x['prefixlen']}" for x in a["addr_info"] if x["family"] == "inet"] == [nic.ip]
        table = 100 + i
        src = nic.ip.split("/")[0]
        mine = [r for r in rules if r.get("src") == src]  # type: ignore[union-attr]
        assert len(mine) == 1 and mine[0]["table"] == str(table) and mine[0]["priority"] == table
        in_table = {r["dst"]: r for r in routes if r.get("table") == str(table)}  # type: ignore[union-attr]
        for pool in (str(plan.settings.pools.gpu), str(plan.settings.pools.loopbacks)):
            assert in_table[pool]["gateway"] == nic.gateway and in_table[pool]["dev"] == nic.ifname
    assert state["rp_filter"] == "2"
    # inbox mlx5 as emulated: no OFED files, said plainly, not fatal
    assert "traffic_class not found: it exists only with the NVIDIA MLNX_OFED / DOCA-OFED driver" in result.stderr
    assert "ecn/roce_np/enable/3 not found" in result.stderr
    # the RDMA devices come from sysfs: the emulation numbers them backwards (eth0 = mlx5_7)
    assert "cma_roce_tos -d mlx5_7 -t 106" in str(state["stubs"]).splitlines()
    assert "mlnx_qos -i eth0 --pfc 0,0,0,1,0,0,0,0" in str(state["stubs"]).splitlines()
    out = result.stdout.splitlines()
    assert "export NCCL_IB_HCA==" + ",".join(f"mlx5_{7 - i}:1" for i in range(8)) in out
    assert "export NCCL_IB_TC=106" in out and "export NCCL_IB_GID_INDEX=3" in out
    # /etc/nccl.conf (here $NCCL_CONF_FILE) written: the fabric's keys set once, the admin's line kept,
    # and validate --health's read-back of it passes
    assert str(state["nccl"]).splitlines() == ["NCCL_DEBUG=WARN", "NCCL_IB_TC=106", "NCCL_IB_QPS_PER_CONNECTION=4",
                                              "NCCL_IB_GID_INDEX=3"]
    from fabricgen.validate.nic import judge_server

    assert plan.qos is not None
    nccl = [o for o in judge_server(srv, plan.qos, f"### nccl\n{state['nccl']}") if o.check.startswith("nccl-")]
    assert [(o.check, o.ok) for o in nccl] == [("nccl-tc", True), ("nccl-qps", True)]
    # the CNP DSCP and priority at runtime, where the driver has the OFED ecn/ files (else the firmware line)
    assert "ecn/roce_np/cnp_dscp not found" in result.stderr


@needs_root
def test_missing_driver_and_tools_are_named(tmp_path: Path, plan: Plan) -> None:
    """No RDMA devices, no mlnx-tools: the network still comes up, the script says what is missing, exits 1."""
    if shutil.which("mlnx_qos") or os.path.isdir("/sys/class/infiniband"):
        pytest.skip("this host has mlnx-tools or RDMA devices")
    result, state = run_in_namespace(tmp_path, plan, emulate=False)
    assert result.returncode == 1
    assert "mlnx_qos not found: install mlnx-tools" in result.stderr
    assert "eth0 has no RDMA device (/sys/class/infiniband/*/device/net/eth0): load mlx5_ib" in result.stderr
    addrs = {a["ifname"]: a for a in state["addrs"]}  # type: ignore[attr-defined]
    assert addrs["eth7"]["addr_info"], "addresses are set before the RoCE part"


@needs_root
def test_missing_netdev_is_named(tmp_path: Path, plan: Plan) -> None:
    result, _ = run_in_namespace(tmp_path, plan, netdevs=False)
    assert result.returncode == 1
    assert "eth0 not found in /sys/class/net: load the NIC driver (mlx5_core)" in result.stderr


def test_cnp_settings_and_nccl_conf_at_runtime(script: str) -> None:
    """The CNP DSCP and 802.1p priority are set at runtime through the driver's ecn/ files (the mlxconfig firmware
    line stays for drivers without them), and /etc/nccl.conf gets NCCL_IB_TC and NCCL_IB_QPS_PER_CONNECTION."""
    assert 'ofed_put 48 "$SYS/class/net/$ifname/ecn/roce_np/cnp_dscp"' in script
    assert 'ofed_put 6 "$SYS/class/net/$ifname/ecn/roce_np/cnp_802p_prio"' in script
    assert "# mlxconfig -d <RDMA device> -y set CNP_DSCP_P1=48 CNP_802P_PRIO_P1=6" in script
    assert "nccl_conf NCCL_IB_TC=106 NCCL_IB_QPS_PER_CONNECTION=4" in script
    assert 'NCCL_CONF=${NCCL_CONF_FILE:-/etc/nccl.conf}' in script


def test_dry_run_shows_the_nccl_conf_it_would_write(tmp_path: Path, script: str) -> None:
    path = tmp_path / "nic.sh"
    path.write_text(script)
    out = subprocess.run(["bash", str(path), "--dry-run"], capture_output=True, text=True, check=False,
                         env={"PATH": os.environ["PATH"], "NCCL_CONF_FILE": str(tmp_path / "nccl.conf")}).stdout
    assert f"NCCL_IB_TC=106 >> {tmp_path}/nccl.conf" in out.splitlines()
    assert f"NCCL_IB_QPS_PER_CONNECTION=4 >> {tmp_path}/nccl.conf" in out.splitlines()
    assert not (tmp_path / "nccl.conf").exists()  # a dry run changes nothing


@pytest.mark.parametrize("text", [
    "# fabricgen: a=1\n# fabricgen: b=2",  # the last line without a newline
    "x # fabricgen: a=1\n# fabricgen: b=2\r\n#  fabricgen: c=3\n# fabricgen: \n",  # not at a line start; CR kept
    "# fabricgen: a=1 # fabricgen: b=2\n\n# fabricgen-nic: ifname=eth0 nic=0\n# fabricgen-nic: x=1\n",
    "", "no header at all\n",
])
def test_header_lines_are_those_a_line_anchored_pattern_finds(text: str) -> None:
    """The header lines are found by searching for their prefix: the same lines, and the same rest of each,
    as the multi-line pattern `^<prefix>(.*)$` they were read with."""
    def fields(pattern: str) -> list[dict[str, str]]:
        return [dict(t.partition("=")[::2] for t in line.split() if "=" in t)
                for line in re.findall(pattern, text, re.MULTILINE)]

    header = {k: v for d in fields(r"^# fabricgen: (.*)$") for k, v in d.items()}
    assert parse_nic_header(text) == header
    assert parse_nic_lines(text) == fields(r"^# fabricgen-nic: (.*)$")
