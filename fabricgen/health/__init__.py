"""Lossless health: `fabricgen validate --health [--window SECONDS]`.

Is the fabric lossless right now?  Two reads of every switch's PFC, queue and PFC-watchdog
counters ``--window`` seconds apart; the deltas against the intent's ``health:`` limits; the
live NIC settings of every server against the plan; Prometheus text for node_exporter.

Modules: ``models`` (the getters' typed dicts, a snapshot), ``parse_sonic`` / ``parse_nxos`` /
``parse_ethtool`` (platform output), ``getters`` (driver mixins), ``deltas`` (two reads ->
deltas), ``checks`` (deltas vs limits -> findings), ``nic`` (servers over SSH), ``collect``
(the live run), ``prometheus`` (text exposition).
"""
