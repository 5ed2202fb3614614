"""Linux + FRR 8.4 switch (the live lab): one integrated /etc/frr/frr.conf.

On a plain Linux switch zebra owns the addresses, so besides the shared BGP part
(`frr_common.bgp_config`) the config carries every routed port (`interface Ethernet0`,
`ip address .../31`, `description`) and the loopback on `interface lo`.  MTU is not set
here: FRR 8.4's zebra has no interface `mtu` command (vtysh rejects it); the lab sets it on
the veths.  Ports use SONiC-style names (`Ethernet0`, `Ethernet8`, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import jinja2

from fabricgen.catalog.registry import platform
from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.frr.bgp import BgpConfig, bgp_config
from fabricgen.platforms.frr.tenants import NETNS_DIR, kernel_tenancy
from fabricgen.platforms.linuxptp import CONF_FILE, GENERATED, ptp4l_conf

FILENAME = "frr.conf"
PTP_FILENAME = CONF_FILE  # linuxptp's boundary clock: `ptp4l -f ptp4l.conf`
TENANTS_FILENAME = "tenants.sh"  # the kernel side of its tenant VRFs, run before FRR starts (registry lab_script)
TEMPLATE = "frr/frr.conf.j2"

# The kernel's ECMP hash (Documentation/networking/ip-sysctl.rst: fib_multipath_hash_policy 1 = Layer 4, the
# 5-tuple; 3 = custom, the fields of fib_multipath_hash_fields, Linux 5.12+; bits from include/net/ip_fib.h
# FIB_MULTIPATH_HASH_FIELD_*).  IPv4 and IPv6 have one sysctl each.  frr.conf cannot set them: the lab
# writes them at `lab up`, and validate reads them back (rule `hash`).
KERNEL_HASH_BITS = {"src-ip": 0x01, "dst-ip": 0x02, "ip-protocol": 0x04, "l4-src-port": 0x10, "l4-dst-port": 0x20}
HASH_POLICY_L4, HASH_POLICY_CUSTOM = 1, 3


@dataclass(frozen=True, slots=True)
class FrrInterface:
    name: str
    description: str
    ipv4: str  # "198.18.16.1/31"; "" = none
    ipv6: str = ""
    vrf: str = ""  # tenant VRF ("" = default)


@dataclass(frozen=True, slots=True)
class FrrConfig:
    hostname: str
    interfaces: list[FrrInterface]
    bgp: BgpConfig


def structured_config(sw: Switch, plan: Plan) -> FrrConfig:
    owner = plan.tenancy.port_tenant if plan.tenancy is not None else {}
    interfaces = [FrrInterface(itf.name, itf.description, itf.ipv4, itf.ipv6, owner.get((sw.hostname, itf.name), ""))
                  for itf in sw.interfaces]
    interfaces.append(FrrInterface("lo", "", f"{sw.loopback}/32" if sw.loopback else "",
                                   f"{sw.loopback_v6}/128" if sw.loopback_v6 else ""))
    return FrrConfig(sw.hostname, interfaces, bgp_config(sw, plan))


def kernel_hash(hash_fields: Iterable[str]) -> dict[str, str]:
    """The kernel sysctls that hash on ``hash_fields`` (ecmp.hash_fields): policy 1 for the whole 5-tuple, else
    policy 3 with those fields' bits, for IPv4 and IPv6 alike."""
    fields = set(hash_fields)
    out: dict[str, str] = {}
    for family in ("ipv4", "ipv6"):
        key = f"net.{family}.fib_multipath_hash_"
        if fields == set(KERNEL_HASH_BITS):
            out[key + "policy"] = str(HASH_POLICY_L4)
        else:
            out[key + "policy"] = str(HASH_POLICY_CUSTOM)
            out[key + "fields"] = str(sum(KERNEL_HASH_BITS[f] for f in fields))
    return out


def live_hash(plan: Plan, sw: Switch) -> dict[str, str]:
    """What `validate` expects to read back (the record's ``live_hash``): the kernel's hash sysctls."""
    return kernel_hash(plan.settings.hash_fields)


def render(sw: Switch, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    """frr.conf; ptp4l.conf where the switch runs a PTP boundary clock (linuxptp, platforms/linuxptp.py);
    tenants.sh where it carries tenant VRFs (their namespaces, ports and L3VNI devices: FRR does not make them)."""
    cfg = structured_config(sw, plan)
    out = {FILENAME: env.get_template(TEMPLATE).render(cfg=cfg, bgp=cfg.bgp, netns=NETNS_DIR,
                                                       frr_defaults=platform(sw.platform).frr_defaults)}
    kernel = kernel_tenancy(sw, plan)
    if kernel is not None:
        out[TENANTS_FILENAME] = env.get_template("frr/tenants.sh.j2").render(k=kernel)
    clock = plan.ptp.clocks.get(sw.hostname) if plan.ptp is not None else None
    if clock is not None and plan.ptp is not None:
        out[PTP_FILENAME] = ptp4l_conf(clock, plan.ptp, plan, header=f"{sw.hostname}: PTP boundary clock. "
                                       f"{GENERATED} -- do not edit; change the intent and re-render.")
    return out
