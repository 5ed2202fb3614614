"""napalm community driver for SONiC: ``get_network_driver("sonic")`` -> SonicDriver.

napalm imports ``napalm_sonic`` and returns the first NetworkDriver subclass in this namespace
(alphabetically): FrrDriver, SonicDriver's base, would sort first, so only SonicDriver is
exported here.  The driver lives in ``napalm_sonic/sonic.py``.
"""

from napalm_sonic.sonic import SonicDriver

__all__ = ["SonicDriver"]
