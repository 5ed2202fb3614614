"""NIC scripts against the leaves they are cabled to: clean renders pass, each edit fires its rule.

The example fabric is rendered once per module; each mutation copies `hosts/` (and `configs/`
when a leaf is edited), changes one thing and re-runs `check_nic_scripts`.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from fabricgen.base.findings import Finding
from fabricgen.check.nic import RULES, check_nic_scripts, plan_side, port_side
from fabricgen.check.roce import check_facts, extract_facts
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.facts import DeviceFacts
from fabricgen.render.build import render_all
from tests.conftest import EXAMPLE, ROOT, small_intent

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"
SERVER = "gpu0001"


@dataclass
class Rendered:
    plan: Plan
    root: Path
    facts: dict[str, DeviceFacts]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    plan = load_plan(EXAMPLE)
    root = tmp_path_factory.mktemp("nic") / "out"
    render_all(plan, root, workers=1)
    return Rendered(plan, root, extract_facts(plan, root / "configs", list(plan.switches)))


def hosts_copy(src: Rendered, tmp_path: Path) -> Path:
    shutil.copytree(src.root / "hosts", tmp_path / "hosts")
    return tmp_path / "hosts"


def edit_header(hosts: Path, server: str, key: str, value: str) -> int:
    """Set `key=value` in the `# fabricgen:` header of a server's script; returns the line number."""
    path = hosts / f"{server}.sh"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("# fabricgen: ") and f" {key}=" in line:
            tokens = [f"{key}={value}" if t.startswith(f"{key}=") else t for t in line.split()]
            lines[i] = " ".join(tokens) + "\n"
            path.write_text("".join(lines), encoding="utf-8")
            return i + 1
    raise AssertionError(f"{server}: no header field {key}")


# Body commands that repeat a header field, as the NIC template writes them.
_BODY = {
    "cnp_dscp": [(re.compile(r"CNP_DSCP_P(\d)=\d+"), r"CNP_DSCP_P\1={v}")],
    "mtu": [(re.compile(r"^MTU=\d+$", re.M), "MTU={v}")],
    "pfc_mask": [(re.compile(r"--pfc \S+"), "--pfc {v}")],
    "trust": [(re.compile(r"--trust \S+"), "--trust {v}")],
    "roce_tos": [(re.compile(r"(cma_roce_tos -d \S+ -t )\d+"), r"\g<1>{v}"),
                 (re.compile(r"^(\s*ofed_put )\d+( \"\S*/traffic_class\")", re.M), r"\g<1>{v}\2")],
}


def set_setting(hosts: Path, server: str, key: str, value: str) -> int:
    """What a script generated with another value looks like: header and every body command changed."""
    line = edit_header(hosts, server, key, value)
    path = hosts / f"{server}.sh"
    text = path.read_text(encoding="utf-8")
    for pattern, repl in _BODY.get(key, []):
        text, n = pattern.subn(repl.replace("{v}", value), text)
        assert n, f"{server}: no body command for {key}"
    path.write_text(text, encoding="utf-8")
    return line


def only(findings: list[Finding], device: str, rule: str) -> list[Finding]:
    pairs = {(f.device, f.rule) for f in findings}
    assert pairs == {(device, rule)}, "\n".join(f"{f.device} {f.rule} {f.location} {f.message}" for f in findings)
    return findings


# --------------------------------------------------------------------------- clean


def test_example_is_clean(example: Rendered) -> None:
    assert check_nic_scripts(example.plan, example.root / "hosts", example.facts) == []


def test_clean_without_switch_facts_uses_the_plan(example: Rendered) -> None:
    assert check_nic_scripts(example.plan, example.root / "hosts", {}) == []


def test_lab_frr_leaves_fall_back_to_plan(tmp_path: Path) -> None:
    plan = load_plan(LAB)
    render_all(plan, tmp_path / "out", workers=1)
    facts = extract_facts(plan, tmp_path / "out" / "configs", list(plan.switches))
    assert not any(f.qos for f in facts.values())
    hosts = tmp_path / "out" / "hosts"
    assert check_nic_scripts(plan, hosts, facts) == []
    server = plan.servers[0].name
    set_setting(hosts, server, "cnp_dscp", "4")
    (f,) = only(check_nic_scripts(plan, hosts, facts), server, "nic-cnp-dscp")
    assert "(plan)" in f.message


def test_switch_view_matches_plan(example: Rendered) -> None:
    assert example.plan.qos is not None
    want = plan_side(example.plan.qos)
    port = example.facts["ai256-leaf01"].ports["Ethernet0"]
    got = port_side(port)
    assert got is not None
    assert (got.roce_dscp, got.cnp_dscp, got.pfc) == (want.roce_dscp, want.cnp_dscp, want.pfc)
    assert (got.roce_dscp, got.cnp_dscp, got.pfc) == (frozenset({26}), frozenset({48}), frozenset({3}))


def test_rules_are_stable() -> None:
    assert RULES == ("nic-roce-dscp", "nic-cnp-dscp", "nic-pfc-mask", "nic-trust", "nic-missing-script",
                     "nic-address", "nic-mtu")


# --------------------------------------------------------------------------- script edits


def test_cnp_dscp_4_names_roce_optimized(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    line = set_setting(hosts, SERVER, "cnp_dscp", "4")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-cnp-dscp")
    assert f.location == f"L{line}" and f.file.endswith(f"{SERVER}.sh")
    assert "roceOptimized" in f.message and "CNP_DSCP_P1=48" in f.message and "{48}" in f.message
    assert "ai256-leaf01 Ethernet0" in f.message  # the leaves it is cabled to


def test_other_wrong_cnp_dscp(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    set_setting(hosts, SERVER, "cnp_dscp", "46")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-cnp-dscp")
    assert "roceOptimized" not in f.message and "46" in f.message


def test_pfc_mask_wrong(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    line = set_setting(hosts, SERVER, "pfc_mask", "0,0,0,0,1,0,0,0")
    findings = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-pfc-mask")
    assert any(f.location == f"L{line}" and "{4}" in f.message and "{3}" in f.message for f in findings)


def test_pfc_mask_malformed(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    set_setting(hosts, SERVER, "pfc_mask", "0,0,0,1")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-pfc-mask")
    assert "not 8" in f.message


def test_pfc_mask_pauses_cnp(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    set_setting(hosts, SERVER, "pfc_mask", "0,0,0,1,0,0,1,0")
    findings = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-pfc-mask")
    assert any("CNP priority 6" in f.message for f in findings)


def test_trust_pcp(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    set_setting(hosts, SERVER, "trust", "pcp")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-trust")
    assert "'pcp'" in f.message


def test_roce_dscp_not_lossless_on_leaves(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    edit_header(hosts, SERVER, "roce_dscp", "24")
    findings = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-roce-dscp")
    assert any("DSCP 24" in f.message and "TC 0" in f.message for f in findings)


def test_roce_tos_without_ect(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    set_setting(hosts, SERVER, "roce_tos", "104")  # DSCP 26, ECN bits 00
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-roce-dscp")
    assert "ECT" in f.message and "106" in f.message


def test_roce_tos_other_dscp(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    set_setting(hosts, SERVER, "roce_tos", "98")  # DSCP 24 + ECT(0)
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-roce-dscp")
    assert "DSCP 24" in f.message


def test_header_differs_from_body(example: Rendered, tmp_path: Path) -> None:
    """A header edited by hand: the header is checked against the leaves, each body line against the header."""
    hosts = hosts_copy(example, tmp_path)
    line = edit_header(hosts, SERVER, "cnp_dscp", "4")
    findings = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-cnp-dscp")
    by_loc = {f.location: f.message for f in findings}
    assert "roceOptimized" in by_loc.pop(f"L{line}")
    assert len(by_loc) == 1 and all("cnp dscp 48 here, its header says 4" in m for m in by_loc.values())


def test_script_body_differs_from_header(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    path = hosts / f"{SERVER}.sh"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    idx = next(i for i, x in enumerate(lines) if x.startswith('    tool mlnx_qos -i "$ifname" --pfc '))
    lines[idx] = '    tool mlnx_qos -i "$ifname" --pfc 0,0,0,0,1,0,0,0\n'
    path.write_text("".join(lines), encoding="utf-8")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-pfc-mask")
    assert f.location == f"L{idx + 1}"


def test_script_missing(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    (hosts / f"{SERVER}.sh").unlink()
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-missing-script")
    assert f.file.endswith(f"{SERVER}.sh")


def test_script_without_header(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    path = hosts / f"{SERVER}.sh"
    text = "".join(x for x in path.read_text(encoding="utf-8").splitlines(keepends=True)
                   if not x.startswith("# fabricgen: "))
    path.write_text(text, encoding="utf-8")
    only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-missing-script")


# --------------------------------------------------------------------------- leaf edits seen from the NIC


def _leaf_edit(example: Rendered, tmp_path: Path, leaf: str, port: str, pfc_enable: str) -> dict[str, DeviceFacts]:
    shutil.copytree(example.root / "configs" / leaf, tmp_path / "configs" / leaf)
    path = tmp_path / "configs" / leaf / "config_db.json"
    db = json.loads(path.read_text(encoding="utf-8"))
    db["PORT_QOS_MAP"][port]["pfc_enable"] = pfc_enable
    path.write_text(json.dumps(db), encoding="utf-8")
    facts = dict(example.facts)
    facts.update(extract_facts(example.plan, tmp_path / "configs", [leaf]))
    return facts


def test_leaf_port_pfc_differs_from_nic(example: Rendered, tmp_path: Path) -> None:
    """Only the server cabled to the edited leaf port is affected (the switch side is roce's finding)."""
    facts = _leaf_edit(example, tmp_path, "ai256-leaf01", "Ethernet0", "3,4")
    (f,) = only(check_nic_scripts(example.plan, example.root / "hosts", facts), SERVER, "nic-pfc-mask")
    assert "{3, 4}" in f.message and "ai256-leaf01 Ethernet0" in f.message and "(config)" in f.message
    roce = check_facts(example.plan, facts)
    assert {(x.device, x.rule) for x in roce} == {("ai256-leaf01", "roce-pfc-both-ends")}


def test_nic_profile_roce_optimized_against_switches(tmp_path: Path) -> None:
    """An intent that gives NICs the operator's roceOptimized CNP DSCP renders scripts the check flags."""
    data = small_intent(qos={"nic": {"cnp_dscp": 4}})
    plan = build_plan(Intent.model_validate(data), check_qos=False)
    render_all(plan, tmp_path / "out", workers=1)
    facts = extract_facts(plan, tmp_path / "out" / "configs", list(plan.switches))
    assert check_facts(plan, facts) == []
    findings = check_nic_scripts(plan, tmp_path / "out" / "hosts", facts)
    assert {f.rule for f in findings} == {"nic-cnp-dscp"}
    assert {f.device for f in findings} == {s.name for s in plan.servers}
    assert all("roceOptimized" in f.message for f in findings)


# --------------------------------------------------------------------------- addressing and MTU


def _edit_script(hosts: Path, server: str, old: str, new: str) -> int:
    path = hosts / f"{server}.sh"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    idx = next(i for i, x in enumerate(lines) if x.startswith(old))
    lines[idx] = new + "\n" if new else ""
    path.write_text("".join(lines), encoding="utf-8")
    return idx + 1


def test_nic_address_off_plan(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    nic = example.plan.servers[0].nics[2]
    line = _edit_script(hosts, SERVER, f"nic_up {nic.ifname} ", f"nic_up {nic.ifname} 198.18.39.251/31 "
                        f"198.18.39.250/31 198.18.39.250 102")
    findings = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-address")
    assert {f.location for f in findings} == {f"L{line}"}
    text = " ".join(f.message for f in findings)
    assert f"the plan has {nic.ip} via {nic.gateway}" in text
    assert "is not the address of the leaf port it is cabled to" in text and nic.leaf in text


def test_nic_without_bring_up_line(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    _edit_script(hosts, SERVER, "nic_up eth5 ", "")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-address")
    assert "no `nic_up eth5 ...` line" in f.message


def test_two_nics_one_table(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    path = hosts / f"{SERVER}.sh"
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("nic_up eth1 "))
    path.write_text(text.replace(line, line.rsplit(" ", 1)[0] + " 100"), encoding="utf-8")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-address")
    assert "eth1 and eth0 share routing table 100" in f.message


@pytest.mark.parametrize(("mtu", "words"), [("1500", "RoCE's active MTU drops below 4096"),
                                             ("9500", "above the leaf port's 9216")])
def test_nic_mtu(example: Rendered, tmp_path: Path, mtu: str, words: str) -> None:
    hosts = hosts_copy(example, tmp_path)
    line = set_setting(hosts, SERVER, "mtu", mtu)
    findings = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-mtu")
    assert all(f.location == f"L{line}" and words in f.message for f in findings)


def test_nic_mtu_body_differs_from_header(example: Rendered, tmp_path: Path) -> None:
    hosts = hosts_copy(example, tmp_path)
    line = _edit_script(hosts, SERVER, "MTU=", "MTU=9000")
    (f,) = only(check_nic_scripts(example.plan, hosts, example.facts), SERVER, "nic-mtu")
    assert f.location == f"L{line}" and "mtu 9000 here, its header says 9216" in f.message


def test_network_is_ipaddress_network() -> None:
    """nic._network computes a.b.c.d/len directly: the same text as ipaddress, which takes every other form."""
    import ipaddress
    import random

    from fabricgen.check.nic import _network

    def expected(text: str) -> str | None:
        try:
            return str(ipaddress.ip_interface(text).network)
        except ValueError:
            return None

    rng = random.Random(3)
    cases = ["198.19.0.1/31", "0.0.0.0/0", "255.255.255.255/32", "1.2.3.4", "1.2.3.04/24", "1.2.3.4/033",
             "1.2.3.4/255.255.0.0", "2001:db8::1/64", "x", "1.2.3.4/33", "1.2.3.4/", "256.1.1.1/8", " 1.2.3.4/8"]
    cases += [f"{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}/{rng.randrange(34)}"
              for _ in range(20000)]
    assert [c for c in cases if _network(c) != expected(c)] == []
