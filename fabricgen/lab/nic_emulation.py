"""The RDMA side of a ConnectX where no NIC exists: the lab's servers have veths, not ConnectX ports.

So that each server runs its rendered NIC script unchanged (`fabricgen.host`), the lab gives
its network namespace what the inbox mlx5 driver would show:

* `/sys/class/infiniband/<dev>/device/net/<ifname>` for every back-end NIC, with RDMA device
  names deliberately *not* in netdev order (the script must map them from sysfs, as on real
  servers where mlx5 enumerates in PCI order), and the GID table mlx5 fills once the address is
  set (index 3: the RoCE v2 GID of the IPv4 address);
* no `tc/*/traffic_class` and no `ecn/*`: those exist only with MLNX_OFED / DOCA-OFED, so the
  script's inbox-driver path (warn, carry on) runs;
* stubs of the mlnx-tools commands (`mlnx_qos`, `cma_roce_tos`), which would need a ConnectX,
  that log their arguments so tests can see what the script asked for.

Everything happens inside the server's own mount namespace: `/sys/class` is covered by a tmpfs
into which every real class directory is bind-mounted back, plus the emulated `infiniband`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricgen.host import roce_gid

STUB_LOG = "/run/fabricgen-nic-stubs.log"  # inside the node (its /run); one line per stub call
STUBBED_TOOLS = ("mlnx_qos", "cma_roce_tos")


@dataclass(frozen=True)
class EmulatedNic:
    """One back-end NIC port as mlx5 would show it."""

    ifname: str
    rdma_dev: str
    ip: str  # IPv4 address without prefix


def emulated_nics(nics: Sequence[tuple[str, str]]) -> tuple[EmulatedNic, ...]:
    """(ifname, address/31) pairs -> emulated NICs, RDMA devices numbered backwards (eth0 = the last mlx5)."""
    last = len(nics) - 1
    return tuple(EmulatedNic(ifname, f"mlx5_{last - i}", address.split("/")[0])
                 for i, (ifname, address) in enumerate(nics))


def sysfs_commands(nics: Sequence[EmulatedNic], stash: str) -> list[str]:
    """sh lines, run as root in the node's own mount namespace with its netns's /sys mounted:
    cover /sys/class with a tmpfs, bind every real class back, add the emulated infiniband class.
    `stash` is an empty directory the real /sys/class is parked on meanwhile."""
    q = shlex.quote
    lines = [
        f"mkdir -p {q(stash)}",
        f"mount --bind /sys/class {q(stash)}",
        "mount -t tmpfs -o mode=755 fabricgen-sysclass /sys/class",
        f"for d in {q(stash)}/*; do n=${{d##*/}}; mkdir /sys/class/$n; mount --bind $d /sys/class/$n; done",
        f"umount -l {q(stash)}",
    ]
    for nic in nics:
        base = f"/sys/class/infiniband/{nic.rdma_dev}"
        lines.append(f"mkdir -p {base}/device/net/{q(nic.ifname)} {base}/ports/1/gids {base}/ports/1/gid_attrs/types")
        link_local = "fe80:0000:0000:0000:0000:0000:0000:0000"
        for i, (gid, kind) in enumerate(((link_local, "IB/RoCE v1"), (link_local, "RoCE v2"),
                                         (roce_gid(nic.ip), "IB/RoCE v1"), (roce_gid(nic.ip), "RoCE v2"))):
            lines.append(f"echo {gid} > {base}/ports/1/gids/{i}; echo {q(kind)} > {base}/ports/1/gid_attrs/types/{i}")
    return lines


def write_stubs(directory: Path, log: str = STUB_LOG) -> None:
    """Executable stand-ins for the mlnx-tools commands: append their name and arguments to `log`."""
    directory.mkdir(parents=True, exist_ok=True)
    for tool in STUBBED_TOOLS:
        path = directory / tool
        path.write_text("#!/bin/sh\n"
                        f"# fabricgen lab: stand-in for {tool}, which needs a ConnectX (the lab's NICs are veths)\n"
                        f'echo "{tool} $*" >> {shlex.quote(log)}\n')
        os.chmod(path, 0o755)
