"""NX-OS structural check: clean renders pass; each mutation fires exactly its rules (NX-OS structure plus the
fabric-wide RoCE rules, each rule once), at its line."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.base.findings import Finding
from fabricgen.check.roce import RULES as ROCE_RULES
from fabricgen.check.roce import check_fabric
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.nxos import render as nxos
from fabricgen.platforms.nxos.check import RULES, check_nxos_config, check_nxos_text, parse_numbers
from fabricgen.render.build import environment, render_all
from tests.conftest import EXAMPLE, EXAMPLES, without_skus

SPINE = "ai256-spine01"


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def spine_text(plan: Plan) -> str:
    return nxos.render(plan.switches[SPINE], plan, environment())["nxos.cfg"]


def write(tmp_path: Path, text: str, device: str = SPINE) -> Path:
    d = tmp_path / "configs" / device
    d.mkdir(parents=True, exist_ok=True)
    path = d / "nxos.cfg"
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str, after: str = "") -> int:
    """1-based number of the first line equal to `needle` (after the line equal to `after`)."""
    lines = text.splitlines()
    start = lines.index(after) if after else 0
    return lines.index(needle, start) + 1


def replace_once(text: str, old: str, new: str, after: str = "") -> str:
    """Replace the first whole line `old` (after line `after`) by `new` ("" deletes the line)."""
    lines = text.splitlines(keepends=True)
    idx = line_of(text, old, after) - 1
    lines[idx] = new + "\n" if new else ""
    return "".join(lines)


def delete_block(text: str, header: str) -> str:
    """Delete line `header` and every more-indented line below it."""
    lines = text.splitlines(keepends=True)
    start = line_of(text, header) - 1
    depth = len(header) - len(header.lstrip())
    end = start + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip()) > depth:
        end += 1
    return "".join(lines[:start] + lines[end:])


def wred_line(text: str) -> str:
    """The (single) random-detect line of the rendered queuing policy."""
    (line,) = [x for x in text.splitlines() if x.lstrip().startswith("random-detect")]
    return line


def swap_wred(text: str) -> str:
    m = re.search(r"minimum-threshold (\d+) kbytes maximum-threshold (\d+) kbytes", text)
    assert m
    return text.replace(m.group(0), f"minimum-threshold {m.group(2)} kbytes maximum-threshold {m.group(1)} kbytes")


def rules(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


# --------------------------------------------------------------------------- clean configs


def test_example_nxos_configs_are_clean(plan: Plan, tmp_path: Path) -> None:
    env = environment()
    switches = [sw for sw in plan.switches.values() if sw.platform == "nxos"]
    assert len(switches) == 8
    for sw in switches:
        path = write(tmp_path, nxos.render(sw, plan, env)["nxos.cfg"], sw.hostname)
        assert check_nxos_config(path, sw.hostname, plan) == []
        assert check_nxos_config(path, sw.hostname, None) == []


def _all_nxos(data: dict[str, Any]) -> Plan:
    data = without_skus(data)  # a SONiC SKU names no NX-OS ports
    for role in ("leaf", "spine", "super_spine"):
        data.setdefault("platforms", {})[role] = "nxos"
    if data.get("tenancy", {}).get("mechanism") == "vrf-lite":  # NX-OS leaves refuse it by name (tests/tenants)
        data["tenancy"]["mechanism"] = "evpn-vxlan"
    return build_plan(Intent.model_validate(data))


@pytest.mark.parametrize("source", [EXAMPLE, *EXAMPLES], ids=lambda p: p.name)
def test_all_nxos_fabrics_are_clean(source: Path) -> None:
    """Leaves with GPU ports, spines and super-spines rendered as NX-OS all pass, with and without plan."""
    p = _all_nxos(yaml.safe_load(source.read_text(encoding="utf-8")))
    env = environment()
    seen = set()
    for sw in p.switches.values():
        if sw.role in seen and sw.index > 0:
            continue  # one switch per role keeps the test fast
        seen.add(sw.role)
        text = nxos.render(sw, p, env)["nxos.cfg"]
        assert check_nxos_text(text, sw.hostname, p) == [], sw.hostname
        assert check_nxos_text(text, sw.hostname, None) == [], sw.hostname


# --------------------------------------------------------------------------- mutations

Mutation = Callable[[str], str]

MUTATIONS: list[tuple[str, Mutation, set[str], str]] = [
    # (id, edit, the rules of the whole check -- NX-OS structure + fabric-wide RoCE -- a finding points at that
    # line (in the edited text; "" = whole file)).  One bad line, one finding per rule: a rule written once.
    ("delete-queuing-policy", lambda t: delete_block(t, "policy-map type queuing QOS_EGRESS_PORT"),
     {"nxos-undefined-ref", "roce-cnp", "roce-lossless-chain"}, "  service-policy type queuing output QOS_EGRESS_PORT"),
    ("delete-network-qos-policy", lambda t: delete_block(t, "policy-map type network-qos qos_network"),
     {"nxos-undefined-ref", "roce-lossless-chain"}, "  service-policy type network-qos qos_network"),
    ("delete-route-map", lambda t: delete_block(t, "route-map RM-REDIST-DIRECT permit 10"),
     {"nxos-undefined-ref"}, "    redistribute direct route-map RM-REDIST-DIRECT"),
    ("delete-prefix-list", lambda t: replace_once(t, "ip prefix-list PL-REDIST-DIRECT seq 10 permit 198.18.0.1/32",
                                                  ""),
     {"nxos-undefined-ref"}, "  match ip address prefix-list PL-REDIST-DIRECT"),
    ("interface-policy-typo", lambda t: replace_once(t, "  service-policy type qos input QOS_CLASSIFICATION",
                                                     "  service-policy type qos input QOS_CLASSIFICATON",
                                                     after="interface Ethernet1/7"),
     {"nxos-undefined-ref", "roce-lossless-chain"}, "  service-policy type qos input QOS_CLASSIFICATON"),
    ("user-queuing-class", lambda t: replace_once(t, "  class type queuing c-out-8q-q2", "  class type queuing Q2"),
     {"nxos-undefined-ref"}, "  class type queuing Q2"),
    ("no-system-queuing", lambda t: replace_once(t, "  service-policy type queuing output QOS_EGRESS_PORT", ""),
     {"nxos-system-qos", "roce-cnp", "roce-lossless-chain"}, "system qos"),
    ("pause-wrong-cos", lambda t: replace_once(t, "    pause pfc-cos 3", "    pause pfc-cos 4"),
     {"roce-lossless-chain"}, "    pause pfc-cos 4"),
    ("roce-wrong-qos-group", lambda t: replace_once(t, "    set qos-group 3", "    set qos-group 4"),
     {"roce-lossless-chain"}, "    set qos-group 4"),
    ("no-lossless-queue-class", lambda t: replace_once(replace_once(t, wred_line(t), ""),
                                                       "  class type queuing c-out-8q-q3", ""),
     {"roce-lossless-chain"}, "policy-map type queuing QOS_EGRESS_PORT"),
    ("cnp-not-priority", lambda t: replace_once(t, "    priority level 1", "    bandwidth remaining percent 0"),
     {"roce-cnp"}, "    bandwidth remaining percent 0|  class type queuing c-out-8q-q7"),
    ("cnp-paused", lambda t: replace_once(t, "  class type network-qos c-8q-nq7",
                                          "  class type network-qos c-8q-nq7\n    pause pfc-cos 7"),
     {"roce-cnp"}, "    pause pfc-cos 7"),
    ("ecn-keyword-missing", lambda t: t.replace("weight 0 ecn", "weight 0"), {"roce-lossless-chain"}, "WRED"),
    ("ecn-min-above-max", swap_wred, {"roce-ecn-order"}, "WRED"),
    ("ecn-off-plan", lambda t: re.sub(r"minimum-threshold \d+ kbytes", "minimum-threshold 1 kbytes", t),
     {"nxos-ecn", "roce-ecn-range"}, "WRED"),  # off the plan (error), and off the vendor's range (warning)
    ("bandwidth-not-100", lambda t: replace_once(t, "    bandwidth remaining percent 50",
                                                 "    bandwidth remaining percent 40",
                                                 after="  class type queuing c-out-8q-q-default"),
     {"roce-bandwidth"}, "policy-map type queuing QOS_EGRESS_PORT"),
    ("no-pfc-on-port", lambda t: replace_once(t, "  priority-flow-control mode on", "", after="interface Ethernet1/5"),
     {"roce-pfc-both-ends"}, "interface Ethernet1/5"),
    ("no-watchdog-on-port", lambda t: replace_once(t, "  priority-flow-control watch-dog-interval on", "",
                                                   after="interface Ethernet1/32"),
     {"roce-pfc-both-ends"}, "interface Ethernet1/32"),
    ("no-classification-on-port", lambda t: replace_once(t, "  service-policy type qos input QOS_CLASSIFICATION", "",
                                                         after="interface Ethernet1/9"),
     {"roce-lossless-chain"}, "interface Ethernet1/9"),
    ("port-missing", lambda t: delete_block(delete_block(t, "interface Ethernet1/12"), "  neighbor 198.18.16.177"),
     {"roce-p2p-pair"}, ""),
    ("port-mtu", lambda t: replace_once(t, "  mtu 9216", "  mtu 9000", after="interface Ethernet1/3"),
     {"roce-mtu-both-ends"}, "  mtu 9000"),
    ("port-mtu-default", lambda t: replace_once(t, "  mtu 9216", "", after="interface Ethernet1/4"),
     {"roce-mtu-both-ends"}, "interface Ethernet1/4"),
    ("network-qos-mtu", lambda t: replace_once(t, "    mtu 9216", "    mtu 1500",
                                               after="  class type network-qos c-8q-nq-default"),
     {"nxos-mtu"}, "    mtu 1500"),
    ("neighbor-off-subnet", lambda t: replace_once(t, "  neighbor 198.18.16.1", "  neighbor 198.18.16.3"),
     {"nxos-bgp-neighbor-subnet", "roce-p2p-pair"}, "  neighbor 198.18.16.3"),
    ("no-global-watchdog", lambda t: replace_once(t, "priority-flow-control watch-dog-interval on", ""),
     {"roce-pfc-both-ends"}, ""),
    ("watchdog-interval-off-intent", lambda t: replace_once(t, "priority-flow-control watch-dog interval 200",
                                                            "priority-flow-control watch-dog interval 100"),
     {"nxos-watchdog"}, "priority-flow-control watch-dog interval 100"),
    ("watchdog-multiplier-missing", lambda t: replace_once(t, "priority-flow-control watch-dog shutdown-multiplier 1",
                                                           ""),
     {"nxos-watchdog"}, "priority-flow-control watch-dog-interval on"),
    ("resume-above-pause", lambda t: replace_once(
        replace_once(t, "system qos", "policy-map type queuing PAUSE\n  class type queuing c-in-q3\n"
                     "    pause buffer-size 600000 pause-threshold 50000 resume-threshold 60000\nsystem qos"),
        "  service-policy type qos input QOS_CLASSIFICATION",
        "  service-policy type qos input QOS_CLASSIFICATION\n  service-policy type queuing input PAUSE",
        after="interface Ethernet1/2"),
     {"nxos-pause-buffer"}, "    pause buffer-size 600000 pause-threshold 50000 resume-threshold 60000"),
    ("cnp-class-default-mtu", lambda t: delete_block(t, "  class type network-qos c-8q-nq7"),
     {"nxos-mtu"}, "policy-map type network-qos qos_network"),
    ("unused-port-not-shut", lambda t: replace_once(t, "  shutdown", "  no shutdown", after="interface Ethernet1/40"),
     {"nxos-unused-port"}, "interface Ethernet1/40"),
    ("unused-port-missing", lambda t: delete_block(t, "interface Ethernet1/64"), {"nxos-unused-port"}, ""),
    ("breakout-off-plan", lambda t: replace_once(t, "interface mgmt0",
                                                 "interface breakout module 1 port 40 map 100g-4x\ninterface mgmt0"),
     {"nxos-breakout"}, "interface breakout module 1 port 40 map 100g-4x"),
]


@pytest.fixture(scope="module")
def build(plan: Plan, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("nxos") / "build"
    render_all(plan, out, checks=None)
    return out


@pytest.mark.parametrize(("edit", "want", "at"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_mutation_fires_exactly_its_rules(plan: Plan, spine_text: str, build: Path, tmp_path: Path, edit: Mutation,
                                          want: set[str], at: str) -> None:
    text = edit(spine_text)
    assert text != spine_text
    configs = tmp_path / "configs"
    shutil.copytree(build / "configs", configs)
    path = configs / SPINE / "nxos.cfg"
    path.write_text(text, encoding="utf-8")
    findings = check_nxos_config(path, SPINE, plan) + check_fabric(plan, configs)
    assert rules(findings) == want, findings
    assert {f.device for f in findings} == {SPINE}
    assert {f.file for f in findings} == {str(path)}
    assert all(f.severity == "error" for f in findings if f.rule != "roce-ecn-range")
    if at == "WRED":
        at = wred_line(text)
    needle, _, after = at.partition("|")  # "line|after this line"
    where = f"L{line_of(text, needle, after)}" if at else ""
    assert where in {f.location for f in findings}, (where, findings)


NO_PLAN = {"neighbor-off-subnet", "delete-queuing-policy", "delete-route-map", "resume-above-pause",
           "unused-port-not-shut"}


@pytest.mark.parametrize(("edit", "want"), [(m[1], m[2]) for m in MUTATIONS if m[0] in NO_PLAN],
                         ids=[m[0] for m in MUTATIONS if m[0] in NO_PLAN])
def test_mutation_without_plan(spine_text: str, edit: Mutation, want: set[str]) -> None:
    """The structural rules fire when only the config is known (expectations read off the config)."""
    findings = check_nxos_text(edit(spine_text), SPINE, None, "nxos.cfg")
    assert rules(findings) == {r for r in want if r.startswith("nxos-")}, findings


def test_every_rule_has_a_mutation() -> None:
    fired = {r for m in MUTATIONS for r in m[2]}
    assert fired >= set(RULES) - {"nxos-parse"}
    assert fired - set(RULES) <= set(ROCE_RULES)


def test_one_finding_per_bad_port(plan: Plan, spine_text: str, build: Path, tmp_path: Path) -> None:
    text = "".join("  mtu 9000\n" if line == "  mtu 9216\n" else line for line in spine_text.splitlines(True))
    configs = tmp_path / "configs"
    shutil.copytree(build / "configs", configs)
    (configs / SPINE / "nxos.cfg").write_text(text, encoding="utf-8")
    assert check_nxos_text(text, SPINE, plan, "f") == []  # port MTUs are the fabric-wide rule's
    findings = check_fabric(plan, configs)
    assert rules(findings) == {"roce-mtu-both-ends"}
    assert {f.device for f in findings} == {SPINE}
    assert len(findings) == len(plan.switches[SPINE].interfaces)


def test_unreadable_file(tmp_path: Path) -> None:
    findings = check_nxos_config(tmp_path / "missing.cfg", SPINE, None)
    assert [(f.rule, f.device) for f in findings] == [("nxos-parse", SPINE)]


def test_watchdog_not_required_when_disabled(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["qos"]["pfc_watchdog"]["enabled"] = False
    p = build_plan(Intent.model_validate(data))
    text = nxos.render(p.switches[SPINE], p, environment())["nxos.cfg"]
    assert "watch-dog" not in text
    assert check_nxos_text(text, SPINE, p) == []


def test_parse_numbers() -> None:
    assert parse_numbers("24-26,30") == {24, 25, 26, 30}
    assert parse_numbers("af31 ef", {"af31": 26, "ef": 46}) == {26, 46}
