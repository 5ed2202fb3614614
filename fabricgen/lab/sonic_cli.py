"""`show`, `config` and `systemctl restart bgp` on a lab SONiC node: small, honest stand-ins for
ConfigDB, GCU and the bgp container's restart.

A lab node has no Redis, swss or sonic-utilities, so the SONiC driver's ConfigDB commands are
served from files, in the shapes sonic-utilities 691b1bbc4 prints (config/main.py, show/main.py,
generic_config_updater/generic_updater.py):

* CONFIG_DB is `/run/sonic/config_db.json` (volatile, as Redis is); `config save -y` writes it to
  `/etc/sonic/config_db.json`; checkpoints are `/etc/sonic/checkpoints/<name>.cp.json`;
* `config replace FILE` refuses what GCU refuses and is cheap to check: a file that is not a JSON
  object of tables of entries, an empty table, a changed create-only field (PORT lanes), and a
  reference that would dangle (GCU's YANG leafrefs: buffer profiles, QoS maps, schedulers, ports);
  failures print "Failed to replace config" and click's usage error (exit 2);
* what swss would do with the tables fabricgen renders and a veth can carry is done to the kernel:
  INTERFACE / LOOPBACK_INTERFACE addresses (intfmgrd; Loopback0 is a dummy netdev, a port-less bridge on a
  kernel without the dummy driver) and PORT
  admin_status / mtu (portmgrd).  QoS and buffers stay in the file: veths have no queues;
* `systemctl restart bgp` restarts the node's FRR as the bgp container would start it for the
  ConfigDB as it is now (`systemctl_main`; the daemon sets come from SONiC's supervisord template,
  rendered on the lab host into `bgp-container.json`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabricgen.lab import lossless_counters
from fabricgen.lab.lossless_counters import LAB_COUNTERS_DIR
from fabricgen.platforms.sonic.configdb import dangling_references

RUNNING = Path("/run/sonic/config_db.json")
FRR_RUN = Path("/run/frr")  # the FRR daemons' pidfiles
CONTAINER_FILE = "bgp-container.json"  # next to the stand-ins: what `systemctl restart bgp` stops and starts
MGMT_TRUE, MGMT_OTHER = "true", "other"  # frr_mgmt_framework_config "true", or anything else / absent
STARTUP = Path("/etc/sonic/config_db.json")
CHECKPOINTS = Path("/etc/sonic/checkpoints")
CHECKPOINT_EXT = ".cp.json"
CREATE_ONLY = (("PORT", "lanes"),)  # patch_sorter.CreateOnlyFilter, the tables fabricgen's lab has


class GcuError(Exception):
    """What GCU raises; the message is GCU's."""


def _load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise GcuError(f"{path}: a ConfigDB must be a JSON object of tables")
    return data


def _write(path: Path, db: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(db, indent=4, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def validate(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Raise GcuError as GCU would for a target config `new` over the running `old`."""
    for table, rows in new.items():
        if not isinstance(rows, dict) or any(not isinstance(e, dict) for e in rows.values()):
            raise GcuError(f"Given patch will produce invalid config. Error: {table} is not a table of entries")
    empty = sorted(t for t, rows in new.items() if not rows)
    if empty:
        raise GcuError(f"Given config has empty tables. Table{'s' if len(empty) != 1 else ''}: {', '.join(empty)}")
    for table, field in CREATE_ONLY:
        for key, entry in new.get(table, {}).items():
            before = old.get(table, {}).get(key)
            if isinstance(before, dict) and field in before and before[field] != entry.get(field):
                raise GcuError("There is no possible sorting")  # create-only: the port would have to go first
    dangling = dangling_references(new)
    if dangling:
        raise GcuError(f"Given patch will produce invalid config. Error: Data Loading Failed\n{dangling[0]}")


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=False, capture_output=True, text=True)


# What a LoopbackN netdev is made of: intfmgrd's dummy, else a bridge without ports (no frame leaves it, it
# holds an address with its carrier up as a dummy does) on kernels built without the dummy driver (issue 23 D10).
LOOPBACK_KINDS = ("dummy", "bridge")


def add_loopback(name: str) -> str:
    """Create and bring up a LoopbackN netdev; returns its kind.  Raises GcuError naming the kernel modules
    when none can be made: the address would silently go nowhere, and routes and ECMP with it."""
    errors = []
    for kind in LOOPBACK_KINDS:
        made = _ip("link", "add", name, "type", kind)
        if made.returncode == 0:
            _ip("link", "set", name, "up")
            return kind
        errors.append(f"type {kind}: {made.stderr.strip() or made.returncode}")
    raise GcuError(f"cannot create {name} ({'; '.join(errors)}): this kernel has neither the dummy nor the bridge "
                   f"driver (fix: `modprobe dummy`, or a kernel with CONFIG_DUMMY)")


def _addresses(db: Mapping[str, Any]) -> set[tuple[str, str]]:
    out = set()
    for table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        for key in db.get(table, {}):
            name, sep, prefix = key.partition("|")
            if sep:
                out.add((name, prefix))
    return out


def apply_to_kernel(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """intfmgrd / portmgrd for what a veth carries: addresses, admin state, MTU."""
    links = {link["ifname"] for link in json.loads(
        subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=False).stdout or "[]")}
    for name in new.get("LOOPBACK_INTERFACE", {}):
        if "|" not in name and name not in links:
            add_loopback(name)
            links.add(name)
    for port, entry in new.get("PORT", {}).items():
        if port in links:
            if "mtu" in entry:
                _ip("link", "set", port, "mtu", str(entry["mtu"]))
            _ip("link", "set", port, "up" if entry.get("admin_status") == "up" else "down")
    before, after = _addresses(old), _addresses(new)
    for name, prefix in sorted(before - after):
        if name in links:
            _ip("address", "del", prefix, "dev", name)
    for name, prefix in sorted(after):
        if name in links:
            _ip("address", "replace", prefix, "dev", name)


def replace(target: Path) -> None:
    try:
        new = _load(target)
    except (OSError, ValueError) as exc:
        raise GcuError(str(exc)) from exc
    old = _load(RUNNING)
    validate(old, new)
    apply_to_kernel(old, new)  # first: a loopback the kernel cannot make refuses the change before it is stored
    _write(RUNNING, new)


def _fail(command: str, usage: str, what: str, exc: Exception) -> int:
    """GCU's failure: red line on stderr, then click's ctx.fail (usage, Error: ..., exit 2)."""
    print(what, file=sys.stderr)
    print(f"Usage: config {command} [OPTIONS] {usage}\nTry \"config {command} -h\" for help.\n\nError: {exc}",
          file=sys.stderr)
    return 2


def config_main(argv: list[str]) -> int:
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    try:
        if cmd == "replace" and len(args) == 1:
            try:
                replace(Path(args[0]))
            except GcuError as exc:
                return _fail("replace", "TARGET_FILE_PATH", "Failed to replace config", exc)
            print("Config replaced successfully.")
        elif cmd == "checkpoint" and len(args) == 1:
            _write(CHECKPOINTS / f"{args[0]}{CHECKPOINT_EXT}", _load(RUNNING))
            print("Checkpoint created successfully.")
        elif cmd == "rollback" and len(args) == 1:
            path = CHECKPOINTS / f"{args[0]}{CHECKPOINT_EXT}"
            try:
                if not path.is_file():
                    raise GcuError(f"Checkpoint '{args[0]}' does not exist")
                replace(path)
            except GcuError as exc:
                return _fail("rollback", "CHECKPOINT_NAME", "Failed to rollback config", exc)
            print("Config rolled back successfully.")
        elif cmd == "list-checkpoints" and not args:
            names = sorted(p.name[: -len(CHECKPOINT_EXT)] for p in CHECKPOINTS.glob(f"*{CHECKPOINT_EXT}"))
            print(json.dumps(names, indent=4))
        elif cmd == "save" and args in (["-y"], ["--yes"]):
            _write(STARTUP, _load(RUNNING))
        else:
            print(f"config: the lab's SONiC node knows replace, checkpoint, rollback, list-checkpoints and save -y, "
                  f"not {' '.join(argv)!r}", file=sys.stderr)
            return 2
    except (OSError, GcuError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    return 0


def show_version(db: Mapping[str, Any]) -> str:
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    frr = subprocess.run(["vtysh", "-c", "show version"], capture_output=True, text=True, check=False).stdout
    frr_version = next((line.split()[1] for line in frr.splitlines() if line.startswith("FRRouting")), "?")
    return "\n".join([
        f"SONiC Software Version: SONiC.fabricgen-lab (bgp container emulated with FRR {frr_version})",
        "Distribution: fabricgen lab node",
        "",
        f"Platform: {meta.get('platform', 'N/A')}",
        f"HwSKU: {meta.get('hwsku', 'N/A')}",
        "ASIC: N/A",
        "ASIC Count: 1",
        "Serial Number: N/A",
        "Model Number: N/A",
        "Hardware Revision: N/A",
        "",
        "Docker images:",
        "",
    ])


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    return head, int(name[len(head):] or 0)


def lab_port_counters(directory: Path = Path(LAB_COUNTERS_DIR)) -> dict[str, dict[str, int]]:
    """The node's per-port counter files (the lab's stand-in for the ASIC's counters: veths carry no PFC)."""
    files = [f for f in directory.iterdir() if f.is_file() and not f.name.startswith(".")] if directory.is_dir() else []
    return {f.name: lossless_counters.parse(f.read_text()) for f in sorted(files, key=lambda f: _natural(f.name))}


def _simple_table(header: list[str], rows: list[list[str]]) -> str:
    """tabulate's "simple" format, right-aligned, as sonic-utilities prints its counter tables."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    return "".join("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + "\n" for cells in lines)


def show_pfc_counters(stats: Mapping[str, Mapping[str, int]]) -> str:
    """`show pfc counters` (pfcstat): a Port Rx and a Port Tx table of pause frames per priority."""
    tables = []
    for title, name in (("Port Rx", "rx_pause_prio"), ("Port Tx", "tx_pause_prio")):
        rows = [[port, *(f"{c.get(f'{name}_{p}', 0):,}" for p in lossless_counters.PRIORITIES)]
                for port, c in stats.items()]
        tables.append(_simple_table([title, *(f"PFC{p}" for p in lossless_counters.PRIORITIES)], rows))
    return "\n".join(tables)


def show_queue_counters(stats: Mapping[str, Mapping[str, int]]) -> str:
    """`show queue counters --json` (queuestat -j): per port, unicast queue UCn -> packets, bytes, drops."""
    return json.dumps({port: {f"UC{q}": {"totalpacket": str(c.get(f"tx_frames_prio_{q}", 0)),
                                         "totalbytes": str(c.get(f"tx_octets_prio_{q}", 0)),
                                         "droppacket": str(c.get(f"tc_no_buffer_discard_uc_tc_{q}", 0)),
                                         "dropbytes": "0"}
                              for q in lossless_counters.TRAFFIC_CLASSES}
                       for port, c in stats.items()}, indent=4)


# `show pfcwd stats` with no queue in it: the lab's ports carry no PFC, so no watchdog watches one
PFCWD_HEADER = ["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP",
                "RX LAST OK/DROP"]


def show_main(argv: list[str]) -> int:
    try:
        db = _load(RUNNING)
    except (OSError, ValueError, GcuError) as exc:
        print(f"Error: CONFIG_DB unreadable: {exc}", file=sys.stderr)
        return 1
    if argv == ["runningconfiguration", "all"]:
        raw = subprocess.run(["vtysh", "-c", "show running-config"], capture_output=True, text=True, check=False)
        print(json.dumps({**db, "bgpraw": raw.stdout}, indent=4))
    elif argv == ["version"]:
        print(show_version(db), end="")
    elif argv == ["pfc", "counters"]:  # validate --health: the lab's counter files in SONiC's shapes (D10)
        print(show_pfc_counters(lab_port_counters()), end="")
    elif argv == ["queue", "counters", "--json"]:
        print(show_queue_counters(lab_port_counters()))
    elif argv == ["pfcwd", "stats"]:
        print(_simple_table(PFCWD_HEADER, []), end="")
    else:
        print(f"show: the lab's SONiC node knows `runningconfiguration all`, `version`, `pfc counters`, `queue "
              f"counters --json` and `pfcwd stats`, not {' '.join(argv)!r}", file=sys.stderr)
        return 2
    return 0


def _stop(name: str) -> None:
    """Stop one FRR daemon of this node by its pidfile (the lab or an earlier restart started it)."""
    pidfile = FRR_RUN / f"{name}.pid"
    try:
        pid = int(pidfile.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        return
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not Path(f"/proc/{pid}").exists():
            break
    pidfile.unlink(missing_ok=True)


def systemctl_main(container: Path, argv: list[str]) -> int:
    """`systemctl restart bgp`: the bgp container restarts as SONiC's does.  Its FRR daemons stop,
    docker_init.sh's frr.conf treatment runs, the daemons supervisord's template starts for the
    ConfigDB's DEVICE_METADATA *now* start (zebra first; bfdd only with frr_mgmt_framework_config
    "true"), and `vtysh -b` loads frr.conf (supervisord's vtysh_b, whose errors nobody reads)."""
    if argv != ["restart", "bgp"]:
        print(f"systemctl: the lab's SONiC node knows `restart bgp`, not {' '.join(argv)!r}", file=sys.stderr)
        return 1
    spec = json.loads(container.read_text(encoding="utf-8"))
    meta = _load(RUNNING).get("DEVICE_METADATA", {}).get("localhost", {})
    start = spec["start"][MGMT_TRUE if meta.get("frr_mgmt_framework_config") == "true" else MGMT_OTHER]
    for name in spec["stop"]:
        _stop(name)
    if subprocess.run(["bash", spec["init"]], check=False).returncode:
        print("Job for bgp.service failed: docker_init.sh failed", file=sys.stderr)
        return 1
    for command in start:  # `-d`: each returns once its daemon is ready
        if subprocess.run(command, check=False).returncode:
            print(f"Job for bgp.service failed: {command[0]} did not start", file=sys.stderr)
            return 1
    subprocess.run(["vtysh", "-b"], check=False, capture_output=True)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "systemctl":
        return systemctl_main(Path(argv[1]), argv[2:])
    if not argv or argv[0] not in ("show", "config"):
        print("usage: python -m fabricgen.lab.sonic_cli show|config ARGS | systemctl CONTAINER_FILE ARGS",
              file=sys.stderr)
        return 2
    return show_main(argv[1:]) if argv[0] == "show" else config_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
