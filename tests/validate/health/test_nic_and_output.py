"""The live NIC read (parsed and judged against the plan), Prometheus text and the CLI options.

The NIC outputs replayed here have the tools' own shapes: `mlnx_qos -i` as printed in Mellanox's
mlnx_qos community article and mlnx-tools users' logs (``Priority trust state:``, the PFC
``enabled`` row), `cma_roce_tos` printing the ToS it reads from configfs (mlnx-tools'
sbin/cma_roce_tos: ``cat default_roce_tos``), `mlxconfig q` listing ``NAME  value`` under
``Configurations:`` (the mstconfig query dump in the vendor reference, §3.3), and MLNX_OFED's
``Global tclass=N`` traffic_class file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fabricgen.base.outdir import write_atomically
from fabricgen.cli import main
from fabricgen.lab.nic_emulation import emulated_nics, sysfs_commands, write_stubs
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan, Server
from fabricgen.platforms.health import Snapshot, queue_counters
from fabricgen.validate import Outcome, Report, render_report
from fabricgen.validate.health import Finding, SwitchHealth
from fabricgen.validate.health_collect import HealthRun
from fabricgen.validate.health_report import health_json
from fabricgen.validate.nic import judge_server, parse_readings, read_script
from fabricgen.validate.prometheus import render
from tests.conftest import EXAMPLE

MLNX_QOS = """DCBX mode: OS controlled
Priority trust state: {trust}
dscp2prio mapping:
        prio:0 dscp:07,06,05,04,03,02,01,00,
        prio:3 dscp:31,30,29,28,27,26,25,24,
Cable len: 7
PFC configuration:
        priority    0   1   2   3   4   5   6   7
        enabled     {pfc}{pad}
        buffer      0   0   0   1   0   0   0   0{pad}
tc: 0 ratelimit: unlimited, tsa: vendor
         priority:  1
"""


def nic_section(ifname: str, dev: str, *, trust: str = "dscp", pfc: str = "0   0   0   1   0   0   0   0",
                tos: str = "106", traffic_class: str = "(missing)", ecn: str = "- -", cnp: str = "- -",
                firmware: str = "CNP_DSCP_P1 48\nCNP_802P_PRIO_P1 6\nROCE_CC_PRIO_MASK_P1 255") -> str:
    fw = "\n".join(f"        {line.split()[0]:<40}{line.split()[1]}" for line in firmware.splitlines())
    return "\n".join([
        f"### nic {ifname}", f"rdma_dev={dev}",
        "--- mlnx_qos", MLNX_QOS.format(trust=trust, pfc=pfc, pad="   "),  # mlnx_qos pads its rows
        "--- cma_roce_tos", tos,
        "--- traffic_class", traffic_class,
        "--- ecn", *(f"{p} {ecn}" for p in range(8)),
        "--- cnp", cnp,
        "--- mlxconfig", "", "Device #1:", "----------", "", f"Device:         {dev}", "",
        "Configurations:                                      Next Boot", fw, ""])


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def server(plan: Plan) -> Server:
    return plan.servers[0]


def output_for(server: Server, **overrides: dict[str, str]) -> str:
    nics = sorted(server.nics, key=lambda n: (n.nic, n.port))
    return "\n".join(nic_section(n.ifname, f"mlx5_{i}", **overrides.get(n.ifname, {}))  # type: ignore[arg-type]
                     for i, n in enumerate(nics)) + "\n### nccl\nNCCL_IB_TC=106\nNCCL_IB_QPS_PER_CONNECTION=4\n"


def failures(outcomes: list[Outcome]) -> set[tuple[str, str]]:
    return {(o.check, o.item.split()[0]) for o in outcomes if not o.ok}


def test_a_well_set_server_passes(plan: Plan, server: Server) -> None:
    assert plan.qos is not None
    outcomes = judge_server(server, plan.qos, output_for(server))
    assert outcomes and failures(outcomes) == set()
    assert {o.check for o in outcomes} == {"nic-trust", "nic-pfc-mask", "nic-roce-dscp", "nic-ecn", "nic-cnp-dscp",
                                             "nccl-tc", "nccl-qps"}
    assert not any(o.actual.startswith("unverified") for o in outcomes)


@pytest.mark.parametrize(("override", "check", "actual"), [
    ({"trust": "pcp"}, "nic-trust", "trust pcp"),
    ({"pfc": "0   0   0   0   0   0   0   0"}, "nic-pfc-mask", "PFC 0,0,0,0,0,0,0,0"),
    ({"tos": "0"}, "nic-roce-dscp", "RDMA-CM ToS 0"),
    ({"traffic_class": "Global tclass=0"}, "nic-roce-dscp", "RDMA-CM ToS 106, verbs traffic_class 0"),
    ({"firmware": "CNP_DSCP_P1 4\nCNP_802P_PRIO_P1 6\nROCE_CC_PRIO_MASK_P1 255"}, "nic-cnp-dscp",
     "CNP_DSCP_P1=4, CNP_802P_PRIO_P1=6"),
    ({"firmware": "CNP_DSCP_P1 48\nCNP_802P_PRIO_P1 6\nROCE_CC_PRIO_MASK_P1 0"}, "nic-ecn",
     "ROCE_CC_PRIO_MASK_P1=0"),
    ({"ecn": "0 1"}, "nic-ecn", "roce_np 0, roce_rp 1 on priority 3"),
    ({"cnp": "26 6"}, "nic-cnp-dscp", "CNP DSCP 26, 802.1p 6"),
])
def test_each_wrong_setting_is_named(plan: Plan, server: Server, override: dict[str, str], check: str,
                                     actual: str) -> None:
    assert plan.qos is not None
    nic = sorted(server.nics, key=lambda n: (n.nic, n.port))[1]
    outcomes = judge_server(server, plan.qos, output_for(server, **{nic.ifname: override}))
    bad = [o for o in outcomes if not o.ok]
    assert [(o.check, o.item.split()[0], o.actual) for o in bad] == [(check, nic.ifname, actual)]


def test_unreadable_settings_are_unverified_not_failed(plan: Plan, server: Server) -> None:
    assert plan.qos is not None
    text = output_for(server).replace("--- mlnx_qos\n", "--- mlnx_qos\n(missing)\n#")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("        CNP_")
                     and not line.startswith("        ROCE_"))
    readings, _ = parse_readings(text)
    assert all(r.firmware == {} for r in readings.values())
    outcomes = judge_server(server, plan.qos, text)
    assert failures(outcomes) == set()
    assert {o.check for o in outcomes if o.actual.startswith("unverified")} == {"nic-ecn", "nic-cnp-dscp"}


def test_nccl_conf_tc_is_checked(plan: Plan, server: Server) -> None:
    assert plan.qos is not None
    good = judge_server(server, plan.qos, output_for(server))
    bad = judge_server(server, plan.qos, output_for(server).split("### nccl")[0] + "### nccl\nNCCL_IB_HCA=mlx5\n"
                       "NCCL_IB_TC=0\n")
    assert [o.ok for o in good if o.check in ("nccl-tc", "nccl-qps")] == [True, True]
    assert [(o.ok, o.actual) for o in bad if o.check == "nccl-tc"] == [(False, "NCCL_IB_TC=0")]
    # the script writes NCCL_IB_QPS_PER_CONNECTION: a file without it fails
    assert [(o.ok, o.actual) for o in bad if o.check == "nccl-qps"] == [
        (False, "no NCCL_IB_QPS_PER_CONNECTION (the NIC script writes it)")]


needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                reason="runs the read script against the ConnectX stand-ins in a namespace (root)")


@needs_root
def test_read_script_against_the_lab_stand_ins(tmp_path: Path, plan: Plan, server: Server) -> None:
    """The read script, run against the emulation the lab uses, reads what mlnx_qos/cma_roce_tos were told."""
    assert plan.qos is not None
    nics = sorted(server.nics, key=lambda n: (n.nic, n.port))
    stubs, log = tmp_path / "stubs", str(tmp_path / "run" / "stubs.log")
    (tmp_path / "run").mkdir()
    write_stubs(stubs, log)
    emulated = emulated_nics([(n.ifname, n.ip) for n in nics])
    lines = ["set -e", *[f"ip link add {n.ifname} type veth peer name peer{i}" for i, n in enumerate(nics)],
             "mount -t sysfs sysfs /sys", *sysfs_commands(emulated, str(tmp_path / "stash")),
             f"export PATH={stubs}:$PATH"]
    for n, e in zip(nics, emulated, strict=True):
        lines += [f"mlnx_qos -i {n.ifname} --trust dscp >/dev/null",
                  f"mlnx_qos -i {n.ifname} --pfc 0,0,0,1,0,0,0,0 >/dev/null",
                  f"cma_roce_tos -d {e.rdma_dev} -t 106 >/dev/null"]
    lines.append(f"mlnx_qos -i {nics[0].ifname} --trust pcp >/dev/null")  # one NIC drifts
    (tmp_path / "nccl.conf").write_text("NCCL_IB_TC=106\nNCCL_IB_QPS_PER_CONNECTION=4\n")  # as the script writes it
    lines += ["set +e", f"export NCCL_CONF_FILE={tmp_path}/nccl.conf",
              f"{{ {read_script(server)}; }} > {tmp_path}/out"]  # as over SSH: no set -e
    run = subprocess.run(["unshare", "--net", "--mount", "--propagation", "private", "bash", "-c", "\n".join(lines)],
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 0, run.stderr
    outcomes = judge_server(server, plan.qos, (tmp_path / "out").read_text())
    assert failures(outcomes) == {("nic-trust", nics[0].ifname)}
    cnp = [o for o in outcomes if o.check == "nic-cnp-dscp"]
    assert len(cnp) == len(nics) and all(o.actual == "CNP_DSCP_P1=48, CNP_802P_PRIO_P1=6" for o in cnp)


# --------------------------------------------------------------------------- Prometheus and CLI


def small_run() -> tuple[Report, HealthRun]:
    snap = Snapshot("leaf01", "sonic", 10.0,
                    pfc={"Ethernet0": {3: {"rx_pause_frames": 5, "tx_pause_frames": 90_000}}},
                    queues={"Ethernet0": {3: queue_counters(100, 1000, 2, 7, 4096)}},
                    watchdog={"Ethernet0": {3: {"status": "stormed", "stormed": True, "storms_detected": 4,
                                                "storms_restored": 3}}},
                    pg_watermarks={"Ethernet0": {3: {"shared_bytes": 512}}})
    finding = Finding("leaf01", "pfc-pause", "Ethernet0", "priority", 3, "tx_pause_frames", 90_000, 10.0,
                      "at most 600 per minute")
    run = HealthRun(10.0, [SwitchHealth("leaf01", [finding], {"pfc-pause": 1}, 10.0, [])], {"leaf01": snap},
                    advice=["NCCL_IB_TC=106: ..."])
    report = Report([*run.switches[0].outcomes(), Outcome("gpu0001", "nic-trust", "eth0", True, "dscp", "dscp")],
                    health=run)
    return report, run


def test_prometheus_text_parses_and_carries_counters_and_verdicts() -> None:
    report, run = small_run()
    text = render(report, run)
    assert text == render(report, run)  # same input, same text
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    assert fams["fabricgen_validate_ok"].samples[0].value == 0
    pause = {(s.labels["direction"], s.value) for s in fams["fabricgen_pfc_pause_frames"].samples}
    assert pause == {("rx", 5), ("tx", 90_000)}
    assert fams["fabricgen_pfc_pause_frames"].type == "counter"
    assert fams["fabricgen_queue_watermark_bytes"].samples[0].value == 4096
    assert fams["fabricgen_pfc_watchdog_stormed"].samples[0].value == 1
    [delta] = fams["fabricgen_health_finding_delta"].samples
    assert delta.labels == {"device": "leaf01", "rule": "pfc-pause", "port": "Ethernet0", "unit": "priority",
                            "number": "3", "counter": "tx_pause_frames"} and delta.value == 90_000
    failed = {s.labels["check"]: s.value for s in fams["fabricgen_validate_failed"].samples}
    assert failed == {"pfc-pause": 1, "nic-trust": 0}


def test_json_and_junit_carry_the_health_run() -> None:
    report, run = small_run()
    import json

    doc = json.loads(render_report(report, "json"))
    assert doc["health"]["findings"][0]["delta"] == 90_000 and doc["health"]["advice"]
    assert health_json(run)["window_seconds"] == 10.0
    junit = render_report(report, "junit")
    assert 'testsuite name="pfc-pause" tests="1" failures="1"' in junit


def test_output_file_is_replaced_atomically(tmp_path: Path) -> None:
    target = tmp_path / "fabricgen.prom"
    target.write_text("old\n")
    write_atomically(target, "new\n")
    assert target.read_text() == "new\n" and sorted(p.name for p in tmp_path.iterdir()) == ["fabricgen.prom"]


@pytest.mark.parametrize("window", ["0", "abc", "4000"])
def test_bad_window_exits_2(window: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "-i", str(EXAMPLE), "--health", "--window", window])
    assert exc.value.code == 2
    assert "--window" in capsys.readouterr().err
