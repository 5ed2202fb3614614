"""napalm's own getter test harness (napalm.base.test) for the FRR and SONiC drivers, on recorded outputs.

napalm community drivers test their getters with `BaseTestGetters`: each getter test runs against
a patched driver whose device answers from recorded output, checks the result against napalm's
typed models and compares it with `<driver>/mocked_data/<test>/<case>/expected_result.json`.  Here
the patched driver's transport answers every command from a `tests/drivers/fake_transport.py` case
directory, replayed from its start for each test.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from napalm.base import NetworkDriver, models
from napalm.base.test import helpers
from napalm.base.test.double import BaseTestDouble
from napalm.base.test.getters import BaseTestGetters, wrap_test_cases

from fabricgen.base.ssh import CommandResult
from fabricgen.napalm_kit import HEALTH_GETTERS, PTP_GETTERS
from tests.drivers.fake_transport import FakeTransport

RECORDED = Path(__file__).resolve().parent.parent / "mocked_data"
ROUTE = "198.19.250.2/32"  # the prefix the FRR recording asked for (a leaf's GPU /31 pool member)
# fabricgen's documented driver extensions, which napalm's base does not have
EXTENSIONS = {"get_bfd_peers", "get_ecmp_paths", "get_ecmp_hash", "uninterruptible", *HEALTH_GETTERS, *PTP_GETTERS}


class RecordedDevice(BaseTestDouble):  # type: ignore[misc]
    """A transport that answers from a recorded case; napalm's harness sets the current test."""

    def __init__(self, case: Path, extra: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__()
        self.case, self.extra = case, extra
        self.fake = FakeTransport(case, extra)
        self._replaying = ""

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: Any = None) -> CommandResult:
        if self.current_test != self._replaying:  # each test replays the recording from its start
            self.fake, self._replaying = FakeTransport(self.case, self.extra), self.current_test
        return self.fake.run(command, stdin=stdin, timeout=timeout, cancel=cancel)

    def is_alive(self) -> bool:
        return self.fake.is_alive()

    def close(self) -> None:
        self.fake.close()


def patched(driver: type[NetworkDriver], case: Path, extra: dict[str, list[dict[str, Any]]],
            module: str) -> type[NetworkDriver]:
    """napalm's `patched_driver`: `driver` whose transport is the recording.  napalm's double finds
    `mocked_data/` next to the module it belongs to: `module`, the driver's conftest."""
    device = type(f"Recorded{driver.__name__}", (RecordedDevice,), {"__module__": module})

    class Patched(driver):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.patched_attrs = ["transport"]

        def _open_transport(self) -> RecordedDevice:
            return device(case, extra)

    Patched.__name__ = f"Patched{driver.__name__}"
    return Patched


def set_parameters(request: pytest.FixtureRequest) -> None:
    """napalm's fixture contract: the test class names its driver and patched twin; an open device."""
    cls = request.cls
    cls.vendor = cls.driver.platform
    cls.device = cls.patched_driver("127.0.0.1", cls.username, "", timeout=60, optional_args={})
    cls.device.open()


class RecordedGetters(BaseTestGetters):  # type: ignore[misc]
    """napalm's getter tests; the getters a driver does not implement skip (NotImplementedError).
    A subclass names `driver`, `patched_driver` (see `patched`) and the `username` it logs in as."""

    device: Any
    driver: Any
    patched_driver: Any
    username: str

    def test_method_signatures(self) -> None:
        """napalm's check, except for fabricgen's documented driver extensions (``fabricgen_*``,
        ``get_bfd_peers``, ``get_ecmp_paths``, ``get_ecmp_hash``, ``uninterruptible``, the lossless-health
        getters)."""
        for name, method in inspect.getmembers(self.driver, inspect.isfunction):
            if name.startswith("_") or name.startswith("fabricgen_") or name in EXTENSIONS:
                continue
            base = getattr(NetworkDriver, name, None)
            assert base is not None, f"{name} is not a napalm method"
            assert inspect.getfullargspec(method)[:4] == inspect.getfullargspec(base)[:4], name
        assert inspect.getfullargspec(self.driver.__init__)[:4] == inspect.getfullargspec(NetworkDriver.__init__)[:4]

    @wrap_test_cases
    def test_get_route_to(self, test_case: str) -> Any:
        """napalm's test asks for 1.0.4.0/24; the recording has this fabric's prefix."""
        return self._routes(longer=False)

    @wrap_test_cases
    def test_get_route_to_longer(self, test_case: str) -> Any:
        return self._routes(longer=True)

    def _routes(self, longer: bool) -> Any:
        routes = self.device.get_route_to(destination=ROUTE, protocol="bgp", longer=longer)
        assert routes
        for entries in routes.values():
            for route in entries:
                assert helpers.test_model(models.RouteDict, route)
        return routes
