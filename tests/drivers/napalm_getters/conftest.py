"""napalm's own getter test harness (napalm.base.test) for fabricgen's FRR driver, on recorded outputs.

napalm community drivers test their getters with `BaseTestGetters`: each getter test runs against
a patched driver whose device answers from recorded output, checks the result against napalm's
typed models and compares it with `mocked_data/<test>/<case>/expected_result.json`.  Here the
patched FrrDriver's transport answers every command from the outputs recorded on the live FRR
lab (`tests/drivers/mocked_data/frr/getters`, recorded by `tests/drivers/record_frr_outputs.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from napalm.base.test import conftest as napalm_conftest
from napalm.base.test.double import BaseTestDouble

from fabricgen.drivers.frr import CommandResult, FrrDriver
from tests.drivers.fake_transport import FakeTransport

RECORDED = Path(__file__).resolve().parent.parent / "mocked_data" / "frr" / "getters"
ROUTE = "198.19.250.2/32"  # the prefix the recording asked for (a leaf's GPU /31 pool member)
# `longer-prefixes` of a /32 is that /32's route: same JSON as the plain lookup
LONGER = {f"vtysh -c 'show ip route {ROUTE} longer-prefixes json'":
          [{"exit_status": 0, "stdout": "014-vtysh_c_show_ip_route_198_19_250_2_32_json.out"}]}


class RecordedFrr(BaseTestDouble):  # type: ignore[misc]
    """A transport that answers from the live-lab recording; napalm's harness sets the current test."""

    def __init__(self) -> None:
        super().__init__()
        self.fake = FakeTransport(RECORDED, LONGER)
        self._replaying = ""

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: Any = None) -> CommandResult:
        if self.current_test != self._replaying:  # each test replays the recording from its start
            self.fake, self._replaying = FakeTransport(RECORDED, LONGER), self.current_test
        return self.fake.run(command, stdin=stdin, timeout=timeout, cancel=cancel)

    def is_alive(self) -> bool:
        return self.fake.is_alive()

    def close(self) -> None:
        self.fake.close()


class PatchedFrrDriver(FrrDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.patched_attrs = ["transport"]

    def _open_transport(self) -> RecordedFrr:
        return RecordedFrr()


@pytest.fixture(scope="class")
def set_device_parameters(request: pytest.FixtureRequest) -> None:
    """napalm's fixture contract: the driver class, its patched twin, and an open device (as root: the
    recording ran vtysh without sudo)."""
    request.cls.driver = FrrDriver
    request.cls.patched_driver = PatchedFrrDriver
    request.cls.vendor = "frr"
    request.cls.device = PatchedFrrDriver("127.0.0.1", "root", "", timeout=60, optional_args={})
    request.cls.device.open()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per case directory under mocked_data/<test name>/ (napalm's layout)."""
    napalm_conftest.pytest_generate_tests(metafunc, __file__)
