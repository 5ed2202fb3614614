"""NX-OS pause buffers on links over 100 m: rendered from the headroom physics, attached, and checked.

Issue 9: the 300 m super-spine links of inventory/examples/three-tier.yaml got no
`pause buffer-size ... pause-threshold ... resume-threshold` on the NX-OS side, which Cisco makes
mandatory above 100 m (vendor reference §5.3).
"""

from __future__ import annotations

import re

import pytest

from fabricgen.catalog.registry import capabilities
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.nxos import render as nxos
from fabricgen.platforms.nxos.check import check_nxos_text
from fabricgen.render.build import environment
from tests.conftest import EXAMPLE, ROOT

THREE_TIER = ROOT / "inventory" / "examples" / "three-tier.yaml"
PAUSE = re.compile(r"^    pause buffer-size (\d+) pause-threshold (\d+) resume-threshold (\d+)$", re.M)


@pytest.fixture(scope="module")
def plan() -> Plan:
    return load_plan(THREE_TIER)


@pytest.fixture(scope="module")
def sspine(plan: Plan) -> Switch:
    return plan.by_role("super_spine")[0]


@pytest.fixture(scope="module")
def text(plan: Plan, sspine: Switch) -> str:
    return nxos.render(sspine, plan, environment())["nxos.cfg"]


def interface_block(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(f"interface {name}")
    end = start + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return [ln.strip() for ln in lines[start + 1:end]]


def test_the_300m_super_spine_ports_carry_pause_buffers(plan: Plan, sspine: Switch, text: str) -> None:
    assert sspine.platform == "nxos" and {i.cable_m for i in sspine.interfaces} == {300}
    assert sspine.interfaces and all(i.cable_m == 300 for i in sspine.interfaces)
    assert "policy-map type queuing QOS_INGRESS_PAUSE_400G_300M\n  class type queuing c-in-q3\n" in text
    for itf in sspine.interfaces:
        assert "service-policy type queuing input QOS_INGRESS_PAUSE_400G_300M" in interface_block(text, itf.name)
    assert check_nxos_text(text, sspine.hostname, plan) == []


def test_thresholds_follow_the_headroom_physics(plan: Plan, sspine: Switch, text: str) -> None:
    (m,) = PAUSE.findall(text)
    size, pause, resume = (int(x) for x in m)
    prof = plan.qos_profiles[sspine.interfaces[0].qos_profile]
    assert prof.cable_m == 300 and prof.speed == 400
    cell = capabilities("nxos").buffer_cell_bytes
    assert cell == 208 and size % cell == pause % cell == resume % cell == 0
    # Cisco's PFC guide: small pause / resume thresholds (its example's 46800 / 34320 B, 225 / 165 cells),
    # not derived from ECN (an egress threshold); above the pause point the cable headroom of this speed,
    # cable and MTU (size - xon), rounded up to cells
    assert (pause, resume) == (46800, 34320)
    assert prof.size - prof.xon <= size - pause < prof.size - prof.xon + cell
    assert pause < prof.ecn_max  # the old rule (pause above ECN max) made these ~30x Cisco's example
    # 300 m of 400G fibre holds ~150 KB each way: the headroom is far above a 30 m port's
    short = nxos.pause_buffer(plan.qos_profiles["pg_lossless_400000_30m_profile"], 3, cell)
    assert size - pause > 2 * (short.buffer_size - short.pause_threshold)


def test_short_cables_get_none(plan: Plan, sspine: Switch) -> None:
    """Pause buffers are optional up to 100 m: the example's 30 m NX-OS spines carry none."""
    example = load_plan(EXAMPLE)
    spine = example.switches["ai256-spine01"]
    assert max(i.cable_m for i in spine.interfaces) <= 100
    t = nxos.render(spine, example, environment())["nxos.cfg"]
    assert "pause buffer-size" not in t and "type queuing input" not in t


def test_only_the_long_ports_of_a_switch(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """NX-OS spines in the 3-tier example: their 30 m leaf ports stay default, their 300 m uplinks get buffers."""
    import yaml

    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import build_plan

    data = yaml.safe_load(THREE_TIER.read_text(encoding="utf-8"))
    data["platforms"]["spine"] = "nxos"
    p = build_plan(Intent.model_validate(data))
    spine = p.by_role("spine")[0]
    t = nxos.render(spine, p, environment())["nxos.cfg"]
    for itf in spine.interfaces:
        has = "service-policy type queuing input QOS_INGRESS_PAUSE_400G_300M" in interface_block(t, itf.name)
        assert has == (itf.tier == "spine_super_spine"), itf.name
    assert check_nxos_text(t, spine.hostname, p) == []


# --------------------------------------------------------------------------- the check


def _edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize(("edit", "words"), [
    (lambda t: t.replace("  service-policy type queuing input QOS_INGRESS_PAUSE_400G_300M\n", "", 1),
     "cable over 100 m but no ingress queuing policy"),
    (lambda t: PAUSE.sub(lambda m: m.group(0).replace(f"buffer-size {m.group(1)}",
                                                     f"buffer-size {int(m.group(2)) + 100000}"), t),
     "B of headroom above the pause threshold, the plan needs"),
    (lambda t: PAUSE.sub(lambda m: m.group(0).replace(f"resume-threshold {m.group(3)}",
                                                     f"resume-threshold {m.group(2)}"), t),
     "is not below pause-threshold"),
    (lambda t: PAUSE.sub(lambda m: m.group(0).replace(f"resume-threshold {m.group(3)}", "resume-threshold 99999"), t),
     "is not below pause-threshold"),
])
def test_check_catches_broken_pause_buffers(plan: Plan, sspine: Switch, text: str, edit, words: str) -> None:  # type: ignore[no-untyped-def]
    findings = check_nxos_text(edit(text), sspine.hostname, plan, "nxos.cfg")
    assert findings and {f.rule for f in findings} == {"nxos-pause-buffer"}, findings
    assert all(words in f.message for f in findings), findings


def test_missing_policy_is_reported_without_a_plan_too(sspine: Switch, text: str) -> None:
    broken = _edit(text, "policy-map type queuing QOS_INGRESS_PAUSE_400G_300M\n",
                   "policy-map type queuing QOS_INGRESS_PAUSE_400G_30M\n")
    findings = check_nxos_text(broken, sspine.hostname, None, "nxos.cfg")
    assert {f.rule for f in findings} == {"nxos-undefined-ref"}
    attached = [f for f in findings if "attaches policy-map type queuing QOS_INGRESS_PAUSE_400G_300M" in f.message]
    assert len(attached) == len(sspine.interfaces)
    # and the renamed policy, attached nowhere, is read as an egress policy: c-in-q3 is not an egress class
    (other,) = [f for f in findings if f not in attached]
    assert "uses class c-in-q3" in other.message


# --------------------------------------------------------------------------- the no-drop budget


def test_no_rule_ties_the_pause_threshold_to_ecn(plan: Plan, sspine: Switch, text: str) -> None:
    """A pause threshold far below the ECN maximum is Cisco's own example, not a finding: ECN is an egress
    queue threshold, the pause trigger a per-ingress class fill level (reference §5.4)."""
    prof = plan.qos_profiles[sspine.interfaces[0].qos_profile]
    cisco = PAUSE.sub("    pause buffer-size 489216 pause-threshold 46800 resume-threshold 34320", text)
    assert prof.ecn_max > 46800
    assert check_nxos_text(cisco, sspine.hostname, plan, "nxos.cfg") == []
    from fabricgen.catalog.rules import rule

    assert "ECN maximum" not in rule("nxos-pause-buffer").doc and "never compared with ECN" in rule(
        "nxos-pause-buffer").doc


def _example_300m() -> Plan:
    import yaml

    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import build_plan

    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["cabling"]["leaf_spine_m"] = 300
    return build_plan(Intent.model_validate(data))


def test_300m_and_three_tier_examples_reserve_within_each_models_budget(plan: Plan) -> None:
    """Before: 114 MB on a 32-port 300 m spine and 170 MB on the 3-tier super-spine, more than a 25.6T switch's
    whole buffer.  Now the cable headroom plus Cisco's small thresholds, well within the model's budget."""
    from fabricgen.platforms.nxos.buffers import reservations

    for p, most in ((_example_300m(), 20_000_000), (plan, 30_000_000)):
        found = reservations(p)
        assert found
        for host, (reserved, budget, _) in found.items():
            assert 0 < reserved <= most < budget, host


def test_budget_check_refuses_an_over_budget_plan(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """5 km super-spine links: ~5 MB of headroom per port, 48 ports: above the 120 MB the model is held to.
    The plan is refused with the file, the line of the cable length, and a fix."""
    import yaml

    from fabricgen.errors import FabricError
    from fabricgen.plan.build import load_plan

    data = yaml.safe_load(THREE_TIER.read_text(encoding="utf-8"))
    data["cabling"]["spine_super_spine_m"] = 5000
    path = tmp_path / "fabric.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(FabricError) as exc:
        load_plan(path)
    (problem, *_) = exc.value.problems
    assert problem.path == "cabling.spine_super_spine_m" and problem.line is not None
    text = path.read_text(encoding="utf-8").splitlines()
    assert "spine_super_spine_m" in text[problem.line - 1]
    assert "MB of no-drop buffer" in problem.message and "above its 120 MB" in problem.message
    assert "shorten those cables" in (problem.hint or "")


def test_bfd_echo_is_off_toward_peers_that_are_not_nxos() -> None:
    """NX-OS runs BFD echo by default; toward FRR / SONiC / EOS peers it renders `no bfd echo`
    (FRRouting/frr#18459), toward another NX-OS switch it keeps echo."""
    import yaml

    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import build_plan

    example = load_plan(EXAMPLE)  # SONiC leaves, NX-OS spines
    spine = example.switches["ai256-spine01"]
    t = nxos.render(spine, example, environment())["nxos.cfg"]
    for itf in spine.interfaces:
        assert "no bfd echo" in interface_block(t, itf.name), itf.name
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    data["platforms"]["leaf"] = "nxos"
    data["switch_models"]["leaf"] = {"model": "N9364D-GX2A", "ports": 64, "port_speed": "400G"}
    all_nxos = build_plan(Intent.model_validate(data))
    t = nxos.render(all_nxos.switches["ai256-spine01"], all_nxos, environment())["nxos.cfg"]
    assert "no bfd echo" not in t and "\nfeature bfd\n" in t
