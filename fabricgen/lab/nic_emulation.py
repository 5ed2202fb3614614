"""The RDMA side of a ConnectX where no NIC exists: the lab's servers have veths, not ConnectX ports.

So that each server runs its rendered NIC script unchanged (`fabricgen.platforms.host.render`), the lab gives
its network namespace what the inbox mlx5 driver would show:

* `/sys/class/infiniband/<dev>/device/net/<ifname>` for every back-end NIC, with RDMA device
  names deliberately *not* in netdev order (the script must map them from sysfs, as on real
  servers where mlx5 enumerates in PCI order), and the GID table mlx5 fills once the address is
  set (index 3: the RoCE v2 GID of the IPv4 address);
* no `tc/*/traffic_class` and no `ecn/*`: those exist only with MLNX_OFED / DOCA-OFED, so the
  script's inbox-driver path (warn, carry on) runs;
* stand-ins for the commands that would need a ConnectX - `mlnx_qos`, `cma_roce_tos` (mlnx-tools)
  and `mlxconfig` (firmware settings) - that log their arguments, so tests see what the script
  asked for, and keep what they are told: per interface the trust state and PFC mask, per RDMA
  device the RDMA-CM default ToS and the firmware's CNP and congestion-control settings (factory
  values of a ConnectX-6 Dx: CNP_DSCP 48, CNP_802P_PRIO 6, ROCE_CC_PRIO_MASK 255), printed back
  in the tools' own output shapes, so `validate --health` reads a lab server as a real one.
  A test changes a NIC behind the script's back by editing those state files (`nic_state_file`).

Everything happens inside the server's own mount namespace: `/sys/class` is covered by a tmpfs
into which every real class directory is bind-mounted back, plus the emulated `infiniband`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricgen.platforms.host.render import roce_gid

STUB_LOG = "/run/fabricgen-nic-stubs.log"  # inside the node (its /run); one line per stub call
STUBBED_TOOLS = ("mlnx_qos", "cma_roce_tos", "mlxconfig")
FACTORY_FIRMWARE = {"CNP_DSCP": 48, "CNP_802P_PRIO": 6, "ROCE_CC_PRIO_MASK": 255}  # per port P1, P2


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


def state_dir(log: str) -> str:
    """Where the stand-ins keep what they were told: beside their log (the node's /run in the lab)."""
    return os.path.join(os.path.dirname(log) or ".", "fabricgen-nic")


def nic_state_file(log: str, name: str, setting: str) -> str:
    """The state file of one setting: ``name`` an interface (trust, pfc) or RDMA device
    (default_roce_tos, firmware)."""
    return os.path.join(state_dir(log), name, setting)


_MLNX_QOS = """\
state={state}
ifname=""; trust=""; pfc=""
while [ $# -gt 0 ]; do
    case "$1" in
        -i|--interface) ifname=$2; shift 2 ;;
        --trust) trust=$2; shift 2 ;;
        -f|--pfc) pfc=$2; shift 2 ;;
        *) shift ;;
    esac
done
[ -n "$ifname" ] || {{ echo "usage: mlnx_qos -i <interface> [options]" >&2; exit 1; }}
[ -e "/sys/class/net/$ifname" ] || {{ echo "Interface $ifname not found" >&2; exit 1; }}
mkdir -p "$state/$ifname"
[ -z "$trust" ] || echo "$trust" > "$state/$ifname/trust"
[ -z "$pfc" ] || echo "$pfc" > "$state/$ifname/pfc"
t=$(cat "$state/$ifname/trust" 2>/dev/null || echo pcp)
p=$(cat "$state/$ifname/pfc" 2>/dev/null || echo 0,0,0,0,0,0,0,0)
echo "DCBX mode: OS controlled"
echo "Priority trust state: $t"
echo "PFC configuration:"
printf '\\tpriority    0   1   2   3   4   5   6   7\\n'
printf '\\tenabled     %s   \\n' "$(echo "$p" | sed 's/,/   /g')"
"""

_CMA_ROCE_TOS = """\
state={state}
dev=mlx5_0; port=1; tos=-1
while getopts "d:t:hp:" arg; do
    case $arg in
        d) dev=$OPTARG ;;
        p) port=$OPTARG ;;
        t) tos=$OPTARG ;;
        h) echo "Set/Show RoCE default ToS of RDMA_CM applications"; exit 0 ;;
    esac
done
[ -d "/sys/class/infiniband/$dev" ] || {{ echo "Device $dev port $port does not exist"; exit 1; }}
mkdir -p "$state/$dev"
[ "$tos" -lt 0 ] || echo "$tos" > "$state/$dev/default_roce_tos"
cat "$state/$dev/default_roce_tos" 2>/dev/null || echo 0
"""

_MLXCONFIG = """\
state={state}
dev=""; mode=""
while [ $# -gt 0 ]; do
    case "$1" in
        -d|--dev) dev=$2; shift 2 ;;
        -y|--yes) shift ;;
        q|query) mode=q; shift; break ;;
        s|set) mode=s; shift; break ;;
        *) shift ;;
    esac
done
[ -d "/sys/class/infiniband/$dev" ] || {{ echo "-E- Failed to open device: $dev" >&2; exit 1; }}
fw="$state/$dev/firmware"
mkdir -p "$state/$dev"
[ -f "$fw" ] || printf '{factory}' > "$fw"
if [ "$mode" = s ]; then
    for kv in "$@"; do
        key=${{kv%%=*}}; grep -v "^$key=" "$fw" > "$fw.new"; echo "$kv" >> "$fw.new"; mv "$fw.new" "$fw"
    done
    echo "Apply new Configuration? (y/n) [n] : y"
    exit 0
fi
printf '\\nDevice #1:\\n----------\\n\\nDevice type:    ConnectX6DX\\nDevice:         %s\\n\\n' "$dev"
printf 'Configurations:                                      Next Boot\\n'
keys="$*"
[ -n "$keys" ] || keys=$(cut -d= -f1 "$fw")
for key in $keys; do
    value=$(grep "^$key=" "$fw" | cut -d= -f2)
    [ -n "$value" ] && printf '        %-40s%s\\n' "$key" "$value"
done
exit 0
"""


def write_stubs(directory: Path, log: str = STUB_LOG) -> None:
    """Executable stand-ins for the ConnectX tools (see the module docstring): each appends its name and
    arguments to `log` and keeps its state under `state_dir(log)`."""
    directory.mkdir(parents=True, exist_ok=True)
    state = shlex.quote(state_dir(log))
    factory = "".join(f"{key}_P{port}={value}\\n" for port in (1, 2) for key, value in FACTORY_FIRMWARE.items())
    bodies = {"mlnx_qos": _MLNX_QOS.format(state=state),
              "cma_roce_tos": _CMA_ROCE_TOS.format(state=state),
              "mlxconfig": _MLXCONFIG.format(state=state, factory=factory)}
    for tool in STUBBED_TOOLS:
        path = directory / tool
        path.write_text("#!/bin/sh\n"
                        f"# fabricgen lab: stand-in for {tool}, which needs a ConnectX (the lab's NICs are veths)\n"
                        f'echo "{tool} $*" >> {shlex.quote(log)}\n' + bodies[tool])
        os.chmod(path, 0o755)
