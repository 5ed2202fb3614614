"""FrrDriver through napalm's getter test harness (see conftest.py): typed models + expected results."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from napalm.base import NetworkDriver, models
from napalm.base.test import helpers
from napalm.base.test.getters import BaseTestGetters, wrap_test_cases

from fabricgen.health.getters import HEALTH_GETTERS
from tests.drivers.napalm_getters.conftest import ROUTE


@pytest.mark.usefixtures("set_device_parameters")
class TestFrrGetters(BaseTestGetters):  # type: ignore[misc]
    """napalm's getter tests; the getters FrrDriver does not implement skip (NotImplementedError)."""

    device: Any
    driver: Any

    def test_method_signatures(self) -> None:
        """napalm's check, except for fabricgen's documented driver extensions (``fabricgen_*``,
        ``get_bfd_peers``, ``get_ecmp_paths``, ``uninterruptible``, the lossless-health getters), which napalm's
        base does not have."""
        extensions = {"get_bfd_peers", "get_ecmp_paths", "uninterruptible", *HEALTH_GETTERS}
        for name, method in inspect.getmembers(self.driver, inspect.isfunction):
            if name.startswith("_") or name.startswith("fabricgen_") or name in extensions:
                continue
            base = getattr(NetworkDriver, name, None)
            assert base is not None, f"{name} is not a napalm method"
            assert inspect.getfullargspec(method)[:4] == inspect.getfullargspec(base)[:4], name
        assert inspect.getfullargspec(self.driver.__init__)[:4] == inspect.getfullargspec(NetworkDriver.__init__)[:4]

    @wrap_test_cases
    def test_get_route_to(self, test_case: str) -> Any:
        """napalm's test asks for 1.0.4.0/24; the recording has this fabric's prefix."""
        routes = self.device.get_route_to(destination=ROUTE, protocol="bgp")
        assert routes
        for entries in routes.values():
            for route in entries:
                assert helpers.test_model(models.RouteDict, route)
        return routes

    @wrap_test_cases
    def test_get_route_to_longer(self, test_case: str) -> Any:
        routes = self.device.get_route_to(destination=ROUTE, protocol="bgp", longer=True)
        assert routes
        for entries in routes.values():
            for route in entries:
                assert helpers.test_model(models.RouteDict, route)
        return routes
