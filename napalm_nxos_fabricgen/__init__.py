"""napalm community driver for Cisco NX-OS: ``get_network_driver("nxos_fabricgen")`` -> NxosDriver.

napalm imports ``napalm_nxos_fabricgen`` and returns the first NetworkDriver subclass in this
namespace, so NxosDriver (napalm's own ``nxos_ssh`` driver with fabricgen's owned-section config
workflow) is the one class exported here.  The driver lives in ``napalm_nxos_fabricgen/nxos.py``;
what it shares with the EOS driver in ``fabricgen.platforms.owned_sections``.
"""

from napalm_nxos_fabricgen.nxos import NxosDriver

__all__ = ["NxosDriver"]
