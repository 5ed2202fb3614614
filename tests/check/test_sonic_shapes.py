"""The ConfigDB shape shortcut (check.sonic_shapes) reports exactly what validating every file reports: on
rendered fabrics, on a family of switches that differ only in their per-switch values, and with every mutation
of the YANG check's catalogue (and mutations of the renamed values themselves) applied to one of them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricgen.base.findings import Finding, sorted_findings
from fabricgen.check import run
from fabricgen.check.sonic_shapes import Shapes
from fabricgen.check.sonic_yang import SonicYangValidator, check_sonic_file, device_name
from fabricgen.plan.build import load_plan
from fabricgen.platforms.sonic.buffers import device_base
from fabricgen.render.build import render_all
from tests.check.test_sonic_yang import FIXTURE, MUTATIONS
from tests.conftest import EXAMPLE, ROOT

pytestmark = pytest.mark.usefixtures("sonic_yang_models")


@pytest.fixture(scope="module")
def validator(sonic_yang_models: Path) -> SonicYangValidator:
    return SonicYangValidator(sonic_yang_models)


def member(i: int) -> dict[str, Any]:
    """Switch i of a family: the fixture leaf with its own name, ASN, router id, addresses and descriptions."""
    text = FIXTURE.read_text()
    text = text.replace('"leaf1"', f'"leaf{i}"').replace('"65101"', f'"{65100 + i}"')
    text = text.replace("198.19.0.1", f"198.19.0.{i}").replace("198.18.0.", f"198.18.{i}.")
    text = re.sub(r'("description": "spine\d+:Ethernet)0"', rf'\g<1>{8 * i}"', text)
    db: dict[str, Any] = json.loads(text)
    return db


def both(validator: SonicYangValidator, dbs: list[Any]) -> tuple[list[Finding], list[Finding], Shapes]:
    """(every file validated, the shortcut's findings, the Shapes used)."""
    shapes = Shapes(validator)
    names = [(device_name(db, Path(f"sw{i}/config_db.json")), f"sw{i}/config_db.json") for i, db in enumerate(dbs)]
    full = [f for db, (dev, file) in zip(dbs, names, strict=True) for f in validator.validate(db, dev, file)]
    short = [f for db, (dev, file) in zip(dbs, names, strict=True) for f in shapes.validate(db, dev, file)]
    return full, short, shapes


def test_a_family_of_switches_is_one_shape(validator: SonicYangValidator) -> None:
    family = [member(i) for i in range(1, 7)]
    assert len({json.dumps(db) for db in family}) == 6
    full, short, shapes = both(validator, family)
    assert full == short == []
    assert (shapes.validated, shapes.skipped) == (1, 5)


def test_the_renaming_is_the_stated_one(validator: SonicYangValidator) -> None:
    """The per-switch values are renamed; values a must or when reads, and leafref ends, are kept."""
    shapes = Shapes(validator)
    db = member(1)
    structure: dict[tuple[str, str], set[str]] = {}
    for table, entries in db.items():
        if table in validator.tables:
            structure.update(shapes._table_structure(table, entries))
    opaque = shapes._opaque(structure)
    for leaf in [("DEVICE_METADATA", "localhost", "hostname"), ("DEVICE_METADATA", "localhost", "bgp_asn"),
                 ("DEVICE_METADATA", "localhost", "bgp_router_id"), ("PORT", "PORT_LIST", "description"),
                 ("INTERFACE", "INTERFACE_IPPREFIX_LIST", "ip-prefix"),
                 ("LOOPBACK_INTERFACE", "LOOPBACK_INTERFACE_IPPREFIX_LIST", "ip-prefix")]:
        assert leaf in opaque, leaf
    assert opaque[("INTERFACE", "INTERFACE_IPPREFIX_LIST", "ip-prefix")] is True  # a key: equality counts
    assert opaque[("PORT", "PORT_LIST", "description")] is False
    for kept in [("PORT", "PORT_LIST", "name"),  # leafref target
                 ("WRED_PROFILE", "WRED_PROFILE_LIST", "green_max_threshold"),  # a must compares it
                 ("PFC_WD", "PFC_WD_LIST", "detection_time"),  # a must on itself
                 ("PORT_QOS_MAP", "PORT_QOS_MAP_LIST", "dscp_to_tc_map")]:  # a leafref
        assert kept not in opaque, kept


def _family_with(mutate: Callable[[dict[str, Any]], None], at: int = 3) -> list[dict[str, Any]]:
    family = [member(i) for i in range(1, 6)]
    mutate(family[at])
    return family


@pytest.mark.parametrize(("mutate", "location", "words"), MUTATIONS.values(), ids=list(MUTATIONS))
def test_every_catalogue_mutation_is_found_with_the_shortcut(
    validator: SonicYangValidator, mutate: Callable[[dict[str, Any]], None], location: str, words: list[str]
) -> None:
    family = _family_with(mutate)
    full, short, _ = both(validator, family)
    assert short == full
    assert [f.location for f in short if f.severity == "error"] == [location]
    assert {f.device for f in short} == {"leaf4"}


def _put(table: str, key: str, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(db: dict[str, Any]) -> None:
        db[table][key][field] = value

    return mutate


def _rekey(table: str, old: str, new: str) -> Callable[[dict[str, Any]], None]:
    def mutate(db: dict[str, Any]) -> None:
        key = next(k for k in db[table] if k.startswith(old))
        db[table] = {(new if k == key else k): v for k, v in db[table].items()}

    return mutate


def _same_prefix_twice(db: dict[str, Any]) -> None:
    """Two interfaces with one address: the renamed key keeps the equality, libyang finds no key clash here
    (the keys differ by interface), the shortcut must agree either way."""
    first = next(k for k in db["INTERFACE"] if "|" in k)
    second = next(k for k in db["INTERFACE"] if "|" in k and not k.startswith(first.split("|")[0] + "|"))
    db["INTERFACE"][second.split("|")[0] + "|" + first.split("|")[1]] = db["INTERFACE"].pop(second)


# Mutations of the values the renaming replaces: each is valid-and-canonical or not, alone or against others.
RENAMED = {
    "hostname-bad": _put("DEVICE_METADATA", "localhost", "hostname", "leaf 4!"),
    "hostname-long": _put("DEVICE_METADATA", "localhost", "hostname", "x" * 300),
    "asn-range": _put("DEVICE_METADATA", "localhost", "bgp_asn", "4294967296"),
    "asn-not-canonical": _put("DEVICE_METADATA", "localhost", "bgp_asn", "0065104"),
    "router-id-bad": _put("DEVICE_METADATA", "localhost", "bgp_router_id", "300.1.1.1"),
    "description-long": _put("PORT", "Ethernet0", "description", "d" * 300),
    "description-number": _put("PORT", "Ethernet0", "description", 7),
    "prefix-bad": _rekey("INTERFACE", "Ethernet0|", "Ethernet0|198.18.4.1/33"),
    "prefix-not-canonical": _rekey("INTERFACE", "Ethernet0|", "Ethernet0|2001:DB8::1/127"),
    "prefix-shared": _same_prefix_twice,
    "loopback-bad": _rekey("LOOPBACK_INTERFACE", "Loopback0|", "Loopback0|198.19.0.999/32"),
    "loopback-v6": _rekey("LOOPBACK_INTERFACE", "Loopback0|", "Loopback0|2001:db8::4/128"),
    "neighbor-name-long": _put("DEVICE_NEIGHBOR", "Ethernet0", "name", "n" * 300),
}


@pytest.mark.parametrize("mutate", RENAMED.values(), ids=list(RENAMED))
def test_mutated_renamed_values_are_found_with_the_shortcut(
    validator: SonicYangValidator, mutate: Callable[[dict[str, Any]], None]
) -> None:
    for at in (0, 3):  # the first of its shape and a later one
        family = _family_with(mutate, at)
        full, short, _ = both(validator, family)
        assert short == full


def test_a_shape_with_findings_is_validated_file_by_file(validator: SonicYangValidator) -> None:
    """The same fault on every switch: each file's findings are its own (device, values), none copied."""
    family = [member(i) for i in range(1, 5)]
    for db in family:
        db["PORT"]["Ethernet0"]["mtu"] = "9300"
    full, short, shapes = both(validator, family)
    assert short == full and shapes.validated == 4
    assert [f.device for f in short] == ["leaf1", "leaf2", "leaf3", "leaf4"]


@pytest.mark.parametrize("intent", [EXAMPLE, ROOT / "inventory" / "examples" / "three-tier.yaml"],
                         ids=["example", "three-tier"])
def test_rendered_fabric_shortcut_equals_every_file(
    validator: SonicYangValidator, intent: Path, tmp_path: Path
) -> None:
    """A rendered fabric, clean and then with faults in some files: the same findings either way."""
    plan = load_plan(intent)
    render_all(plan, tmp_path, workers=1)
    files = run.files_by_check(plan, tmp_path / "configs")["sonic-yang"]
    assert len(files) > 4
    for broken in ((), (1, len(files) - 1)):
        for i in broken:
            db = json.loads(files[i][1].read_text())
            db["PORT"][next(iter(db["PORT"]))]["description"] = "z" * 300
            db["DEVICE_METADATA"]["localhost"]["bgp_asn"] = "70000000000"
            files[i][1].write_text(json.dumps(db))
        shapes = Shapes(validator)
        bases = [device_base(plan, plan.switches[h]) for h, _ in files]
        full = [check_sonic_file(validator, p, b) for (_, p), b in zip(files, bases, strict=True)]
        short = [check_sonic_file(validator, p, b, shapes.validate) for (_, p), b in zip(files, bases, strict=True)]
        assert short == full
        assert [bool(f) for f in full] == [i in broken for i in range(len(files))]
        assert shapes.validated <= len({plan.switches[h].role for h, _ in files}) + len(broken)


def test_run_checks_with_and_without_shapes(tmp_path: Path) -> None:
    plan = load_plan(ROOT / "inventory" / "examples" / "three-tier.yaml")
    render_all(plan, tmp_path, workers=1)
    sonic = [p for _, p in run.files_by_check(plan, tmp_path / "configs")["sonic-yang"]]
    db = json.loads(sonic[2].read_text())
    db["PORT"][next(iter(db["PORT"]))]["mtu"] = "jumbo"
    sonic[2].write_text(json.dumps(db))
    args = (plan, tmp_path / "configs", tmp_path / "hosts")
    shaped = run.run_checks(*args, workers=1, cache=False, skip=frozenset({"frr-parse"}))
    every = run.run_checks(*args, workers=1, cache=False, skip=frozenset({"frr-parse"}), yang_shapes=False)
    assert sorted_findings(shaped) == sorted_findings(every)
    assert [f.file for f in shaped if f.rule == "sonic-yang"] == [str(sonic[2])]
