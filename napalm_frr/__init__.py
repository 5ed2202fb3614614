"""napalm community-driver shim: ``get_network_driver("frr")`` -> FrrDriver.

napalm returns the *first* NetworkDriver subclass in this module's namespace in
alphabetical order, so this module must expose exactly one: FrrDriver.
"""

from fabricgen.drivers.frr import FrrDriver

__all__ = ["FrrDriver"]
