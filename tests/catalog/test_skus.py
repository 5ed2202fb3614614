"""Hardware SKUs: port names, lanes and speeds from SONiC's own SKU files; errors that name the fix."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from fabricgen.catalog import skus
from fabricgen.cli import main
from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.render.summary import cabling_csv, summary
from tests.conftest import EXAMPLE, small_intent, write_intent

O128 = "Mellanox-SN5600-O128"


def sku_intent(leaf: dict[str, object], **overrides: object) -> dict[str, object]:
    """small_intent with a SKU leaf: 8 uplinks (2 per spine) and a GPU pool for the wide leaf's envelope."""
    overrides.setdefault("topology__leaf_uplinks", 8)
    overrides.setdefault("addressing__gpu", "198.18.128.0/18")
    data = small_intent(**overrides)
    data["switch_models"]["leaf"] = leaf  # type: ignore[index]
    return data


def test_sn5600_o128_ports_as_sonic_names_them() -> None:
    sku = skus.find_sku("sonic", O128)
    first, second = sku.ports[0], sku.ports[1]
    assert (first.name, first.lanes, first.alias, first.index, first.speed) == ("Ethernet0", "0,1,2,3", "etp1a", 1, 400)
    assert (second.name, second.alias, second.index) == ("Ethernet4", "etp1b", 1)
    assert len(sku.ports_at(400)) == 128 and sku.ports_at(25)[0].name == "Ethernet512"
    assert sku.speeds[0] == 400 and sku.buffer_model == "dynamic" and sku.asic == "mellanox"
    assert sku.pg_lookup[400, 40].xoff == 283648  # pg_profile_lookup.ini: 400000 40m ... xoff 283648


def test_other_skus_of_the_pack() -> None:
    arista = skus.find_sku("sonic", "Arista-7060DX5-64S")
    p = arista.ports[0]
    assert (p.name, p.lanes, p.alias, p.speed, p.fec) == ("Ethernet0", "17,18,19,20,21,22,23,24", "Ethernet1/1",
                                                          400, "rs")
    assert arista.buffer_model is None and arista.lossless_queues is None
    dell = skus.find_sku("sonic", "Dell-Z9864f-O64")
    assert (dell.ports[0].lanes, dell.ports[0].alias, dell.ports[0].speed) == ("1,2,3,4,5,6,7,8", "etp1", 800)
    assert dell.buffer_model == "traditional" and dell.asic == "broadcom"
    # ACS-SN5600's port_config.ini has no speed column: the speed is hwsku.json's default breakout (1x800G)
    acs = skus.find_sku("sonic", "ACS-SN5600")
    assert "speed" not in acs.ports[0].fields and acs.ports[0].speed == 800 and len(acs.ports_at(800)) == 64
    assert skus.find_sku("sonic", "Mellanox-SN5600-C224O8").lossless_queues == ()


def test_plan_cabling_and_configs_use_the_sku_names(tmp_path: Path) -> None:
    data = sku_intent({"sku": O128})
    plan = build_plan(Intent.model_validate(data))
    sku = skus.find_sku("sonic", O128)
    leaf_ports = {itf.name for sw in plan.by_role("leaf") for itf in sw.interfaces}
    assert leaf_ports and all(sku.port(name) is not None for name in leaf_ports)
    assert "Ethernet4" in leaf_ports  # the second 400G port of cage 1 (etp1b), not a generic Ethernet8
    rows = list(csv.DictReader(io.StringIO(cabling_csv(plan))))
    cabled = {p for r in rows if r["a_device"].startswith("t-leaf") for p in r["a_ports"].split(";")}
    cabled |= {end.split(":")[1] for r in rows for end in r["z_ends"].split(";") if end.startswith("t-leaf")}
    assert cabled == leaf_ports
    assert all(sw.sku == O128 for sw in plan.by_role("leaf")) and all(sw.sku == "" for sw in plan.by_role("spine"))
    hw = summary(plan)["hardware"]
    assert hw["leaf"]["sku"] == O128 and hw["leaf"]["port_names"] == "SKU"
    assert hw["spine"]["port_names"] == "generic"


def test_example_names_a_real_sku() -> None:
    plan = load_plan(EXAMPLE)
    assert {sw.sku for sw in plan.by_role("leaf")} == {O128}


def test_plan_says_generic_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "-i", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert O128 in out and "port names of spine are generic" in out


def test_unknown_sku_lists_the_known_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_intent(tmp_path, sku_intent({"sku": "Mellanox-SN9999"}))
    assert main(["plan", "-i", str(path)]) == 2
    err = capsys.readouterr().err
    assert "switch_models.leaf.sku" in err and "unknown SONiC HWSKU 'Mellanox-SN9999'" in err
    assert O128 in err and "Dell-Z9864f-O64" in err and "Traceback" not in err


def test_a_speed_the_sku_lacks_names_skus_that_have_it() -> None:
    with pytest.raises(FabricError) as exc:
        build_plan(Intent.model_validate(sku_intent({"sku": "ACS-SN5600", "downlink": {"speed": "400G"}})))
    text = str(exc.value)
    assert "switch_models.leaf.sku" in text and "ACS-SN5600 has no 400G ports" in text
    assert O128 in text  # the SKU with the 2x400G breakout


def test_ports_come_from_the_sku() -> None:
    with pytest.raises(Exception, match="ports, port_speed come from the SKU"):
        Intent.model_validate(sku_intent({"sku": O128, "ports": 64, "port_speed": "800G"}))
    with pytest.raises(Exception, match="neither `ports` nor `sku`"):
        Intent.model_validate(sku_intent({"port_speed": "400G"}))
    plan = build_plan(Intent.model_validate(sku_intent({"sku": O128})))
    leaf = plan.settings.models["leaf"]  # the SKU's numbers, as the rest of the pipeline sees them
    assert (leaf.ports, leaf.port_speed, leaf.breakout, leaf.lanes_per_port) == (64, 800, 2, 8)


def test_sonic_platform_option_and_env(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch, sonic_platform: Path) -> None:
    src = skus.sonic_sku_dirs(sonic_platform)[O128]
    mine = tmp_path / "pack" / "device" / "mellanox" / src.parent.name / "My-SN5600"
    shutil.copytree(src, mine)
    path = write_intent(tmp_path, sku_intent({"sku": "My-SN5600"}))
    assert main(["plan", "-i", str(path), "--sonic-platform", str(tmp_path / "pack")]) == 0
    assert "My-SN5600" in capsys.readouterr().out
    skus.use_platform_dir(None)
    monkeypatch.setenv(skus.PLATFORM_ENV, str(tmp_path / "pack"))
    assert main(["plan", "-i", str(path)]) == 0
    monkeypatch.setenv(skus.PLATFORM_ENV, str(tmp_path / "nowhere"))
    assert main(["plan", "-i", str(path)]) == 2
    err = capsys.readouterr().err
    assert "nowhere" in err and "does not exist" in err and "--sonic-platform" in err and "Traceback" not in err


def test_the_users_tree_wins_and_plan_names_where_facts_came_from(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  sonic_platform: Path) -> None:
    path = write_intent(tmp_path, sku_intent({"sku": O128}))
    monkeypatch.delenv(skus.PLATFORM_ENV, raising=False)
    assert main(["plan", "-i", str(path)]) == 0
    assert "shipped with fabricgen (sonic-net/sonic-buildimage 086b03bd70" in capsys.readouterr().out
    assert main(["plan", "-i", str(path), "--sonic-platform", str(sonic_platform)]) == 0
    assert f"--sonic-platform {sonic_platform}" in capsys.readouterr().out.replace("\n", "")
    # the option was that command's: a render in the same process after it uses the shipped facts again
    assert skus.platform_dir() is None
    assert skus.find_sku("sonic", O128).origin.startswith("shipped with fabricgen")


# --------------------------------------------------------------------------- shipped facts vs SONiC's own files


def test_every_shipped_sku_is_sonics_own_files(sonic_platform: Path) -> None:
    """The shipped records are exactly what SONiC's files at the pinned commit say (a drift fails here)."""
    from tools import sonic_facts

    shipped = skus.shipped_sonic_skus()
    assert sorted(shipped) == sorted(sonic_facts.supported_skus())
    for name, path in shipped.items():
        assert json.loads(path.read_text(encoding="utf-8")) == sonic_facts.sku_record(sonic_platform, name), name
        assert path.read_text(encoding="utf-8") == sonic_facts.dumps(sonic_facts.sku_record(sonic_platform, name))
        mine = skus.load_shipped_sku(path)
        theirs = skus.load_sonic_sku(next(sonic_platform.glob(f"device/*/*/{name}")))
        assert (mine.ports, dict(mine.pg_lookup), mine.buffer_model, mine.asic, mine.hw_platform, mine.capabilities,
                mine.lossless_queues, mine.ecn_default, mine.buffers, mine.headroom_asic) == \
               (theirs.ports, dict(theirs.pg_lookup), theirs.buffer_model, theirs.asic, theirs.hw_platform,
                theirs.capabilities, theirs.lossless_queues, theirs.ecn_default, theirs.buffers, theirs.headroom_asic)


def test_shipped_records_render_without_any_sonic_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user has no sonic-buildimage: every shipped SKU resolves from the package alone."""
    monkeypatch.delenv(skus.PLATFORM_ENV, raising=False)
    monkeypatch.setattr(skus, "_override", None)
    for name in skus.shipped_sonic_skus():
        record = skus.find_sku("sonic", name)
        assert record.ports and record.origin.startswith("shipped with fabricgen"), name
        assert Path(record.source).is_relative_to(skus.SHIPPED_SKUS)


def test_a_record_of_another_layout_is_refused(tmp_path: Path) -> None:
    record = json.loads(skus.shipped_sonic_skus()[O128].read_text(encoding="utf-8"))
    record["format"] = 99
    with pytest.raises(skus.SkuError, match="layout 99"):
        skus.sku_from_facts(record, "x.json", "test")


# --------------------------------------------------------------------------- make sonic-platform


def test_fetch_follows_symlinks_and_never_overwrites(tmp_path: Path) -> None:
    from tools import sonic_fetch

    repo = tmp_path / "repo"
    for platform, names in sonic_fetch.SKUS.items():
        for name in names:
            d = repo / platform / name
            d.mkdir(parents=True)
            (d / "port_config.ini").write_text("# name lanes alias index speed\nEthernet0 0,1 etp1 1 400000\n")
    o128 = repo / "device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128"
    (o128 / "buffers.json.j2").write_text("../ACS-SN5600/buffers.json.j2")  # GitHub raw: a symlink's target
    (o128.parent / "ACS-SN5600" / "buffers.json.j2").write_text("{% include 'buffers_config.j2' %}\n")
    gcu = tmp_path / "utilities" / sonic_fetch.GCU_RULES
    gcu.parent.mkdir(parents=True)
    gcu.write_text("{}")
    dest = tmp_path / "out"
    files = sonic_fetch.fetch_platform(dest, repo.as_uri(), utilities=(tmp_path / "utilities").as_uri())
    assert (dest / "device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/buffers.json.j2").read_text() \
        == "{% include 'buffers_config.j2' %}\n"
    assert len(files) == sum(len(n) for n in sonic_fetch.SKUS.values()) + 2 + 1  # + GCU's rules
    assert (dest / "sonic-utilities" / sonic_fetch.GCU_RULES).read_text() == "{}"
    assert (dest / sonic_fetch.MARKER).is_file()
    sonic_fetch.fetch_platform(dest, repo.as_uri(), utilities=None)  # its own directory: refreshed
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep").write_text("x")
    with pytest.raises(FileExistsError):
        sonic_fetch.fetch_platform(foreign, repo.as_uri(), utilities=None)
    assert (foreign / "keep").read_text() == "x"
