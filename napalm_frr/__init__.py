"""napalm community driver for Linux switches running FRR: ``get_network_driver("frr")`` -> FrrDriver.

napalm imports ``napalm_frr`` and returns the first NetworkDriver subclass in this namespace,
so FrrDriver is the one class exported here.  The driver lives in ``napalm_frr/frr.py``; its
pure output parsers in the ``parsers/`` package (one module per command source) and FRR's own config
text (normalising, canonical order, secrets, diffs) in ``config.py``.
"""

from napalm_frr.frr import FrrDriver

__all__ = ["FrrDriver"]
