"""Adding a tenant to a running FRR switch, offline (issue 25): the diff against what FRR prints is the tenant's
lines only, in whatever order FRR lists the VRFs, and each is labelled by what it does.  The same against
the live lab: tests/lab/test_tenants_live.py."""

from __future__ import annotations

from pathlib import Path

import yaml

from fabricgen.plan.build import load_plan
from fabricgen.platforms.change import Label, hunks_from_sides
from fabricgen.platforms.frr.change import frr_rule, label_frr
from fabricgen.render.build import render_all
from napalm_frr.config import canonical_lines, unified_diff
from tests.conftest import ROOT

LAB = ROOT / "inventory" / "lab" / "tenants.yaml"


def as_frr_prints(text: str, vrf_order: list[str]) -> str:
    """frr.conf as `show running-config` of FRR 8.4 lays it out with netns VRFs: `vrf` stanzas by name,
    each VRF's interfaces and BGP instance in VRF-id order (``vrf_order``), after the default VRF's."""
    from napalm_frr.config import stanzas

    blocks = stanzas(text)
    rank = {name: i for i, name in enumerate(vrf_order)}

    def key(item: tuple[int, list[str]]) -> tuple[int, int, int]:
        index, block = item
        head = block[0]
        if head.startswith("vrf "):
            return (0, sorted(rank).index(head.split()[1]), index)
        if " vrf " in head:
            return (1, rank[head.split()[-1]], index)
        return (0 if head.startswith(("frr ", "hostname", "log ", "service ")) else 1, -1, index)

    return "\n".join(line for _, block in sorted(enumerate(blocks), key=key) for line in block) + "\n"


def render(intent: Path, out: Path) -> str:
    plan = load_plan(intent)
    render_all(plan, out)
    return (out / "configs" / "tlab-leaf01" / "frr.conf").read_text()


def test_adding_a_tenant_diffs_only_its_lines_whatever_frr_order(tmp_path: Path) -> None:
    before = render(LAB, tmp_path / "a")
    doc = yaml.safe_load(LAB.read_text())
    doc["tenants"].append({"name": "amber", "id": 14, "servers": ["gpu0004", "gpu0008"]})
    grown = tmp_path / "grown.yaml"
    grown.write_text(yaml.safe_dump(doc))
    after = render(grown, tmp_path / "b")
    running = as_frr_prints(before, ["blue", "red", "green"])
    assert running != before
    assert unified_diff(canonical_lines(running), canonical_lines(before), "running", "build") == ""
    diff = unified_diff(canonical_lines(running), canonical_lines(after), "running", "build")
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert "+vrf amber" in changed and "+router bgp 4200000000 vrf amber" in changed
    assert "-interface Ethernet24" in changed and "+interface Ethernet24 vrf amber" in changed
    assert not [line for line in changed if any(f"vrf {t}" in line for t in ("red", "green", "blue"))]
    hunks = hunks_from_sides("frr.conf", canonical_lines(running), canonical_lines(after))
    label_frr(hunks, frr_rule)
    labels = {(c.sign, c.text): i.label for h in hunks for c, i in zip(h.changes, h.impacts, strict=True)}
    assert labels["+", "vrf amber"] == labels["+", "router bgp 4200000000 vrf amber"] == Label.HITLESS
    assert labels["+", "vni 10014"] == labels["+", "rd 198.18.0.3:14"] == Label.HITLESS
    assert labels["-", "ip address 198.18.32.6/31"] == Label.BGP_RESET  # the port's address leaves the default VRF
    assert labels["+", "ip address 198.18.32.6/31"] == Label.HITLESS


def test_removing_or_changing_a_tenant_is_not_hitless(tmp_path: Path) -> None:
    text = render(LAB, tmp_path / "a")
    old, new = canonical_lines(text), canonical_lines(text.replace("rd 198.18.0.3:11", "rd 198.18.0.3:99"))
    hunks = hunks_from_sides("frr.conf", old, new)
    label_frr(hunks, frr_rule)
    assert [(c.sign, c.text, i.label) for h in hunks for c, i in zip(h.changes, h.impacts, strict=True)] == [
        ("-", "rd 198.18.0.3:11", Label.BGP_RESET), ("+", "rd 198.18.0.3:99", Label.HITLESS)]
    gone = canonical_lines(text.split("router bgp 4200000000 vrf red")[0])
    labels = {(c.sign, c.text): i.label for h in hunks_from_sides("frr.conf", old, gone) for c, i in
              zip(h.changes, [frr_rule(c) for c in h.changes], strict=True)}
    assert labels["-", "router bgp 4200000000 vrf red"] == Label.BGP_RESET


def test_removing_a_tenant_diffs_only_its_lines_labelled_tenant_removed(tmp_path: Path) -> None:
    """The 3-tenant build against a switch running amber too (as FRR prints it): only amber's lines change; its
    VRF and BGP instance say "tenant amber removed" (bgp-reset: its routes are withdrawn), its port's lines
    are a port-flap (the port leaves amber's namespace), and nothing of red, green or blue changes."""
    from fabricgen.platforms.frr.change import label_removed_tenants

    doc = yaml.safe_load(LAB.read_text())
    doc["tenants"].append({"name": "amber", "id": 14, "servers": ["gpu0004", "gpu0008"]})
    grown = tmp_path / "grown.yaml"
    grown.write_text(yaml.safe_dump(doc))
    running = as_frr_prints(render(grown, tmp_path / "a"), ["blue", "red", "green", "amber"])
    after = render(LAB, tmp_path / "b")
    hunks = hunks_from_sides("frr.conf", canonical_lines(running), canonical_lines(after))
    label_frr(hunks, frr_rule)
    label_removed_tenants(hunks)
    labels = {(c.sign, c.text): i for h in hunks for c, i in zip(h.changes, h.impacts, strict=True)}
    assert not [k for k in labels if any(f"vrf {t}" in k[1] for t in ("red", "green", "blue"))]
    for line in ("vrf amber", "router bgp 4200000000 vrf amber", "vni 10014"):
        assert labels["-", line].label == Label.BGP_RESET and labels["-", line].why.startswith("tenant amber removed")
    for key in (("-", "interface Ethernet24 vrf amber"), ("+", "interface Ethernet24"),
                ("+", "ip address 198.18.32.6/31")):
        assert labels[key].label == Label.PORT_FLAP and "port Ethernet24 goes back" in labels[key].why, key
    assert labels["+", "ip prefix-list PL-LOCAL-V4 seq 20 permit 198.18.32.6/31"].label == Label.HITLESS
    # every other changed line is amber's too (its stanzas) or a stanza end
    rest = {k: i.why for k, i in labels.items() if not i.why.startswith("tenant amber removed")
            and "198.18.32.6/31" not in k[1]}
    assert set(rest) <= {("-", "exit-address-family"), ("-", "exit"), ("+", "exit")}, rest


def test_a_bgp_instance_frr_reload_deletes_whole_shows_in_the_diff(tmp_path: Path) -> None:
    """frr-reload lists a context it deletes whole as its `no` line (`no router bgp N vrf amber`, FRR 8.4's
    frr-reload.py on the lab): the diff deploy shows and labels must still carry that stanza (the live dry run
    of a tenant removal lacked it)."""
    from napalm_frr.config import touched_stanzas

    doc = yaml.safe_load(LAB.read_text())
    doc["tenants"].append({"name": "amber", "id": 14, "servers": ["gpu0004", "gpu0008"]})
    grown = tmp_path / "grown.yaml"
    grown.write_text(yaml.safe_dump(doc))
    running = canonical_lines(render(grown, tmp_path / "a"))
    after = canonical_lines(render(LAB, tmp_path / "b"))
    listing = ["interface Ethernet24 vrf amber", " no ip address 198.18.32.6/31",  # frr-reload.py --test, as live
               "no router bgp 4200000000 vrf amber", "vrf amber", " no vni 10014", "interface Ethernet24",
               " ip address 198.18.32.6/31", "ip prefix-list PL-LOCAL-V4 seq 20 permit 198.18.32.6/31"]
    old, new = touched_stanzas(running, listing), touched_stanzas(after, listing)
    diff = unified_diff(old, new, "running", "build")
    assert "-router bgp 4200000000 vrf amber\n" in diff and "-vrf amber\n" in diff
    assert "router bgp 4200000000 vrf red" not in diff  # untouched stanzas stay out


def test_the_first_reload_of_a_removal_is_the_build_without_the_ports_and_with_the_namespace(tmp_path: Path) -> None:
    """What FRR reloads first when amber is removed (napalm_frr.tenants.interim_config), from the lab leaf's real
    render: the 3-tenant build without Ethernet24's default-VRF stanza (header, lines and its `exit`: a stray
    `exit` leaves config mode, measured live as "Unknown command: interface Ethernet32"), with `vrf amber` kept
    as its `netns` line; FRR's own parser takes it whole, and nothing else differs from the build."""
    import subprocess

    from napalm_frr.tenants import interim_config, removal

    doc = yaml.safe_load(LAB.read_text())
    doc["tenants"].append({"name": "amber", "id": 14, "servers": ["gpu0004", "gpu0008"]})
    grown = tmp_path / "grown.yaml"
    grown.write_text(yaml.safe_dump(doc))
    running = as_frr_prints(render(grown, tmp_path / "a"), ["green", "red", "blue", "amber"])
    build = render(LAB, tmp_path / "b")
    gone = removal(["amber"], running)
    assert (gone.l3vnis, gone.netns, gone.ports) == ({"amber": 10014}, {"amber": "netns /run/netns/amber"},
                                                     {"Ethernet24": "amber"})
    text = interim_config(build, gone)
    stanza = build[build.index("interface Ethernet24\n"):]
    stanza = stanza[:stanza.index("exit\n") + len("exit\n")]
    assert text == build.replace(stanza, "") + "vrf amber\n netns /run/netns/amber\nexit-vrf\n"
    out = subprocess.run(["vtysh", "--dryrun", "--inputfile", "/dev/stdin"], input=text, capture_output=True,
                         text=True, check=False, timeout=60)
    assert (out.returncode, out.stdout + out.stderr) == (0, "")
