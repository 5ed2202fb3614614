"""SonicDriver through napalm's getter test harness (see ../recorded.py): typed models + expected results.

SONiC runs FRR and lldpd in its `bgp` and `lldp` containers, which print what they print on Linux: the
case (`tests/drivers/mocked_data/sonic/getters`, see its README) answers SONiC's own commands (`show
version`, `show runningconfiguration all`, the config files) from SONiC-format outputs and the
containers' commands from the live-FRR-lab recording; the getters that case had no command for get
theirs here, from the same recording.  So every getter that reads FRR or lldpd expects exactly what
FrrDriver's does (mocked_data/ of both); facts and config are SONiC's own.
"""

from __future__ import annotations

import pytest

from napalm_sonic import SonicDriver
from tests.drivers.napalm_getters.recorded import RECORDED, ROUTE, RecordedGetters, patched

FRR = "../../frr/getters/"
ROUTE_JSON = FRR + "014-vtysh_c_show_ip_route_198_19_250_2_32_json.out"
EXTRA = {
    "ip -j addr show": [{"exit_status": 0, "stdout": FRR + "008-ip_j_addr_show.out"}],
    f"sudo -n docker exec -i bgp vtysh -c 'show ip route {ROUTE} json'": [{"exit_status": 0, "stdout": ROUTE_JSON}],
    # `longer-prefixes` of a /32 is that /32's route: same JSON as the plain lookup
    f"sudo -n docker exec -i bgp vtysh -c 'show ip route {ROUTE} longer-prefixes json'":
        [{"exit_status": 0, "stdout": ROUTE_JSON}],
}


@pytest.mark.usefixtures("set_device_parameters")
class TestSonicGetters(RecordedGetters):
    """Every napalm getter SonicDriver implements, as `admin` (SONiC's commands run through sudo -n)."""

    driver = SonicDriver
    patched_driver = patched(SonicDriver, RECORDED / "sonic" / "getters", EXTRA, __name__)
    username = "admin"
