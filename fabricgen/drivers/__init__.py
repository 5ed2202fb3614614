"""napalm drivers fabricgen deploys with: FRR on Linux (``frr``) and SONiC (``sonic``).

napalm's ``get_network_driver("frr")`` imports ``napalm_frr`` (and ``"sonic"``
``napalm_sonic``), the thin shim packages at the repository root, which re-export
these classes; nornir-napalm resolves a host's ``platform`` the same way.
"""

from fabricgen.drivers.frr import CommandResult, FrrDriver, NetmikoTransport, Transport
from fabricgen.drivers.sonic import SonicDriver

__all__ = ["CommandResult", "FrrDriver", "NetmikoTransport", "SonicDriver", "Transport"]
