"""Address pools never overlap, the plan gives out each address once, and `check` finds a
duplicate a hand edit introduces (issue 7 §3).

Was: `gpu` equal to `p2p`, or `management` equal to `loopbacks`, rendered 512 duplicate link
addresses or loopbacks that were also management addresses, and `check` reported nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.check.addresses import DUPLICATE
from fabricgen.check.run import fast_findings
from fabricgen.cli import main
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.plan.topology import TopologyError
from fabricgen.plan.underlay import check_unique, given_addresses, planned_addresses
from fabricgen.render.build import render_all
from tests.conftest import EXAMPLE, ROOT

LAB = ROOT / "inventory" / "lab" / "fabric.yaml"


def intent_with(tmp_path: Path, base: Path = LAB, **addressing: str) -> Path:
    data: dict[str, Any] = yaml.safe_load(base.read_text())
    data["addressing"].update(addressing)
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize(("pools", "named"), [
    ({"gpu": "198.18.16.0/24"}, ("gpu (198.18.16.0/24)", "p2p (198.18.16.0/24)")),  # gpu equal to p2p
    ({"management": "198.18.0.0/24"}, ("management (198.18.0.0/24)", "loopbacks (198.18.0.0/24)")),
    ({"gpu": "198.18.16.128/25"}, ("gpu (198.18.16.128/25)", "p2p (198.18.16.0/24)")),  # inside another
    ({"p2p": "198.18.0.0/16"}, ("p2p (198.18.0.0/16)", "loopbacks (198.18.0.0/24)")),  # around another
    ({"loopbacks_v6": "2001:db8::/64", "p2p_v6": "2001:db8::80/121"},
     ("p2p_v6 (2001:db8::80/121)", "loopbacks_v6 (2001:db8::/64)")),
    ({"loopbacks_v6": "::ffff:198.18.0.0/120"},  # IPv4-mapped: across the families
     ("loopbacks_v6 (::ffff:c612:0/120)", "loopbacks (198.18.0.0/24)")),
])
def test_overlapping_pools_exit_2_naming_both(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              pools: dict[str, str], named: tuple[str, str]) -> None:
    intent = intent_with(tmp_path, **pools)
    out = tmp_path / "build"
    assert main(["render", "-i", str(intent), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    first, second = named
    assert f"pool {first} overlaps pool {second}" in err, err
    assert f"addressing.{first.split()[0]}:" in err and "(fix: give addressing." in err
    assert re.search(r"fabric\.yaml:\d+: addressing\.", err), "file and line"
    assert not out.exists(), "nothing written"


def test_separate_v4_and_v6_pools_are_fine(tmp_path: Path) -> None:
    intent = intent_with(tmp_path, loopbacks_v6="2001:db8::/64", p2p_v6="2001:db8:1::/64")
    plan = load_plan(intent)
    addrs = [a for a, _, _ in planned_addresses(plan)]
    assert len(addrs) == len(set(addrs)) and any(":" in a for a in addrs)


def test_given_addresses_are_the_planned_ones(tmp_path: Path) -> None:
    """The fast list the uniqueness check counts holds exactly the addresses planned_addresses names."""
    v6 = load_plan(intent_with(tmp_path, loopbacks_v6="2001:db8::/64", p2p_v6="2001:db8:1::/64"))
    for plan in (load_plan(EXAMPLE), v6):
        assert sorted(given_addresses(plan)) == sorted(a for a, _, _ in planned_addresses(plan))


def test_plan_refuses_an_address_given_twice() -> None:
    """Defence in depth: should the allocator ever hand one address out twice, the plan stops."""
    plan = load_plan(EXAMPLE)
    check_unique(plan)
    leaf = next(sw for sw in plan.switches.values() if sw.role == "leaf")
    nic = plan.servers[3].nics[0]
    nic.ip = f"{leaf.loopback}/31"
    with pytest.raises(TopologyError) as exc:
        check_unique(plan)
    text = str(exc.value.problems[0].message)
    assert f"address {leaf.loopback} is given to both {leaf.hostname} loopback and {plan.servers[3].name} " \
           f"{nic.ifname}" in text
    assert exc.value.problems[0].hint


# --------------------------------------------------------------------------- the check rule


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Plan, Path]:
    plan = load_plan(EXAMPLE)
    out = tmp_path_factory.mktemp("pools") / "build"
    render_all(plan, out, workers=1)
    return plan, out


def duplicates(plan: Plan, out: Path) -> list[tuple[str, str, str]]:
    return [(f.device, f.location, f.message) for f in fast_findings(plan, out / "configs", out / "hosts", workers=1)
            if f.rule == DUPLICATE]


def test_rendered_fabrics_have_no_duplicates(example: tuple[Plan, Path], tmp_path: Path) -> None:
    assert duplicates(*example) == []
    lab = load_plan(LAB)
    render_all(lab, tmp_path / "lab", workers=1)
    assert duplicates(lab, tmp_path / "lab") == []


def test_hand_edited_nxos_loopback_duplicate_is_caught(example: tuple[Plan, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    plan, out = example
    spines = sorted(h for h, sw in plan.switches.items() if sw.platform == "nxos")
    a, b = plan.switches[spines[0]], plan.switches[spines[1]]
    path = out / "configs" / b.hostname / "nxos.cfg"
    original = path.read_text()
    try:
        path.write_text(original.replace(f"ip address {b.loopback}/32", f"ip address {a.loopback}/32"))
        found = duplicates(plan, out)
        assert len(found) == 1, found
        device, loc, message = found[0]
        line = original.splitlines().index(f"  ip address {b.loopback}/32") + 1
        assert (device, loc) == (b.hostname, f"L{line}")
        assert f"loopback {a.loopback}/32 on loopback0 is also configured on {a.hostname} loopback0" in message
        assert f"the plan gives it to {a.hostname}" in message
        rc = main(["check", "-i", str(EXAMPLE), "--configs", str(out / "configs"), "--fast", "--format", "json"])
        assert rc == 1 and DUPLICATE in capsys.readouterr().out
    finally:
        path.write_text(original)


def test_hand_edited_sonic_link_address_duplicate_is_caught(example: tuple[Plan, Path]) -> None:
    plan, out = example
    leaves = sorted(h for h, sw in plan.switches.items() if sw.platform == "sonic")
    a, b = plan.switches[leaves[0]], plan.switches[leaves[1]]
    taken = next(i for i in a.interfaces if i.tier == "gpu_leaf")  # leaf01's GPU-facing /31
    mine = next(i for i in b.interfaces if i.tier == "gpu_leaf")
    path = out / "configs" / b.hostname / "config_db.json"
    original = path.read_text()
    try:
        db = json.loads(original)
        db["INTERFACE"][f"{mine.name}|{taken.ipv4}"] = db["INTERFACE"].pop(f"{mine.name}|{mine.ipv4}")
        path.write_text(json.dumps(db))
        found = [f for f in duplicates(plan, out) if f[0] == b.hostname]
        assert found and found[0][1] == f"/INTERFACE/{mine.name}|{taken.ipv4.replace('/', '~1')}"
        assert f"address {taken.ipv4} on {mine.name} is also configured on {a.hostname} {taken.name}" in found[0][2]
        assert all(f[0] != a.hostname for f in duplicates(plan, out)), "the plan's holder is not blamed"
    finally:
        path.write_text(original)


def test_hand_edited_frr_duplicate_is_caught(tmp_path: Path) -> None:
    """The frr platform (the lab's switches): a loopback copied from another switch."""
    plan = load_plan(LAB)
    out = tmp_path / "lab"
    render_all(plan, out, workers=1)
    names = sorted(plan.switches)
    a, b = plan.switches[names[0]], plan.switches[names[1]]
    path = out / "configs" / b.hostname / "frr.conf"
    path.write_text(path.read_text().replace(f" ip address {b.loopback}/32", f" ip address {a.loopback}/32"))
    found = duplicates(plan, out)
    assert [(d, m.split(" is also")[0]) for d, _, m in found] == [(b.hostname, f"loopback {a.loopback}/32 on lo")]


def test_hand_edited_eos_duplicate_is_caught(tmp_path: Path) -> None:
    """EOS: a leaf's loopback on another leaf."""
    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import build_plan
    from tests.conftest import small_intent

    plan = build_plan(Intent.model_validate(small_intent(platforms={"leaf": "eos", "spine": "eos"},
                                                         qos={"mtu": 9214})))
    out = tmp_path / "eos"
    render_all(plan, out, workers=1)
    assert duplicates(plan, out) == []
    leaves = sorted(h for h, sw in plan.switches.items() if sw.role == "leaf")
    a, b = plan.switches[leaves[0]], plan.switches[leaves[1]]
    path = out / "configs" / b.hostname / "eos.cfg"
    text = path.read_text()
    assert f"ip address {b.loopback}/32" in text
    path.write_text(text.replace(f"ip address {b.loopback}/32", f"ip address {a.loopback}/32"))
    found = duplicates(plan, out)
    assert [d for d, _, _ in found] == [b.hostname] and f"loopback {a.loopback}/32 on Loopback0" in found[0][2]
