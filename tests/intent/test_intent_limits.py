"""Hostile or surprising intent files: exit 2 with file, line, field, problem and fix (issue 7 §4).

Each case goes through the CLI the way an operator would run it, and asserts the
exit status, the message and that nothing was written.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest
import yaml

from fabricgen.cli import main
from fabricgen.errors import FabricError
from fabricgen.intent import reader as intent_file
from fabricgen.intent.model import load_intent
from tests.conftest import EXAMPLE, small_intent, write_intent


def _render_fails(capsys: pytest.CaptureFixture[str], intent: Path, out: Path) -> str:
    assert main(["render", "-i", str(intent), "-o", str(out)]) == 2
    assert not out.exists(), "a refused render wrote nothing"
    err = capsys.readouterr().err
    assert "Traceback" not in err and "(fix: " in err, err
    return err


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fabric.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _small_yaml(**overrides: object) -> str:
    return yaml.safe_dump(small_intent(**overrides), sort_keys=False)


# --------------------------------------------------------------------------- the file


def test_binary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fabric.yaml"
    path.write_bytes(b"fabric:\n  name: ai\n\x89PNG\r\n\x1a\n\x00\x00")
    err = _render_fails(capsys, path, tmp_path / "out")
    assert f"{path}:3: <root>: byte 0x89 at column 1 is not UTF-8 text" in err


def test_latin1_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fabric.yaml"
    path.write_bytes(_small_yaml().replace("name: t", "name: t\n  description: caf\u00e9").encode("latin-1"))
    err = _render_fails(capsys, path, tmp_path / "out")
    assert "byte 0xe9" in err and "save the file as UTF-8" in err


def test_dev_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _render_fails(capsys, Path("/dev/zero"), tmp_path / "out")
    assert "not a regular file" in err


def test_directory_as_intent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "is a directory" in _render_fails(capsys, tmp_path, tmp_path / "out")


def test_fifo_is_not_opened(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fabric.yaml"
    os.mkfifo(fifo)
    assert "not a regular file" in _render_fails(capsys, fifo, tmp_path / "out")  # returns instead of blocking


def test_file_over_size_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fabric.yaml"
    with path.open("w") as fh:
        fh.write(_small_yaml())
        fh.truncate(intent_file.MAX_BYTES + 1)
    err = _render_fails(capsys, path, tmp_path / "out")
    assert "more than the 10 MB" in err


def test_alias_bomb_stops_early(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A billion-laughs document (10^9 values once expanded) is refused within the value bound."""
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = _yaml(tmp_path, "\n".join(rows) + "\nfabric: {name: *a8}\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    err = _render_fails(capsys, path, tmp_path / "out")
    assert f"more than {intent_file.MAX_VALUES} values once its aliases are expanded" in err
    assert resource.getrusage(resource.RUSAGE_SELF).ru_utime - before < 5, "bounded, not expanded"


@pytest.mark.parametrize("depth", [intent_file.MAX_DEPTH + 1, 100_000])
def test_deep_nesting(tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int) -> None:
    path = _yaml(tmp_path, "fabric:\n  name: " + "[" * depth + "]" * depth + "\n")
    err = _render_fails(capsys, path, tmp_path / "out")
    assert f"{path}:2:" in err and "nesting" in err
    if depth < 1000:  # libyaml's own scanner stops at 1,000 levels, before the parser delivers them
        assert f"nesting is deeper than {intent_file.MAX_DEPTH} levels" in err


@pytest.mark.parametrize("key", ["? [a, b]\n: 1\n", "? {a: 1}\n: 1\n", "x: &k a\n*k : 1\n"])
def test_complex_mapping_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str) -> None:
    err = _render_fails(capsys, _yaml(tmp_path, _small_yaml() + key), tmp_path / "out")
    assert "a mapping key is" in err and "use a plain name as the key" in err


def test_second_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _render_fails(capsys, _yaml(tmp_path, _small_yaml() + "---\nfabric: {name: b}\n"), tmp_path / "out")
    assert "more than one YAML document" in err


@pytest.mark.parametrize("tag", ["!!python/object:os.system", "!!binary", "!!set", "!custom"])
def test_unsupported_tags(tmp_path: Path, capsys: pytest.CaptureFixture[str], tag: str) -> None:
    text = _small_yaml().replace("name: t", f"name: {tag} t")
    err = _render_fails(capsys, _yaml(tmp_path, text), tmp_path / "out")
    assert "is not supported" in err and "fabric.name" in err


# --------------------------------------------------------------------------- YAML 1.1 surprises


# (line of the small intent, what replaces it, field, message)
SURPRISES = [
    ("  count: 4", "  count: true", "servers.count", "true is a boolean where a number is expected"),
    ("  tiers: 2", "  tiers: true", "topology.tiers", "true is a boolean"),
    ("    ports: 16", "    ports: 16\n    breakout: true", "switch_models.leaf.breakout", "true is a boolean"),
    ("  rail_optimized: true", "  rail_optimized: yes", "topology.rail_optimized", "'yes' is a boolean in YAML 1.1"),
    ("  rail_optimized: true", "  rail_optimized: 1", "topology.rail_optimized", "1 is not a boolean"),
    ("  spines: 4", "  spines: 04", "topology.spines", "04 has a leading zero"),
    ("  tiers: 2", "  tiers: 0x2", "topology.tiers", "0x2 is not a decimal number"),
    ("  tiers: 2", "  oversubscription: .inf", "topology.oversubscription", ".inf is not a finite number"),
    ("  tiers: 2", "  oversubscription: .nan", "topology.oversubscription", ".nan is not a finite number"),
    ("  tiers: 2", "  oversubscription: inf", "topology.oversubscription", "is not a down:up ratio"),
    ("  tiers: 2", "  oversubscription: 1:0", "topology.oversubscription", "has a zero side"),
    ("  tiers: 2", "  oversubscription: '0:1'", "topology.oversubscription", "has a zero side"),
    ("  tiers: 2", "  oversubscription: 1:2", "topology.oversubscription", "below 1:1"),
    ("platforms:", "bgp:\n  holdtime: 030\nplatforms:", "bgp.holdtime", "030 has a leading zero"),
    ("platforms:", "qos:\n  headroom:\n    pipeline_latency_kb: .inf\nplatforms:",
     "qos.headroom.pipeline_latency_kb", ".inf is not a finite number"),
    ("platforms:", "qos:\n  headroom:\n    mac_phy_delay_kb: 'nan'\nplatforms:",
     "qos.headroom.mac_phy_delay_kb", "finite number"),
    ("platforms:", "cabling:\n  gpu_leaf_m: -.inf\nplatforms:", "cabling.gpu_leaf_m", "not a finite number"),
]


@pytest.mark.parametrize(("old", "new", "field", "text"), SURPRISES, ids=[c[1].strip() for c in SURPRISES])
def test_yaml11_surprises_and_bad_numbers_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str,
                                                     new: str, field: str, text: str) -> None:
    body = _small_yaml()
    assert old + "\n" in body
    body = body.replace(old + "\n", new + "\n", 1)
    path = _yaml(tmp_path, body)
    err = _render_fails(capsys, path, tmp_path / "out")
    assert text in err, err
    lineno = next(i for i, t in enumerate(body.splitlines(), 1) if t.strip().startswith(field.split(".")[-1] + ":"))
    assert f"{path}:{lineno}: {field}: " in err, err


def test_ratio_without_quotes_is_the_ratio(tmp_path: Path) -> None:
    """YAML 1.1 reads 3:1 as the base-60 number 181; fabricgen reads the ratio the operator wrote."""
    body = _small_yaml().replace("topology:\n", "topology:\n  oversubscription: 3:1\n", 1)
    intent, _ = load_intent(_yaml(tmp_path, body))
    assert intent.topology.ratio("leaf") == 3.0


def test_merge_keys(tmp_path: Path) -> None:
    body = _small_yaml().replace("switch_models:\n  leaf:\n    ports: 16\n    port_speed: 400G\n",
                                 "switch_models:\n  leaf: &model\n    ports: 16\n    port_speed: 400G\n"
                                 "    model: base\n")
    body = body.replace("  spine:\n    ports: 16\n    port_speed: 400G\n",
                        "  spine:\n    <<: *model\n    model: spine\n")
    intent, lines = load_intent(_yaml(tmp_path, body))
    assert intent.switch_models.spine.ports == 16 and intent.switch_models.spine.model == "spine"
    assert intent.switch_models.leaf.model == "base"
    assert lines[("switch_models", "spine", "<<")] == body.splitlines().index("    <<: *model") + 1


def test_merge_key_list_earlier_wins_and_explicit_wins_over_all(tmp_path: Path) -> None:
    data, _ = intent_file.parse("a: &a {x: 1, y: 1}\nb: &b {x: 2, y: 2, z: 2}\nc:\n  y: 3\n  <<: [*a, *b]\n", "t")
    assert data["c"] == {"x": 1, "y": 3, "z": 2}


def test_merge_key_needs_mappings(tmp_path: Path) -> None:
    with pytest.raises(FabricError) as info:
        intent_file.parse("a: &a [1]\nb:\n  <<: *a\n", "t")
    assert "merge key (<<) needs a mapping" in str(info.value) and info.value.problems[0].line == 3


def test_duplicate_key_names_both_lines() -> None:
    with pytest.raises(FabricError) as info:
        intent_file.parse("a:\n  b: 1\n  b: 2\n", "t")
    assert "duplicate key 'b' (first at line 2)" in str(info.value) and info.value.problems[0].line == 3


def test_scalars_follow_yaml12_core() -> None:
    data, _ = intent_file.parse(
        "i: 4_200_000_000\nf: 0.8\ne: 1e3\nn: ~\nt: true\ns: '030'\nq: \"yes\"\nz: 0\nm: -5\nx: !!int 7\n"
        "400: k\nd: 2001-12-14\n", "t")
    assert data == {"i": 4_200_000_000, "f": 0.8, "e": 1000.0, "n": None, "t": True, "s": "030", "q": "yes",
                    "z": 0, "m": -5, "x": 7, "400": "k", "d": "2001-12-14"}


def test_example_intents_load_the_same_as_before() -> None:
    """The example intents mean what PyYAML's SafeLoader read from them."""
    from tests.conftest import EXAMPLES

    for path in (EXAMPLE, *EXAMPLES):
        ours, _ = intent_file.load(path)
        theirs = yaml.safe_load(path.read_text())
        assert ours == _stringify_keys(theirs), path


def _stringify_keys(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _stringify_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify_keys(v) for v in value]
    return value


def test_workers_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main(["render", "-i", str(write_intent(tmp_path, small_intent())), "-o", str(out), "--workers", "0"])
    assert info.value.code == 2 and not out.exists()
    assert "--workers: 0 is not 1 or more (fix: " in capsys.readouterr().err


# --------------------------------------------------------------------------- no intent runs away


def _runaway(tmp_path: Path, breakout: int, nic_speed: str, pools: dict[str, str] | None = None) -> Path:
    """One server, 576-cage 800G models split `breakout` ways, three tiers: the issue's runaway intent."""
    model = {"ports": 576, "port_speed": "800G", "breakout": breakout, "lanes_per_port": 8}
    data = {
        "fabric": {"name": "big"},
        "servers": {"count": 1, "gpus_per_server": 8, "nics_per_server": 8, "nic_speed": nic_speed},
        "switch_models": {"leaf": model, "spine": model, "super_spine": model},
        "topology": {"tiers": 3, "rail_optimized": True},
        "addressing": {"loopbacks": "198.18.0.0/24", "p2p": "198.18.16.0/24", "gpu": "198.18.32.0/24",
                       "management": "198.19.255.0/24", **(pools or {})},
        "platforms": {"leaf": "sonic", "spine": "sonic", "super_spine": "sonic"},
    }
    return _yaml(tmp_path, yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records any attempt to build switches: the refusals below must come before the topology exists."""
    from fabricgen.plan import topology

    built: list[str] = []
    real = topology._Builder.build

    def build(self: topology._Builder) -> None:
        built.append(self.intent.fabric.name)
        real(self)

    monkeypatch.setattr(topology._Builder, "build", build)
    return built


def test_design_beyond_the_size_cap_stops_before_building(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          nothing_built: list[str]) -> None:
    """Was: millions of super-spine links built (minutes, GBs) before any check rejected the intent."""
    from fabricgen.plan.topology import MAX_LINKS, MAX_SWITCHES

    # 100G ports: 2,304 spines per pod with 2,304 uplinks each; pools wide enough not to stop it first
    intent = _runaway(tmp_path, 8, "100G", {"loopbacks": "198.18.0.0/17", "p2p": "198.19.0.0/16",
                                            "gpu": "198.18.128.0/24", "management": "198.18.136.0/24"})
    err = _render_fails(capsys, intent, tmp_path / "out")
    assert f"above fabricgen's limit of {MAX_SWITCHES} switches and {MAX_LINKS} links" in err, err
    line = intent.read_text().splitlines().index("switch_models:") + 1
    assert "5308416 spine_super_spine links" in err and f"{intent}:{line}: switch_models: " in err
    assert nothing_built == []


def test_pools_are_checked_against_the_design_before_building(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              nothing_built: list[str]) -> None:
    """Was: 576 spines and 576 super-spines built for one server before the loopback pool was found short."""
    intent = _runaway(tmp_path, 2, "400G")
    err = _render_fails(capsys, intent, tmp_path / "out")
    assert "addressing.loopbacks: pool 198.18.0.0/24 holds 256 addresses but the fabric's growth envelope " \
           "needs 2881" in err, err
    assert "in use today: reserved: 0, super_spine: 576, spine: 576, leaf: 8" in err
    assert nothing_built == []


def test_a_fabric_within_the_caps_builds(nothing_built: list[str]) -> None:
    from fabricgen.plan.build import load_plan

    assert load_plan(EXAMPLE).switches and nothing_built == ["ai256"]


def test_planes_never_exceed_nic_ports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Was: planes were not checked against the NICs, so one NIC could get 8 ports."""
    body = _small_yaml(topology__planes=4)
    path = _yaml(tmp_path, body)
    err = _render_fails(capsys, path, tmp_path / "out")
    line = next(i for i, t in enumerate(body.splitlines(), 1) if t.strip().startswith("planes:"))
    assert f"{path}:{line}: topology.planes: topology.planes is 4 but a NIC has 1 port(s)" in err, err
    assert "(fix: set servers.ports_per_nic to 4" in err
    from fabricgen.plan.build import load_plan

    plan = load_plan(_yaml(tmp_path, _small_yaml(topology__planes=2, servers__ports_per_nic=2)))
    assert {nic.plane for s in plan.servers for nic in s.nics} == {0, 1}
