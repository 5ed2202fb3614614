"""napalm's getter harness fixtures for every driver under here (see recorded.py)."""

from __future__ import annotations

import pytest
from napalm.base.test import conftest as napalm_conftest

from tests.drivers.napalm_getters.recorded import set_parameters


@pytest.fixture(scope="class")
def set_device_parameters(request: pytest.FixtureRequest) -> None:
    set_parameters(request)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per case directory under <test module's dir>/mocked_data/<test name>/ (napalm's layout)."""
    napalm_conftest.pytest_generate_tests(metafunc, metafunc.module.__file__)
