"""Fabric-wide RoCE invariants: clean renders pass; one edit on disk fires exactly its rule on its device.

The example fabric (SONiC leaves, NX-OS spines) and the lab fabric (platform frr) are rendered
once per module; each mutation copies the rendered tree, edits one file and re-checks.  To keep
the module fast, a mutation re-extracts only the devices it touched and reuses the clean facts
of the others (`check_facts` is the same cross-device pass `check_fabric` runs).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fabricgen.base.findings import Finding
from fabricgen.check.nic import check_nic_scripts
from fabricgen.check.roce import RULES, check_fabric, check_facts, extract_facts
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.facts import DeviceFacts, ipv4_int, parse_asn, pointer, read_config
from fabricgen.render.build import render_all
from tests.conftest import EXAMPLE, EXAMPLES, ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"


@dataclass
class Rendered:
    plan: Plan
    root: Path
    facts: dict[str, DeviceFacts]


def _render(plan: Plan, root: Path) -> Rendered:
    render_all(plan, root, workers=1)
    return Rendered(plan, root, extract_facts(plan, root / "configs", list(plan.switches)))


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return _render(load_plan(EXAMPLE), tmp_path_factory.mktemp("example") / "out")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return _render(load_plan(LAB), tmp_path_factory.mktemp("lab") / "out")


# --------------------------------------------------------------------------- editing helpers


class Tree:
    """A private copy of a rendered tree with one-line edit helpers."""

    def __init__(self, src: Rendered, dst: Path) -> None:
        shutil.copytree(src.root / "configs", dst / "configs")
        shutil.copytree(src.root / "hosts", dst / "hosts")
        self.src, self.root, self.configs = src, dst, dst / "configs"
        self.touched: set[str] = set()

    def path(self, host: str, name: str) -> Path:
        self.touched.add(host)
        return self.configs / host / name

    def edit_json(self, host: str, fn: Callable[[dict[str, Any]], None]) -> None:
        path = self.path(host, "config_db.json")
        db = json.loads(path.read_text(encoding="utf-8"))
        fn(db)
        path.write_text(json.dumps(db, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def replace(self, host: str, name: str, old: str, new: str) -> int:
        """Replace the first line equal to `old` (stripped) by `new` (same indentation); returns its number."""
        path = self.path(host, name)
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        for i, line in enumerate(lines):
            if line.strip() == old:
                indent = line[: len(line) - len(line.lstrip())]
                lines[i] = "".join(indent + part + "\n" for part in new.split("\n")) if new else ""
                path.write_text("".join(lines), encoding="utf-8")
                return i + 1
        raise AssertionError(f"{host}/{name}: no line {old!r}")

    def delete(self, host: str, name: str) -> None:
        self.path(host, name).unlink()

    def check(self) -> list[Finding]:
        facts = dict(self.src.facts)
        facts.update(extract_facts(self.src.plan, self.configs, sorted(self.touched)))
        return check_facts(self.src.plan, facts, self.configs)


def line_of(path: Path, needle: str) -> int:
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() == needle:
            return i
    raise AssertionError(f"{path}: no line {needle!r}")


def only(findings: list[Finding], device: str, rule: str) -> list[Finding]:
    """Every finding is `rule` on `device` (nothing unrelated fired), and there is at least one."""
    pairs = {(f.device, f.rule) for f in findings}
    assert pairs == {(device, rule)}, "\n".join(f"{f.device} {f.rule} {f.location} {f.message}" for f in findings)
    return findings


# --------------------------------------------------------------------------- clean renders


@pytest.mark.parametrize("intent", [EXAMPLE, *EXAMPLES, LAB], ids=lambda p: p.stem if p != LAB else "lab")
def test_rendered_fabrics_are_clean(intent: Path, tmp_path: Path) -> None:
    plan = load_plan(intent)
    render_all(plan, tmp_path / "out", workers=1)
    facts = extract_facts(plan, tmp_path / "out" / "configs", list(plan.switches), workers=None)
    assert set(facts) == set(plan.switches)
    assert check_facts(plan, facts, tmp_path / "out" / "configs") == []
    assert check_nic_scripts(plan, tmp_path / "out" / "hosts", facts) == []


def test_check_fabric_pool_matches_serial(example: Rendered) -> None:
    configs = example.root / "configs"
    serial = extract_facts(example.plan, configs, list(example.plan.switches), workers=1)
    pooled = extract_facts(example.plan, configs, list(example.plan.switches), workers=2)
    assert list(pooled) == list(serial)
    assert pooled == serial
    assert check_fabric(example.plan, configs, workers=2) == []


def test_facts_of_each_platform(example: Rendered, lab: Rendered) -> None:
    plan = example.plan
    leaf, spine = example.facts["ai256-leaf01"], example.facts["ai256-spine01"]
    q = plan.qos
    assert q is not None
    sw = plan.switches["ai256-leaf01"]
    itf = sw.interface("Ethernet384")
    p = leaf.ports["Ethernet384"]
    assert (p.mtu, p.ipv4, p.pfc, p.watchdog) == (9216, itf.ipv4, frozenset(q.lossless_tcs), True)
    assert p.maps is not None and p.maps.dscp_to_tc[26] == 3 and p.maps.dscp_to_tc[48] == 6
    prof = plan.qos_profiles[itf.qos_profile]
    # the SN5600 SKU runs the dynamic buffer model: the lossless PG is NULL, SONiC computes its headroom
    assert p.lossless[3].profile == "NULL" and p.lossless[3].static_th is None
    assert p.lossless[3].loc == pointer("BUFFER_PG", "Ethernet384|3", "profile")
    assert prof.speed == 400
    assert p.queues[3].ecn[0].max_bytes == prof.ecn_max and p.queues[6].strict
    assert leaf.bgp_asn == sw.asn and len(leaf.neighbors) == len(sw.bgp.neighbors)  # type: ignore[union-attr]
    assert leaf.maximum_paths[0][0] == sw.bgp.maximum_paths  # type: ignore[union-attr]

    s = spine.ports["Ethernet1/1"]
    assert s.pfc_device_wide and s.pfc == frozenset({3}) and s.mtu == 9216
    assert spine.pause == {3: [(3, spine.pause[3][0][1])]}
    assert s.queues[7].strict and s.queues[3].marks and not s.queues[3].strict  # NX-OS: CNPs in q7 (Cisco)
    assert s.lossless[3].loc == ""  # NX-OS: buffering from the plan profile
    assert spine.bgp_asn == plan.switches["ai256-spine01"].asn
    assert all(n.remote_as is not None for n in spine.neighbors.values())

    frr = lab.facts["lab-leaf01"]
    assert not frr.qos and frr.ports["Ethernet32"].mtu is None
    assert frr.ports["Ethernet32"].ipv4 == lab.plan.switches["lab-leaf01"].interface("Ethernet32").ipv4
    assert "lo" not in frr.ports


def test_small_parsers() -> None:
    assert parse_asn("4200000000") == 4200000000
    assert parse_asn("64086.59904") == 64086 * 65536 + 59904
    assert parse_asn("external") is None
    assert ipv4_int("198.18.16.1/31") == ((198 << 24) + (18 << 16) + (16 << 8) + 1, 31)
    assert ipv4_int("2001:db8::1/127") is None
    assert pointer("INTERFACE", "Ethernet0|198.18.32.0/31") == "/INTERFACE/Ethernet0|198.18.32.0~131"


def test_rules_are_stable() -> None:
    assert RULES == (
        "roce-lossless-chain", "roce-cnp", "roce-ecn-order", "roce-bandwidth", "roce-pfc-both-ends",
        "roce-mtu-both-ends", "roce-maximum-paths", "roce-p2p-pair", "roce-missing-config", "roce-ecn-range",
    )


# --------------------------------------------------------------------------- mutations: SONiC leaves


def _port_qos(port: str, key: str, value: str) -> Callable[[dict[str, Any]], None]:
    return lambda db: db["PORT_QOS_MAP"][port].__setitem__(key, value)


def test_sonic_pfc_priority_on_one_port(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf01", _port_qos("Ethernet0", "pfc_enable", "4"))
    (f,) = only(t.check(), "ai256-leaf01", "roce-pfc-both-ends")
    assert f.location == "/PORT_QOS_MAP/Ethernet0/pfc_enable" and f.file.endswith("config_db.json")
    assert "{4}" in f.message and "{3}" in f.message and "gpu0001" in f.message


def test_sonic_pfc_off_on_fabric_port(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf02", lambda db: db["PORT_QOS_MAP"]["Ethernet384"].pop("pfc_enable"))
    (f,) = only(t.check(), "ai256-leaf02", "roce-pfc-both-ends")
    assert "PFC is off" in f.message and "ai256-spine" in f.message


def test_sonic_watchdog_missing(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf02", lambda db: db["PFC_WD"].pop("Ethernet8"))
    (f,) = only(t.check(), "ai256-leaf02", "roce-pfc-both-ends")
    assert f.location == "/PFC_WD/Ethernet8" and "watchdog" in f.message


def test_sonic_mtu_one_end(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf02", lambda db: db["PORT"]["Ethernet384"].__setitem__("mtu", "9000"))
    (f,) = only(t.check(), "ai256-leaf02", "roce-mtu-both-ends")
    assert f.location == "/PORT/Ethernet384/mtu" and "9000" in f.message and "9216" in f.message


def test_sonic_ecn_max_far_above_xoff_is_right(example: Rendered, tmp_path: Path) -> None:
    # Reference §5.4: the PG xoff is headroom above the pause trigger, not the trigger.
    t = Tree(example, tmp_path)
    findings = t.check()
    assert not [f for f in findings if f.rule.startswith("roce-ecn")], findings
    prof = example.plan.qos_profiles[example.plan.switches["ai256-leaf03"].interface("Ethernet384").qos_profile]
    assert prof.ecn_max > prof.xoff


def test_sonic_ecn_max_above_a_static_pause_threshold(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    wred: list[str] = []

    def static(db: dict[str, Any]) -> None:  # a traditional lossless PG profile with a static pause trigger
        wred.append(next(iter(db["WRED_PROFILE"])))
        db["DEVICE_METADATA"]["localhost"]["buffer_model"] = "traditional"
        db["BUFFER_PROFILE"] = {"pg_static": {"pool": "ingress_lossless_pool", "xon": "19456", "xoff": "140288",
                                              "size": "159744", "static_th": "1000000"}}
        for entry in db["BUFFER_PG"].values():
            if entry["profile"] == "NULL":
                entry["profile"] = "pg_static"

    t.edit_json("ai256-leaf03", static)
    findings = only(t.check(), "ai256-leaf03", "roce-ecn-order")
    assert {f.location for f in findings} == {f"/WRED_PROFILE/{wred[0]}/green_max_threshold"}
    assert all("static pause threshold 1000000 B" in f.message for f in findings)


def test_sonic_ecn_outside_the_vendor_range_is_a_warning(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    wred: list[str] = []

    def bump(db: dict[str, Any]) -> None:
        name = next(iter(db["WRED_PROFILE"]))
        wred.append(name)
        db["WRED_PROFILE"][name]["green_max_threshold"] = "4000000"

    t.edit_json("ai256-leaf03", bump)
    findings = only(t.check(), "ai256-leaf03", "roce-ecn-range")
    assert {f.location for f in findings} == {f"/WRED_PROFILE/{wred[0]}/green_max_threshold"}
    assert {f.severity for f in findings} == {"warning"}
    assert all("4000000" in f.message and "max 1501500..3072000 B" in f.message for f in findings)


def test_sonic_ecn_min_not_below_max(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)

    def flip(db: dict[str, Any]) -> None:
        w = next(iter(db["WRED_PROFILE"].values()))
        for color in ("green", "yellow", "red"):
            w[f"{color}_min_threshold"] = w[f"{color}_max_threshold"]

    t.edit_json("ai256-leaf03", flip)
    (f,) = only(t.check(), "ai256-leaf03", "roce-ecn-order")
    assert "is not below max" in f.message


def test_sonic_bandwidth_60_plus_50(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf04", lambda db: db["SCHEDULER"]["AI_ROCE_DWRR"].__setitem__("weight", "60"))
    (f,) = only(t.check(), "ai256-leaf04", "roce-bandwidth")
    assert "110" in f.message and "AI_ROCE_DWRR 60" in f.message


def test_sonic_cnp_class_lossless(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf04", _port_qos("Ethernet8", "pfc_enable", "3,6"))
    (f,) = only(t.check(), "ai256-leaf04", "roce-cnp")
    assert f.location == "/PORT_QOS_MAP/Ethernet8/pfc_enable" and "CNP" in f.message


def test_sonic_cnp_tc_on_lossless_pg_is_one_finding(example: Rendered, tmp_path: Path) -> None:
    """A shared map entry that differs from the plan is blamed once, with the ports it affects."""
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf04", lambda db: db["TC_TO_PRIORITY_GROUP_MAP"]["AI"].__setitem__("6", "3"))
    (f,) = only(t.check(), "ai256-leaf04", "roce-cnp")
    assert f.location == "/TC_TO_PRIORITY_GROUP_MAP/AI/6"
    assert f.message.endswith("[Ethernet0, Ethernet4, Ethernet8 and 61 more]")


def test_sonic_cnp_not_strict(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    dwrr = {"type": "DWRR", "weight": "0"}
    t.edit_json("ai256-leaf04", lambda db: db["SCHEDULER"].__setitem__("AI_CNP_STRICT", dwrr))
    findings = only(t.check(), "ai256-leaf04", "roce-cnp")
    assert {f.location for f in findings} == {"/SCHEDULER/AI_CNP_STRICT/weight"}
    assert "not strict priority" in findings[0].message


def test_sonic_roce_dscp_reclassified(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf05", lambda db: db["DSCP_TO_TC_MAP"]["AI"].__setitem__("26", "0"))
    (f,) = only(t.check(), "ai256-leaf05", "roce-lossless-chain")
    assert f.location == "/DSCP_TO_TC_MAP/AI/26" and "TC 0" in f.message


def test_sonic_lossless_pg_without_xoff(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    lossy = {"profile": "ingress_lossy_profile"}
    t.edit_json("ai256-leaf05", lambda db: db["BUFFER_PG"].__setitem__("Ethernet8|3", lossy))
    (f,) = only(t.check(), "ai256-leaf05", "roce-lossless-chain")
    assert f.location == "/BUFFER_PG/Ethernet8|3/profile"


def test_sonic_queue_without_ecn(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf05", lambda db: next(iter(db["WRED_PROFILE"].values())).__setitem__("ecn", "ecn_none"))
    findings = only(t.check(), "ai256-leaf05", "roce-lossless-chain")
    assert all("drops instead of marking" in f.message for f in findings)


def test_sonic_remote_as_changed(example: Rendered, tmp_path: Path) -> None:
    sw = example.plan.switches["ai256-leaf06"]
    n = sw.bgp.neighbors[0]  # type: ignore[union-attr]
    t = Tree(example, tmp_path)
    line = t.replace("ai256-leaf06", "frr.conf", f"neighbor {n.ip} remote-as {n.remote_asn}",
                     f"neighbor {n.ip} remote-as {n.remote_asn + 7}")
    (f,) = only(t.check(), "ai256-leaf06", "roce-p2p-pair")
    assert f.location == f"L{line}" and f.file.endswith("frr.conf")
    assert str(n.remote_asn + 7) in f.message and str(n.remote_asn) in f.message


def test_sonic_p2p_address_changed(example: Rendered, tmp_path: Path) -> None:
    itf = example.plan.switches["ai256-leaf06"].interface("Ethernet384")
    t = Tree(example, tmp_path)

    def move(db: dict[str, Any]) -> None:
        del db["INTERFACE"][f"Ethernet384|{itf.ipv4}"]
        db["INTERFACE"]["Ethernet384|198.18.23.201/31"] = {}

    t.edit_json("ai256-leaf06", move)
    (f,) = only(t.check(), "ai256-leaf06", "roce-p2p-pair")
    assert f.location == pointer("INTERFACE", "Ethernet384|198.18.23.201/31")
    assert itf.ipv4 in f.message and itf.peer_device in f.message


def test_sonic_maximum_paths_lowered(example: Rendered, tmp_path: Path) -> None:
    sw = example.plan.switches["ai256-leaf07"]
    t = Tree(example, tmp_path)
    line = t.replace("ai256-leaf07", "frr.conf", f"maximum-paths {sw.bgp.maximum_paths}",  # type: ignore[union-attr]
                     "maximum-paths 8")
    (f,) = only(t.check(), "ai256-leaf07", "roce-maximum-paths")
    assert f.location == f"L{line}" and "8" in f.message


def test_sonic_local_as_changed(example: Rendered, tmp_path: Path) -> None:
    sw = example.plan.switches["ai256-leaf07"]
    t = Tree(example, tmp_path)
    t.replace("ai256-leaf07", "frr.conf", f"router bgp {sw.asn}", "router bgp 4200000999")
    (f,) = only(t.check(), "ai256-leaf07", "roce-p2p-pair")
    assert "local AS 4200000999" in f.message


@pytest.mark.parametrize("name", ["config_db.json", "frr.conf"])
def test_sonic_file_deleted(example: Rendered, tmp_path: Path, name: str) -> None:
    t = Tree(example, tmp_path)
    t.delete("ai256-leaf08", name)
    (f,) = only(t.check(), "ai256-leaf08", "roce-missing-config")
    assert f.file.endswith(f"ai256-leaf08/{name}") and name in f.message


def test_sonic_unreadable_json(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.path("ai256-leaf08", "config_db.json").write_text("{not json", encoding="utf-8")
    (f,) = only(t.check(), "ai256-leaf08", "roce-missing-config")
    assert "not JSON" in f.message


# --------------------------------------------------------------------------- mutations: NX-OS spines


def test_nxos_pause_wrong_cos(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    line = t.replace("ai256-spine02", "nxos.cfg", "pause pfc-cos 3", "pause pfc-cos 4")
    (f,) = only(t.check(), "ai256-spine02", "roce-lossless-chain")
    assert f.location == f"L{line}" and f.file.endswith("nxos.cfg") and "CoS 4" in f.message


def test_nxos_wred_outside_the_vendor_range(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    path = t.path("ai256-spine03", "nxos.cfg")
    old = next(x.strip() for x in path.read_text(encoding="utf-8").splitlines() if "random-detect" in x)
    assert "minimum-threshold 950 kbytes maximum-threshold 3000 kbytes" in old  # Cisco's own default
    line = t.replace("ai256-spine03", "nxos.cfg", old,
                     old.replace("maximum-threshold 3000 kbytes", "maximum-threshold 4000 kbytes"))
    findings = only(t.check(), "ai256-spine03", "roce-ecn-range")
    assert {f.location for f in findings} == {f"L{line}"} and findings[0].severity == "warning"
    assert "4096000" in findings[0].message and "Cisco" in findings[0].message


def test_nxos_bandwidth_60_plus_50(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    path = t.path("ai256-spine03", "nxos.cfg")
    policy = line_of(path, "policy-map type queuing QOS_EGRESS_PORT")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    q3 = lines.index("  class type queuing c-out-8q-q3\n")
    assert lines[q3 + 1].strip() == "bandwidth remaining percent 50"
    lines[q3 + 1] = "    bandwidth remaining percent 60\n"
    path.write_text("".join(lines), encoding="utf-8")
    (f,) = only(t.check(), "ai256-spine03", "roce-bandwidth")
    assert f.location == f"L{policy}" and "110" in f.message


def test_nxos_cnp_class_lossless(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.replace("ai256-spine04", "nxos.cfg", "class type network-qos c-8q-nq-default",
              "class type network-qos c-8q-nq6\n  mtu 9216\n  pause pfc-cos 6\nclass type network-qos c-8q-nq-default")
    (f,) = only(t.check(), "ai256-spine04", "roce-cnp")
    assert "c-8q-nq6" in f.message


def test_nxos_cnp_not_strict(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    line = t.replace("ai256-spine04", "nxos.cfg", "priority level 1", "bandwidth remaining percent 0")
    (f,) = only(t.check(), "ai256-spine04", "roce-cnp")
    assert f.location == f"L{line}" and "not strict priority" in f.message


def test_nxos_port_mtu(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    path = t.path("ai256-spine05", "nxos.cfg")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("interface Ethernet1/1\n")
    mtu = next(i for i in range(at, at + 6) if lines[i].strip() == "mtu 9216")
    lines[mtu] = "  mtu 9000\n"
    path.write_text("".join(lines), encoding="utf-8")
    (f,) = only(t.check(), "ai256-spine05", "roce-mtu-both-ends")
    assert f.location == f"L{mtu + 1}"


def test_nxos_pfc_mode_off(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.replace("ai256-spine05", "nxos.cfg", "priority-flow-control mode on", "")
    (f,) = only(t.check(), "ai256-spine05", "roce-pfc-both-ends")
    assert "Ethernet1/1" in f.message and "PFC is off" in f.message


def test_nxos_global_watchdog_missing_is_one_finding(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    line = t.replace("ai256-spine05", "nxos.cfg", "priority-flow-control watch-dog-interval on", "")
    assert line < 10  # the global line, not an interface's
    (f,) = only(t.check(), "ai256-spine05", "roce-pfc-both-ends")
    assert "global" in f.message


def test_nxos_remote_as_changed(example: Rendered, tmp_path: Path) -> None:
    sw = example.plan.switches["ai256-spine06"]
    n = sw.bgp.neighbors[3]  # type: ignore[union-attr]
    t = Tree(example, tmp_path)
    path = t.path("ai256-spine06", "nxos.cfg")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index(f"  neighbor {n.ip}\n")
    assert lines[at + 1].strip() == f"remote-as {n.remote_asn}"
    lines[at + 1] = f"    remote-as {n.remote_asn + 1}\n"
    path.write_text("".join(lines), encoding="utf-8")
    (f,) = only(t.check(), "ai256-spine06", "roce-p2p-pair")
    assert f.location == f"L{at + 2}" and n.peer_device in f.message


def test_nxos_p2p_address_changed(example: Rendered, tmp_path: Path) -> None:
    itf = example.plan.switches["ai256-spine06"].interface("Ethernet1/2")
    t = Tree(example, tmp_path)
    line = t.replace("ai256-spine06", "nxos.cfg", f"ip address {itf.ipv4}", "ip address 198.18.23.250/31")
    (f,) = only(t.check(), "ai256-spine06", "roce-p2p-pair")
    assert f.location == f"L{line}" and "198.18.23.250/31" in f.message


def test_nxos_maximum_paths_lowered(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    line = t.replace("ai256-spine07", "nxos.cfg", "maximum-paths 32", "maximum-paths 4")
    (f,) = only(t.check(), "ai256-spine07", "roce-maximum-paths")
    assert f.location == f"L{line}" and "below the 32 equal-cost paths a spine" in f.message


def test_nxos_config_deleted(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.delete("ai256-spine08", "nxos.cfg")
    (f,) = only(t.check(), "ai256-spine08", "roce-missing-config")
    assert f.file.endswith("ai256-spine08/nxos.cfg")


def test_device_directory_missing_via_check_fabric(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    shutil.rmtree(t.configs / "ai256-leaf08")
    findings = only(check_fabric(example.plan, t.configs), "ai256-leaf08", "roce-missing-config")
    assert {Path(f.file).name for f in findings} == {"config_db.json", "frr.conf"}


def test_check_fabric_equals_incremental(example: Rendered, tmp_path: Path) -> None:
    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf01", _port_qos("Ethernet0", "pfc_enable", "4"))
    t.replace("ai256-spine02", "nxos.cfg", "pause pfc-cos 3", "pause pfc-cos 4")
    assert sorted(check_fabric(example.plan, t.configs, workers=2), key=repr) == sorted(t.check(), key=repr)


# --------------------------------------------------------------------------- mutations: platform frr (no QoS)


def test_frr_remote_as_changed(lab: Rendered, tmp_path: Path) -> None:
    n = lab.plan.switches["lab-spine01"].bgp.neighbors[0]  # type: ignore[union-attr]
    t = Tree(lab, tmp_path)
    line = t.replace("lab-spine01", "frr.conf", f"neighbor {n.ip} remote-as {n.remote_asn}",
                     f"neighbor {n.ip} remote-as 65001")
    (f,) = only(t.check(), "lab-spine01", "roce-p2p-pair")
    assert f.location == f"L{line}"


def test_frr_p2p_address_changed(lab: Rendered, tmp_path: Path) -> None:
    itf = lab.plan.switches["lab-leaf02"].interface("Ethernet32")
    t = Tree(lab, tmp_path)
    t.replace("lab-leaf02", "frr.conf", f"ip address {itf.ipv4}", "ip address 198.18.16.200/31")
    (f,) = only(t.check(), "lab-leaf02", "roce-p2p-pair")
    assert "198.18.16.200/31" in f.message


def test_frr_neighbor_missing(lab: Rendered, tmp_path: Path) -> None:
    n = lab.plan.switches["lab-leaf03"].bgp.neighbors[1]  # type: ignore[union-attr]
    t = Tree(lab, tmp_path)
    t.replace("lab-leaf03", "frr.conf", f"neighbor {n.ip} remote-as {n.remote_asn}", "")
    findings = only(t.check(), "lab-leaf03", "roce-p2p-pair")
    assert any(f"no BGP neighbor {n.ip}" in f.message for f in findings)


def test_frr_maximum_paths_lowered(lab: Rendered, tmp_path: Path) -> None:
    t = Tree(lab, tmp_path)
    t.replace("lab-leaf04", "frr.conf", "maximum-paths 4", "maximum-paths 1")
    only(t.check(), "lab-leaf04", "roce-maximum-paths")


def test_frr_config_deleted(lab: Rendered, tmp_path: Path) -> None:
    t = Tree(lab, tmp_path)
    t.delete("lab-spine02", "frr.conf")
    only(t.check(), "lab-spine02", "roce-missing-config")


def test_sonic_qos_facts_read_once_per_class_equal_each_read(example: Rendered, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The QoS facts of ConfigDBs that repeat their class tables are read once per class: the same facts as
    reading each file alone, and a ConfigDB whose QoS tables differ in one value is read for itself."""
    from fabricgen.platforms.sonic import extract

    sonic = [h for h, sw in example.plan.switches.items() if sw.platform == "sonic"]
    extract._QOS.clear()
    memo = extract_facts(example.plan, example.root / "configs", sonic)
    assert 0 < len(extract._QOS) < len(sonic)  # fewer classes than ConfigDBs
    monkeypatch.setattr(extract, "_qos_key", lambda t, names: None)  # every file read alone
    assert extract_facts(example.plan, example.root / "configs", sonic) == memo
    monkeypatch.undo()
    tree = Tree(example, tmp_path)
    leaf = "ai256-leaf02"
    tree.edit_json(leaf, lambda db: db["SCHEDULER"]["AI_ROCE_DWRR"].update(weight="77"))
    again = extract_facts(example.plan, tmp_path / "configs", [leaf, "ai256-leaf01"])
    assert again["ai256-leaf01"].ports == memo["ai256-leaf01"].ports
    assert {q.weight for p in again[leaf].ports.values() for q in p.queues.values() if not q.strict} >= {77}
    assert again[leaf].ports != memo[leaf].ports


def test_sonic_qos_facts_of_a_file_json_cannot_say_are_its_own(example: Rendered, tmp_path: Path) -> None:
    """A NaN (json.loads reads it; orjson writes it as null) or an integer beyond 64 bits: the file's QoS facts are
    its own, never those of a file with null in that place, whose digest would be the same."""
    from fabricgen.platforms.sonic import extract

    assert extract._qos_key(extract._SonicTables({"SCHEDULER": {"s": {"weight": 1 << 70}}}), ["Ethernet0"]) is None
    tree = Tree(example, tmp_path)
    for leaf, value in (("ai256-leaf03", "null"), ("ai256-leaf02", "NaN")):
        path = tree.path(leaf, "config_db.json")
        text = path.read_text(encoding="utf-8").replace('"scheduler": "AI_ROCE_DWRR"', f'"scheduler": {value}', 1)
        path.write_text(text, encoding="utf-8")
    extract._QOS.clear()
    facts = extract_facts(example.plan, tree.configs, ["ai256-leaf03", "ai256-leaf02"])  # null's facts first
    names = {leaf: {q.scheduler for p in facts[leaf].ports.values() for q in p.queues.values()}
             for leaf in ("ai256-leaf03", "ai256-leaf02")}
    assert "None" in names["ai256-leaf03"] and "nan" in names["ai256-leaf02"]


class _Forgetful(dict):  # type: ignore[type-arg]
    """A memo of clean port verdicts that remembers nothing: every port runs every rule."""

    def __setitem__(self, key: object, value: object) -> None:
        pass


def test_port_verdicts_remembered_equal_every_port_checked(example: Rendered, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-port QoS rules run once per set of shared QoS objects that passed them: the findings, in their
    order, are those of checking every port, on a clean fabric and on one broken per port, per class and per
    device; and most ports are not checked again (the ports of a SONiC class share their QoS objects across files)."""
    from fabricgen.check import roce

    t = Tree(example, tmp_path)
    t.edit_json("ai256-leaf01", _port_qos("Ethernet0", "pfc_enable", "4"))  # one port
    t.edit_json("ai256-leaf02", lambda db: db["SCHEDULER"]["AI_ROCE_DWRR"].update(weight="77"))  # its class
    t.edit_json("ai256-leaf03", lambda db: db["DSCP_TO_TC_MAP"]["AI"].update({"26": "1"}))
    t.replace("ai256-spine02", "nxos.cfg", "pause pfc-cos 3", "pause pfc-cos 4")  # an NX-OS device
    checked: list[str] = []
    port = roce._DeviceCheck.port

    def counted(self: Any, p: Any) -> None:
        checked.append(p.name)
        port(self, p)

    monkeypatch.setattr(roce._DeviceCheck, "port", counted)
    init = roce._Out.__init__
    for check in (lambda: check_facts(example.plan, example.facts), t.check):  # clean, then broken
        checked.clear()
        remembered = check()
        ports = len(checked)
        with monkeypatch.context() as m:
            m.setattr(roce._Out, "__init__", lambda self, clean=None: init(self, _Forgetful()))
            checked.clear()
            assert check() == remembered
        assert ports < len(checked) / 2
    assert {f.device for f in remembered} == {"ai256-leaf01", "ai256-leaf02", "ai256-leaf03", "ai256-spine02"}


@pytest.mark.parametrize("raw", [
    "rendered",
    b'{"PORT": {"Ethernet0": {"mtu": "9100", "speed": 18446744073709551616}}}',  # beyond 64 bits: whole
    b'{"PORT": {"Ethernet0": {"mtu": NaN}}}', b'{"PORT": {"Ethernet0": {"mtu": 1e400}}}',
    b'\xef\xbb\xbf{"PORT": {}}', b'{"PORT": {"Ethernet0": {"alias": "\\ud800"}}}', b'{"PORT": {"a": "\xff"}}',
    b'{"PORT": {},\r\n "X": [1,]}', b'{"PORT": {"a": 1, "a": 2}}', b"[1, 2]", b"null", b"",
], ids=["rendered", "long-int", "nan", "infinity", "bom", "surrogate", "not-utf8", "crlf-trailing-comma",
        "duplicate", "array", "null", "empty"])
def test_sonic_configdb_read_as_json_reads_it(example: Rendered, tmp_path: Path, raw: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson reads a ConfigDB where it gives what json.loads gives for the file's text; every other file,
    value or error, is json's: the facts (errors included) equal those of reading the text with json."""
    from fabricgen.platforms.sonic import extract

    leaf = "ai256-leaf01"
    tree = Tree(example, tmp_path)
    path = tree.path(leaf, "config_db.json")
    if raw != "rendered":
        path.write_bytes(raw)
    fast = extract.extract_sonic(example.plan, tree.configs, leaf)
    with monkeypatch.context() as m:
        m.setattr(extract, "_long_number", lambda raw: True)  # every file read by json...
        m.setattr(extract, "config_text", lambda f, name, _: read_config(f, tree.configs, name))  # ...as text
        assert extract.extract_sonic(example.plan, tree.configs, leaf) == fast
    if raw == "rendered":
        monkeypatch.setattr(extract.json, "loads", None)  # json does not read what orjson reads
        assert extract.extract_sonic(example.plan, tree.configs, leaf) == fast and fast.ports
