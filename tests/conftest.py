"""Shared fixtures: the example intent and small intent dicts to mutate."""

from __future__ import annotations

import copy
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
# The test oracles (never read by fabricgen itself): SONiC's own files and YANG models beside the checkout.
SHARED = ROOT.parent / "shared"
SHARED_PLATFORM = SHARED / "sonic-platform"
SHARED_YANG = SHARED / "sonic-yang-models"
EXAMPLE = ROOT / "inventory" / "fabric.yaml"
EXAMPLES = sorted((ROOT / "inventory" / "examples").glob("*.yaml"))
# Set by .ci/run: platform data a test needs (../shared, the SONiC YANG models) must be there, so a
# missing copy fails those tests instead of skipping them.
REQUIRE_SHARED = "FABRICGEN_REQUIRE_SHARED"
STATE_ENV = "FABRICGEN_STATE_DIR"  # fabricgen.deploy.state.STATE_ENV (read here before fabricgen is imported)
YANG_MARK = "sonic_yang"  # every test that runs SONiC's YANG models; counted in the summary
# pytest-xdist (`make test` runs `-n auto --dist loadgroup`): the tests of one group run one after another on one
# worker, while the other tests share the remaining workers.  The live source-of-truth tests are one group; the live
# labs are two, each on a worker of its own, so two labs run at once: a lab module in LAB_GROUPS runs beside the
# modules of the other group, so the fabrics (lab names) and management subnets of the two groups must differ (`lab up`
# refuses a name or subnet another live lab holds, so a clash fails, it never mixes two labs).  Two modules of one group
# never overlap in time.  Why this split: docs/development.md, "Test time".
SERIAL_GROUPS = {"lab": "lab", "sot_live": "sot"}
# every other lab module: "lab".  The SONiC lab (its own fabric and subnet) evens the two groups' time out.
LAB_GROUPS = {"tests/lab/test_deploy_faults.py": "lab-faults", "tests/lab/test_sonic_lab.py": "lab-faults"}


def serial_group(item: pytest.Item) -> str | None:
    """The xdist group a test must run in, None for a test any worker may take."""
    for marker, group in SERIAL_GROUPS.items():
        if item.get_closest_marker(marker):
            if marker == "lab":
                return LAB_GROUPS.get(item.path.relative_to(ROOT).as_posix(), group)
            return group
    return None


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto`: a worker per CPU, and one more for each live-lab group beyond the first.  A lab worker mostly
    waits on its daemons (reloads, convergence, a silent peer's timeout), so with a worker per CPU the two lab
    groups would hold both workers of a 2-core machine and the computing tests would wait for them."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # the number asked for (xdist's own hook reads it)
    return len(os.sched_getaffinity(0)) + len({"lab", *LAB_GROUPS.values()}) - 1


def shared_required() -> bool:
    """In CI (.ci/run sets $FABRICGEN_REQUIRE_SHARED; CI systems set CI=true) ../shared must be there."""
    return (os.environ.get(REQUIRE_SHARED, "") not in ("", "0")
            or os.environ.get("CI", "").lower() in ("1", "true", "yes"))


def missing(what: str) -> NoReturn:
    """Skip a test whose platform data is absent here; fail it where the data must be present (CI)."""
    if shared_required():
        pytest.fail(f"{what} (${REQUIRE_SHARED} is set: it must be present)", pytrace=False)
    pytest.skip(what)


def pytest_configure(config: pytest.Config) -> None:
    """`fabricgen check` in the tests takes the oracle's YANG models ($FABRICGEN_SONIC_YANG, as a user would
    name a copy), unless the environment names others."""
    if SHARED_YANG.is_dir():
        os.environ.setdefault("FABRICGEN_SONIC_YANG", str(SHARED_YANG))
    # deploy's fabric locks and journals (fabricgen.deploy.state) of this test run: never the user's own, never
    # another run's on the same machine; deploys the tests start as subprocesses inherit it
    os.environ[STATE_ENV] = tempfile.mkdtemp(prefix="fabricgen-test-state-")


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(os.environ.get(STATE_ENV, ""), ignore_errors=True) if os.environ.get(STATE_ENV, "").startswith(
        tempfile.gettempdir()) else None


@pytest.fixture(scope="session")
def sonic_yang_models() -> Path:
    """The SONiC YANG models, found as `fabricgen check` finds them (check.yang_models)."""
    from fabricgen.check.yang_models import SonicYangSetupError, find_models

    try:
        return find_models()
    except SonicYangSetupError as exc:
        missing(str(exc))


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group markers into the node ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "sonic_yang_models" in getattr(item, "fixturenames", ()):
            item.add_marker(YANG_MARK)
        group = serial_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True)
def _serial_group_held(request: pytest.FixtureRequest) -> None:
    """Under xdist a live-lab test must carry its group in its node id, or two labs run at once and collide
    (pytest 9.2 silently drops the group: pytest-dev/pytest-xdist#1386)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    group = serial_group(request.node)
    if group is not None and not request.node.nodeid.endswith(f"@{group}"):
        pytest.fail(f"{request.node.nodeid} runs outside its xdist group {group!r} (run with --dist loadgroup)",
                    pytrace=False)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How many SONiC YANG tests ran, passed, failed or skipped, and where the models came from."""
    outcome: dict[str, str] = {}
    for reports in terminalreporter.stats.values():
        for rep in reports:
            if YANG_MARK not in getattr(rep, "keywords", {}) or getattr(rep, "when", None) is None:
                continue
            if rep.failed:
                outcome[rep.nodeid] = "failed"
            elif rep.skipped:
                outcome.setdefault(rep.nodeid, "skipped")
            elif rep.when == "call":
                outcome.setdefault(rep.nodeid, "passed")
    if not outcome:
        return
    counts = {k: sum(1 for v in outcome.values() if v == k) for k in ("passed", "failed", "skipped")}
    ran = counts["passed"] + counts["failed"]
    try:
        from fabricgen.check.yang_models import SonicYangSetupError, locate

        source, found = locate()
        models = f"models from {source.source}: {found}"
    except SonicYangSetupError:
        models = "models not found: `make sonic-yang` fetches them"
    terminalreporter.write_line(
        f"SONiC YANG tests: {ran} ran ({counts['passed']} passed, {counts['failed']} failed), "
        f"{counts['skipped']} skipped; {models}")


def small_intent(**overrides: Any) -> dict[str, Any]:
    """A 4-server, 2-tier rail-optimized fabric on 16-port switches; every address in 198.18.0.0/15."""
    data: dict[str, Any] = {
        "fabric": {"name": "t"},
        "servers": {"count": 4, "gpus_per_server": 4, "nics_per_server": 4, "nic_speed": "400G"},
        "switch_models": {"leaf": {"ports": 16, "port_speed": "400G"}, "spine": {"ports": 16, "port_speed": "400G"}},
        "platforms": {"leaf": "sonic", "spine": "nxos"},
        "topology": {"tiers": 2, "rail_optimized": True, "scalable_unit": 4, "spines": 4},
        "addressing": {"loopbacks": "198.18.0.0/24", "p2p": "198.18.16.0/22", "gpu": "198.18.32.0/22",
                       "management": "198.19.254.0/24"},
    }
    return copy.deepcopy(override(data, **overrides))


def override(data: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """Set nested keys of an intent dict: ``topology__spines=4`` sets data["topology"]["spines"]."""
    for dotted, value in overrides.items():
        node = data
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return data


def write_intent(tmp_path: Path, data: dict[str, Any], name: str = "fabric.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def example_plan():  # type: ignore[no-untyped-def]
    from fabricgen.plan.build import load_plan

    return load_plan(EXAMPLE)


BUGGY_LEAF = "ai256-leaf03"


@pytest.fixture()
def pfc_bug_on_a_leaf(monkeypatch: pytest.MonkeyPatch) -> str:
    """A renderer bug the fast checks must catch: PFC on the wrong priority on one port of BUGGY_LEAF."""
    from fabricgen.base.templating import to_json
    from fabricgen.platforms.sonic import render as sonic

    real = sonic.config_db_text  # what render writes (its class tables are shared: the bug goes in one leaf's text)

    def buggy(sw, plan):  # type: ignore[no-untyped-def]
        text = real(sw, plan)
        if sw.hostname != BUGGY_LEAF:
            return text
        db = json.loads(text)
        db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "4"
        return to_json(db)

    monkeypatch.setattr(sonic, "config_db_text", buggy)
    return BUGGY_LEAF


@pytest.fixture(scope="session")
def sonic_platform() -> Path:
    """SONiC's own SKU files and code, the tests' oracle (../shared/sonic-platform).  fabricgen renders from
    the SKU records it ships; tests that need SONiC's files or code name this tree explicitly."""
    if not (SHARED_PLATFORM / "device").is_dir():
        missing(f"SONiC platform pack (the test oracle) not found at {SHARED_PLATFORM}")
    return SHARED_PLATFORM


def without_skus(data: dict[str, Any]) -> dict[str, Any]:
    """The intent dict with every SKU model replaced by its generic numbers (for tests that swap platforms)."""
    from fabricgen.intent.model import Intent
    from fabricgen.plan.build import resolve_hardware

    resolved, _ = resolve_hardware(Intent.model_validate(data))
    for role, model in data.get("switch_models", {}).items():
        if isinstance(model, dict) and model.get("sku"):
            sm = getattr(resolved.switch_models, role)
            model.pop("sku")
            model.update(ports=sm.ports, port_speed=sm.port_speed, breakout=sm.breakout,
                         lanes_per_port=sm.lanes_per_port)
    return data
