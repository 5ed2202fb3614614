"""The provider-neutral core of `fabricgen sot`: the mapping, the comparison, the token, the facts file.

These need no server (the live tests in test_live.py push to real ones)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.errors import FabricError
from fabricgen.plan import pulled as facts
from fabricgen.plan.build import load_plan
from fabricgen.plan.physical import build_physical
from fabricgen.sot import engine
from fabricgen.sot.mapping import desired, device_type_name, interface_type
from fabricgen.sot.objects import Found
from fabricgen.sot.token import find_token, redact
from tests.conftest import EXAMPLE, ROOT


@pytest.fixture(scope="module")
def want():  # type: ignore[no-untyped-def]
    return desired(load_plan(EXAMPLE))


def test_mapping_covers_the_plan(example_plan, want) -> None:  # type: ignore[no-untyped-def]
    plan = example_plan
    assert set(want.of("device")) == set(plan.switches) | {h.name for h in plan.hosts()}
    assert len(want.of("cable")) == len(build_physical(plan).cables)
    ports = sum(len(sw.interfaces) for sw in plan.switches.values())
    nics = sum(len(h.nics) for h in plan.hosts())
    # every /31 end, the NICs, loopbacks and management addresses
    assert len(want.of("ip")) == ports + nics + 2 * len(plan.switches) + len(plan.hosts())
    assert set(want.of("prefix")) == {"198.18.0.0/24", "198.18.16.0/21", "198.18.32.0/20", "198.19.254.0/24"}
    leaf = want.of("device")["ai256-leaf01"].fields
    assert leaf["asn"] == plan.switches["ai256-leaf01"].asn and leaf["platform"] == "sonic"
    assert leaf["device_type"] == "NVIDIA SN5600 (Mellanox-SN5600-O128)" == device_type_name(plan, "leaf")


def test_device_type_templates_are_the_skus_front_panel(example_plan, want) -> None:  # type: ignore[no-untyped-def]
    sku = example_plan.hardware["leaf"].sku
    templates = {k: o.fields for k, o in want.of("interface_template").items()
                 if o.fields["device_type"] == "NVIDIA SN5600 (Mellanox-SN5600-O128)"}
    names = {f["name"] for f in templates.values()}
    assert {p.name for p in sku.ports} <= names and {"eth0", "Loopback0"} <= names
    first = templates["NVIDIA SN5600 (Mellanox-SN5600-O128):Ethernet0"]
    assert first["label"] == "etp1a" and first["type"] == "400gbase-x-osfp"  # a 2 x 400G half of an OSFP cage
    assert want.of("manufacturer").keys() >= {"NVIDIA", "Cisco"}


def test_breakout_cables_keep_both_ends(want) -> None:  # type: ignore[no-untyped-def]
    cable = want.of("cable")["ai256-leaf01:Ethernet384"].fields
    assert cable["a"] == ("ai256-leaf01:Ethernet384", "ai256-leaf01:Ethernet388")
    assert cable["b"] == ("ai256-spine01:Ethernet1/1", "ai256-spine02:Ethernet1/1")
    assert cable["type"] == "aoc" and cable["length"] == 30.0 and "breakout" in cable["description"]
    assert cable["links"] == (("ai256-leaf01:Ethernet384", "ai256-spine01:Ethernet1/1"),
                              ("ai256-leaf01:Ethernet388", "ai256-spine02:Ethernet1/1"))


def test_interface_types() -> None:
    assert interface_type(800, "osfp") == "800gbase-x-osfp"
    assert interface_type(400, "qsfp-dd") == "400gbase-x-qsfpdd"
    assert interface_type(25, "") == "25gbase-x-sfp28"


def _found(obj, owned: bool, **changed):  # type: ignore[no-untyped-def]
    return Found(obj.kind, obj.key, {**obj.fields, **changed}, owned, (1, ()))


def test_ownership_rule(want) -> None:  # type: ignore[no-untyped-def]
    devices = want.of("device")
    leaf, spine, gpu = devices["ai256-leaf01"], devices["ai256-spine01"], devices["gpu0001"]
    found = {leaf.key: _found(leaf, True), spine.key: _found(spine, True, description="edited"),
             gpu.key: _found(gpu, False, status="planned"), "old-box": Found("device", "old-box", {}, True, (9, ()))}
    got = {c.key: c for c in engine.classify("device", devices, found)}
    assert leaf.key not in got  # the same: nothing to do
    assert got[spine.key].action == "update" and got[spine.key].fields == {"description": ("edited", "spine, plane 0")}
    assert got[gpu.key].action == "conflict"  # someone else's device by that name: left alone
    assert got["old-box"].action == "stale"
    assert got["gpu0002"].action == "create"


def test_a_cable_in_the_way_is_a_conflict_naming_it(want) -> None:  # type: ignore[no-untyped-def]
    cables = {"ai256-leaf01:Ethernet0": want.of("cable")["ai256-leaf01:Ethernet0"]}
    theirs = Found("cable", "#77", {"a": ("ai256-leaf01:Ethernet0",), "b": ("gpu0001:mgmt0",)}, False, (77, ()))
    (change,) = engine.classify("cable", cables, {"#77": theirs})
    assert change.action == "conflict"
    assert "port ai256-leaf01:Ethernet0 is on cable #77" in change.line()
    assert "gpu0001:mgmt0" in change.line()


def test_an_address_edited_by_hand_is_one_update(want) -> None:  # type: ignore[no-untyped-def]
    ips = {k: o for k, o in want.of("ip").items() if k == "198.18.0.9/32"}
    edited = Found("ip", "198.18.0.250/32", {**ips["198.18.0.9/32"].fields, "address": "198.18.0.250/32"}, True,
                   (5, ()))
    (change,) = engine.classify("ip", ips, {edited.key: edited})
    assert change.action == "update" and change.fields["address"] == ("198.18.0.250/32", "198.18.0.9/32")


def test_token_from_env_or_file_never_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    secret = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.delenv("FABRICGEN_NETBOX_TOKEN", raising=False)
    monkeypatch.delenv("FABRICGEN_NETBOX_TOKEN_FILE", raising=False)
    with pytest.raises(FabricError, match="no API token"):
        find_token("netbox", None)
    monkeypatch.setenv("FABRICGEN_NETBOX_TOKEN", secret)
    assert find_token("netbox", None) == (secret, "$FABRICGEN_NETBOX_TOKEN")
    path = tmp_path / "token"
    path.write_text(secret + "\n", encoding="utf-8")
    assert find_token("netbox", str(path))[0] == secret
    with pytest.raises(SystemExit) as exc:
        main(["sot", "push", "--netbox", "http://127.0.0.1:9", "--token", secret])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "never taken from the command line" in err and secret not in err
    assert redact(f"Authorization: Token {secret}", secret) == "Authorization: Token <token>"


def test_an_unreachable_server_names_no_token(tmp_path: Path) -> None:
    """The whole CLI in a child process, its output and its --debug traceback searched for the token."""
    secret = "fedcba9876543210fedcba9876543210fedcba98"
    env = {**os.environ, "FABRICGEN_NETBOX_TOKEN": secret}
    for extra in ([], ["--debug"]):
        out = subprocess.run([sys.executable, "-m", "fabricgen.cli", "sot", "diff", "-i", str(EXAMPLE), "--netbox",
                              "http://127.0.0.1:9", *extra], capture_output=True, text=True, env=env, cwd=ROOT,
                             check=False)
        assert out.returncode == 1, out.stderr
        assert "cannot be reached" in out.stderr
        assert secret not in out.stdout + out.stderr


def test_reserved_addresses_are_honoured(tmp_path: Path) -> None:
    intent = tmp_path / "fabric.yaml"
    shutil.copyfile(EXAMPLE, intent)
    base = load_plan(intent).pool_use["management"][0]
    path = facts.facts_path(intent)
    facts.write(path, "netbox http://127.0.0.1:9", "ai256",
                {"reserved": [{"address": "198.19.254.250/24", "status": "reserved", "owner": None}],
                 "devices": {"ai256-leaf01": {"serial": "MT2333X00001", "rack": "R12", "position": 40}}})
    assert load_plan(intent).pool_use["management"][0] == base + 1
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert doc["devices"]["ai256-leaf01"] == {"position": 40, "rack": "R12", "serial": "MT2333X00001"}
    taken = load_plan(intent).switches["ai256-leaf01"].mgmt_ip
    facts.write(path, "netbox http://127.0.0.1:9", "ai256",
                {"reserved": [{"address": "198.19.254.250/24", "status": "reserved", "owner": None},
                              {"address": f"{taken}/24", "status": "reserved", "owner": None}]})
    with pytest.raises(FabricError) as exc:
        load_plan(intent)
    text = str(exc.value)
    assert f"{taken} is reserved in the source of truth" in text and "ai256-leaf01 management" in text
    assert f"{path}:" in text and "reserved.0.address" in text and "(fix:" in text


def test_a_malformed_facts_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    intent = tmp_path / "fabric.yaml"
    shutil.copyfile(EXAMPLE, intent)
    facts.facts_path(intent).write_text("reserved:\n  - address: not-an-address\n", encoding="utf-8")
    assert main(["plan", "-i", str(intent)]) == 2
    err = capsys.readouterr().err
    assert "fabric.sot.yaml:2: reserved.0.address" in err and "Traceback" not in err


def test_the_field_table_in_the_docs_is_the_code_s() -> None:
    text = (ROOT / "docs" / "sot.md").read_text(encoding="utf-8")
    table = text.split("<!-- FIELDS -->\n", 1)[1].split("<!-- /FIELDS -->", 1)[0].strip().splitlines()[2:]
    rows = [tuple(cell.strip() for cell in line.strip("|").split("|")) for line in table]
    assert rows == list(facts.FIELDS)


def test_three_way_names_plan_sot_and_live(example_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    from fabricgen.sot.live import read_lldp, sot_far_ends, three_way

    report = tmp_path / "validate.json"
    report.write_text(json.dumps({"ok": False, "checked": 10, "coverage": [], "failures": [
        {"device": "ai256-leaf01", "check": "lldp", "item": "Ethernet0 -> gpu0001:eth0", "ok": False,
         "expected": "gpu0001 eth0", "actual": "gpu0002 eth0 (miscabled)"},
        {"device": "ai256-leaf02", "check": "lldp", "item": "Ethernet0 -> gpu0001:eth1", "ok": False,
         "expected": "gpu0001 eth1", "actual": "no LLDP neighbor (cable missing or link down)"}]}), encoding="utf-8")
    live = read_lldp(report)
    assert live == {"ai256-leaf01:Ethernet0": "gpu0002:eth0", "ai256-leaf02:Ethernet0": "no neighbour"}
    sot = {"c1": Found("cable", "c1", {"a": ("ai256-leaf01:Ethernet0",), "b": ("gpu0002:eth0",)}, True)}
    lines = three_way(example_plan, {**sot_far_ends(sot), "ai256-leaf02:Ethernet0": "gpu0001:eth1"}, live)
    first = next(line for line in lines if line.startswith("ai256-leaf01:Ethernet0:"))
    assert "plan gpu0001:eth0, source of truth gpu0002:eth0, live gpu0002:eth0" in first
    assert "the source of truth matches the fabric" in first
    second = next(line for line in lines if line.startswith("ai256-leaf02:Ethernet0:"))
    assert "live no neighbour" in second and "miscabled" in second
    wrong = tmp_path / "wrong.json"
    wrong.write_text("[]", encoding="utf-8")
    with pytest.raises(FabricError, match="not a `fabricgen validate --format json` report"):
        read_lldp(wrong)
