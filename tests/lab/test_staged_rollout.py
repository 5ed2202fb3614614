"""Staged rollout against the live 2x4 lab while the servers ping each other across rails (issue 12 §3).

A change to every spine (BGP keepalive/hold: labelled bgp-reset; deploy resets the sessions so
the new timers apply) is pushed twice: all spines at once, and ``--waves auto --drain`` (one
spine per wave, each drained with BGP graceful shutdown first).  Every server NIC pings a NIC on
another rail of another server every 20 ms, so every packet crosses a spine; the test prints
the packets lost during each rollout and asserts the staged one loses less, within a small bound.
"""

from __future__ import annotations

import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.deploy import DeployOptions, DeployReport, run_deploy
from fabricgen.lab import LabState, lab_down, lab_up
from fabricgen.lab.from_plan import lab_topology
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.render import manifest
from fabricgen.render.manifest import Build
from fabricgen.validate import gpu_targets, run_validate

pytestmark = [pytest.mark.lab, pytest.mark.usefixtures("lab_host")]

ROOT = Path(__file__).resolve().parents[2]
LAB_INTENT = ROOT / "inventory" / "lab" / "fabric.yaml"
INTERVAL = 0.02  # seconds between pings of one pair
STAGED_MAX_LOST_S = 0.5  # a staged rollout may cost each pair at most this much traffic (25 pings)


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Plan, Build]]:
    root = tmp_path_factory.mktemp("rollout")
    data = yaml.safe_load(LAB_INTENT.read_text())
    data["bgp"]["keepalive"], data["bgp"]["holdtime"] = 2, 6
    slow = root / "slow.yaml"
    slow.write_text(yaml.safe_dump(data))
    out = {}
    for name, intent in (("base", LAB_INTENT), ("slow", slow)):
        assert main(["render", "-i", str(intent), "-o", str(root / name)]) == 0
        plan = load_plan(intent)
        out[name] = (plan, manifest.load(root / name, plan))
    return out


@pytest.fixture(scope="module")
def lab(builds: dict[str, tuple[Plan, Build]], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    plan, base = builds["base"]
    workdir = tmp_path_factory.mktemp("rolloutlab")
    state = lab_up(lab_topology(plan, workdir))
    try:
        assert run_deploy(plan, base, DeployOptions(lab_dir=state.workdir)).ok
        healthy(plan, state)
        yield state
    finally:
        lab_down(workdir)


def healthy(plan: Plan, lab: LabState, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not run_validate(plan, ("bgp", "ecmp", "routes"), lab_dir=lab.workdir).failures:
            return
        time.sleep(1.0)
    pytest.fail("the lab did not converge")


@dataclass
class Loss:
    pairs: int
    lost: int  # packets lost inside the window, all pairs
    worst_pair_s: float  # the longest outage of one pair (lost packets x interval)
    short: int = 0  # pairs whose ping stopped sending before the window closed (they measured less than claimed)

    def __str__(self) -> str:
        return (f"{self.lost} of the packets sent in the window lost over {self.pairs} cross-rail pairs "
                f"(worst pair {self.worst_pair_s:.2f} s without replies)")


class Pingers:
    """One ``ping -D -O`` per cross-rail pair inside the server's namespace; counts lost sequence numbers."""

    _LINE = re.compile(r"^\[(\d+\.\d+)\] (?:\d+ bytes from .*icmp_seq=(\d+)|no answer yet for icmp_seq=(\d+))")

    def __init__(self, plan: Plan, lab: LabState) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        # each ping writes to a file of its own: a pipe nobody reads fills at 64 KiB (~15 s of replies) and
        # then blocks ping, which stopped counting before the second wave (issue 23 D5)
        self.logs: list[IO[str]] = []
        for srv in plan.servers:
            holder = lab.nodes[srv.name].holder
            assert holder is not None
            seen_nics: set[str] = set()
            for src, dst, _ in gpu_targets(plan, srv):
                if src in seen_nics:
                    continue
                seen_nics.add(src)
                log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed in stop(), after ping exits
                self.logs.append(log)
                self.procs.append(subprocess.Popen(
                    ["nsenter", "-t", str(holder.pid), "-n", "-m", "-u", "--", "ping", "-D", "-O", "-n",
                     "-i", str(INTERVAL), "-W", "1", "-I", src, dst],
                    stdout=log, stderr=subprocess.DEVNULL, text=True))

    def stop(self, start: float, end: float) -> Loss:
        lost_total, worst, short = 0, 0, 0
        for proc in self.procs:
            proc.send_signal(signal.SIGINT)
        for proc, log in zip(self.procs, self.logs, strict=True):
            proc.wait(timeout=30)
            log.seek(0)
            out = log.read()
            log.close()
            sent: dict[int, float] = {}
            answered: set[int] = set()
            for line in out.splitlines():
                m = self._LINE.match(line)
                if not m:
                    continue
                ts = float(m.group(1))
                if m.group(2) is not None:
                    answered.add(int(m.group(2)))
                    sent.setdefault(int(m.group(2)), ts)
                else:
                    sent.setdefault(int(m.group(3)), ts)
            lost = [seq for seq, ts in sent.items() if start <= ts <= end and seq not in answered]
            lost_total += len(lost)
            worst = max(worst, len(lost))
            short += not sent or max(sent.values()) < end - 1.0
        return Loss(len(self.procs), lost_total, worst * INTERVAL, short)


def pushed_while_pinging(plan: Plan, build: Build, lab: LabState, **opts: object) -> tuple[DeployReport, Loss]:
    pingers = Pingers(plan, lab)
    try:
        time.sleep(2.0)  # ARP and the first replies settle before the window opens
        start = time.time()
        report = run_deploy(plan, build, DeployOptions(lab_dir=lab.workdir, role="spine", **opts))  # type: ignore[arg-type]
        healthy(plan, lab)
        end = time.time()
    except BaseException:
        for proc in pingers.procs:
            proc.kill()
        raise
    return report, pingers.stop(start, end)


def test_waves_and_drain_lose_less_than_all_spines_at_once(builds: dict[str, tuple[Plan, Build]],
                                                           lab: LabState, capsys: pytest.CaptureFixture[str]) -> None:
    base_plan, base = builds["base"]
    slow_plan, slow = builds["slow"]
    at_once, loss_at_once = pushed_while_pinging(slow_plan, slow, lab)
    assert at_once.ok and sorted(at_once.changed) == ["lab-spine01", "lab-spine02"], at_once.failed
    assert all(o.impact is not None and o.impact.worst is not None and o.impact.worst.label == "bgp-reset"
               for o in at_once.outcomes.values())
    back, _ = pushed_while_pinging(base_plan, base, lab)
    assert back.ok, back.failed
    capsys.readouterr()
    staged, loss_staged = pushed_while_pinging(slow_plan, slow, lab, waves="auto", drain=True)
    assert staged.ok, (staged.failed, staged.stopped)
    window = slow_plan.health.window_seconds
    assert f"wave 1: fabric validates (bgp, ecmp, routes, health over {window:g} s)" in capsys.readouterr().err
    assert staged.waves is not None and [w.hosts for w in staged.waves] == [["lab-spine01"], ["lab-spine02"]]
    for host in ("lab-spine01", "lab-spine02"):
        notes = " / ".join(staged.outcomes[host].notes)
        assert "drained (graceful shutdown): neighbors moved their traffic in" in notes and "undrained" in notes
    with capsys.disabled():
        print(f"\n  spines at once, no drain : {loss_at_once}\n  --waves auto --drain     : {loss_staged}")
    assert loss_at_once.short == loss_staged.short == 0  # every pair pinged until the window closed
    assert loss_staged.lost < loss_at_once.lost
    assert loss_staged.worst_pair_s <= STAGED_MAX_LOST_S, loss_staged
    # saved = running = the slow build everywhere it went, no drain line left behind
    assert not run_validate(slow_plan, ("bgp", "config", "persisted"), role="spine", build=slow,
                            lab_dir=lab.workdir).failures
