"""napalm community-driver shim: ``get_network_driver("nxos_fabricgen")`` -> NxosDriver.

napalm returns the first NetworkDriver subclass in this module's namespace; only NxosDriver
(napalm's own ``nxos_ssh`` driver with fabricgen's owned-section config workflow) is exposed.
"""

from fabricgen.drivers.nxos import NxosDriver

__all__ = ["NxosDriver"]
