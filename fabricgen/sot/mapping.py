"""The one mapping from the plan to source-of-truth objects (provider-neutral).

Every provider (NetBox, Nautobot, a third one) receives what `desired()` builds here and only
translates it into its server's records; nothing about the fabric is decided in a provider.

What the plan gives, and where it goes:

* manufacturers, device types with one interface template per front-panel port (the SKU's own
  ports, names and aliases where the role has a SKU, the platform's generic naming otherwise, plus
  the management port and the loopback), device roles, platforms, one site named after the fabric;
* devices: every switch and every host on a leaf port (GPU servers, endpoints), with the switch's
  ASN; interfaces: every port the plan uses (breakout sub-ports included), management and loopback;
* cables: one per physical cable (`fabricgen.physical`: a breakout cable joins several ports),
  labelled as the cabling sheet labels it, with its media type, length and part class;
* prefixes for every address pool, every address the plan gives out on its interface, ASNs;
* VRFs and route targets: none until the intent has tenants (`tenant_objects` is the hook).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from fabricgen.catalog.skus import HardwareSku, generic_port_name
from fabricgen.plan.model import Plan, Role, Server, Switch
from fabricgen.plan.physical import build_physical, cable_label, cage_of, default_cage, media_kind
from fabricgen.sot.objects import TAG, TAG_COLOR, Desired

# The loopback and management interface of each platform, as its configs name them.
LOOPBACK = {"nxos": "loopback0", "eos": "Loopback0", "sonic": "Loopback0", "frr": "lo"}
MGMT = {"nxos": "mgmt0", "eos": "Management1", "sonic": "eth0", "frr": "eth0"}
HOST_MGMT = "mgmt0"  # a host's management port (its back-end ports are the plan's NIC names)
VENDORS = {"nxos": "Cisco", "eos": "Arista"}
SONIC_VENDOR_DIRS = {"mellanox": "NVIDIA", "nvidia": "NVIDIA", "dell": "Dell", "arista": "Arista",
                     "celestica": "Celestica", "accton": "Edgecore", "broadcom": "Broadcom"}
GENERIC_VENDOR = "Generic"
ROLE_NAMES: dict[str, str] = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine"}
ROLE_COLORS = {"leaf": "4caf50", "spine": "ff9800", "super-spine": "f44336", "gpu-server": "9c27b0"}
CABLE_TYPES = {"DAC": "dac-passive", "ACC": "dac-active", "AOC": "aoc", "SR": "mmf", "DR": "smf", "FR": "smf",
               "LR": "smf"}
FORM_FACTORS = {"osfp": "osfp", "qsfp-dd": "qsfpdd", "qsfp112": "qsfp112", "qsfp56": "qsfp56", "qsfp28": "qsfp28"}
FIXED_PORT_TYPES = {1: "1000base-t", 10: "10gbase-x-sfpp", 25: "25gbase-x-sfp28", 50: "50gbase-x-sfp56",
                    100: "100gbase-x-qsfp28"}


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-")[:100] or "x"


def interface_type(speed: int, cage: str) -> str:
    """The interface type slug NetBox and Nautobot share: the logical speed in the cage's form factor
    (a 400G half of an 800G OSFP cage is 400gbase-x-osfp); a provider maps a type its server lacks to other."""
    ff = FORM_FACTORS.get(cage)
    if ff is None:
        return FIXED_PORT_TYPES.get(speed, "other")
    return f"{speed}gbase-x-{ff}"


def vendor(platform: str, model: str, sku: HardwareSku | None) -> str:
    """The manufacturer: the platform's vendor (NX-OS, EOS), the model's first word ("NVIDIA SN5600"),
    the SONiC SKU's vendor folder, else Generic."""
    if platform in VENDORS:
        return VENDORS[platform]
    first = model.split()[0] if " " in model.strip() else ""
    if first and first.lower() != "generic":
        return first
    if sku is not None and sku.source:
        folder = Path(sku.source).parent.parent.name.lower()
        if folder in SONIC_VENDOR_DIRS:
            return SONIC_VENDOR_DIRS[folder]
    return GENERIC_VENDOR


def device_type_name(plan: Plan, role: Role) -> str:
    """One device type per port layout: the model with its SKU, or with the generic layout it runs."""
    m = plan.settings.models[role]
    hw = plan.hardware.get(role)
    if hw is not None and hw.sku is not None:
        return f"{m.model} ({hw.sku.name})" if m.model != hw.sku.name else m.model
    layout = f"{plan.settings.platforms[role]} {m.ports}x{m.port_speed}G"
    if m.split:
        (ds, db), (us, ub) = m.down, m.up
        layout += f" down {db}x{ds}G up {ub}x{us}G"
    elif m.breakout > 1:
        layout += f" {m.breakout}x{m.logical_speed}G"
    return f"{m.model} ({layout})"


def _role_templates(plan: Plan, role: Role, switches: list[Switch]) -> list[tuple[str, str, str, bool]]:
    """(name, type, label, mgmt_only) of every port of the role's device type."""
    m = plan.settings.models[role]
    platform = plan.settings.platforms[role]
    hw = plan.hardware.get(role)
    cage = cage_of(m)
    out: list[tuple[str, str, str, bool]] = []
    if hw is not None and hw.sku is not None:
        usable = {p.name for c in hw.cages for p in c}
        for p in hw.sku.ports:
            kind = interface_type(p.speed, cage) if p.name in usable or p.speed >= 100 else \
                FIXED_PORT_TYPES.get(p.speed, "other")
            out.append((p.name, kind, p.alias if p.alias != p.name else "", False))
    else:
        layout: dict[int, tuple[int, int]] = {}
        for sw in switches:
            for itf in sw.interfaces:
                layout.setdefault(itf.cage, (itf.breakout, itf.speed))
        for c in range(m.ports):
            breakout, speed = layout.get(c, (m.breakout, m.logical_speed))
            for sub in range(breakout):
                name = generic_port_name(platform, c, sub, breakout, m.lanes_per_port)
                out.append((name, interface_type(speed, cage), "", False))
    out.append((MGMT.get(platform, "mgmt0"), "1000base-t", "", True))
    out.append((LOOPBACK.get(platform, "lo"), "virtual", "", False))
    return out


def _host_layout(plan: Plan, host: Server) -> tuple[str, list[tuple[str, str, str, bool]]]:
    """A host's device type: its NIC ports (the plan's names) and its management port."""
    ports = plan.envelope.planes if host.role == "gpu" else 1
    templates = []
    for nic in host.nics:
        total = nic.speed * ports
        cage = "osfp" if total >= 400 else default_cage(total, 4)
        templates.append((nic.ifname, interface_type(nic.speed, cage), "", False))
    templates.append((HOST_MGMT, "1000base-t", "", True))
    speeds = sorted({n.speed for n in host.nics})
    kind = "GPU server" if host.role == "gpu" else f"{host.role} endpoint"
    name = f"{kind} ({len(host.nics)} x {'/'.join(str(s) for s in speeds)}G)"
    return name, templates


def host_role(host: Server) -> str:
    return "gpu-server" if host.role == "gpu" else f"{host.role}-endpoint"


def desired(plan: Plan) -> Desired:
    """Every object the plan puts in a source of truth."""
    fabric = plan.settings.name
    d = Desired(fabric)
    d.add("tag", TAG, name=TAG, slug=TAG, color=TAG_COLOR,
          description="Owned by fabricgen: `fabricgen sot push` creates and updates it; hands off otherwise")
    d.add("site", fabric, name=fabric, slug=slugify(fabric), status="active",
          description=plan.settings.description or f"fabricgen fabric {fabric}")

    def manufacturer(name: str) -> str:
        if name not in d.of("manufacturer"):
            d.add("manufacturer", name, name=name, slug=slugify(name))
        return name

    def device_type(name: str, maker: str, part: str, templates: Iterable[tuple[str, str, str, bool]]) -> None:
        if name in d.of("device_type"):
            return
        d.add("device_type", name, manufacturer=manufacturer(maker), model=name, slug=slugify(name),
              part_number=part, u_height=1)
        for port, kind, label, mgmt in templates:
            d.add("interface_template", f"{name}:{port}", device_type=name, name=port, type=kind, label=label,
                  mgmt_only=mgmt)

    by_role: dict[Role, list[Switch]] = {}
    for sw in plan.switches.values():
        by_role.setdefault(sw.role, []).append(sw)
    for role, switches in by_role.items():
        platform = plan.settings.platforms[role]
        m = plan.settings.models[role]
        hw = plan.hardware.get(role)
        sku = hw.sku if hw is not None else None
        device_type(device_type_name(plan, role), vendor(platform, m.model, sku), sku.name if sku else "",
                    _role_templates(plan, role, switches))
        rname = ROLE_NAMES[role]
        d.add("role", rname, name=rname, slug=slugify(rname), color=ROLE_COLORS.get(rname, "9e9e9e"))
        if platform not in d.of("platform"):
            d.add("platform", platform, name=platform, slug=slugify(platform))
    for sw in plan.switches.values():
        platform = plan.settings.platforms[sw.role]
        where = f"plane {sw.plane}" + (f" pod {sw.pod}" if sw.pod else "") + \
            (f" SU {sw.su}" if sw.su >= 0 else "") + (f" rail {sw.rail}" if sw.rail >= 0 else "")
        d.add("device", sw.hostname, name=sw.hostname, device_type=device_type_name(plan, sw.role),
              role=ROLE_NAMES[sw.role], platform=platform, site=fabric, status="active", asn=sw.asn or None,
              description=f"{ROLE_NAMES[sw.role]}, {where}")
        lo, mg = LOOPBACK.get(platform, "lo"), MGMT.get(platform, "mgmt0")
        d.add("interface", f"{sw.hostname}:{lo}", device=sw.hostname, name=lo, type="virtual", enabled=True,
              mgmt_only=False)
        d.add("interface", f"{sw.hostname}:{mg}", device=sw.hostname, name=mg, type="1000base-t", enabled=True,
              mgmt_only=True)
        cage = cage_of(plan.settings.models[sw.role])
        for itf in sw.interfaces:
            d.add("interface", f"{sw.hostname}:{itf.name}", device=sw.hostname, name=itf.name,
                  type=interface_type(itf.speed, cage), enabled=True, mgmt_only=False)
        _ip(d, f"{sw.loopback}/32", sw.hostname, lo, "loopback")
        if sw.loopback_v6:
            _ip(d, f"{sw.loopback_v6}/128", sw.hostname, lo, "loopback")
        _ip(d, f"{sw.mgmt_ip}/{plan.settings.pools.management.prefixlen}", sw.hostname, mg)
        for itf in sw.interfaces:
            if itf.ipv4:
                _ip(d, itf.ipv4, sw.hostname, itf.name)
            if itf.ipv6:
                _ip(d, itf.ipv6, sw.hostname, itf.name)
        if sw.asn and str(sw.asn) not in d.of("asn"):
            d.add("asn", str(sw.asn), asn=sw.asn, description=_asn_description(plan, sw))
    for host in plan.hosts():
        name, templates = _host_layout(plan, host)
        device_type(name, GENERIC_VENDOR, "", templates)
        hrole = host_role(host)
        if hrole not in d.of("role"):
            d.add("role", hrole, name=hrole, slug=slugify(hrole), color=ROLE_COLORS.get(hrole, "9e9e9e"))
        d.add("device", host.name, name=host.name, device_type=name, role=hrole, platform=None, site=fabric,
              status="active", asn=None, description=f"{host.role} host, SU {host.su}")
        d.add("interface", f"{host.name}:{HOST_MGMT}", device=host.name, name=HOST_MGMT, type="1000base-t",
              enabled=True, mgmt_only=True)
        for (port, kind, _, _), nic in zip(templates, host.nics, strict=False):
            d.add("interface", f"{host.name}:{port}", device=host.name, name=port, type=kind, enabled=True,
                  mgmt_only=False)
            if nic.ip:
                _ip(d, nic.ip, host.name, port)
        if host.mgmt_ip:
            _ip(d, f"{host.mgmt_ip}/{plan.settings.pools.management.prefixlen}", host.name, HOST_MGMT)
    pools = plan.settings.pools
    for pool_name in ("loopbacks", "p2p", "gpu", "management", "loopbacks_v6", "p2p_v6"):
        net = getattr(pools, pool_name)
        if net is not None:
            d.add("prefix", str(net), prefix=str(net), status="active",
                  description=f"fabricgen {fabric} {pool_name} pool")
    _cables(plan, d)
    tenant_objects(plan, d)
    return d


def _ip(d: Desired, address: str, device: str, interface: str, role: str | None = None) -> None:
    d.add("ip", address, address=address, interface=f"{device}:{interface}", status="active", role=role)


def _asn_description(plan: Plan, sw: Switch) -> str:
    if sw.role == "leaf" and plan.settings.asn_scheme == "multi-as":
        return f"{plan.settings.name} {sw.hostname}"
    where = f"plane {sw.plane}" + (f" pod {sw.pod}" if sw.role == "spine" else "")
    return f"{plan.settings.name} {ROLE_NAMES[sw.role]}s, {where}" if sw.role != "leaf" else \
        f"{plan.settings.name} leaves"


def _cables(plan: Plan, d: Desired) -> None:
    """One cable per physical cable, labelled as cabling.csv labels it; `links` pairs its ports (A, B)
    for sources of truth whose cables join one port to one port."""
    phys = build_physical(plan)
    peer: dict[tuple[str, str], tuple[str, str, int, float]] = {}
    for link in plan.links:
        peer[link.a_device, link.a_port] = (link.z_device, link.z_port, link.speed, link.length_m)
        peer[link.z_device, link.z_port] = (link.a_device, link.a_port, link.speed, link.length_m)
    for cable in phys.cables:
        a = tuple(f"{e.device}:{e.port}" for e in cable.a)
        b = tuple(f"{e.device}:{e.port}" for e in cable.z)
        z_dev, z_port, speed, length = peer[cable.a[0].device, cable.a[0].port]
        pairs = []
        for e in cable.a:
            pd, pp, _, _ = peer[e.device, e.port]
            pairs.append((f"{e.device}:{e.port}", f"{pd}:{pp}"))
        modules = "; ".join(x for x in (f"A module {cable.a_module}" if cable.a_module else "",
                                        f"B module {cable.z_module}" if cable.z_module else "") if x)
        label = cable_label(cable)
        d.add("cable", label, label=label, a=tuple(sorted(a)), b=tuple(sorted(b)),
              type=CABLE_TYPES[media_kind(speed, length)], length=float(length), length_unit="m",
              status="connected", description=f"{cable.kind}" + (f"; {modules}" if modules else ""),
              links=tuple(pairs))


def tenant_objects(plan: Plan, d: Desired) -> None:
    """VRFs and route targets, one per tenant, where the intent has tenants.

    The intent has none yet: a fabric is one routing table, so there is nothing to push.  When tenants
    arrive, each becomes d.add("vrf", name, name=..., rd=..., import_targets=(...), export_targets=(...))
    and its targets d.add("route_target", rt, name=rt): both kinds are in objects.KINDS (route targets
    written before VRFs need them) and in each provider's endpoints; what is left then is each provider's
    payload of a VRF's targets (their ids) and a test with a tenant.
    """
    tenants = getattr(plan, "tenants", None) or ()
    for tenant in tenants:  # pragma: no cover - no plan has tenants yet
        rt = f"{tenant.asn}:{tenant.vni}"
        d.add("route_target", rt, name=rt, description=f"{plan.settings.name} {tenant.name}")
        d.add("vrf", tenant.name, name=tenant.name, rd=rt, import_targets=(rt,), export_targets=(rt,),
              description=f"{plan.settings.name} tenant {tenant.name}")
