"""Replayed switch output, per platform: each scenario gives exactly its finding, a healthy one none.

Each file under samples/<platform>/ holds two reads of the commands the platform's health getters
run (``before``, ``after``, ``window_seconds`` apart), where each command's output shape comes
from (``sources``) and the findings it must give (``expect``).  The getters run on fabricgen's own
drivers over a transport that answers with the recorded text, then the deltas are judged with
the example intent's QoS (RoCE on priority/queue 3, CNPs on 6) and the default ``health:`` limits.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.base.ssh import CommandResult
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import HealthLimits, Plan, Switch
from fabricgen.platforms.health import Snapshot, read_snapshot
from fabricgen.validate.health import judge_switch
from napalm_frr import FrrDriver
from napalm_nxos_fabricgen.nxos import NxosDriver
from napalm_sonic import SonicDriver
from tests.conftest import EXAMPLE

SAMPLES = Path(__file__).resolve().parent / "samples"
CASES = sorted((p.parent.name, p.stem) for p in SAMPLES.glob("*/*.yaml"))


class Replay:
    """Answers each command with the text recorded for the current read ("before" or "after")."""

    def __init__(self, reads: dict[str, dict[str, str]]) -> None:
        self.reads = reads
        self.phase = "before"
        self.commands: list[str] = []

    def text(self, command: str) -> str:
        self.commands.append(command)
        outputs = self.reads[self.phase]
        if command not in outputs:
            raise AssertionError(f"no recorded output for {command!r}")
        return outputs[command]

    # fabricgen.base.ssh.Transport
    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: threading.Event | None = None) -> CommandResult:
        if command not in self.reads[self.phase]:  # an optional SONiC command this sample lacks
            return CommandResult(command, "", "Error: No such command", 2)
        return CommandResult(command, self.text(command), "", 0)

    def is_alive(self) -> bool:
        return True

    def close(self) -> None:
        pass

    # netmiko's device, for napalm's nxos_ssh cli()
    def send_command(self, command: str, **kwargs: Any) -> str:
        return self.text(command)


def driver_for(platform: str, replay: Replay) -> Any:
    if platform == "nxos":
        dev = NxosDriver("198.18.255.1", "admin", "")
        dev.device = replay
        return dev
    cls = SonicDriver if platform == "sonic" else FrrDriver
    dev = cls("198.18.255.1", "admin", "", optional_args={"sudo": False})
    dev.transport = replay
    return dev


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


def switch_with_ports(plan: Plan, ports: list[str]) -> Switch:
    leaf = plan.by_role("leaf")[0]
    return dataclasses.replace(leaf, interfaces=[dataclasses.replace(itf, name=name)
                                                 for itf, name in zip(leaf.interfaces, ports, strict=False)])


def replay_case(plan: Plan, platform: str, name: str) -> tuple[dict[str, Any], Any, Snapshot, Snapshot]:
    doc = yaml.safe_load((SAMPLES / platform / f"{name}.yaml").read_text())
    replay = Replay({"before": doc["before"], "after": doc["after"]})
    device = driver_for(platform, replay)
    before = read_snapshot(device, "leaf", platform)
    replay.phase = "after"
    after = read_snapshot(device, "leaf", platform)
    before.taken, after.taken = 0.0, float(doc["window_seconds"])
    sw = switch_with_ports(plan, doc["ports"])
    assert plan.qos is not None
    return doc, judge_switch(sw, plan.qos, HealthLimits(), before, after), before, after


@pytest.mark.parametrize(("platform", "name"), CASES, ids=[f"{p}-{n}" for p, n in CASES])
def test_scenario_gives_its_finding(plan: Plan, platform: str, name: str) -> None:
    doc, result, _, _ = replay_case(plan, platform, name)
    got = {(f.rule, f.port, f.number, f.counter, f.delta) for f in result.findings}
    want = {(e["rule"], e["port"], e["number"], e["counter"], e["delta"]) for e in doc["expect"]}
    assert got == want, f"{platform}/{name}: {doc['about']}"
    for f in result.findings:  # each failure names device, port, priority/queue, counter, delta, window, limit
        o = f.outcome()
        text = " ".join([o.device, o.item, o.expected, o.actual])
        parts = [f.port, f"{f.unit} {f.number}", f.counter, f.limit]
        if f.counter not in ("oper", "status"):  # a count over the window, not a state
            parts += [str(f.delta), "10.0 s window"]
        for part in parts:
            assert part in text
        assert not o.ok
    if not doc["expect"]:
        outcomes = result.outcomes()
        assert outcomes and all(o.ok for o in outcomes)
        assert {"counters", "pfc-pause", "lossless-drops", "ecn-share"} <= result.judged.keys()


@pytest.mark.parametrize("platform", ["sonic", "nxos", "frr"])
def test_healthy_read_is_parsed_whole(plan: Plan, platform: str) -> None:
    """The healthy sample's counters arrive typed: every port, every lossless priority and queue."""
    doc, _, before, after = replay_case(plan, platform, "healthy")
    for port in doc["ports"]:
        assert after.pfc[port][3]["tx_pause_frames"] > before.pfc[port][3]["tx_pause_frames"]
        q3 = after.queues[port][3]
        assert q3["tx_packets"] > before.queues[port][3]["tx_packets"] > 0
        assert q3["dropped_packets"] == 0
    if platform == "sonic":
        assert after.queues["Ethernet0"][3]["ecn_marked_packets"] == 32_000
        assert after.queues["Ethernet0"][3]["watermark_bytes"] == 2_057_328
        assert after.pg_watermarks["Ethernet0"][3]["shared_bytes"] == 103_000
        assert after.watchdog["Ethernet4"][3] == {"status": "operational", "stormed": False,
                                                   "storms_detected": 2, "storms_restored": 2}
    if platform == "nxos":
        assert after.queues["Ethernet1/51"][3]["ecn_marked_packets"] == 24_000
        assert after.pfc_oper["Ethernet1/51"] == {"mode": "On", "oper": True, "vl_bitmap": 8, "rx_ppp": 20,
                                                  "tx_ppp": 200}
        assert after.watchdog["Ethernet1/51"][3]["stormed"] is False
    if platform == "frr":
        assert after.watchdog == {} and after.port_ecn_marked["swp31"] == 10_010


def test_counter_reset_in_the_window_is_named(plan: Plan) -> None:
    """A counter that went backwards (sonic-clear, reboot) counts since the reset, and the finding says so."""
    doc, _, before, after = replay_case(plan, "sonic", "lossless_drops")
    before.queues["Ethernet4"][3]["dropped_packets"] = 1_000_000
    sw = switch_with_ports(plan, doc["ports"])
    assert plan.qos is not None
    result = judge_switch(sw, plan.qos, HealthLimits(), before, after)
    [finding] = result.findings
    assert finding.reset and finding.delta == 37 and "reset during the window" in finding.outcome().actual


def test_limits_come_from_the_intent(plan: Plan) -> None:
    """The same storm passes under a limit above its rate."""
    doc, _, before, after = replay_case(plan, "sonic", "pause_storm")
    sw = switch_with_ports(plan, doc["ports"])
    assert plan.qos is not None
    assert judge_switch(sw, plan.qos, HealthLimits(max_pause_per_minute=2_000_000), before, after).findings == []


def test_missing_port_counters_are_a_finding(plan: Plan) -> None:
    doc, _, before, after = replay_case(plan, "frr", "healthy")
    sw = switch_with_ports(plan, [*doc["ports"], "swp40"])
    assert plan.qos is not None
    [finding] = judge_switch(sw, plan.qos, HealthLimits(), before, after).findings
    assert finding.rule == "counters" and finding.port == "swp40"


@pytest.mark.parametrize(("platform", "notes"), [
    ("sonic", []),
    ("nxos", []),
    ("frr", ["no PFC watchdog counters (the platform has no PFC watchdog): pfc-watchdog not judged",
             "ECN marks per queue not shown (ecn-queue not judged); ECN marks counted per port only: ecn-share "
             "uses the port's count"]),
])
def test_what_a_platform_cannot_show_is_said(plan: Plan, platform: str, notes: list[str]) -> None:
    _, result, _, _ = replay_case(plan, platform, "healthy")
    assert result.notes == notes
    assert ("pfc-watchdog" in result.judged) == (platform != "frr")
    assert ("ecn-queue" in result.judged) == (platform != "frr")


def test_a_driver_without_health_getters_is_noted_not_failed(plan: Plan) -> None:
    """A platform whose driver has no health getters yet (eos) is said so, not failed port by port."""
    sw = switch_with_ports(plan, ["Ethernet1"])
    before = read_snapshot(object(), sw.hostname, "eos")
    after = read_snapshot(object(), sw.hostname, "eos")
    assert plan.qos is not None
    result = judge_switch(sw, plan.qos, HealthLimits(), before, after)
    assert result.findings == [] and result.outcomes() == []
    assert result.notes == ["lossless counters are not read on platform eos yet: nothing judged"]


@pytest.mark.parametrize(("platform", "command"), [
    ("nxos", "show queuing interface"),
    ("frr", 'for p in $(ls /sys/class/net); do [ "$p" = lo ] && continue; echo "### $p"; ethtool -S "$p" '
            '2>/dev/null; done'),
])
def test_one_read_runs_each_command_once(platform: str, command: str) -> None:
    """Several getters parse the same output: one read sends the command once."""
    doc = yaml.safe_load((SAMPLES / platform / "healthy.yaml").read_text())
    replay = Replay({"before": doc["before"], "after": doc["after"]})
    device = driver_for(platform, replay)
    read_snapshot(device, "leaf", platform)
    assert replay.commands.count(command) == 1
    read_snapshot(device, "leaf", platform)
    assert replay.commands.count(command) == 2


def test_the_plan_carries_the_intents_health_limits(tmp_path: Path) -> None:
    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["health"] = {"window_seconds": 30, "max_pause_per_minute": 5000, "max_ecn_marked_share": 0.02}
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(doc))
    limits = load_plan(path).health
    assert (limits.window_seconds, limits.max_pause_per_minute, limits.max_ecn_marked_share) == (30, 5000, 0.02)
    assert limits.max_lossless_drops == 0  # defaults for what the intent leaves out
