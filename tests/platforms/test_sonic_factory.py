"""Every SKU of the SONiC platform pack, with SONiC's own code as the oracle.

For each SKU `sonic-factory-config` (SONiC's sonic-cfggen over the SKU's own port_config.ini,
buffers.json.j2 and qos.json.j2, ../shared/sonic-platform) prints the ConfigDB a real switch starts
from.  A fabric whose SONiC roles use the SKU is rendered; each switch's config_db.json goes into
that factory ConfigDB exactly as the SONiC driver puts it into a running one
(`platforms.sonic_configdb.merge_owned`, which itself refuses dangling references), and then:

* the merged ConfigDB passes SONiC's YANG models (every leafref resolves: buffer profiles, port
  lists, QoS maps);
* every port fabricgen configures exists in the SKU with that name and speed;
* no device-owned field differs from the factory value (lanes, alias, index, the SKU's buffer
  pools, profiles and profile lists, the hwsku);
* the device side fabricgen's own `check` merges into (`sonic_buffers.device_base`) is what
  SONiC generates.

Lossy-only SKUs (every queue lossy, PFC off) cannot carry RoCE: the plan refuses them by name.
Factory references in the pre-db_migrator "[TABLE|name]" form are read as db_migrator leaves them,
and a port speed port_config.ini lacks comes from hwsku.json as on the box.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabricgen.catalog.skus import find_sku
from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan
from fabricgen.platforms.sonic import render as sonic
from fabricgen.platforms.sonic.buffers import device_base
from fabricgen.platforms.sonic.configdb import OWNED_PORT_FIELDS, OWNERSHIP, merge_owned, ref_name
from tests.conftest import SHARED_PLATFORM, missing, small_intent

DEVICE_OWNED_TABLES = ("BUFFER_POOL", "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST")


def pack_skus() -> list[str]:
    root = SHARED_PLATFORM
    if not root.is_dir():
        return ["<no SONiC platform pack>"]
    out = subprocess.run([str(root / "sonic-factory-config"), "--list"], capture_output=True, text=True, check=True)
    return sorted(line.split()[0] for line in out.stdout.splitlines() if line.strip())


@cache
def factory(sku: str) -> dict[str, Any]:
    """`sonic-factory-config SKU`, references as db_migrator normalises them."""
    root = SHARED_PLATFORM
    out = subprocess.run([str(root / "sonic-factory-config"), sku, sys.executable], capture_output=True, text=True,
                         check=True)
    db: dict[str, Any] = json.loads(out.stdout)
    for rows in db.values():
        for entry in rows.values():
            if isinstance(entry, dict):
                for k, v in entry.items():
                    if isinstance(v, str) and v.startswith("["):
                        entry[k] = ",".join(ref_name(x) for x in v.split(","))
    # sonic-factory-config runs sonic-cfggen -k -p without -S hwsku.json: where port_config.ini has no speed
    # column (ACS-MSN2700) the box takes it from hwsku.json's default breakout mode, as the SKU record does
    record = find_sku("sonic", sku)
    for name, entry in db["PORT"].items():
        port = record.port(name)
        if "speed" not in entry and port is not None:
            entry["speed"] = str(port.speed * 1000)
    return db


def intent_for(sku: str) -> Intent:
    speed = find_sku("sonic", sku).speeds[0]
    data = small_intent(switch_models={"leaf": {"model": sku, "sku": sku}, "spine": {"model": sku, "sku": sku}},
                        platforms={"leaf": "sonic", "spine": "sonic"},
                        servers={"count": 4, "gpus_per_server": 4, "nics_per_server": 4, "nic_speed": f"{speed}G"},
                        cabling={"gpu_leaf_m": 5, "leaf_spine_m": 40})  # lengths the SKUs' lookup tables list
    return Intent.model_validate(data)


@pytest.fixture(scope="module")
def validator(sonic_yang_models: Path) -> Any:
    from fabricgen.check.sonic_yang import SonicYangValidator

    return SonicYangValidator(sonic_yang_models)


@pytest.mark.parametrize("sku", pack_skus())
def test_every_sku_merged_into_sonics_own_factory_config(sku: str, sonic_platform: Path, validator: Any) -> None:
    record = find_sku("sonic", sku)
    if not record.lossless:
        with pytest.raises(FabricError, match=f"SKU {sku} is lossy-only"):
            build_plan(intent_for(sku))
        return
    plan = build_plan(intent_for(sku))
    base = factory(sku)
    for sw in plan.switches.values():
        ours = sonic.config_db(sw, plan)
        assert set(ours) <= set(OWNERSHIP)
        merged = merge_owned(base, ours)  # exactly the driver's merge: refuses dangling references
        assert validator.validate(merged, sw.hostname, "config_db.json") == [], sku
        for itf in sw.interfaces:
            factory_port = base["PORT"][itf.name]  # the name exists in the SKU
            assert record.port(itf.name) is not None and record.port(itf.name).speed == itf.speed  # type: ignore[union-attr]
            if "speed" in factory_port:
                assert factory_port["speed"] == str(itf.speed * 1000)
            for k, v in factory_port.items():
                if k not in OWNED_PORT_FIELDS:
                    assert merged["PORT"][itf.name][k] == v, (sku, itf.name, k)
        for table in DEVICE_OWNED_TABLES:
            assert merged.get(table) == base.get(table), (sku, table)
        for name, entry in base.get("BUFFER_PROFILE", {}).items():
            assert merged["BUFFER_PROFILE"][name] == entry, (sku, name)
        assert merged["DEVICE_METADATA"]["localhost"]["hwsku"] == sku
        # the device side fabricgen's own check merges into is what SONiC generates for the SKU
        for table, rows in device_base(plan, sw).items():
            for key, entry in rows.items():
                assert {k: base[table][key].get(k) for k in entry} == entry, (sku, table, key)


@pytest.mark.parametrize("sku", pack_skus())
def test_buffer_model_is_the_skus(sku: str, sonic_platform: Path) -> None:
    record = find_sku("sonic", sku)
    if not record.lossless:
        return
    plan = build_plan(intent_for(sku))
    db = sonic.config_db(plan.by_role("leaf")[0], plan)
    sku_dir = next(sonic_platform.glob(f"device/*/*/{sku}"))  # SONiC's own files, not fabricgen's record of them
    dynamic_template = (sku_dir / "buffers_dynamic.json.j2").is_file()
    model = db["DEVICE_METADATA"]["localhost"].get("buffer_model")
    if record.buffers is None:  # fabricgen does not know its buffer objects: no buffer tables, a warning
        assert model is None and "BUFFER_PG" not in db and any("left to the device" in w.message for w in plan.warnings)
        return
    assert model == ("dynamic" if dynamic_template else "traditional")
    lossless = [v["profile"] for k, v in db["BUFFER_PG"].items() if k.endswith("|3")]
    if dynamic_template:
        assert set(lossless) == {"NULL"} and "BUFFER_PROFILE" not in db
    else:
        assert all(p.startswith("pg_lossless_") for p in lossless)
        assert set(lossless) <= set(db["BUFFER_PROFILE"])


def test_no_sku_pack_is_a_failure_in_ci() -> None:
    if pack_skus() == ["<no SONiC platform pack>"]:
        missing(f"SONiC platform pack (the test oracle) not found at {SHARED_PLATFORM}")
