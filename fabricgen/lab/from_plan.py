"""Plan -> LabTopology, plus the two files a lab hands to other tools.

The lab runs every switch as Linux + FRR (platform `frr`; a `sonic` switch as FRR started the way
SONiC's bgp container starts it, with a ConfigDB stand-in: `lab.sonic_box`), each server as a
namespace configured by its own rendered NIC script (`fabricgen.platforms.host.render`: addresses,
one routing table per NIC, RoCE QoS), with the ConnectX side emulated where no NIC
exists (`lab.nic_emulation`).  It also writes a
containerlab topology (for users who run containerlab) and a nornir inventory
of the lab's management addresses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from fabricgen.base.templating import environment
from fabricgen.catalog.registry import PLATFORMS, host_platform, load, platform
from fabricgen.catalog.skus import platform_dir
from fabricgen.errors import FabricError, Problem
from fabricgen.lab.nic_emulation import emulated_nics
from fabricgen.lab.sonic_box import sonic_box
from fabricgen.lab.topology import LabError, LabInterface, LabLink, LabNode, LabTopology, SonicBox
from fabricgen.plan.model import Link, Plan, Server, Switch
from fabricgen.platforms.frr.render import kernel_hash
from fabricgen.platforms.linuxptp import CONF_FILE as PTP_FILE
from fabricgen.platforms.sonic.buffers import device_base
from fabricgen.platforms.sonic.render import BGP_CONTAINER_BOOT_FIELDS
from fabricgen.render import inventory


def require_frr(plan: Plan, source: str) -> None:
    """The lab's switches run FRR; configs of platforms it cannot run (registry `lab_node`) are refused."""
    wrong = sorted({(s.role, s.platform) for s in plan.switches.values() if not platform(s.platform).lab_node})
    runnable = ", ".join(r.name for r in PLATFORMS.values() if r.lab_node)
    if wrong:
        raise FabricError(source, [Problem(f"platforms.{role}",
                                           f"the lab runs FRR switches (Linux or SONiC), not {name}",
                                           f"set every role's platform to one the lab runs ({runnable}; see "
                                           "inventory/lab/fabric.yaml)")
                                   for role, name in wrong])


def host_script(srv: Server, plan: Plan) -> str:
    """The server's rendered bring-up script (the host platform's one file)."""
    (text,) = host_platform().render_fn()(srv, plan, environment()).values()
    return str(text)


def sonic_boot_config(plan: Plan, sw: Switch) -> dict[str, Any]:
    """The ConfigDB a lab SONiC switch boots with: its SKU's ports (up, at the lab's MTU, as the lab cables
    them), its identity, and the bgp-container fields of the switch's rendered DEVICE_METADATA (the
    container starts from them, so they are what the switch was provisioned with)."""
    rendered = json.loads(platform(sw.platform).render_fn()(sw, plan, environment())["config_db.json"])
    meta = rendered.get("DEVICE_METADATA", {}).get("localhost", {})
    db = device_base(plan, sw)
    for entry in db["PORT"].values():
        entry.update(admin_status="up", mtu=str(plan.settings.mtu))
    hw = plan.hardware.get(sw.role)
    identity = {"hostname": sw.hostname, "hwsku": hw.sku.name if hw is not None and hw.sku is not None else "N/A"}
    db["DEVICE_METADATA"] = {"localhost": {**identity, **{k: meta[k] for k in BGP_CONTAINER_BOOT_FIELDS if k in meta}}}
    return db


def sonic_node_box(plan: Plan, sw: Switch) -> SonicBox:
    pack = platform_dir()
    if pack is None:
        raise LabError(f"{sw.hostname} is a SONiC switch: the lab runs SONiC's own bgp container scripts "
                       "(dockers/docker-fpm-frr of sonic-buildimage), which fabricgen does not ship (fix: pass "
                       "--sonic-platform DIR or set $FABRICGEN_SONIC_PLATFORM to a sonic-buildimage checkout)")
    return sonic_box(pack, sonic_boot_config(plan, sw))


def _box(plan: Plan, sw: Switch) -> SonicBox | None:
    """What the switch's platform adds to a plain FRR lab node (its record's ``lab_box``: SONiC's container)."""
    hook = platform(sw.platform).lab_box
    return load(hook)(plan, sw) if hook else None


def _kernel_script(plan: Plan, sw: Switch) -> str:
    """The switch's rendered kernel script (its record's ``lab_script``), "" if it renders none."""
    record = platform(sw.platform)
    if not record.lab_script:
        return ""
    return record.render_fn()(sw, plan, environment()).get(record.lab_script, "")


def _link_mtu(plan: Plan, link: Link) -> int:
    """The cable's MTU: its switch port's planned MTU (an overlay raises the fabric links above qos.mtu)."""
    for device, port in ((link.a_device, link.a_port), (link.z_device, link.z_port)):
        sw = plan.switches.get(device)
        itf = next((i for i in sw.interfaces if i.name == port), None) if sw is not None else None
        if itf is not None:
            return itf.mtu
    return plan.settings.mtu


def ptp_config(plan: Plan, sw: Switch) -> str:
    """The switch's rendered linuxptp config (its platform's ``ptp4l.conf``), "" when it runs no PTP clock:
    the lab starts the boundary clock with the node (lab.ptp), as the build would have it run."""
    if plan.ptp is None or sw.hostname not in plan.ptp.clocks:
        return ""
    files = platform(sw.platform).render_fn()(sw, plan, environment())
    return str(files.get(PTP_FILE, ""))


def lab_topology(plan: Plan, workdir: str | Path) -> LabTopology:
    nodes: list[LabNode] = []
    # every lab switch forwards in the kernel: it hashes on the plan's fields (validate's `hash` reads it back)
    hash_sysctls = tuple(kernel_hash(plan.settings.hash_fields).items())
    for sw in plan.switches.values():
        nodes.append(LabNode(name=sw.hostname, kind="switch", mgmt_ip=sw.mgmt_ip,
                             frr_config=f"hostname {sw.hostname}\n",
                             sonic=_box(plan, sw), sysctls=hash_sysctls, ptp_config=ptp_config(plan, sw),
                             kernel_script=_kernel_script(plan, sw)))
    for srv in plan.hosts():
        # each server (and endpoint) is configured by its own rendered NIC script, as a real one would be
        nics = sorted(srv.nics, key=lambda n: (n.nic, n.port))
        nodes.append(LabNode(name=srv.name, kind="server", mgmt_ip=srv.mgmt_ip,
                             interfaces=tuple(LabInterface(n.ifname) for n in nics),
                             host_script=host_script(srv, plan),
                             emulated_rdma=emulated_nics([(n.ifname, n.ip) for n in nics])))
    links = [LabLink(link.a_device, link.a_port, link.z_device, link.z_port, _link_mtu(plan, link))
             for link in plan.links]
    return LabTopology(name=plan.settings.name, nodes=tuple(nodes), links=tuple(links),
                       mgmt_subnet=str(plan.settings.pools.management), workdir=str(workdir))




def containerlab(plan: Plan, configs: Path | None = None) -> str:
    """A containerlab topology: sonic-vs / cisco_n9kv switches, linux servers, planned cables.

    Containerlab names data ports eth1, eth2 ... in front-panel order; each link
    carries the planned port names as a comment so the cabling stays readable.
    """
    nodes: dict[str, Any] = {}
    port_eth: dict[tuple[str, str], str] = {}
    for sw in plan.switches.values():
        record = platform(sw.platform)
        node: dict[str, Any] = {"kind": record.containerlab_kind, "image": record.containerlab_image,
                                "mgmt-ipv4": sw.mgmt_ip, "labels": {"role": sw.role, "platform": sw.platform}}
        if configs is not None:
            node["startup-config"] = str(configs / sw.hostname / record.main_file)
        nodes[sw.hostname] = node
        for itf in sw.interfaces:
            port_eth[sw.hostname, itf.name] = f"eth{itf.index + 1}"
    for srv in plan.hosts():
        host = host_platform()
        nodes[srv.name] = {"kind": host.containerlab_kind, "image": host.containerlab_image, "mgmt-ipv4": srv.mgmt_ip,
                           "labels": {"role": "server" if srv.role == "gpu" else srv.role}}
        for n, nic in enumerate(srv.nics):
            port_eth[srv.name, nic.ifname] = f"eth{n + 1}"
    doc = {
        "name": plan.settings.name,
        "mgmt": {"network": f"{plan.settings.name}-mgmt", "ipv4-subnet": str(plan.settings.pools.management)},
        "topology": {"nodes": nodes},
    }
    lines = [f"# containerlab topology of fabric {plan.settings.name}, generated by fabricgen",
             yaml.safe_dump(doc, sort_keys=False, default_flow_style=False).rstrip("\n"), "  links:"]
    for link in plan.links:  # written by hand so that each cable keeps its planned port names as a comment
        a = f"{link.a_device}:{port_eth[link.a_device, link.a_port]}"
        z = f"{link.z_device}:{port_eth[link.z_device, link.z_port]}"
        lines.append(f"    # {link.a_device} {link.a_port} <-> {link.z_device} {link.z_port} ({link.media})")
        lines.append(f'    - endpoints: ["{a}", "{z}"]')
    return "\n".join(lines) + "\n"


def lab_defaults(key_file: Path) -> dict[str, Any]:
    """nornir defaults for the lab: root over SSH with the lab's key (the key file's path, never the key);
    each host names its own platform's napalm driver."""
    return {"username": "root",
            "connection_options": {"napalm": {"extras": {"optional_args": {"key_file": str(key_file)}}}}}


def write_lab_files(plan: Plan, workdir: Path, key_file: Path) -> list[Path]:
    """The containerlab topology and the lab's nornir inventory (the plan's hosts and groups)."""
    workdir.mkdir(parents=True, exist_ok=True)
    clab = workdir / f"{plan.settings.name}.clab.yml"
    clab.write_text(containerlab(plan), encoding="utf-8")
    return [clab, *inventory.write(plan, workdir / "inventory", lab_defaults(key_file))]
