"""SONiC YANG check: a realistic RoCE leaf config_db passes; each mutation is reported at its config_db path."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabricgen.base.findings import Finding
from fabricgen.check.configdb_to_yang import pointer
from fabricgen.check.sonic_yang import SonicYangValidator, check_sonic_configs, device_name
from fabricgen.check.yang_models import SonicYangSetupError

FIXTURE = Path(__file__).parent / "fixtures" / "roce_leaf_config_db.json"
# Every table the SONiC renderer emits (the brief's list); LOOPBACK has no YANG model.
RENDERED_TABLES = {
    "DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "BGP_NEIGHBOR", "DSCP_TO_TC_MAP",
    "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "PORT_QOS_MAP", "QUEUE",
    "SCHEDULER", "WRED_PROFILE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH",
    "PFC_WD", "SWITCH_HASH", "FLEX_COUNTER_TABLE", "DEVICE_NEIGHBOR",
}  # fmt: skip


@pytest.fixture(scope="module")
def yang(sonic_yang_models: Path) -> Path:
    return sonic_yang_models


@pytest.fixture(scope="module")
def validator(yang: Path) -> SonicYangValidator:
    return SonicYangValidator(yang)


def leaf() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def check(validator: SonicYangValidator, db: dict[str, Any]) -> list[Finding]:
    return validator.validate(db, device_name(db, FIXTURE), "config_db.json")


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


# --------------------------------------------------------------------------- the valid leaf


def test_fixture_covers_every_rendered_table() -> None:
    assert set(leaf()) == RENDERED_TABLES


def test_roce_leaf_fixture_passes(validator: SonicYangValidator) -> None:
    assert check(validator, leaf()) == []


def test_fixture_is_the_roce_contract() -> None:
    db = leaf()
    assert db["DSCP_TO_TC_MAP"]["AI"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["AI"]["48"] == "6"
    assert len(db["DSCP_TO_TC_MAP"]["AI"]) == 64
    assert all(q["pfc_enable"] == "3" for k, q in db["PORT_QOS_MAP"].items() if k != "global")
    assert db["SCHEDULER"][db["QUEUE"]["Ethernet0|6"]["scheduler"]]["type"] == "STRICT"
    assert db["QUEUE"]["Ethernet0|3"]["wred_profile"] in db["WRED_PROFILE"]


# --------------------------------------------------------------------------- mutations


def _set(table: str, key: str, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(db: dict[str, Any]) -> None:
        db[table][key][field] = value

    return mutate


# The catalogue of mutations (also applied to one switch of a family in test_sonic_shapes.py).
MUTATIONS: dict[str, tuple[Callable[[dict[str, Any]], None], str, list[str]]] = dict(zip(
    ["mtu-range", "qos-map-leafref", "queue-scheduler-leafref", "weight-range", "wred-must", "pfcwd-must",
     "metadata-type", "pg-profile-union", "fec-pattern", "map-value", "cable-length", "unknown-field", "boolean"],
    [
        (_set("PORT", "Ethernet0", "mtu", "9300"), "/PORT/Ethernet0/mtu", ["9300", "68..9216"]),
        (_set("PORT_QOS_MAP", "Ethernet8", "dscp_to_tc_map", "NOPE"), "/PORT_QOS_MAP/Ethernet8/dscp_to_tc_map",
         ["NOPE", "DSCP_TO_TC_MAP"]),
        (_set("QUEUE", "Ethernet0|3", "scheduler", "sched_missing"), "/QUEUE/Ethernet0|3/scheduler",
         ["sched_missing", "SCHEDULER"]),
        (_set("SCHEDULER", "scheduler.roce", "weight", "0"), "/SCHEDULER/scheduler.roce/weight", ["1..100"]),
        (_set("WRED_PROFILE", "ROCE_LOSSLESS_ECN", "green_max_threshold", "1000"),
         "/WRED_PROFILE/ROCE_LOSSLESS_ECN/green_max_threshold", ["max threshold"]),
        (_set("PFC_WD", "Ethernet0", "detection_time", "150"), "/PFC_WD/Ethernet0/detection_time", ["POLL_INTERVAL"]),
        (_set("DEVICE_METADATA", "localhost", "type", "BackendLeafRouter"), "/DEVICE_METADATA/localhost/type",
         ["BackendLeafRouter"]),
        (_set("BUFFER_PG", "Ethernet0|3", "profile", "no_such_profile"), "/BUFFER_PG/Ethernet0|3/profile",
         ["BUFFER_PROFILE", "NULL"]),
        (_set("PORT", "Ethernet0", "fec", "bogus"), "/PORT/Ethernet0/fec", ["bogus"]),
        (_set("DSCP_TO_TC_MAP", "AI", "26", "16"), "/DSCP_TO_TC_MAP/AI/26", ["Traffic Class"]),
        (_set("CABLE_LENGTH", "AZURE", "Ethernet0", "40"), "/CABLE_LENGTH/AZURE/Ethernet0", ["cable length"]),
        (_set("PORT", "Ethernet0", "foo", "1"), "/PORT/Ethernet0/foo", ["unknown field"]),
        (_set("WRED_PROFILE", "ROCE_LOSSLESS_ECN", "wred_green_enable", "yes"),
         "/WRED_PROFILE/ROCE_LOSSLESS_ECN/wred_green_enable", ["'true' or 'false'"]),
    ], strict=True))  # fmt: skip


@pytest.mark.parametrize(("mutate", "location", "words"), MUTATIONS.values(), ids=list(MUTATIONS))
def test_mutation_is_reported_at_its_path(
    validator: SonicYangValidator, mutate: Callable[[dict[str, Any]], None], location: str, words: list[str]
) -> None:
    db = leaf()
    mutate(db)
    found = errors(check(validator, db))
    assert [f.location for f in found] == [location], found
    assert all(w in found[0].message for w in words), found[0].message
    assert found[0].rule == "sonic-yang" and found[0].device == "leaf1" and found[0].file == "config_db.json"


def test_unknown_table_is_an_error_not_a_pass(validator: SonicYangValidator) -> None:
    db = leaf()
    db["FOO_TABLE"] = {"x": {"a": "b"}}
    found = check(validator, db)
    assert [(f.location, f.severity) for f in found] == [("/FOO_TABLE", "error")]
    assert "not covered" in found[0].message


def test_loopback_table_has_no_model(validator: SonicYangValidator) -> None:
    db = leaf()
    db["LOOPBACK"] = {"Loopback0": {}}
    assert [f.location for f in errors(check(validator, db))] == ["/LOOPBACK"]


def test_two_errors_in_one_file_are_both_reported(validator: SonicYangValidator) -> None:
    db = leaf()
    db["PORT"]["Ethernet0"]["mtu"] = "9300"
    db["QUEUE"]["Ethernet8|3"]["scheduler"] = "sched_missing"
    db["PORT"]["Ethernet16"]["fec"] = "bogus"
    found = errors(check(validator, db))
    assert sorted(f.location for f in found) == [
        "/PORT/Ethernet0/mtu",
        "/PORT/Ethernet16/fec",
        "/QUEUE/Ethernet8|3/scheduler",
    ]


def test_missing_mandatory_field_reported_once_without_cascade(validator: SonicYangValidator) -> None:
    db = leaf()
    del db["PORT"]["Ethernet0"]["lanes"]  # the PORT entry is dropped; QUEUE/PFC_WD/... still point at it
    found = errors(check(validator, db))
    assert [(f.location, f.message) for f in found] == [("/PORT/Ethernet0/lanes", "mandatory field 'lanes' is missing")]


def test_bad_key_is_located_at_the_entry(validator: SonicYangValidator) -> None:
    db = leaf()
    db["PORT_QOS_MAP"]["Ethernet0,Ethernet8"] = {"pfc_enable": "3"}  # comma keys are not ports
    db["WRED_PROFILE"]["ROCE.ECN"] = {"ecn": "ecn_all"}  # name pattern
    found = errors(check(validator, db))
    assert sorted(f.location for f in found) == ["/PORT_QOS_MAP/Ethernet0,Ethernet8", "/WRED_PROFILE/ROCE.ECN"]


def test_ip_prefix_keys_are_json_pointer_escaped(validator: SonicYangValidator) -> None:
    db = leaf()
    del db["INTERFACE"]["Ethernet0"]  # the bare interface entry is required by the ip-prefix entries
    found = errors(check(validator, db))
    assert [f.location for f in found] == ["/INTERFACE/Ethernet0|198.18.0.1~131"]
    assert pointer("INTERFACE", "Ethernet0|198.18.0.1/31") == "/INTERFACE/Ethernet0|198.18.0.1~131"


def test_loopback_interface_needs_its_bare_entry(validator: SonicYangValidator) -> None:
    db = leaf()
    del db["LOOPBACK_INTERFACE"]["Loopback0"]
    found = errors(check(validator, db))
    assert [f.location for f in found] == ["/LOOPBACK_INTERFACE/Loopback0|198.19.0.1~132"]


def test_bgp_neighbor_key_forms(validator: SonicYangValidator) -> None:
    db = leaf()
    session = {"asn": "65000", "name": "spine1", "local_addr": "198.18.0.1"}
    db["BGP_NEIGHBOR"] = {"default|198.18.0.0": session}  # BGP_NEIGHBOR_LIST: needs BGP_GLOBALS|default
    found = errors(check(validator, db))
    assert [f.location for f in found] == ["/BGP_NEIGHBOR/default|198.18.0.0"]
    assert "BGP_GLOBALS" in found[0].message
    db["BGP_GLOBALS"] = {"default": {"local_asn": "65101", "router_id": "198.19.0.1"}}
    assert check(validator, db) == []
    db["BGP_NEIGHBOR"] = {"198.18.0.0|x|y": session}
    assert "does not fit" in errors(check(validator, db))[0].message


def test_values_are_typed_from_the_schema(validator: SonicYangValidator) -> None:
    db = leaf()
    db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = "SRC_IP,DST_IP"  # leaf-list as a comma string is accepted too
    db["PORT"]["Ethernet0"]["adv_speeds"] = "400000,200000"  # union of uint32 and "all"
    db["PORT"]["Ethernet8"]["adv_speeds"] = "all"
    db["DEVICE_METADATA"]["localhost"]["bgp_asn"] = "4200000000"  # uint32 as a JSON number
    db["BUFFER_POOL"]["ingress_lossless_pool"]["size"] = "68719476736"  # uint64 stays a string
    assert check(validator, db) == []


def test_non_string_values_warn_and_booleans_fail_like_redis(validator: SonicYangValidator) -> None:
    db = leaf()
    db["SCHEDULER"]["scheduler.roce"]["weight"] = 50
    found = check(validator, db)
    assert [(f.location, f.severity) for f in found] == [("/SCHEDULER/scheduler.roce/weight", "warning")]
    db = leaf()
    db["WRED_PROFILE"]["ROCE_LOSSLESS_ECN"]["wred_green_enable"] = True  # sonic-cfggen stores "True"
    found = check(validator, db)
    assert {f.severity for f in found} == {"warning", "error"}
    assert {f.location for f in found} == {"/WRED_PROFILE/ROCE_LOSSLESS_ECN/wred_green_enable"}


def test_validator_is_reusable_and_input_untouched(validator: SonicYangValidator) -> None:
    db = leaf()
    db["PORT"]["Ethernet0"]["mtu"] = "9300"
    before = copy.deepcopy(db)
    first = check(validator, db)
    assert db == before
    assert check(validator, leaf()) == []
    assert check(validator, db) == first


# --------------------------------------------------------------------------- files, devices, setup


def write_db(root: Path, device: str, db: Any) -> Path:
    path = root / device / "config_db.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(db if isinstance(db, str) else json.dumps(db, indent=2))
    return path


def test_device_name_from_metadata_else_directory(tmp_path: Path) -> None:
    assert device_name(leaf(), tmp_path / "x" / "config_db.json") == "leaf1"
    assert device_name({"PORT": {}}, tmp_path / "leaf9" / "config_db.json") == "leaf9"


def test_check_files_in_process_and_in_a_pool(tmp_path: Path, yang: Path) -> None:
    bad = leaf()
    bad["PORT"]["Ethernet0"]["mtu"] = "9300"
    del bad["DEVICE_METADATA"]["localhost"]["hostname"]
    paths = [write_db(tmp_path, "leaf1", leaf()), write_db(tmp_path, "leaf2", bad)]
    paths.append(write_db(tmp_path, "leaf3", '{"PORT": {\n  "Ethernet0": }'))
    expected = [
        Finding("leaf2", str(paths[1]), "/PORT/Ethernet0/mtu", "sonic-yang",
                'Unsatisfied range - value "9300" is out of the allowed range (expected uint16 68..9216)'),
        Finding("leaf3", str(paths[2]), "L2", "sonic-yang", "not valid JSON: Expecting value"),
    ]  # fmt: skip
    assert check_sonic_configs(paths, yang, workers=1) == expected
    assert check_sonic_configs(paths, yang, workers=2) == expected


def test_plain_sonic_checkout_gets_its_templates_rendered(yang: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "sonic-buildimage" / "src" / "sonic-yang-models"
    checkout.mkdir(parents=True)
    (checkout / "yang-models").symlink_to(yang / "yang-models")
    shutil.copytree(yang / "yang-templates", checkout / "yang-templates")  # no yang-rendered/ upstream
    validator = SonicYangValidator(tmp_path / "sonic-buildimage")
    assert validator.yang_dir == checkout
    assert check(validator, leaf()) == []


def test_bad_key_value_names_the_right_entry(validator: SonicYangValidator) -> None:
    """libyang names only the keys parsed so far; the entry whose key is invalid must be the one reported."""
    db = leaf()
    db["BUFFER_PG"]["Ethernet0|8"] = {"profile": "ingress_lossy_profile"}  # PGs are 0-7; Ethernet0|0 and |3 are fine
    db["MAP_PFC_PRIORITY_TO_QUEUE"]["AI"]["8"] = "0"  # a bad key inside a map entry
    found = errors(check(validator, db))
    assert sorted(f.location for f in found) == ["/BUFFER_PG/Ethernet0|8", "/MAP_PFC_PRIORITY_TO_QUEUE/AI/8"]


def test_errors_that_follow_from_a_reported_one_are_not_repeated(validator: SonicYangValidator) -> None:
    db = leaf()
    db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] = "1001"  # every port's detection_time >= POLL_INTERVAL must then fails
    db["WRED_PROFILE"]["ROCE.ECN"] = {"ecn": "ecn_all"}
    db["QUEUE"]["Ethernet0|4"] = {"wred_profile": "ROCE.ECN"}  # dangling only because the profile is dropped
    found = errors(check(validator, db))
    assert sorted(f.location for f in found) == ["/PFC_WD/GLOBAL/POLL_INTERVAL", "/WRED_PROFILE/ROCE.ECN"]


def test_a_broken_model_is_a_setup_error_naming_the_module(yang: Path, tmp_path: Path) -> None:
    models = tmp_path / "yang-models"
    models.mkdir()
    for f in (yang / "yang-models").glob("*.yang"):
        (models / f.name).symlink_to(f)
    (tmp_path / "yang-rendered").symlink_to(yang / "yang-rendered")
    (models / "sonic-broken.yang").write_text("module sonic-broken { namespace x; prefix b; leaf }\n")
    with pytest.raises(SonicYangSetupError, match="sonic-broken.yang"):
        SonicYangValidator(tmp_path)
