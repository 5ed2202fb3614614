"""Linux + FRR 8.4 switch (the live lab): one integrated /etc/frr/frr.conf.

On a plain Linux switch zebra owns the addresses, so besides the shared BGP part
(`frr_common.bgp_config`) the config carries every routed port (`interface Ethernet0`,
`ip address .../31`, `description`) and the loopback on `interface lo`.  MTU is not set
here: FRR 8.4's zebra has no interface `mtu` command (vtysh rejects it); the lab sets it on
the veths.  Ports use SONiC-style names (`Ethernet0`, `Ethernet8`, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from fabricgen.plan.model import Plan, Switch
from fabricgen.platforms.frr.bgp import BgpConfig, bgp_config

FILENAME = "frr.conf"
TEMPLATE = "frr/frr.conf.j2"


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


def render(sw: Switch, plan: Plan, env: jinja2.Environment) -> dict[str, str]:
    cfg = structured_config(sw, plan)
    return {FILENAME: env.get_template(TEMPLATE).render(cfg=cfg, bgp=cfg.bgp)}
