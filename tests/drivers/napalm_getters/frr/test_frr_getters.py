"""FrrDriver through napalm's getter test harness (see ../recorded.py): typed models + expected results.

The transport replays the live-FRR-lab recording (`tests/drivers/mocked_data/frr/getters`, recorded by
`tests/drivers/record_frr_outputs.py`); it ran vtysh as root, without sudo.
"""

from __future__ import annotations

import pytest

from napalm_frr import FrrDriver
from tests.drivers.napalm_getters.recorded import RECORDED, ROUTE, RecordedGetters, patched

# `longer-prefixes` of a /32 is that /32's route: same JSON as the plain lookup
LONGER = {f"vtysh -c 'show ip route {ROUTE} longer-prefixes json'":
          [{"exit_status": 0, "stdout": "014-vtysh_c_show_ip_route_198_19_250_2_32_json.out"}]}


@pytest.mark.usefixtures("set_device_parameters")
class TestFrrGetters(RecordedGetters):
    """Every napalm getter FrrDriver implements."""

    driver = FrrDriver
    patched_driver = patched(FrrDriver, RECORDED / "frr" / "getters", LONGER, __name__)
    username = "root"
