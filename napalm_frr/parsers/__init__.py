"""Pure parsers for the Linux/FRR/lldpd command outputs the FRR and SONiC napalm drivers read, one module
per source.

Every function takes command output text (or already-decoded JSON) and returns the napalm getter shapes from
``napalm.base.models``.  Nothing here touches the network, so each parser is unit-tested against outputs recorded
from a live FRR 8.4 + lldpd switch under ``tests/drivers/mocked_data``.

=================  ==========================================================================================
module             reads
=================  ==========================================================================================
``decode``         what every parser shares: JSON with a named source, numbers, MACs, natural order
``facts``          ``vtysh -c 'show version'``, the facts probe's ``key=value`` lines, ``/proc/uptime``,
                   the frr_defaults probe
``interfaces``     ``ip -j -d -s link show`` / ``ip -j addr show`` with zebra's ``show interface json``
``lldp``           ``lldpcli show neighbors -f json`` (lldpd 1.0.x)
``bgp``            ``show bgp vrf all summary json``, ``show bgp vrf all neighbors json``
``routes``         ``show ip route <dest> json``
``reload``         ``frr-reload.py --test --stdout`` (the "Lines To Delete" / "Lines To Add" listing) and its log
``tenant_vrfs``    a candidate frr.conf's netns-bound VRFs, zebra's ``show vrf`` and ``show evpn vni <vni> json``
=================  ==========================================================================================

FRR config text itself (normalising, canonical order, secrets, diffs) is ``napalm_frr.config``.
"""
