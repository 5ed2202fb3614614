"""FRR's parser once per frr.conf shape (check.frr_shapes): the shortcut reports exactly what checking every file
reports, on a family of switches, with bad values in the abstracted places, with faults shared by a shape, and on
the rendered example fabrics; and the grammar facts it reads cover what vtysh itself lists."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from fabricgen.base.findings import Finding
from fabricgen.check import run
from fabricgen.check.frr_parser import check_frr_configs
from fabricgen.check.frr_shapes import Grammar, Shaper, grammar
from fabricgen.plan.build import load_plan
from fabricgen.render.build import render_all
from tests.check.test_frr_parser import VALID, write
from tests.conftest import EXAMPLE, EXAMPLES

pytestmark = pytest.mark.skipif(shutil.which("vtysh") is None, reason="FRR's vtysh is not installed")


@pytest.fixture(scope="module")
def facts() -> Grammar:
    g = grammar(shutil.which("vtysh") or "")
    assert g is not None
    return g


def member(i: int) -> str:
    """Switch i of a family: the parser test's leaf with its own hostname, ASN, addresses and descriptions,
    its neighbours named in BGP (as fabricgen's SONiC frr.conf does)."""
    text = VALID.replace("hostname leaf1", f"hostname leaf{i}").replace("router bgp 65101", f"router bgp {65100 + i}")
    text = text.replace("198.19.0.1", f"198.19.0.{i}").replace("198.18.0.", f"198.18.{i}.")
    text = text.replace(f" neighbor 198.18.{i}.0 peer-group SPINES\n",
                        f" neighbor 198.18.{i}.0 peer-group SPINES\n"
                        f" neighbor 198.18.{i}.0 description spine1:Ethernet{8 * i}\n"
                        f" neighbor 198.18.{i}.0 remote-as {4200000000 + i}\n")
    return text


def both(tmp_path: Path, texts: list[str]) -> tuple[list[Finding], list[Finding], dict[str, int]]:
    """(every file checked, the shortcut's findings, the shortcut's counts)."""
    paths = [write(tmp_path, f"sw{i}", t) for i, t in enumerate(texts)]
    stats: dict[str, int] = {}
    short = check_frr_configs(paths, workers=2, shapes=True, stats=stats)
    return check_frr_configs(paths, workers=2, shapes=False), short, stats


def test_a_family_of_switches_is_one_shape(tmp_path: Path) -> None:
    family = [member(i) for i in range(1, 7)]
    assert len(set(family)) == 6
    full, short, stats = both(tmp_path, family)
    assert full == short == []
    assert stats == {"files": 6, "shapes": 1, "checked": 1}


def test_the_classes(facts: Grammar) -> None:
    shaper = Shaper(facts)
    # keywords, and words a keyword starts with, stay; so do words an address or number token could take
    for kept in ("remote-as", "peer-group", "desc", "external", "LINE", "beef", "-5", "+7", "aa:bb:cc:dd:ee:ff"):
        assert shaper.word(kept) == kept, kept
    assert shaper.word("spine1:Ethernet0") == shaper.word("bench32k-p01-spine01:Ethernet8") == shaper.word("SPINES")
    assert shaper.word("SPINES") == "\x00w"
    assert shaper.word("4200000000") == shaper.word("4200000063")
    for a, b in (("65535", "65536"), ("4294967295", "4294967296"), ("1", "0"), ("700", "701")):
        assert shaper.word(a) != shaper.word(b), (a, b)
    key = shaper.key
    assert key("hostname leaf1\n") == key("hostname spine22\n")
    assert key("hostname leaf1\n") != key("hostname _leaf1\n")  # config_hostname: first byte alphanumeric
    assert key("hostname leaf1\n") != key(f"hostname {'x' * 256}\n")  # ... and at most 255 bytes
    assert key("ip route 198.18.0.0/31 198.18.1.1\n") == key("ip route 198.19.4.2/31 127.0.0.1\n")
    assert key("ip route 198.18.0.0/31 198.18.1.1\n") != key("ip route 198.18.0.0/32 198.18.1.1\n")
    # names and numbers outside `neighbor` / `router bgp` lines stay as written
    assert key("route-map A permit 10\n") != key("route-map B permit 10\n")
    assert key("route-map A permit 10\n") != key("route-map A permit 11\n")
    # whitespace-separated words: a tab separates, a vertical tab does not (cmd_make_strvec)
    assert key(" neighbor 198.18.0.1 remote-as 4200000000\n") == key(" neighbor 198.18.9.9 remote-as 4200000001\n")
    tabbed = "\tneighbor\t198.18.0.1\tremote-as 4200000000\n"
    assert key(tabbed) == key(tabbed.replace("198.18.0.1", "198.18.9.9").replace("4200000000", "4200000001"))
    assert key(" neighbor 198.18.0.1 remote-as 4200000000\n") != key(" neighbor  198.18.0.1 remote-as 4200000000\n")
    assert key(" neighbor 198.18.0.1\x0bremote-as 5\n") != key(" neighbor 198.18.0.1 remote-as 5\n")
    assert Shaper(facts).word("198.18.0.1\x0bremote-as") == "\x00w"  # one word, only a variable takes it
    assert key("hostname a\x00\n") is None and key("hostname " + "a" * 5000 + "\n") is None
    for copy in ("exit\nexit\n cop 198.18.0.1 running-config\n", "copy 198.18.0.1 running-config\n", "c\t1.2.3.4 x"):
        assert key(copy) is None, copy  # vtysh reads a file of that name
    assert key("exit\ncopyright 198.18.0.1\n") is not None


# Bad values in the places the shape abstracts (and beside them): each breaks one member of the family.
BAD_VALUES: dict[str, Callable[[str], str]] = {
    "octet 256": lambda t: t.replace("198.18.3.0 peer-group", "198.18.3.256 peer-group", 1),
    "leading zero": lambda t: t.replace("bgp router-id 198.19.0.3", "bgp router-id 198.19.0.03"),
    "prefix length 33": lambda t: t.replace("ip address 198.18.3.1/31", "ip address 198.18.3.1/33"),
    "three octets": lambda t: t.replace("neighbor 198.18.3.2 peer-group", "neighbor 198.18.3 peer-group"),
    "ASN 0": lambda t: t.replace("router bgp 65103", "router bgp 0"),
    "ASN 2^32": lambda t: t.replace("remote-as 4200000003", "remote-as 4294967296"),
    "ASN word": lambda t: t.replace("remote-as 4200000003", "remote-as fortytwo"),
    "ASN keyword prefix": lambda t: t.replace("remote-as 4200000003", "remote-as ext"),
    "no description": lambda t: t.replace(" description spine1:Ethernet24", " description"),
    "description keyword": lambda t: t.replace(" description spine1:Ethernet24", " remote-as spine1:Ethernet24"),
    "hostname dash": lambda t: t.replace("hostname leaf3", "hostname -leaf3"),
    "hostname 300 bytes": lambda t: t.replace("hostname leaf3", "hostname " + "l" * 300),
    "line too long": lambda t: t.replace("description spine1:Ethernet24", "description " + "x " * 2100),
}


@pytest.mark.parametrize("mutate", BAD_VALUES.values(), ids=list(BAD_VALUES))
def test_a_bad_value_is_its_own_shape_or_found(tmp_path: Path, mutate: Callable[[str], str]) -> None:
    family = [member(i) for i in range(1, 6)]
    family[2] = mutate(family[2])
    assert family[2] != member(3)
    full, short, stats = both(tmp_path, family)
    assert short == full
    if full:
        assert {f.device for f in full} == {f.device for f in short}
    assert stats["shapes"] == 2 or full  # the bad file is a shape of its own, or its shape was re-checked


# Faults every member shares: found on the representative, then reported for every member from its own file.
SHARED_FAULTS: dict[str, Callable[[str], str]] = {
    "typo": lambda t: t.replace(" ip address 198.18.", " ip adress 198.18.", 1),
    "incomplete neighbor": lambda t: re.sub(r"( neighbor \S+ remote-as) \d+\n", r"\1\n", t),
    "bad length": lambda t: t.replace("le 32", "le 33"),
    "route-map typo": lambda t: t.replace(" match ip address prefix-list LOOPBACKS", " match ip adress prefix-list L"),
    "bfd out of range": lambda t: t.replace("detect-multiplier 3", "detect-multiplier 300"),
}


@pytest.mark.parametrize("mutate", SHARED_FAULTS.values(), ids=list(SHARED_FAULTS))
def test_a_finding_of_a_shape_is_reported_for_every_member(tmp_path: Path, mutate: Callable[[str], str]) -> None:
    family = [mutate(member(i)) for i in range(1, 6)]
    full, short, stats = both(tmp_path, family)
    assert short == full
    assert {f.file for f in full} == {str(tmp_path / f"sw{i}" / "frr.conf") for i in range(5)}
    assert stats == {"files": 5, "shapes": 1, "checked": 5}


@pytest.mark.parametrize("intent", [EXAMPLE, *EXAMPLES], ids=lambda p: p.stem)
def test_rendered_fabric_shortcut_equals_every_file(intent: Path, tmp_path: Path) -> None:
    """Every FRR file of a rendered example, clean and with a fault in two of them: the same findings."""
    plan = load_plan(intent)
    render_all(plan, tmp_path, workers=1)
    paths = [p for _, p in run.files_by_check(plan, tmp_path / "configs")["frr-parse"]]
    if not paths:
        pytest.skip(f"{intent.name} renders no FRR file")
    for broken in ((), (0, len(paths) - 1)):
        for i in broken:
            paths[i].write_text(paths[i].read_text().replace("router bgp ", "router bgpp ", 1))
        stats: dict[str, int] = {}
        full = check_frr_configs(paths, shapes=False)
        assert check_frr_configs(paths, shapes=True, stats=stats) == full
        assert {f.file for f in full} == {str(paths[i]) for i in broken}
        if not broken:
            assert stats["shapes"] * 4 <= len(paths) or len(paths) < 16, stats


def test_grammar_covers_what_vtysh_lists(facts: Grammar) -> None:
    """Every keyword and range bound that vtysh's own `list` shows in the nodes fabricgen's configs use is among
    the facts read from the binaries (a superset only splits classes further)."""
    script = "\n".join(["list", "router bgp 65000", "list", "address-family ipv4 unicast", "list",
                        "exit-address-family", "address-family ipv6 unicast", "list", "exit-address-family",
                        "address-family l2vpn evpn", "list", "exit-address-family", "exit",
                        "route-map RM permit 10", "list", "exit", "interface Ethernet0", "list", "exit",
                        "vrf Vrf1", "list", "exit", "bfd", "list", "profile P", "list", "exit", "exit",
                        "line vty", "list", ""])
    proc = subprocess.run([shutil.which("vtysh") or "vtysh", "--dryrun", "--inputfile", "/dev/stdin"], input=script,
                          capture_output=True, text=True, check=False, timeout=60)
    listed = proc.stdout + proc.stderr
    assert listed.count("\n") > 1000
    bounds = {int(x) for pair in re.findall(r"\(([-+]?\d+) ?- ?([-+]?\d+)\)", listed) for x in pair}
    assert bounds and bounds <= set(facts.bounds)
    commands = [re.sub(r"\$\w+", "", line.strip()) for line in listed.splitlines()]
    keywords = {w for c in commands for w in re.findall(r"(?<![\w.:-])[a-z0-9][-+_a-zA-Z0-9*]*(?![\w.:])", c)}
    assert len(keywords) > 300
    assert keywords <= set(facts.keywords), sorted(keywords - set(facts.keywords))[:20]
