"""NxosDriver (napalm nxos_ssh + owned-section candidates) against a replayed NX-OS switch.

The switch starts from real NX-OS output (napalm's own nxos_ssh test data, see
mocked_data/nxos/README.md) and applies what the driver sends in config mode to its
running config, line by line by indentation, as NX-OS's parser would; ``checkpoint`` /
``rollback running-config checkpoint`` / ``copy running-config startup-config`` keep and
restore snapshots.  Proven here:

* a deploy never removes (or even touches) management, boot, user or AAA lines;
* a second deploy of the same build is empty;
* a failed post-check restores the checkpoint, and saved = running afterwards.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import ReplaceConfigException

from fabricgen.deploy import phases
from fabricgen.plan.build import load_plan
from fabricgen.render.build import render_switch
from napalm_nxos_fabricgen.nxos import BreakoutMismatch, NxosDriver, plan_change
from tests.conftest import EXAMPLE

DATA = Path(__file__).resolve().parent / "mocked_data" / "nxos"
# Commands NX-OS keeps one of per section: entering a new value replaces the old (hostname, an
# interface's address, ...), as hier_config's NX-OS "idempotent commands" describe.
SINGLE_VALUE = re.compile(r"^(hostname|ip address|ipv6 address|mtu|description|remote-as|router-id|timers|"
                          r"maximum-paths|bandwidth remaining percent|priority level|random-detect|match dscp|"
                          r"set qos-group|mode|mac-address|flowlet-aging|dlb-interface) ")
NOT_OURS = re.compile(r"(mgmt0|vrf context management|^\s*(no )?boot |username|^\s*(no )?aaa |tacacs|snmp-server|"
                      r"ntp server|logging |copp )")


def _tree(text: str) -> list[Any]:
    """Config text -> [[line, children], ...] by two-space indentation (comments dropped)."""
    root: list[Any] = []
    stack = [(-1, root)]
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("!"):
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // 2
        while stack[-1][0] >= depth:
            stack.pop()
        node: list[Any] = [raw.strip(), []]
        stack[-1][1].append(node)
        stack.append((depth, node[1]))
    return root


def _text(tree: list[Any], depth: int = 0) -> list[str]:
    out = []
    for line, children in tree:
        out.append("  " * depth + line)
        out += _text(children, depth + 1)
    return out


class FakeNxos:
    """A netmiko ``cisco_nxos`` connection to a switch that really changes (see module doc)."""

    def __init__(self, running: str) -> None:
        self.running = _tree(running)
        self.startup = _tree(running)
        self.checkpoints: dict[str, list[Any]] = {}
        self.config_sent: list[str] = []
        self.exec_sent: list[str] = []
        self.bgp = "up"
        self.reject: re.Pattern[str] | None = None

    def _show(self, tree: list[Any], what: str) -> str:
        return f"!Command: show {what}\n!Time: Sun Aug  6 16:43:18 2017\nversion 7.3(1)D1(1)\n" + \
            "\n".join(_text(tree)) + "\n"

    def send_command(self, command: str, **kwargs: Any) -> str:
        self.exec_sent.append(command)
        if command == "show running-config":
            return self._show(self.running, "running-config")
        if command == "show startup-config":
            return self._show(self.startup, "startup-config")
        if command == "show bgp all summary vrf all":
            return (DATA / f"show_bgp_all_summary_vrf_all.{self.bgp}.txt").read_text()
        raise AssertionError(f"unexpected exec command {command!r}")

    def send_multiline(self, commands: list[str], expect_string: str | None = None, **kwargs: Any) -> str:
        out = []
        for command in commands:
            self.exec_sent.append(command)
            if command in ("terminal dont-ask", "no terminal dont-ask"):
                continue
            if m := re.fullmatch(r"checkpoint (\S+)", command):
                assert m.group(1) not in self.checkpoints, "NX-OS checkpoint names must be unique"
                self.checkpoints[m.group(1)] = _tree("\n".join(_text(self.running)))
                out.append("Done")
            elif m := re.fullmatch(r"no checkpoint (\S+)", command):
                self.checkpoints.pop(m.group(1))
            elif m := re.fullmatch(r"rollback running-config checkpoint (\S+)", command):
                self.running = _tree("\n".join(_text(self.checkpoints[m.group(1)])))
                out.append("Collecting Running-Config\nGenerating Rollback Patch\nExecuting Rollback Patch\n"
                           "Verification is Successful.\n\nRollback completed successfully.")
            else:
                raise AssertionError(f"unexpected command {command!r}")
        return "\n".join(out)

    def send_config_set(self, commands: list[str]) -> str:
        out = []
        stack: list[tuple[int, list[Any]]] = [(-1, self.running)]
        for raw in commands:
            self.config_sent.append(raw)
            if self.reject is not None and self.reject.search(raw):
                out.append(f"{raw.strip()}\n                     ^\n% Invalid command at '^' marker.")
                continue
            depth = (len(raw) - len(raw.lstrip(" "))) // 2
            while stack[-1][0] >= depth:
                stack.pop()
            level = stack[-1][1]
            line = raw.strip()
            if line.startswith("no ") and any(n[0] == line[3:] for n in level):
                level[:] = [n for n in level if n[0] != line[3:]]
                continue
            node = next((n for n in level if n[0] == line), None)
            single = SINGLE_VALUE.match(line)
            if node is None and single:
                level[:] = [n for n in level if not n[0].startswith(single.group(0))]
            if node is None:
                node = [line, []]
                level.append(node)
            stack.append((depth, node[1]))
        return "\n".join(out)

    def save_config(self, *args: Any, **kwargs: Any) -> str:
        self.startup = _tree("\n".join(_text(self.running)))
        return "[########################################] 100%\nCopy complete."

    def set_base_prompt(self, *args: Any, **kwargs: Any) -> str:
        return "switch"

    def disconnect(self) -> None:
        pass


class MockNxosDriver(NxosDriver):
    switch: FakeNxos

    def _connect(self) -> FakeNxos:
        return self.switch


@pytest.fixture(scope="module")
def rendered() -> str:
    plan = load_plan(EXAMPLE)
    return render_switch(plan.switches["ai256-spine01"], plan)["nxos.cfg"]


def device_config() -> str:
    """napalm's real NX-OS running config plus AAA lines (see mocked_data/nxos/README.md)."""
    return (DATA / "show_running_config.txt").read_text() + (DATA / "aaa_tacacs.txt").read_text()


def driver(config: str | None = None) -> MockNxosDriver:
    d = MockNxosDriver("198.18.254.1", "admin", "", optional_args={"known_hosts": "/nonexistent"})
    d.switch = FakeNxos(config or device_config())
    d.open()
    return d


def lines(tree_text: str) -> set[str]:
    return {ln.strip() for ln in tree_text.splitlines() if ln.strip() and not ln.startswith("!")}


def test_napalm_resolves_our_nxos_driver() -> None:
    assert get_network_driver("nxos_fabricgen") is NxosDriver


def test_deploy_never_touches_management_boot_users_or_aaa(rendered: str) -> None:
    d = driver()
    before = "\n".join(_text(d.switch.running))
    d.load_replace_candidate(config=rendered)
    diff = d.compare_config()
    assert "+router bgp 4200100000" in diff and "-router bgp 22" in diff
    assert not NOT_OURS.search(diff), "the dry-run diff shows only fabricgen-owned sections"
    d.commit_config()
    assert d.switch.config_sent and not [c for c in d.switch.config_sent if NOT_OURS.search(c)]
    after = "\n".join(_text(d.switch.running))
    kept = {ln for ln in lines(before) if NOT_OURS.search(ln) or ln.startswith(("boot ", "username", "aaa "))}
    assert {"boot kickstart bootflash://sup-1/titanium-d1-kickstart.7.3.1.D1.0.10.bin",
            "username admin password 5 $5$aH4ttsPk$kNH7qXBaegskBUekuymPzaL5Q0Vh/mQVSdw4tQ0AcU7  role network-admin",
            "aaa authentication login default group TacServer", "ip route 0.0.0.0/0 198.18.200.2",
            "ip address 198.18.200.71/24", "copp profile strict"} <= lines(before)
    assert kept <= lines(after)
    assert "ip route 0.0.0.0/0 198.18.200.2" in after and "interface mgmt0\n  vrf member management\n" \
        "  ip address 198.18.200.71/24" in after  # the rendered mgmt0 address was not pushed
    assert "ip address 198.19.254.1/24" not in after
    assert "interface Ethernet2/1" in after  # interfaces the plan does not name are the device's
    assert "router bgp 22" not in after and "router bgp 4200100000" in after
    assert lines("\n".join(_text(d.switch.startup))) == lines(after)  # saved = running
    assert [c for c in d.switch.exec_sent if c.startswith("checkpoint fabricgen-")]


def test_second_deploy_is_empty(rendered: str) -> None:
    d = driver()
    d.load_replace_candidate(config=rendered)
    d.commit_config()
    sent = len(d.switch.config_sent)
    d.load_replace_candidate(config=rendered)
    assert d.compare_config() == "" and d.last_changes == ""
    d.commit_config()
    assert len(d.switch.config_sent) == sent
    d.load_replace_candidate(config=rendered)
    assert d.fabricgen_persisted_diff() == ""
    assert d.fabricgen_verify() == ([], [])


def test_failed_post_check_restores_the_checkpoint(rendered: str) -> None:
    d = driver()
    original = "\n".join(_text(d.switch.running))
    d.load_replace_candidate(config=rendered)
    before = phases.sessions(d)  # real output: two sessions Established in VRF default
    assert before.up == {"198.18.206.14", "198.18.201.1"}
    assert before.accepted == {"198.18.206.14": 9, "198.18.201.1": 4}  # nxos_ssh has no accepted count: received
    phases.commit(d)
    d.switch.bgp = "down"  # after the commit: the real output of an Idle session
    with pytest.raises(phases.CheckFailed, match="198.18.206.14 was up before the commit and is down"):
        phases.check(d, before, {}, timeout=0.2, poll=0.05)
    phases.rollback(d)
    checkpoint = next(c for c in d.switch.exec_sent if c.startswith("checkpoint fabricgen-")).split()[1]
    assert f"rollback running-config checkpoint {checkpoint}" in d.switch.exec_sent
    assert "\n".join(_text(d.switch.running)) == original
    assert lines("\n".join(_text(d.switch.startup))) == lines(original)  # saved = running after the rollback


def test_rejected_line_rolls_back_at_once(rendered: str) -> None:
    d = driver()
    original = "\n".join(_text(d.switch.running))
    d.switch.reject = re.compile(r"random-detect")
    d.load_replace_candidate(config=rendered)
    with pytest.raises(ReplaceConfigException, match="rejected a line, rolled back to checkpoint fabricgen-"):
        d.commit_config()
    assert "\n".join(_text(d.switch.running)) == original


def test_remediation_defines_objects_before_their_users(rendered: str) -> None:
    change = plan_change(device_config(), rendered)
    first = {kind: next(i for i, c in enumerate(change.commands) if c.startswith(kind))
             for kind in ("class-map", "policy-map", "system qos", "interface Ethernet1/1", "route-map",
                          "ip prefix-list", "router bgp 4200100000")}
    assert first["class-map"] < first["policy-map"] < first["system qos"] < first["interface Ethernet1/1"]
    assert first["ip prefix-list"] < first["route-map"] < first["router bgp 4200100000"]


def test_watchdog_timers_are_fabricgen_owned_and_deployed(rendered: str) -> None:
    """The global PFC watchdog timer lines are deployed like `watch-dog-interval on` (not left as rendered only)."""
    timers = [ln for ln in rendered.splitlines() if re.match(r"priority-flow-control (watch-dog |auto-restore )", ln)]
    assert len(timers) == 3
    d = driver()
    d.load_replace_candidate(config=rendered)
    diff = d.compare_config()
    assert all(f"+{ln}" in diff for ln in timers)
    d.commit_config()
    after = lines("\n".join(_text(d.switch.running)))
    assert set(timers) <= after


@pytest.fixture(scope="module")
def broken_out() -> str:
    """A GX2A leaf whose 32 GPU-facing cages are broken out 2 x 200G (tests/catalog/test_nxos_models.py)."""
    from tests.catalog.test_nxos_models import intent, plan_of
    plan = plan_of(intent())
    return render_switch(plan.switches["nxm-leaf01"], plan)["nxos.cfg"]


def test_breakout_change_is_refused_before_anything_is_sent(broken_out: str) -> None:
    d = driver()
    with pytest.raises(BreakoutMismatch, match=r"port 1/1: whole -> 200g-2x; .* and 28 more\): changing a "
                                               r"breakout reloads those ports"):
        d.load_replace_candidate(config=broken_out)
    assert d.switch.config_sent == [] and not [c for c in d.switch.exec_sent if c.startswith("checkpoint")]
    d = driver(device_config() + "interface breakout module 1 port 1-31 map 200g-2x\n")
    with pytest.raises(BreakoutMismatch, match=r"\(port 1/32: whole -> 200g-2x\)"):
        d.load_replace_candidate(config=broken_out)


def test_same_breakouts_in_another_range_form_deploy(broken_out: str) -> None:
    d = driver(device_config() + "interface breakout module 1 port 1-16,17,18-32 map 200g-2x\n")
    d.load_replace_candidate(config=broken_out)
    assert not [c for c in d.last_changes.splitlines() if "breakout" in c]
    d.commit_config()
    after = "\n".join(_text(d.switch.running))
    assert "interface Ethernet1/1/1\n  description gpu_leaf:gpu0001:eth0" in after
    assert "interface breakout module 1 port 1-16,17,18-32 map 200g-2x" in after  # the device's own line stays


def test_unused_port_in_service_on_the_switch_is_left_alone(rendered: str) -> None:
    """The plan leaves Ethernet1/40 and 1/41 unused: 1/40 carries the switch's own uplink (kept, and the diff
    says so), 1/41 still has what an earlier, larger build put there (shut as unused)."""
    own = ("interface Ethernet1/40\n  description oob-uplink\n  no switchport\n  ip address 198.18.250.1/30\n"
           "  no shutdown\n")
    old = ("interface Ethernet1/41\n  description leaf_spine:ai256-leaf09:Ethernet256\n  no switchport\n"
           "  ip address 198.18.16.97/31\n  no shutdown\n")
    d = driver(device_config() + own + old)
    d.load_replace_candidate(config=rendered)
    assert d.change is not None and d.change.kept == ["Ethernet1/40"]
    assert "# left as the switch has it: interface Ethernet1/40 is in service there" in d.compare_config()
    d.commit_config()
    after = "\n".join(_text(d.switch.running))
    assert own.rstrip("\n") in after
    (was_ours,) = [children for line, children in d.switch.running if line == "interface Ethernet1/41"]
    assert {"description unused: not in the fabric plan", "shutdown"} <= {c[0] for c in was_ours}
    assert "198.18.16.97/31" not in after


def test_dlb_change_says_it_needs_a_reload() -> None:
    """`hardware profile dlb` is reload-pending on NX-OS: the dry-run diff and the deploy report say so, once."""
    from tests.catalog.test_nxos_models import intent, plan_of
    plan = plan_of(intent())
    text = render_switch(plan.switches["nxm-spine01"], plan)["nxos.cfg"]
    assert "hardware profile dlb" in text.splitlines()
    d = driver()
    d.load_replace_candidate(config=text)
    assert "# `hardware profile dlb` changed: it takes effect only after a reload" in d.compare_config()
    d.commit_config()
    notes, problems = d.fabricgen_verify()
    assert problems == [] and len(notes) == 1 and "show system config reload-pending" in notes[0]
    d.load_replace_candidate(config=text)  # deployed again: nothing to do, nothing pending
    assert d.compare_config() == ""
    d.commit_config()
    assert d.fabricgen_verify() == ([], [])
    without = text.replace("hardware profile dlb\n", "").replace("  mode flowlet\n", "")
    without = "\n".join(ln for ln in without.splitlines() if not ln.startswith(("  dlb-interface", "  mac-address",
                                                                                "  flowlet-aging")))
    change = plan_change("\n".join(_text(d.switch.running)), without + "\n")
    assert any("`hardware profile dlb` changed" in n for n in change.notes)  # removing it is reload-pending too


def test_ctrl_c_stops_reads_but_never_a_commit_or_rollback(rendered: str) -> None:
    import threading

    from fabricgen.base.ssh import CommandInterrupted

    d = driver()
    d.cancel = threading.Event()
    d.load_replace_candidate(config=rendered)
    d.cancel.set()
    with pytest.raises(CommandInterrupted, match="interrupted before `show "):
        d.get_bgp_neighbors()
    with pytest.raises(CommandInterrupted):
        d.load_replace_candidate(config=rendered)
    d.cancel.clear()
    d.load_replace_candidate(config=rendered)
    d.cancel.set()
    phases.commit(d)  # inside the commit guard: runs to the end, saved = running
    assert lines("\n".join(_text(d.switch.startup))) == lines("\n".join(_text(d.switch.running)))
    phases.rollback(d)
    assert any(c.startswith("rollback running-config checkpoint") for c in d.switch.exec_sent)
