"""napalm community driver for Arista EOS: ``get_network_driver("eos_fabricgen")`` -> EosDriver.

napalm imports ``napalm_eos_fabricgen`` and returns the first NetworkDriver subclass in this
namespace, so EosDriver (napalm's own ``eos`` driver with fabricgen's owned-section candidates) is
the one class exported here.  The driver lives in ``napalm_eos_fabricgen/eos.py``; what it shares
with the NX-OS driver in ``fabricgen.platforms.owned_sections``.
"""

from napalm_eos_fabricgen.eos import EosDriver

__all__ = ["EosDriver"]
