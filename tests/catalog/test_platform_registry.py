"""The platform registry: every record's claims hold for what fabricgen renders, and plan refuses a setting
a role's platform lacks the capability for, naming the capability."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from fabricgen.base.templating import environment
from fabricgen.catalog.registry import PLATFORMS, SWITCH_PLATFORMS, Capabilities, load, platform
from fabricgen.errors import FabricError
from fabricgen.intent.model import Intent
from fabricgen.plan.build import build_plan, load_plan
from fabricgen.render.build import render_switch
from tests.conftest import small_intent

SWITCHES = list(SWITCH_PLATFORMS)


def plan_on(name: str, **overrides: object):  # type: ignore[no-untyped-def]
    """A small fabric all on one platform, at the largest MTU it takes."""
    qos = {"mtu": min(9216, platform(name).capabilities.max_mtu)}
    return build_plan(Intent.model_validate(small_intent(platforms={"leaf": name, "spine": name}, qos=qos,
                                                         **overrides)))


@pytest.mark.parametrize("name", SWITCHES)
def test_record_files_are_what_its_renderer_writes(name: str) -> None:
    plan = plan_on(name)
    record = platform(name)
    for sw in plan.switches.values():
        assert tuple(render_switch(sw, plan)) == record.files
    assert record.main_file == record.files[0]
    assert record.bgp_config_file in record.files
    assert record.pointer_file in ("", *record.files)


@pytest.mark.parametrize("name", SWITCHES)
def test_record_references_load(name: str) -> None:
    record = platform(name)
    assert callable(record.render_fn()) and callable(record.extractor_fn())
    assert record.port_name is not None
    # generic names are distinct for every (cage, sub-port) of a broken-out 64-cage switch
    names = {record.port_name(c, s, 2, 8) for c in range(64) for s in range(2)}
    assert len(names) == 128


@pytest.mark.parametrize("name", SWITCHES)
def test_napalm_driver_is_installed(name: str) -> None:
    from napalm import get_network_driver

    driver = get_network_driver(platform(name).napalm_driver)
    assert callable(driver.load_replace_candidate)


def test_service_files_are_rendered_and_placed_by_the_driver() -> None:
    """A record's service files: written by its renderer where PTP runs, and placed by its napalm driver (the
    candidate bundle names nothing the driver does not know where to put)."""
    from napalm_frr.services import SERVICE_FILES
    from tests.conftest import ROOT

    ptp_plan = load_plan(ROOT / "inventory" / "lab" / "ptp.yaml")
    for name in SWITCHES:
        record = platform(name)
        assert set(record.service_files) <= set(SERVICE_FILES) if record.napalm_driver == "frr" else \
            not record.service_files
    frr = platform("frr")
    assert frr.service_files == ("ptp4l.conf",)
    for sw in ptp_plan.switches.values():
        assert set(frr.service_files) <= set(render_switch(sw, ptp_plan))


def test_extractor_reads_each_platforms_rendered_files(tmp_path: Path) -> None:
    """The fact extractor a record names reads the files its renderer wrote (BGP at least, QoS where it has it)."""
    for name in SWITCHES:
        plan = plan_on(name)
        record = platform(name)
        sw = next(iter(plan.switches.values()))
        out = tmp_path / name / sw.hostname
        out.mkdir(parents=True)
        for fname, text in render_switch(sw, plan).items():
            (out / fname).write_text(text, encoding="utf-8")
        facts = record.extractor_fn()(plan, tmp_path / name, sw.hostname)
        assert facts.bgp_asn == sw.asn and not facts.missing and not facts.errors
        assert facts.qos == record.capabilities.lossless_qos


def test_unknown_platform_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=re.escape(f"unknown platform 'junos' (known: {', '.join(sorted(PLATFORMS))})")):
        platform("junos")
    assert set(PLATFORMS) >= set(SWITCHES)


def test_capabilities_by_name() -> None:
    caps = Capabilities(adaptive_routing_modes=frozenset({"flowlet"}), bfd=True)
    assert caps.has("adaptive-routing flowlet") and not caps.has("adaptive-routing per-packet")
    assert caps.has("bfd") and not caps.has("pfc-watchdog") and not caps.has("qp-hashing")


def test_adaptive_routing_no_platform_has_is_refused() -> None:
    with pytest.raises(FabricError) as exc:
        plan_on("sonic", ecmp={"adaptive_routing": {"enabled": True, "mode": "flowlet"}})
    (p,) = exc.value.problems
    assert p.path == "ecmp.adaptive_routing.enabled"
    assert "capability `adaptive-routing flowlet`" in p.message and "sonic" in p.message
    assert "enabled: false" in p.hint


def test_role_setting_a_platform_lacks_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A platform without BFD or a PFC watchdog (a record that says so) makes plan name the capability."""
    import fabricgen.plan.build as planner

    base = platform("sonic")
    weak = dataclasses.replace(base, capabilities=dataclasses.replace(base.capabilities, bfd=False,
                                                                        pfc_watchdog=False))
    monkeypatch.setattr(planner, "platform", lambda name: weak if name == "sonic" else platform(name))
    with pytest.raises(FabricError) as exc:
        build_plan(Intent.model_validate(small_intent()))
    found = {(p.path, p.message) for p in exc.value.problems}
    assert ("bgp.bfd.enabled", "platform sonic (leaves) lacks the capability `bfd`") in found
    assert ("qos.pfc_watchdog.enabled", "platform sonic (leaves) lacks the capability `pfc-watchdog`") in found
    # turning the settings off is the fix they name
    plan = build_plan(Intent.model_validate(small_intent(bgp={"bfd": {"enabled": False}},
                                                         qos={"pfc_watchdog": {"enabled": False}})))
    assert plan.switches


def test_lab_runs_only_lab_platforms() -> None:
    from fabricgen.lab.from_plan import require_frr

    require_frr(plan_on("frr"), "x.yaml")
    require_frr(plan_on("sonic"), "x.yaml")
    with pytest.raises(FabricError, match="the lab runs FRR switches \\(Linux or SONiC\\), not nxos"):
        require_frr(plan_on("nxos"), "x.yaml")
    assert [r.name for r in PLATFORMS.values() if r.lab_node] == ["sonic", "frr"]


def test_loader_caches() -> None:
    assert load("fabricgen.catalog.registry:platform") is platform


def test_checked_pairs_are_the_records_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """JUnit's passing cases come from each platform's record: a platform without structural checks is
    never reported as having passed NX-OS (or any other platform's) rules."""
    from fabricgen.check import run
    from fabricgen.platforms.nxos.check import RULES as NXOS_RULES

    plan = build_plan(Intent.model_validate(small_intent()))  # sonic leaves, nxos spines
    pairs = set(run.checked_pairs(plan, full=True))
    for sw in plan.switches.values():
        structural = {r for h, r in pairs if h == sw.hostname and not r.startswith(("roce-", "addr-"))}
        assert structural == ({"sonic-yang", "frr-parse"} if sw.platform == "sonic" else set(NXOS_RULES))
    bare = dataclasses.replace(platform("nxos"), file_checks=(), analyzer="", structural_rules="")
    monkeypatch.setattr(run, "platform", lambda name: bare if name == "nxos" else platform(name))
    pairs = set(run.checked_pairs(plan, full=True))
    spines = {sw.hostname for sw in plan.switches.values() if sw.platform == "nxos"}
    assert not {r for h, r in pairs if h in spines and not r.startswith(("roce-", "addr-"))}


def test_mtu_and_queue_limits_of_a_platform_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record's largest MTU and its strict-above-round-robin queue model become plan errors naming the fix."""
    import fabricgen.plan.build as planner

    base = platform("sonic")
    tight = dataclasses.replace(base, capabilities=dataclasses.replace(base.capabilities, max_mtu=9214,
                                                                         strict_queues_highest=True))
    monkeypatch.setattr(planner, "platform", lambda name: tight if name == "sonic" else platform(name))
    with pytest.raises(FabricError) as exc:
        build_plan(Intent.model_validate(small_intent(qos={"mtu": 9216, "cnp_tc": 2})))
    found = {p.path: p for p in exc.value.problems}
    assert "takes interface MTUs up to 9214" in found["qos.mtu"].message and "9214" in found["qos.mtu"].hint
    assert "CNP class 2 is below the lossless class 3" in found["qos.cnp_tc"].message
    assert build_plan(Intent.model_validate(small_intent(qos={"mtu": 9214}))).switches


def test_nic_scripts_render_as_the_host_platform(tmp_path: Path) -> None:
    """GPU servers are a platform too: the host record's renderer and layout make hosts/<server>.sh."""
    from fabricgen.catalog.registry import host_platform
    from fabricgen.render.build import render_all

    host = host_platform()
    assert host.kind == "host" and host.name not in SWITCH_PLATFORMS
    plan = plan_on("frr")
    render_all(plan, tmp_path / "b")
    for srv in plan.servers:
        ((name, text),) = host.render_fn()(srv, plan, environment()).items()
        path = tmp_path / "b" / host.output_dir / name
        assert name == host.files[0].format(device=srv.name) and path.read_text(encoding="utf-8") == text
        assert path.stat().st_mode & 0o111
    with pytest.raises(Exception, match="unknown platform 'host'"):
        Intent.model_validate(small_intent(platforms={"leaf": "host"}))
