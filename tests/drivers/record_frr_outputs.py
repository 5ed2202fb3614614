"""Record the FRR driver's device outputs from a live lab into tests/drivers/mocked_data/frr/.

Run as root (network namespaces):  python -m tests.drivers.record_frr_outputs

Brings up the 2-switch lab of ``lab_fabric`` with the shared engine (fabricgen.lab),
pushes the configs through FrrDriver, and records - through a RecordingTransport -
every command the driver sends and what sw1 answered, for each scenario below.  The
mocked tests replay these directories.  The lab is always torn down.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from napalm.base.exceptions import ReplaceConfigException

from fabricgen.base.ssh import Transport
from fabricgen.lab import lab_down, lab_up, prune_stale_labs
from napalm_frr import FrrDriver
from tests.drivers import lab_fabric as lf
from tests.drivers.fake_transport import RecordingTransport

OUT = Path(__file__).resolve().parent / "mocked_data" / "frr"
TOKEN = "0123456789ab"


class RecordingFrrDriver(FrrDriver):
    def _new_token(self) -> str:
        return TOKEN

    def _open_transport(self) -> Transport:
        return RecordingTransport(super()._open_transport())

    @property
    def recorder(self) -> RecordingTransport:
        assert isinstance(self.transport, RecordingTransport)
        return self.transport


def main() -> int:
    workdir = tempfile.mkdtemp(prefix="fgrec-")
    prune_stale_labs()
    state = lab_up(lf.topology(workdir, f"fgr{os.getpid() % 100000}"))
    try:
        drivers = {n: RecordingFrrDriver(node.mgmt_ip, state.ssh_user, "", optional_args=lf.optional_args(
            state.key_file, state.known_hosts)) for n, node in state.nodes.items()}
        for d in drivers.values():
            d.open()
        sw1, sw2 = drivers["sw1"], drivers["sw2"]
        sw2.load_replace_candidate(config=lf.frr_config("sw2"))
        sw2.commit_config()

        # first commit on sw1: the candidate against a bare "hostname sw1" running config
        sw1.recorder.exchanges.clear()
        (OUT / "commit_initial").mkdir(parents=True, exist_ok=True)
        (OUT / "commit_initial" / "candidate.conf").write_text(lf.frr_config("sw1"))
        sw1.load_replace_candidate(config=lf.frr_config("sw1"))
        sw1.compare_config()
        sw1.commit_config()
        sw1.recorder.save(OUT / "commit_initial")

        lf.poll(lambda: lf.bgp_up(sw1) and lf.lldp_ports(sw1) and sw1.get_ecmp_paths(f"{lf.LOOPBACK['sw2']}/32") == 2,
                60, "sw1 BGP, LLDP and ECMP")
        sw1.recorder.exchanges.clear()
        sw1.get_facts()
        sw1.get_interfaces()
        sw1.get_interfaces_counters()
        sw1.get_interfaces_ip()
        sw1.get_lldp_neighbors()
        sw1.get_lldp_neighbors_detail()
        sw1.get_bgp_neighbors()
        sw1.get_bgp_neighbors_detail()
        sw1.get_route_to(f"{lf.LOOPBACK['sw2']}/32")
        sw1.get_config()
        sw1.recorder.save(OUT / "getters")

        # no-op: the same candidate again -> frr-reload finds nothing to do
        sw1.load_replace_candidate(config=lf.frr_config("sw1"))
        sw1.compare_config()
        sw1.discard_config()
        sw1.recorder.save(OUT / "compare_noop")

        # a change, committed and rolled back
        changed = lf.frr_config("sw1", extra_top="ip router-id 198.19.250.1")
        (OUT / "commit_rollback").mkdir(parents=True, exist_ok=True)
        (OUT / "commit_rollback" / "candidate.conf").write_text(changed)
        sw1.load_replace_candidate(config=changed)
        sw1.compare_config()
        sw1.commit_config()
        sw1.rollback()
        sw1.recorder.save(OUT / "commit_rollback")

        # FRR's parser accepts it, bgpd rejects it at reload -> previous config restored
        rejected = lf.frr_config("sw1", extra_bgp=" neighbor 198.19.10.9 peer-group NOPE")
        (OUT / "commit_rejected").mkdir(parents=True, exist_ok=True)
        (OUT / "commit_rejected" / "candidate.conf").write_text(rejected)
        sw1.load_replace_candidate(config=rejected)
        sw1.compare_config()
        try:
            sw1.commit_config()
        except ReplaceConfigException:
            pass
        else:
            raise SystemExit("commit of the rejected candidate did not fail")
        sw1.discard_config()
        sw1.recorder.save(OUT / "commit_rejected")

        # a syntax error: refused at load time
        bad = lf.frr_config("sw1", extra_bgp=" neighbor 198.19.10.1 no-such-keyword 7")
        (OUT / "load_rejected").mkdir(parents=True, exist_ok=True)
        (OUT / "load_rejected" / "candidate.conf").write_text(bad)
        try:
            sw1.load_replace_candidate(config=bad)
        except ReplaceConfigException:
            pass
        else:
            raise SystemExit("load of the bad candidate did not fail")
        sw1.recorder.save(OUT / "load_rejected")

        # one link down and one session administratively shut: single-neighbor LLDP shape
        sw2.cli(["ip link set Ethernet8 down"])
        sw1.cli([f"vtysh -c 'configure terminal' -c 'router bgp {lf.ASN['sw1']}' "
                 "-c 'neighbor 198.19.10.5 remote-as 65009' -c 'neighbor 198.19.10.5 shutdown'"])
        lf.poll(lambda: len(sw1.get_lldp_neighbors()) == 1 and sw1.get_ecmp_paths(f"{lf.LOOPBACK['sw2']}/32") == 1,
                60, "one LLDP neighbor, one path")
        sw1.recorder.exchanges.clear()
        sw1.get_interfaces()
        sw1.get_lldp_neighbors_detail()
        sw1.get_bgp_neighbors()
        sw1.get_route_to(f"{lf.LOOPBACK['sw2']}/32")
        sw1.recorder.save(OUT / "degraded")
        for d in drivers.values():
            d.close()
    finally:
        lab_down(workdir)
    print(f"recorded into {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
