"""napalm community-driver shim: ``get_network_driver("eos_fabricgen")`` -> EosDriver.

napalm returns the first NetworkDriver subclass in this module's namespace; only EosDriver
(napalm's own ``eos`` driver with fabricgen's owned-section candidates) is exposed.
"""

from fabricgen.drivers.eos import EosDriver

__all__ = ["EosDriver"]
