"""EosDriver (napalm's ``eos`` driver, eAPI config sessions, owned-section candidates) against a fake EOS.

The switch starts from real EOS output (napalm's own EOS test data, see mocked_data/eos/README.md).
The fake eAPI node takes what napalm sends -- flat command lines, as eAPI does -- and rebuilds the
configuration by EOS's modes (`interface`, `qos profile` / `tx-queue`, `router bgp`, ...), keeps a
session per name, and on commit makes the session the running config.  Proven here:

* a deploy never removes (or touches) users, AAA, the management API, Management1 or the
  event-handler, even though napalm's session starts with `rollback clean-config`;
* EOS's session diff shows only owned sections; a second deploy of the same build is empty;
* a line EOS rejects aborts the session with nothing applied;
* a failed post-check's rollback restores the previous config, and saved = running after commit
  and rollback.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import ReplaceConfigException
from pyeapi.eapilib import CommandError

from fabricgen.deploy import phases
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.render.build import render_switch
from napalm_eos_fabricgen.eos import EosDriver, plan_change
from tests.conftest import small_intent

DATA = Path(__file__).resolve().parent / "mocked_data" / "eos"
TOP_MODES = re.compile(r"^(interface |qos profile |router bgp |router bfd$|route-map |management |event-handler |"
                       r"(ip|ipv6) prefix-list \S+$)")
NESTED_MODES = {"qos profile": re.compile(r"^(uc-|mc-)?tx-queue "),
                "router bgp": re.compile(r"^(address-family |vrf )")}
# What a nested mode takes; anything else goes back to its parent mode, as EOS's parser does.
NESTED_LEAVES = re.compile(r"^(priority |no priority|bandwidth |random-detect |shape |neighbor |redistribute |"
                           r"network )")
TOP_LEAVES = re.compile(r"^(service routing protocols model |hostname |qos map |"
                        r"priority-flow-control pause watchdog (default|action) |"
                        r"port-channel load-balance |(no )?ip routing$|ipv6 unicast-routing$|username |aaa |"
                        r"spanning-tree |transceiver |boot )")
NOT_OURS = re.compile(r"^(username |aaa |management api|interface Management1|event-handler |transceiver |"
                      r"spanning-tree )")


def _mode(line: str) -> str:
    return " ".join(line.split()[:2]) if line.startswith(("qos profile", "router bgp")) else line.split()[0]


def build_config(commands: list[str]) -> str:
    """Flat EOS commands -> the config EOS would print (3-space indent per mode, `!` between sections)."""
    sections: list[list[str]] = []
    stack: list[str] = []
    for cmd in commands:
        if TOP_MODES.match(cmd) or TOP_LEAVES.match(cmd) or not stack:
            sections.append([cmd])
            stack = [cmd] if TOP_MODES.match(cmd) else []
            continue
        nested = NESTED_MODES.get(_mode(stack[0]))
        if nested is not None and nested.match(cmd):
            stack = [stack[0], cmd]
            sections[-1].append("   " + cmd)
            continue
        if len(stack) == 2 and not NESTED_LEAVES.match(cmd):
            stack = stack[:1]
        sections[-1].append("   " * len(stack) + cmd)
    return "".join("\n".join(s) + "\n!\n" for s in sections) + "end\n"


def flat(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()
            if ln.strip() and not ln.strip().startswith("!") and ln.strip() != "end"]


class FakeEos:
    """A pyeapi Node stand-in: answers what napalm's eos driver runs, like EOS does."""

    def __init__(self, running: str) -> None:
        self.running = build_config(flat(running))
        self.startup = self.running
        self.rollback0 = ""
        self.sessions: dict[str, list[str]] = {}
        self.sent: list[str] = []
        self.version = json.loads((DATA / "show_version.json").read_text(encoding="utf-8"))

    def run_commands(self, commands: list[Any], encoding: str = "json", **_: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        session: str | None = None
        for item in commands:
            cmd = item["cmd"] if isinstance(item, dict) else item
            self.sent.append(cmd)
            if session is not None:
                if cmd == "end":
                    session = None
                elif cmd == "rollback clean-config":
                    self.sessions[session] = []
                elif "bogus" in cmd:  # EOS's parser rejects the line; the session keeps what came before
                    raise CommandError(1002, "CLI command failed", command_error=f"Invalid input (at token 1: '{cmd}')")
                else:
                    self.sessions[session].append(cmd)
                out.append({})
                continue
            out.append(self._show(cmd, encoding))
            if cmd.startswith("configure session ") and len(cmd.split()) == 3:
                session = cmd.split()[2]
                self.sessions.setdefault(session, flat(self.running))
        return out

    def _show(self, cmd: str, encoding: str) -> dict[str, Any]:
        text = encoding == "text"
        if cmd == "show version":
            return self.version
        if cmd == "show running-config":
            return {"output": self.running}
        if cmd == "show startup-config":
            return {"output": self.startup}
        if cmd == "show configuration sessions":
            return {"sessions": {name: {"state": "pending"} for name in self.sessions}}
        if cmd == "show configuration sessions detail":
            return {"sessions": {name: {"state": "pending"} for name in self.sessions}}
        if m := re.match(r"^show session-config named (\S+)$", cmd):
            return {"output": build_config(self.sessions[m.group(1)])}
        if m := re.match(r"^show session-config named (\S+) diffs$", cmd):
            new = build_config(self.sessions[m.group(1)])
            body = "".join(difflib.unified_diff(self.running.splitlines(True), new.splitlines(True), n=1))
            body = "".join(body.splitlines(True)[2:])  # difflib's own ---/+++ lines
            return {"output": f"--- system:/running-config\n+++ session:/{m.group(1)}-session-config\n{body}"}
        if m := re.match(r"^configure session (\S+) (commit|abort)$", cmd):
            lines = self.sessions.pop(m.group(1))
            if m.group(2) == "commit":
                self.running = build_config(lines)
            return {"output": ""}
        if cmd == "copy startup-config flash:rollback-0":
            self.rollback0 = self.startup
            return {"output": "Copy completed successfully."}
        if cmd == "configure replace flash:rollback-0":
            self.running = self.rollback0
            return {"output": ""}
        if cmd == "write memory":
            self.startup = self.running
            return {"output": "Copy completed successfully."}
        if cmd.startswith("configure session ") or cmd == "enable":
            return {}
        raise AssertionError(f"the fake EOS does not know {cmd!r}" + (" (text)" if text else ""))


@pytest.fixture(scope="module")
def plan():  # type: ignore[no-untyped-def]
    return build_plan(Intent.model_validate(small_intent(platforms={"leaf": "eos", "spine": "eos"},
                                                         qos={"mtu": 9214})))


@pytest.fixture(scope="module")
def rendered(plan) -> str:  # type: ignore[no-untyped-def]
    return render_switch(plan.switches["t-leaf01"], plan)["eos.cfg"]


def connect() -> tuple[EosDriver, FakeEos]:
    fake = FakeEos((DATA / "show_running_config.txt").read_text(encoding="utf-8"))
    driver = get_network_driver("eos_fabricgen")("198.19.254.15", "admin", "unused")
    assert isinstance(driver, EosDriver)
    driver.device = fake  # napalm's eos open() keeps a device it already has
    driver.open()
    return driver, fake


def not_ours(config: str) -> list[str]:
    return [ln for ln in flat(config) if NOT_OURS.match(ln)] + [
        ln for ln in config.splitlines() if ln.startswith("   ") and "Management1" in ln]


def test_first_deploy_changes_only_owned_sections(rendered: str) -> None:
    driver, fake = connect()
    before = fake.running
    keep = [s for s in before.split("!\n") if NOT_OURS.match(s.strip())]
    # event-handler, transceiver, spanning-tree, aaa authorization, aaa root, 2 users, Management1, management api
    assert len(keep) == 9
    driver.load_replace_candidate(config=rendered)
    assert fake.sent[fake.sent.index("rollback clean-config") - 1].startswith("configure session napalm_")
    diff = driver.compare_config()
    assert diff.startswith("@@") and "+router bgp 4200000000" in diff
    changed = [ln[1:].strip() for ln in diff.splitlines() if ln[:1] in "+-" and ln[1:].strip() not in ("", "!")]
    assert changed and not [ln for ln in changed if NOT_OURS.match(ln) or "Management1" in ln]
    assert "-no ip routing" in diff and "+ip routing" in diff  # fabricgen owns routing on/off
    assert "+router bgp 4200000000" in driver.last_changes
    phases.commit(driver)
    for section in keep:  # every line of the device's own sections is still there, as it was
        assert section in fake.running
    assert owned(fake.running, rendered) == owned(rendered, rendered)
    assert fake.startup == fake.running  # napalm's commit ends with `write memory`
    assert fake.sent[-3:] == ["copy startup-config flash:rollback-0",
                              f"configure session {fake.sent[-2].split()[2]} commit", "write memory"]


def owned(config: str, rendered: str) -> list[str]:
    from napalm_eos_fabricgen.eos import owned_lines

    return owned_lines(config, plan_change(config, rendered).names)


def test_second_deploy_is_empty(rendered: str) -> None:
    driver, fake = connect()
    driver.load_replace_candidate(config=rendered)
    driver.commit_config()
    driver.load_replace_candidate(config=rendered)
    assert driver.compare_config() == ""
    assert driver.last_changes == ""
    assert driver.fabricgen_verify() == ([], [])
    assert driver.fabricgen_persisted_diff() == ""
    driver.discard_config()
    assert not fake.sessions


def test_rejected_line_aborts_with_nothing_applied(rendered: str) -> None:
    driver, fake = connect()
    before = fake.running
    broken = rendered.replace("   priority-flow-control on\n", "   priority-flow-control on\n   bogus line\n", 1)
    with pytest.raises(ReplaceConfigException, match="Invalid input"):
        driver.load_replace_candidate(config=broken)
    assert fake.running == before and not fake.sessions  # napalm aborted the session
    assert fake.sent[-1].endswith("abort")


def test_failed_post_check_rolls_back_and_saves(rendered: str) -> None:
    driver, fake = connect()
    before = fake.running
    driver.load_replace_candidate(config=rendered)
    phases.commit(driver)
    assert fake.running != before
    phases.rollback(driver)
    assert fake.running == before and fake.startup == before
    assert fake.sent[-2:] == ["configure replace flash:rollback-0", "write memory"]


def test_plan_change_keeps_foreign_lines_verbatim(rendered: str) -> None:
    running = (DATA / "show_running_config.txt").read_text(encoding="utf-8")
    change = plan_change(running, rendered)
    cand = change.candidate.splitlines()
    for line in ("aaa root secret 5 $1$zr7sHZaW$WagNykw1d5wjy4ZhtMgUS/", "interface Management1",
                 "   ip address 198.19.254.15/24", "management api http-commands", "   no shutdown",
                 "   action bash sudo /mnt/flash/initialize_ma1.sh"):
        assert line in cand
    assert "no ip routing" not in cand and "ip routing" in cand
    assert ("interface", "Management1") not in change.names  # rendered, never pushed
    assert cand.count("interface Management1") == 1 and "   ip address 198.19.254.5/24" not in cand


def test_free_ports_shut_unless_the_switch_put_them_in_service(rendered: str) -> None:
    """Ethernet5/1: the switch's own routed port (kept as it is); Ethernet6/1: EOS's default switchport
    (shut); Ethernet7/1: a port fabricgen once planned (its description) with an address (shut)."""
    running = (DATA / "show_running_config.txt").read_text(encoding="utf-8").replace(
        "interface Management1\n",
        "interface Ethernet5/1\n   description to-firewall\n   no switchport\n   ip address 198.18.200.1/31\n!\n"
        "interface Ethernet6/1\n!\n"
        "interface Ethernet7/1\n   description gpu_leaf:gpu0009:eth0\n   no switchport\n"
        "   ip address 198.18.200.3/31\n!\n"
        "interface Management1\n", 1)
    driver, fake = connect()
    fake.running = fake.startup = build_config(flat(running))
    driver.load_replace_candidate(config=rendered)
    assert driver.change is not None and driver.change.kept == ["Ethernet5/1"]
    assert ("interface", "Ethernet5/1") not in driver.change.names
    assert driver.last_changes.endswith("# left as the switch has it: interface Ethernet5/1 is in service there, "
                                        "the plan leaves it unused\n")
    phases.commit(driver)
    assert "interface Ethernet5/1\n   description to-firewall\n   no switchport\n   ip address 198.18.200.1/31\n" \
        in fake.running
    for port in ("Ethernet6/1", "Ethernet7/1", "Ethernet8/1"):
        assert f"interface {port}\n   description unused: not in the fabric plan\n   shutdown\n!\n" in fake.running
    assert "198.18.200.3/31" not in fake.running
    driver.load_replace_candidate(config=rendered)  # the kept port is no change the next time either
    assert driver.compare_config() == "" and driver.last_changes == ""


# --------------------------------------------------------------------------- --drain (the EOS record's transform)


def test_drain_puts_the_switch_in_maintenance_and_undrain_takes_it_out(rendered: str) -> None:
    from fabricgen.deploy import drain

    assert drain.can_drain("eos")
    drained = drain.drained("eos", rendered)
    assert "\nmaintenance\n   unit System\n      quiesce\n!\nend\n" in drained
    assert drain.drained("eos", drained) == drained  # idempotent
    assert drain.drained("eos", drained, on=False) == rendered
    on = plan_change(rendered, drained)  # the switch runs the build; the drain adds only the maintenance block
    assert [ln[1:] for ln in on.diff.splitlines() if ln[:1] == "+" and not ln.startswith("+++")] == [
        "maintenance", "   unit System", "      quiesce"]
    assert "maintenance\n   unit System\n      quiesce" in on.candidate
    off = plan_change(on.candidate, rendered)  # undrain: the block goes, nothing else changes
    assert [ln[1:] for ln in off.diff.splitlines() if ln[:1] == "-" and not ln.startswith("---")] == [
        "maintenance", "   unit System", "      quiesce"]
    assert "maintenance" not in off.candidate


def test_drain_leaves_a_maintenance_setup_of_the_switchs_own(rendered: str) -> None:
    """A switch with its own maintenance profiles: fabricgen neither takes the section over nor removes it."""
    from fabricgen.deploy import drain

    theirs = rendered.replace("\nend\n", "\nmaintenance\n   profile unit UP1 default\n!\nend\n")
    change = plan_change(theirs, drain.drained("eos", rendered))
    assert "maintenance\n   profile unit UP1 default" in change.candidate and "quiesce" not in change.candidate
    assert plan_change(theirs, rendered).diff == ""
