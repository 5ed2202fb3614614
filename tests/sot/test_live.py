"""`fabricgen sot` against real NetBox and Nautobot servers (tests/sot/servers.py starts them; no mocks).

On each server: push a 32-GPU cut of the example fabric (its SONiC SN5600 leaves and NX-OS spines:
4 servers with 2 NICs, 2 rail leaves, 2 spines; every object kind the example has at a tenth of its
writes, since NetBox and Nautobot save each object on its own and CI's time is short), push again
(0 writes), edit by hand through the API (an address changed, a cable moved, a device deleted) and
see `diff` name each, put it right with `push --apply`, then reserve addresses by hand, `pull` them
and see the plan honour them.  The API token never appears in anything fabricgen prints or logs.
The example itself and the 4K-GPU fabric are pushed by `make bench-sot` (bench/bench_sot.py).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.cli import main
from tests.conftest import EXAMPLE, write_intent
from tests.sot import wipe
from tests.sot.conftest import Server

LEAF = "ai256-leaf01"  # its loopback is changed by hand below
HAND_ADDRESS = "198.18.0.250/32"
FREE_RESERVED = "198.19.254.250/24"  # a management address the plan does not use
SMALL = {"servers": {"count": 4, "nics_per_server": 2},
         "topology": {"scalable_unit": 4, "leaf_uplinks": 4, "spines": 2},
         "addressing": {"gpu": "198.18.32.0/19"}}  # 2 spines leave room for more leaves: a larger GPU pool


def small_example(tmp_path: Path) -> Path:
    """The example intent cut to 32 GPUs (SMALL's values over it)."""
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    for section, values in SMALL.items():
        data[section].update(values)
    return write_intent(tmp_path, data)


class Names:
    """What the scenario edits, read from the plan: the leaf's loopback, the last server (deleted by
    hand) and gpu0001's management address (reserved by hand over fabricgen's)."""

    def __init__(self, plan: dict[str, Any]) -> None:
        switch = next(s for s in plan["switches"] if s["hostname"] == LEAF)
        self.leaf_loopback = f"{switch['loopback']}/32"
        self.gone = plan["servers"][-1]["name"]
        first = plan["servers"][0]
        mgmt_len = plan["summary"]["pools"]["management"]["size"].bit_length() - 1
        self.used_reserved = f"{first['mgmt_ip']}/{32 - mgmt_len}"
        self.used_ip, self.used_owner = first["mgmt_ip"], f"{first['name']} management"


class Run:
    """fabricgen in this process, its output captured; the token checked absent from every line of it."""

    def __init__(self, server: Server, intent: Path, capsys: pytest.CaptureFixture[str],
                 caplog: pytest.LogCaptureFixture) -> None:
        self.server, self.intent, self.capsys, self.caplog = server, intent, capsys, caplog
        self.outputs: list[str] = []

    def __call__(self, *args: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        rc = main([*args, "-i", str(self.intent)])
        out, err = self.capsys.readouterr()
        self.outputs += [out, err]
        return rc, out, err

    def sot(self, action: str, *extra: str) -> tuple[int, dict[str, Any]]:
        rc, out, err = self("sot", action, f"--{self.server.name}", self.server.url, "--format", "json", *extra)
        assert rc in (0, 1), f"sot {action} exited {rc}: {err}"
        return rc, json.loads(out) if out.strip().startswith("{") else {"text": out, "err": err}

    def secret_kept(self) -> None:
        token = self.server.token
        for text in [*self.outputs, self.caplog.text]:
            assert token not in text


def changes(doc: dict[str, Any], kind: str, action: str) -> dict[str, str]:
    return {c["key"]: c["text"] for c in doc["changes"] if c["kind"] == kind and c["action"] == action}


# ------------------------------------------------------------------ hand edits, in each server's own API


def _netbox(server: Server) -> Any:
    import pynetbox

    return pynetbox.api(server.url, token=server.token)


def _nautobot(server: Server) -> Any:
    import pynautobot

    return pynautobot.api(server.url, token=server.token)


def edit_by_hand(server: Server, names: Names) -> tuple[str, str]:
    """Change an address (NetBox: its value; Nautobot, whose host addresses cannot change: its interface), move a
    cable end, delete a device; returns the label of the moved cable and what the address diff must name."""
    if server.name == "netbox":
        nb = _netbox(server)
        ip = next(iter(nb.ipam.ip_addresses.filter(address=names.leaf_loopback)))
        ip.address = HAND_ADDRESS
        ip.save()
        label = "ai256-leaf01:Ethernet0"
        cable = next(iter(nb.dcim.cables.filter(label=label)))
        leaf = next(iter(nb.dcim.interfaces.filter(device="ai256-leaf01", name="Ethernet0")))
        spare = next(iter(nb.dcim.interfaces.filter(device="gpu0001", name="mgmt0")))
        cable.delete()
        nb.dcim.cables.create(a_terminations=[{"object_type": "dcim.interface", "object_id": leaf.id}],
                              b_terminations=[{"object_type": "dcim.interface", "object_id": spare.id}],
                              label="moved by hand", status="connected")
        next(iter(nb.dcim.devices.filter(name=names.gone))).delete()
        return label, HAND_ADDRESS
    nb = _nautobot(server)
    ip = next(iter(nb.ipam.ip_addresses.filter(address=names.leaf_loopback)))
    next(iter(nb.ipam.ip_address_to_interface.filter(ip_address=ip.id))).delete()
    eth0 = next(iter(nb.dcim.interfaces.filter(device="ai256-leaf01", name="eth0")))
    nb.ipam.ip_address_to_interface.create(ip_address=ip.id, interface=eth0.id)
    label = "ai256-leaf01:Ethernet0/1"
    next(iter(nb.dcim.cables.filter(label=label))).delete()
    leaf = next(iter(nb.dcim.interfaces.filter(device="ai256-leaf01", name="Ethernet0")))
    spare = next(iter(nb.dcim.interfaces.filter(device="gpu0001", name="mgmt0")))
    connected = next(iter(nb.extras.statuses.filter(name="Connected")))
    nb.dcim.cables.create(termination_a_type="dcim.interface", termination_a_id=leaf.id,
                          termination_b_type="dcim.interface", termination_b_id=spare.id, label="moved by hand",
                          status=connected.id)
    next(iter(nb.dcim.devices.filter(name=names.gone))).delete()
    return label, "ai256-leaf01:eth0"


def undo_hand_cable(server: Server) -> None:
    api = _netbox(server) if server.name == "netbox" else _nautobot(server)
    next(iter(api.dcim.cables.filter(label="moved by hand"))).delete()


def reserve(server: Server, address: str, replace_owned: bool = False) -> None:
    """An address someone else holds: status reserved, no fabricgen tag (replacing fabricgen's own if asked)."""
    if server.name == "netbox":
        nb = _netbox(server)
        if replace_owned:
            next(iter(nb.ipam.ip_addresses.filter(address=address))).delete()
        nb.ipam.ip_addresses.create(address=address, status="reserved", description="held by the DC team")
        return
    nb = _nautobot(server)
    if replace_owned:
        next(iter(nb.ipam.ip_addresses.filter(address=address))).delete()
    reserved = next(iter(nb.extras.statuses.filter(name="Reserved")))
    space = next(iter(nb.ipam.namespaces.filter(name="Global")))
    nb.ipam.ip_addresses.create(address=address, status=reserved.id, namespace=space.id, type="host",
                                description="held by the DC team")


# ------------------------------------------------------------------ the scenario


def scenario(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
             monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.DEBUG)  # requests / urllib3 / pynetbox at their most talkative: still no token
    wipe.wipe(server.name)
    intent = small_example(tmp_path)
    monkeypatch.setenv(server.env, str(server.token_file))
    run = Run(server, intent, capsys, caplog)
    rc, out, err = run("plan", "--format", "json")
    assert rc == 0, err
    names = Names(json.loads(out))

    rc, first = run.sot("push")
    assert rc == 0, first
    assert {c["action"] for c in first["changes"]} == {"create"}, "a first push only creates"
    assert first["writes"] >= len(first["changes"]) and changes(first, "device", "create")
    rc, second = run.sot("push")
    assert rc == 0 and second["writes"] == 0, [c["text"] for c in second["changes"]][:20]
    assert second["changes"] == []

    label, edited = edit_by_hand(server, names)
    rc, drift = run.sot("diff")
    assert rc == 1
    ip = changes(drift, "ip", "update")
    assert names.leaf_loopback in ip and edited in ip[names.leaf_loopback], ip
    moved = changes(drift, "cable", "conflict")
    assert label in moved and "gpu0001:mgmt0" in moved[label], moved
    assert names.gone in changes(drift, "device", "create")

    rc, pushed = run.sot("push")  # creates the device again; the owned address stays as it is
    assert rc == 1, "the hand-made cable is in the way: a conflict"
    assert pushed["writes"] > 0 and names.leaf_loopback in changes(pushed, "ip", "update")
    rc, applied = run.sot("push", "--apply")
    assert applied["writes"] > 0
    undo_hand_cable(server)  # the operator takes the stray cable out
    rc, healed = run.sot("push")
    assert rc == 0 and healed["writes"] >= 1
    rc, clean = run.sot("diff")
    assert rc == 0 and clean["changes"] == [], [c["text"] for c in clean["changes"]][:20]

    rc, out, _ = run("plan", "--format", "json")
    used = json.loads(out)["summary"]["pools"]["management"]["used"]
    reserve(server, FREE_RESERVED)
    rc, out, err = run("sot", "pull", f"--{server.name}", server.url)
    assert rc == 0, err
    facts = (tmp_path / "fabric.sot.yaml").read_text(encoding="utf-8")
    assert FREE_RESERVED in facts
    rc, out, err = run("plan", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["summary"]["pools"]["management"]["used"] == used + 1
    rc, quiet = run.sot("diff")
    assert rc == 0, "someone else's reservation in a pool is not drift"

    reserve(server, names.used_reserved, replace_owned=True)
    rc, out, err = run("sot", "pull", f"--{server.name}", server.url)
    assert rc == 0, err
    rc, out, err = run("plan")
    assert rc == 2
    assert f"{names.used_ip} is reserved in the source of truth" in err and names.used_owner in err
    assert "fabric.sot.yaml:" in err and "(fix:" in err
    run.secret_kept()


@pytest.mark.sot_live
def test_netbox(netbox_server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(netbox_server, tmp_path, capsys, caplog, monkeypatch)


@pytest.mark.sot_live
def test_nautobot(nautobot_server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                  caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario(nautobot_server, tmp_path, capsys, caplog, monkeypatch)
