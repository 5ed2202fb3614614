"""`validate --ptp` off line: each platform's PTP getter on recorded output (samples/ says where each comes
from), and the judgement of live clocks against the PTP lab's plan (inventory/lab/ptp.yaml): a fabric as
planned passes every check, and each way a clock can be wrong is named by its rule, on its clock only."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.eos.ptp import EosPtpGetters, parse_eos_show_ptp
from fabricgen.platforms.nxos.ptp import COMMANDS, NxosPtpGetters, parse_nxos_ptp
from fabricgen.platforms.ptp_state import ClockState, clock_state, identity, parse_pmc, parse_pmc_sections
from fabricgen.validate.checks import Outcome, Report
from fabricgen.validate.prometheus import render
from fabricgen.validate.ptp import Readings, check_ptp
from tests.conftest import ROOT

SAMPLES = Path(__file__).resolve().parent / "samples"
LAB = ROOT / "inventory" / "lab" / "ptp.yaml"


def recorded(name: str) -> tuple[str, int]:
    """A recorded pmc output (comment lines dropped) and the `date +%s%N` taken right after it."""
    lines = [ln for ln in (SAMPLES / name).read_text().splitlines() if not ln.startswith("#")]
    return "\n".join(lines[:-1]), int(lines[-1])


# --------------------------------------------------------------------------- getters on recorded output


def test_identities_of_every_vendor_spelling() -> None:
    assert identity("6ef402.fffe.0a8b10") == "6ef402fffe0a8b10"
    assert identity("0xcc:1a:a3:ff:ff:c3:bf:eb") == "cc1aa3ffffc3bfeb"
    assert identity("0x0:1:2:FF:FE:2:AA:BB") == "000102fffe02aabb"
    assert identity("00:11:01:ff:fe:00:00:01") == "001101fffe000001"
    assert identity("<redacted>") == identity("") == ""


def test_pmc_of_a_boundary_clock() -> None:
    text, now = recorded("linuxptp_boundary.txt")
    s = parse_pmc(text, now)
    assert s == clock_state(identity="26c65afffe601893", mode="boundary", domain=0, grandmaster="6ef402fffe0a8b10",
                            parent="6ef402fffe0a8b10", steps_removed=1, offset_ns=209.0, path_delay_ns=2106.0,
                            last_sync_s=0.398, gm_present=True, ports={"p1": "UNCALIBRATED", "p2": "MASTER"})


def test_pmc_of_a_client_two_steps_from_the_grandmaster() -> None:
    text, now = recorded("linuxptp_client.txt")
    s = parse_pmc(text, now)
    assert (s["mode"], s["steps_removed"], s["parent"], s["grandmaster"]) == (
        "client", 2, "26c65afffe601893", "6ef402fffe0a8b10")
    assert s["offset_ns"] == -667.0 and s["path_delay_ns"] == 2060.0 and s["ports"] == {"p1": "UNCALIBRATED"}


def test_pmc_script_sections_name_each_clock_by_its_socket() -> None:
    text, now = recorded("linuxptp_client.txt")
    out = "\n".join(["### uds /var/run/ptp4l-eth0", text, "### uds /var/run/ptp4l-eth1",
                     "sending: GET DEFAULT_DATA_SET", f"### now {now}"])
    clocks = parse_pmc_sections(out)
    assert set(clocks) == {"eth0", "eth1"}
    assert clocks["eth0"]["identity"] == "3ef773fffeb5a7c8" and clocks["eth0"]["last_sync_s"] == 0.654
    assert clocks["eth1"]["identity"] == ""  # a socket whose ptp4l answers nothing


def test_eos_show_ptp_as_anta_records_it() -> None:
    docs = yaml.safe_load((SAMPLES / "eos" / "show_ptp.yaml").read_text())
    locked = parse_eos_show_ptp(docs["locked"])
    assert (locked["mode"], locked["identity"], locked["grandmaster"], locked["steps_removed"]) == (
        "boundary", "001c73ffff140001", "ec4670fffe00ffa8", 2)
    assert (locked["offset_ns"], locked["path_delay_ns"], locked["last_sync_s"]) == (-11.0, 105.0, 0.0)
    stale = parse_eos_show_ptp(docs["own_grandmaster_stale"])
    assert stale["grandmaster"] == stale["identity"] and stale["last_sync_s"] == 157.0
    assert parse_eos_show_ptp(docs["ports"])["ports"] == {"Ethernet1": "MASTER", "Ethernet53": "DISABLED"}

    class Eapi(EosPtpGetters):
        def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
            assert (commands, encoding) == (["show ptp"], "json")
            return {"show ptp": docs["locked"]}

    assert Eapi().get_ptp_clocks() == {"": locked}


def test_nxos_show_ptp_outputs() -> None:
    texts = {c: (SAMPLES / "nxos" / f"{c.replace(' ', '_')}.txt").read_text() for c in COMMANDS}
    s = parse_nxos_ptp(*(texts[c] for c in COMMANDS))
    assert s["ports"] == {"Ethernet1/41": "SLAVE", "Ethernet1/42": "MASTER", "Ethernet1/43": "MASTER"}
    assert (s["mode"], s["domain"], s["steps_removed"], s["offset_ns"], s["path_delay_ns"]) == (
        "boundary", 0, 1, 24.0, 528.0)
    assert s["identity"] == "" and s["last_sync_s"] is None  # redacted in the source; NX-OS shows no sync age
    assert s["grandmaster"] == s["parent"] == "ec4670fffe010101"

    class Ssh(NxosPtpGetters):
        def cli(self, commands: list[str], encoding: str = "text") -> dict[str, Any]:
            return {c: texts[c] for c in commands}

    assert Ssh().get_ptp_clocks() == {"": s}
    # the parent sample is assembled (its file says so): the parser must not depend on its line order, its
    # indentation or zero-padded octets
    shuffled = "Grandmaster Clock:\n  Grandmaster Clock Identity: ec:46:70:ff:fe:1:1:1\n  Class: 6\n" \
               "Parent Clock:\n  Parent Clock Identity: 0:22:bd:ff:fe:b6:3d:1f\n"
    moved = parse_nxos_ptp(texts["show ptp brief"], texts["show ptp clock"], shuffled)
    assert (moved["grandmaster"], moved["parent"]) == ("ec4670fffe010101", "0022bdfffeb63d1f")


# --------------------------------------------------------------------------- judging against the plan


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(LAB)


def as_planned(plan: Plan) -> tuple[Readings, dict[str, str]]:
    """What every clock of the lab reports when the fabric runs as planned (software timestamping: the slave
    port UNCALIBRATED, other upstream ports PASSIVE), and each clock's identity."""
    ptp = plan.ptp
    assert ptp is not None
    ids = {key: f"{n + 1:016x}" for n, key in enumerate(ptp.clocks)}
    readings: Readings = {}
    for key, clock in ptp.clocks.items():
        host, _, nic = key.partition("/")
        ports, upstream = {}, [p for p in clock.ports if p.role == "upstream"]
        for p in clock.ports:
            ports[p.name] = "MASTER" if p.role == "downstream" else "UNCALIBRATED" if p is upstream[0] else "PASSIVE"
        parent = ids[next(k for k in ptp.clocks if k.partition("/")[0] == clock.parents[0])] if clock.parents else ""
        mode = {"boundary": "boundary", "client": "client"}.get(clock.kind, "ordinary")
        instance = nic if nic else ("" if clock.kind == "boundary" else clock.ports[0].name)
        readings.setdefault(host, {})[instance] = clock_state(
            identity=ids[key], mode=mode, domain=ptp.domain, grandmaster=ids[ptp.grandmaster],
            parent=parent or ids[key], steps_removed=clock.steps_removed, offset_ns=-120.0, path_delay_ns=2100.0,
            last_sync_s=0.4, gm_present=True, ports=ports)
    return readings, ids


def failed(outcomes: list[Outcome]) -> set[tuple[str, str, str]]:
    return {(o.device, o.check, o.item) for o in outcomes if not o.ok}


def test_a_fabric_as_planned_passes_every_check(plan: Plan) -> None:
    readings, _ = as_planned(plan)
    out = check_ptp(plan, readings)
    assert failed(out) == set()
    checks = {o.check for o in out}
    assert checks == {"ptp-running", "ptp-domain", "ptp-mode", "ptp-grandmaster", "ptp-steps", "ptp-parent",
                      "ptp-port-state", "ptp-last-sync", "ptp-offset", "ptp-path-delay"}
    assert plan.ptp is not None
    assert sum(o.check == "ptp-running" for o in out) == len(plan.ptp.clocks)


def test_hardware_timestamping_does_not_accept_an_uncalibrated_slave(plan: Plan) -> None:
    readings, _ = as_planned(plan)
    hw = copy.deepcopy(plan)
    assert hw.ptp is not None
    hw.ptp.timestamping = "hardware"
    bad = {(d, c) for d, c, _ in failed(check_ptp(hw, readings))}
    assert bad and {c for _, c in bad} == {"ptp-port-state"}


def mutate(readings: Readings, host: str, instance: str, **values: Any) -> Readings:
    out = copy.deepcopy(readings)
    state: ClockState = out[host][instance]
    state.update(values)  # type: ignore[typeddict-item]
    return out


def test_each_fault_is_named_on_its_clock(plan: Plan) -> None:
    readings, ids = as_planned(plan)
    assert failed(check_ptp(plan, mutate(readings, "plab-spine01", "", domain=1))) == {
        ("plab-spine01", "ptp-domain", "clock")}
    assert failed(check_ptp(plan, mutate(readings, "plab-leaf02", "", mode="ordinary"))) == {
        ("plab-leaf02", "ptp-mode", "clock")}
    off = mutate(readings, "gpu0003", "eth0", offset_ns=-2_000_000.0, path_delay_ns=3e6, last_sync_s=75.0)
    assert failed(check_ptp(plan, off)) == {("gpu0003", c, "eth0") for c in ("ptp-offset", "ptp-path-delay",
                                                                                "ptp-last-sync")}
    astray = mutate(readings, "plab-leaf03", "", steps_removed=5, parent=ids["gpu0001/eth0"])
    found = check_ptp(plan, astray)
    assert failed(found) == {("plab-leaf03", "ptp-steps", "clock"), ("plab-leaf03", "ptp-parent", "clock")}
    parent = next(o for o in found if o.check == "ptp-parent" and not o.ok)
    assert parent.actual == f"gpu0001/eth0 ({ids['gpu0001/eth0']})"
    assert parent.expected == "one of plab-spine01, plab-spine02"
    port = mutate(readings, "plab-leaf01", "", ports={**readings["plab-leaf01"][""]["ports"], "Ethernet48": "FAULTY"})
    assert failed(check_ptp(plan, port)) == {("plab-leaf01", "ptp-port-state",
                                             "Ethernet48 (downstream, to plab-spine01)")}


def test_a_stopped_grandmaster_and_the_standby_it_leaves(plan: Plan) -> None:
    """gm001 gone: everyone follows gm002; the findings name the planned grandmaster and who took over."""
    readings, ids = as_planned(plan)
    gone = copy.deepcopy(readings)
    del gone["gm001"]
    for clocks in gone.values():
        for state in clocks.values():
            state["grandmaster"] = ids["gm002"]
    out = check_ptp(plan, gone, unreachable={})
    running = [o for o in out if o.check == "ptp-running" and not o.ok]
    assert [(o.device, o.actual) for o in running] == [("gm001", "no ptp4l answers")]
    gm = [o for o in out if o.check == "ptp-grandmaster"]
    assert gm and not any(o.ok for o in gm)
    assert {o.actual for o in gm} == {f"gm002 ({ids['gm002']})"}
    assert {o.expected for o in gm} == {"gm001 (not answering)"}


def test_an_unreachable_host_is_named_with_its_reason(plan: Plan) -> None:
    readings, _ = as_planned(plan)
    del readings["gpu0005"]
    out = failed(check_ptp(plan, readings, {"gpu0005": "ssh: connection refused"}))
    assert out == {("gpu0005", "ptp-running", "eth0"), ("gpu0005", "ptp-running", "eth1")}


def test_prometheus_carries_offset_and_path_delay(plan: Plan) -> None:
    readings, _ = as_planned(plan)
    report = Report(check_ptp(plan, readings), ptp=readings)
    families = {f.name: f for f in text_string_to_metric_families(render(report))}
    offsets = {(s.labels["device"], s.labels["clock"]): s.value for s in families["fabricgen_ptp_offset_ns"].samples}
    delays = {(s.labels["device"], s.labels["clock"]): s.value
              for s in families["fabricgen_ptp_mean_path_delay_ns"].samples}
    assert offsets[("gpu0003", "eth0")] == -120.0 and delays[("plab-leaf02", "")] == 2100.0
    assert plan.ptp is not None
    assert len(offsets) == len(plan.ptp.clocks) - 1 and ("gm001", "eth0") not in offsets  # the GM has no master
    steps = {(s.labels["device"], s.labels["clock"]): s.value for s in families["fabricgen_ptp_steps_removed"].samples}
    assert steps[("gpu0005", "eth0")] == 4


def test_validate_ptp_without_a_ptp_section_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    from fabricgen.cli import main
    from tests.conftest import EXAMPLE

    assert main(["validate", "-i", str(EXAMPLE), "--ptp"]) == 2
    err = capsys.readouterr().err
    assert "ptp" in err and "no ptp: section" in err and "Traceback" not in err
