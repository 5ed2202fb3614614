"""napalm community-driver shim: ``get_network_driver("sonic")`` -> SonicDriver.

napalm returns the *first* NetworkDriver subclass found in this module's namespace,
in alphabetical order; FrrDriver (SonicDriver's base) would sort first, so it must
not be imported here.  Only SonicDriver is exposed.
"""

from fabricgen.drivers.sonic import SonicDriver

__all__ = ["SonicDriver"]
