"""`fabricgen sot` against real NetBox and Nautobot servers (tests/sot/servers.py starts them; no mocks).

On each server: push the example fabric, push again (0 writes), edit by hand through the API (an
address changed, a cable moved, a device deleted) and see `diff` name each, put it right with
`push --apply`, then reserve addresses by hand, `pull` them and see the plan honour them.  The
API token never appears in anything fabricgen prints or logs.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from fabricgen.cli import main
from tests.conftest import EXAMPLE
from tests.sot import wipe
from tests.sot.conftest import Server

LEAF_LOOPBACK = "198.18.0.9/32"  # ai256-leaf01's loopback, changed by hand below
HAND_ADDRESS = "198.18.0.250/32"
GONE = "gpu0032"  # deleted by hand below
FREE_RESERVED = "198.19.254.250/24"  # a management address the plan does not use
USED_RESERVED = "198.19.254.25/24"  # gpu0001's management address


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


def edit_by_hand(server: Server) -> tuple[str, str]:
    """Change an address (NetBox: its value; Nautobot, whose host addresses cannot change: its interface), move a
    cable end, delete a device; returns the label of the moved cable and what the address diff must name."""
    if server.name == "netbox":
        nb = _netbox(server)
        ip = next(iter(nb.ipam.ip_addresses.filter(address=LEAF_LOOPBACK)))
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
        next(iter(nb.dcim.devices.filter(name=GONE))).delete()
        return label, HAND_ADDRESS
    nb = _nautobot(server)
    ip = next(iter(nb.ipam.ip_addresses.filter(address=LEAF_LOOPBACK)))
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
    next(iter(nb.dcim.devices.filter(name=GONE))).delete()
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
    intent = tmp_path / "fabric.yaml"
    shutil.copyfile(EXAMPLE, intent)
    monkeypatch.setenv(server.env, str(server.token_file))
    run = Run(server, intent, capsys, caplog)

    rc, first = run.sot("push")
    assert rc == 0, first
    assert {c["action"] for c in first["changes"]} == {"create"}, "a first push only creates"
    assert first["writes"] >= len(first["changes"]) and changes(first, "device", "create")
    rc, second = run.sot("push")
    assert rc == 0 and second["writes"] == 0, [c["text"] for c in second["changes"]][:20]
    assert second["changes"] == []

    label, edited = edit_by_hand(server)
    rc, drift = run.sot("diff")
    assert rc == 1
    ip = changes(drift, "ip", "update")
    assert LEAF_LOOPBACK in ip and edited in ip[LEAF_LOOPBACK], ip
    moved = changes(drift, "cable", "conflict")
    assert label in moved and "gpu0001:mgmt0" in moved[label], moved
    assert GONE in changes(drift, "device", "create")

    rc, pushed = run.sot("push")  # creates the device again; the owned address stays as it is
    assert rc == 1, "the hand-made cable is in the way: a conflict"
    assert pushed["writes"] > 0 and LEAF_LOOPBACK in changes(pushed, "ip", "update")
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

    reserve(server, USED_RESERVED, replace_owned=True)
    rc, out, err = run("sot", "pull", f"--{server.name}", server.url)
    assert rc == 0, err
    rc, out, err = run("plan")
    assert rc == 2
    assert "198.19.254.25 is reserved in the source of truth" in err and "gpu0001 management" in err
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
