"""FRR parser check: vtysh --dryrun accepts a realistic leaf config and names each bad line, batched or not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabricgen.base.findings import Finding
from fabricgen.check.frr_parser import FrrCheckSetupError, check_frr_configs

pytestmark = pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")

VALID = """\
frr version 8.4
frr defaults datacenter
hostname leaf1
service integrated-vtysh-config
!
interface Ethernet0
 description spine1:Ethernet0
 ip address 198.18.0.1/31
exit
!
interface Ethernet8
 ip address 198.18.0.3/31
exit
!
interface lo
 ip address 198.19.0.1/32
exit
!
ip prefix-list LOOPBACKS seq 5 permit 198.19.0.0/16 le 32
ip prefix-list P2P seq 5 permit 198.18.0.0/16 le 31
!
route-map EXPORT permit 10
 match ip address prefix-list LOOPBACKS
exit
!
route-map EXPORT permit 20
 match ip address prefix-list P2P
exit
!
router bgp 65101
 bgp router-id 198.19.0.1
 bgp bestpath as-path multipath-relax
 no bgp ebgp-requires-policy
 neighbor SPINES peer-group
 neighbor SPINES remote-as external
 neighbor SPINES bfd
 neighbor 198.18.0.0 peer-group SPINES
 neighbor 198.18.0.2 peer-group SPINES
 !
 address-family ipv4 unicast
  redistribute connected route-map EXPORT
  maximum-paths 64
 exit-address-family
exit
!
bfd
 peer 198.18.0.0 interface Ethernet0
  detect-multiplier 3
  receive-interval 300
  transmit-interval 300
 exit
 !
 peer 198.18.0.2 interface Ethernet8
 exit
exit
!
end
"""


def write(root: Path, device: str, text: str, name: str = "frr.conf") -> Path:
    path = root / device / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def broken(text: str) -> str:
    """Two bad lines: a typo'd command (line 8) and an out-of-range prefix-list length (line 19)."""
    text = text.replace(" ip address 198.18.0.1/31", " ip adress 198.18.0.1/31")
    return text.replace("le 32", "le 33")


def test_valid_config_passes(tmp_path: Path) -> None:
    assert check_frr_configs([write(tmp_path, "leaf1", VALID)], workers=1) == []


def test_each_bad_line_is_a_finding(tmp_path: Path) -> None:
    path = write(tmp_path, "leaf1", broken(VALID))
    assert check_frr_configs([path], workers=1) == [
        Finding("leaf1", str(path), "L8", "frr-parse", "Unknown command: ip adress 198.18.0.1/31"),
        Finding("leaf1", str(path), "L19", "frr-parse",
                "Unknown command: ip prefix-list LOOPBACKS seq 5 permit 198.19.0.0/16 le 33"),
    ]  # fmt: skip


def test_batches_keep_files_apart(tmp_path: Path) -> None:
    """A file ending inside `router bgp` must not make the next file's bare neighbor lines valid."""
    open_block = write(tmp_path, "leaf1", "router bgp 65101\n neighbor 198.18.0.0 remote-as 65000\n")
    orphan = write(tmp_path, "leaf2", " neighbor 198.18.0.2 remote-as 65000\n")
    found = check_frr_configs([open_block, orphan], workers=1)
    assert [(f.device, f.location) for f in found] == [("leaf2", "L1")]


def test_batched_equals_one_file_per_call(tmp_path: Path) -> None:
    texts = [VALID, broken(VALID), "hostname leaf2\nexit\nhostname again\n", VALID.replace("exit\n", "")]
    paths = [write(tmp_path, f"leaf{i}", t) for i, t in enumerate(texts)]
    one_by_one = check_frr_configs(paths, workers=1, batch=1)
    assert one_by_one == check_frr_configs(paths, workers=1, batch=64)
    assert one_by_one == check_frr_configs(paths, workers=2, batch=2)
    # the stray top-level `exit` leaves config mode: the rest of that file fails, later files do not
    assert [(f.device, f.location) for f in one_by_one] == [("leaf1", "L8"), ("leaf1", "L19"), ("leaf2", "L3")]


def test_device_is_hostname_else_directory(tmp_path: Path) -> None:
    path = write(tmp_path, "spine7", "router bgp 65000\n neighbor 198.18.0.1 remote-as\n", "bgpd.conf")
    assert [(f.device, f.location, f.message) for f in check_frr_configs([path])] == [
        ("spine7", "L2", "Command incomplete: neighbor 198.18.0.1 remote-as")
    ]


def test_unreadable_file_is_a_finding(tmp_path: Path) -> None:
    missing = tmp_path / "leaf1" / "frr.conf"
    found = check_frr_configs([missing])
    assert [(f.file, f.rule) for f in found] == [(str(missing), "frr-parse")]


def test_missing_vtysh_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(FrrCheckSetupError, match="vtysh"):
        check_frr_configs([write(tmp_path, "leaf1", VALID)], vtysh=str(tmp_path / "no-vtysh"))
