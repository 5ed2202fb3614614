"""The nornir SimpleInventory in inventory/ is the example plan's, loads in nornir and holds no secrets."""

from __future__ import annotations

from pathlib import Path

from nornir import InitNornir

from fabricgen.render import inventory
from tests.conftest import EXAMPLE, ROOT

INV = ROOT / "inventory"


def test_committed_inventory_matches_the_plan(example_plan, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    inventory.write(example_plan, tmp_path)
    for name in ("hosts.yaml", "groups.yaml", "defaults.yaml"):
        assert (INV / name).read_text() == (tmp_path / name).read_text(), (
            f"inventory/{name} is stale: run `fabricgen inventory -i {EXAMPLE.relative_to(ROOT)}`")


def test_nornir_loads_it(example_plan) -> None:  # type: ignore[no-untyped-def]
    nr = InitNornir(inventory={"plugin": "SimpleInventory", "options": {
        "host_file": str(INV / "hosts.yaml"), "group_file": str(INV / "groups.yaml"),
        "defaults_file": str(INV / "defaults.yaml")}}, logging={"enabled": False})
    assert set(nr.inventory.hosts) == set(example_plan.switches)
    for name, host in nr.inventory.hosts.items():
        sw = example_plan.switches[name]
        assert host.hostname == sw.mgmt_ip
        assert host.platform == {"nxos": "nxos_fabricgen", "sonic": "sonic", "frr": "frr"}[sw.platform]
        assert host["role"] == sw.role and host["asn"] == sw.asn


def test_no_credentials_in_files() -> None:
    for name in ("hosts.yaml", "groups.yaml", "defaults.yaml"):
        text = (INV / name).read_text().lower()
        assert "password" not in text and "username" not in text and "secret" not in text
