"""validate's `hash` rule: each platform's live ECMP hash settings read back by its driver from recorded
output (hash_samples/ says where each comes from) and compared with what the plan renders."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.base.templating import environment
from fabricgen.catalog.registry import platform
from fabricgen.plan.build import load_plan
from fabricgen.plan.model import Plan
from fabricgen.platforms.frr.health import parse_kernel_hash
from fabricgen.platforms.frr.render import kernel_hash
from fabricgen.platforms.nxos.health import parse_ip_load_sharing
from fabricgen.validate.checks import check_hash
from fabricgen.validate.collect import hash_coverage, hash_outcomes
from tests.conftest import EXAMPLE, ROOT
from tests.validate.health.test_replayed import Replay, driver_for

SAMPLES = Path(__file__).resolve().parent / "hash_samples"


def sample(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((SAMPLES / name).read_text()))


@pytest.fixture(scope="module")
def example() -> Plan:
    return load_plan(EXAMPLE)


@pytest.fixture(scope="module")
def frr_lab() -> Plan:
    return load_plan(ROOT / "inventory" / "lab" / "fabric.yaml")


def failures(outcomes: list[Any]) -> dict[str, tuple[str, str]]:
    return {o.item: (o.expected, o.actual) for o in outcomes if not o.ok}


# --------------------------------------------------------------------------- Linux + FRR: the kernel


def test_kernel_hash_is_policy_1_for_the_5_tuple_and_custom_fields_otherwise() -> None:
    five = ("src-ip", "dst-ip", "l4-src-port", "l4-dst-port", "ip-protocol")
    assert kernel_hash(five) == {"net.ipv4.fib_multipath_hash_policy": "1", "net.ipv6.fib_multipath_hash_policy": "1"}
    # src-ip 0x01 + dst-ip 0x02 + l4-src-port 0x10 + l4-dst-port 0x20 (include/net/ip_fib.h)
    custom = kernel_hash(("src-ip", "dst-ip", "l4-src-port", "l4-dst-port"))
    assert custom["net.ipv4.fib_multipath_hash_policy"] == custom["net.ipv6.fib_multipath_hash_policy"] == "3"
    assert custom["net.ipv4.fib_multipath_hash_fields"] == custom["net.ipv6.fib_multipath_hash_fields"] == "51"


def test_kernel_output_parses_decimal_and_hex() -> None:
    doc = sample("linux_sysctl.yaml")
    assert parse_kernel_hash(doc["defaults"])["net.ipv4.fib_multipath_hash_fields"] == "7"
    assert parse_kernel_hash(doc["custom_hex"])["net.ipv6.fib_multipath_hash_fields"] == str(0x37)


def test_frr_switch_at_kernel_defaults_is_named(frr_lab: Plan) -> None:
    """A kernel left at policy 0 hashes addresses only: every RoCE flow of a GPU pair takes one path."""
    sw = frr_lab.by_role("leaf")[0]
    replay = Replay({"before": {}})
    device = driver_for("frr", replay)
    from fabricgen.platforms.frr.health import KERNEL_HASH_COMMAND

    replay.reads["before"][KERNEL_HASH_COMMAND] = sample("linux_sysctl.yaml")["defaults"]
    found = hash_outcomes(frr_lab, sw, device)
    assert failures(found) == {"net.ipv4.fib_multipath_hash_policy": ("1", "0"),
                               "net.ipv6.fib_multipath_hash_policy": ("1", "0")}
    assert all(o.device == sw.hostname and o.check == "hash" for o in found)
    replay.reads["before"][KERNEL_HASH_COMMAND] = "\n".join(
        f"{k.replace('.', '/')} {v}" for k, v in kernel_hash(frr_lab.settings.hash_fields).items())
    assert all(o.ok for o in hash_outcomes(frr_lab, sw, device))


def test_a_setting_the_kernel_does_not_show_is_named_as_such(frr_lab: Plan) -> None:
    sw = frr_lab.by_role("leaf")[0]
    plan = dataclasses.replace(frr_lab, settings=dataclasses.replace(
        frr_lab.settings, hash_fields=("src-ip", "dst-ip", "l4-src-port", "l4-dst-port")))
    out = check_hash(sw, kernel_hash(plan.settings.hash_fields), {"net.ipv4.fib_multipath_hash_policy": "3",
                                                                  "net.ipv6.fib_multipath_hash_policy": "3"})
    assert failures(out) == {"net.ipv4.fib_multipath_hash_fields": ("51", "not shown by the switch"),
                             "net.ipv6.fib_multipath_hash_fields": ("51", "not shown by the switch")}


# --------------------------------------------------------------------------- SONiC: the running ConfigDB


def running_config_db(plan: Plan, host: str) -> dict[str, Any]:
    sw = plan.switches[host]
    return dict(json.loads(platform(sw.platform).render_fn()(sw, plan, environment())["config_db.json"]))


def sonic_outcomes(plan: Plan, host: str, db: dict[str, Any]) -> list[Any]:
    replay = Replay({"before": {"show runningconfiguration all": json.dumps(db)}})
    return hash_outcomes(plan, plan.switches[host], driver_for("sonic", replay))


def test_sonic_running_configdb_as_rendered_passes(example: Plan) -> None:
    leaf = example.by_role("leaf")[0]
    assert leaf.platform == "sonic"
    found = sonic_outcomes(example, leaf.hostname, running_config_db(example, leaf.hostname))
    assert {o.item for o in found} == {"SWITCH_HASH|GLOBAL ecmp_hash", "SWITCH_HASH|GLOBAL ecmp_hash_algorithm",
                                       "DEVICE_METADATA|localhost type"}
    assert all(o.ok for o in found), failures(found)


def test_sonic_hash_fields_algorithm_and_type_differences_are_named(example: Plan) -> None:
    """A field dropped by hand, an algorithm the plan does not render, and a leaf typed as a spine (orchagent
    then gives it the spines' seed 25: consecutive hops hash alike) are each named."""
    leaf = example.by_role("leaf")[0]
    db = running_config_db(example, leaf.hostname)
    db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].remove("L4_DST_PORT")
    db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash_algorithm"] = "XOR"
    db["DEVICE_METADATA"]["localhost"]["type"] = "BackEndSpineRouter"
    got = failures(sonic_outcomes(example, leaf.hostname, db))
    assert got == {
        "SWITCH_HASH|GLOBAL ecmp_hash": ("DST_IP,IP_PROTOCOL,L4_DST_PORT,L4_SRC_PORT,SRC_IP",
                                         "DST_IP,IP_PROTOCOL,L4_SRC_PORT,SRC_IP"),
        "SWITCH_HASH|GLOBAL ecmp_hash_algorithm": ("not set", "XOR"),
        "DEVICE_METADATA|localhost type": ("BackEndLeafRouter", "BackEndSpineRouter"),
    }


# --------------------------------------------------------------------------- NX-OS: show ip load-sharing


def test_nxos_recorded_output_parses() -> None:
    assert parse_ip_load_sharing(sample("nxos_show_ip_load_sharing.yaml")["output"]) == {
        "universal-id": "316862977", "rotate": "32",
        "load-share mode": "address source-destination port source-destination"}


def test_nxos_spine_names_a_seed_it_does_not_run(example: Plan) -> None:
    """The recorded switch runs NX-OS's own random seed and default rotate 32: a spine the plan gives
    universal-id 25 with rotate 0 is named on both."""
    spine = example.by_role("spine")[0]
    assert spine.platform == "nxos"
    text = sample("nxos_show_ip_load_sharing.yaml")["output"]
    device = driver_for("nxos", Replay({"before": {"show ip load-sharing": text}}))
    found = hash_outcomes(example, spine, device)
    want = example.hashing["spine"]
    assert failures(found) == {"universal-id": (str(want.seed), "316862977"), "rotate": (str(want.rotate), "32")}
    assert "load-share mode" in {o.item for o in found if o.ok}
    fixed = text.replace("316862977", str(want.seed)).replace("Rotate: 32", f"Rotate: {want.rotate}")
    device = driver_for("nxos", Replay({"before": {"show ip load-sharing": fixed}}))
    assert all(o.ok for o in hash_outcomes(example, spine, device))


def test_nxos_rotate_is_compared_where_rendered(example: Plan) -> None:
    """A tier's rendered rotate (leaf: rotate 10 by default) is compared too."""
    spine = example.by_role("spine")[0]
    nxos_leaf = dataclasses.replace(spine, role="leaf")
    text = sample("nxos_show_ip_load_sharing.yaml")["output"]
    leaf_hash = example.hashing["leaf"]
    got = failures(hash_outcomes(example, nxos_leaf, driver_for("nxos", Replay({"before": {
        "show ip load-sharing": text}}))))
    assert not leaf_hash.per_switch and leaf_hash.rotate
    assert got["rotate"] == (str(leaf_hash.rotate), "32")


def test_platform_without_a_reader_gives_nothing(example: Plan) -> None:
    """EOS (no seed, no getter) and a driver without get_ecmp_hash are not read: no outcome, not a pass."""
    spine = example.by_role("spine")[0]
    eos = dataclasses.replace(spine, platform="eos")
    assert hash_outcomes(example, eos, object()) == []  # type: ignore[arg-type]
    assert hash_outcomes(example, spine, object()) == []  # type: ignore[arg-type]


def test_an_unread_platform_is_said_in_the_coverage(example: Plan) -> None:
    eos = dataclasses.replace(example, switches={h: dataclasses.replace(sw, platform="eos") if sw.role == "spine"
                                                 else sw for h, sw in example.switches.items()})
    spines = len(example.by_role("spine"))
    assert hash_coverage(eos, list(eos.switches)) == [
        f"ECMP hash: not read back on {spines} eos switch(es) (fabricgen has no reader for eos)"]
    assert hash_coverage(example, list(example.switches)) == []
