"""What fabricgen's napalm drivers use from fabricgen: the one module napalm_frr, napalm_sonic,
napalm_nxos_fabricgen and napalm_eos_fabricgen import from it.

A driver is napalm's (one NetworkDriver per platform, getters returning typed dicts); what it needs
from fabricgen is a transport with verified host keys, the lossless-health and PTP getter mixins, the rules of
which config sections fabricgen owns, and a few platform facts (where a Linux switch's ptp4l.conf goes).
Keeping them behind this module lets the rest of fabricgen move without touching the drivers, and shows in
one place what a driver depends on.
"""

from __future__ import annotations

from fabricgen.base.config_tree import ConfigLine, parse_tree
from fabricgen.base.ssh import (
    SILENT_PEER_SECONDS,
    CommandInterrupted,
    CommandResult,
    ConfigUndetermined,
    ConnectionLost,
    DeviceLocked,
    NetmikoTransport,
    Transport,
    known_hosts_option,
    netmiko_connect,
    redact,
)
from fabricgen.catalog.registry import capabilities
from fabricgen.platforms import expand_runs
from fabricgen.platforms.eos.change import DRAIN as EOS_DRAIN
from fabricgen.platforms.eos.ptp import EosPtpGetters
from fabricgen.platforms.frr.health import LinuxHealthGetters
from fabricgen.platforms.frr.tenants import ip_json, kernel_routes_command, neighbours_command, vteps_without_mac
from fabricgen.platforms.health import HEALTH_GETTERS
from fabricgen.platforms.linuxptp import CONF_FILE as PTP4L_CONF
from fabricgen.platforms.linuxptp import DEVICE_CONF as PTP4L_DEVICE_CONF
from fabricgen.platforms.linuxptp import GENERATED as PTP4L_GENERATED
from fabricgen.platforms.linuxptp import SERVICE as PTP4L_SERVICE
from fabricgen.platforms.nxos.health import NxosHealthGetters
from fabricgen.platforms.nxos.ptp import NxosPtpGetters
from fabricgen.platforms.owned_sections import (
    RUNNING_SIDE,
    in_service_by_switch,
    kept_notes,
    rendered_config,
    shut_as_unused,
    sides,
)
from fabricgen.platforms.ptp_state import PTP_GETTERS, LinuxPtpGetters
from fabricgen.platforms.sonic.configdb import OwnershipError, merge_owned
from fabricgen.platforms.sonic.health import SonicHealthGetters
from fabricgen.platforms.sonic.render import BGP_CONTAINER_BOOT_FIELDS, BGP_SERVICE, bgp_container_daemons

__all__ = [
    "BGP_CONTAINER_BOOT_FIELDS", "BGP_SERVICE", "HEALTH_GETTERS", "RUNNING_SIDE", "SILENT_PEER_SECONDS",
    "CommandInterrupted", "CommandResult",
    "ConfigLine", "ConfigUndetermined", "ConnectionLost", "DeviceLocked", "EOS_DRAIN", "EosPtpGetters",
    "LinuxHealthGetters", "LinuxPtpGetters", "NetmikoTransport", "NxosHealthGetters", "NxosPtpGetters",
    "OwnershipError", "PTP4L_CONF", "PTP4L_DEVICE_CONF", "PTP4L_GENERATED", "PTP4L_SERVICE", "PTP_GETTERS",
    "SonicHealthGetters",
    "Transport", "bgp_container_daemons", "capabilities", "expand_runs", "in_service_by_switch", "kept_notes",
    "known_hosts_option", "merge_owned", "netmiko_connect", "parse_tree", "redact", "rendered_config",
    "shut_as_unused", "sides", "ip_json", "kernel_routes_command", "neighbours_command", "vteps_without_mac",
]
