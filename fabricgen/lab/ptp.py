"""linuxptp in the lab: a ptp4l per planned clock, started with the node, from the configs fabricgen rendered.

* a switch runs its rendered ``ptp4l.conf`` (the frr platform's boundary clock), written to
  ``<node>/linuxptp/ptp4l.conf``;
* a server or grandmaster host runs one ptp4l per ``fabricgen-<ifname>.conf`` its NIC script wrote to
  ``$PTP_CONF_DIR`` (``<node>/linuxptp``), as the script's comment says to run them.

Each ptp4l answers pmc on its rendered ``uds_address`` (/var/run/ptp4l or /var/run/ptp4l-<ifname>), which
is the node's own /run (daemons.NODE_MOUNTS); its PID goes to ``/run/ptp4l[-<ifname>].pid`` and its log to
``<node>/linuxptp/ptp4l[-<ifname>].log``.  Software timestamping (``time_stamping software`` in the
rendered files, the lab intent's choice) is all veths offer, and every namespace shares one kernel clock:
the rendered ``free_running 1`` keeps each ptp4l measuring without steering it (docs/ptp.md).

ptp4l has no daemon mode: it runs in the background of the node's setup script, in the node's
namespaces, so ``lab down`` ends it with everything else there.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from fabricgen.platforms.linuxptp import CONF_FILE as SWITCH_CONF

__all__ = ["SWITCH_CONF", "conf_dir", "host_lines", "restart_command", "stop_command", "switch_lines"]
PTP4L = "/usr/sbin/ptp4l"
CONF_DIR = "linuxptp"  # under the node's directory


def conf_dir(node_dir: Path) -> Path:
    return node_dir / CONF_DIR


def _start(conf: str, log: str, pidfile: str) -> str:
    """One ptp4l in the background: -m (to its log), no stdin, its PID in the node's /run."""
    return (f"{PTP4L} -m -f {shlex.quote(conf)} </dev/null >{shlex.quote(log)} 2>&1 & "
            f"echo $! > {shlex.quote(pidfile)}")


def switch_lines(node_dir: Path) -> list[str]:
    """Setup-script lines of a switch with a rendered ptp4l.conf."""
    d = conf_dir(node_dir)
    return [_start(str(d / SWITCH_CONF), str(d / "ptp4l.log"), "/run/ptp4l.pid")]


def host_lines(node_dir: Path) -> list[str]:
    """Setup-script lines of a server: one ptp4l per NIC config the NIC script wrote (none: no PTP)."""
    d = shlex.quote(str(conf_dir(node_dir)))
    return [f'for f in {d}/fabricgen-*.conf; do [ -e "$f" ] || continue; n=${{f##*/fabricgen-}}; n=${{n%.conf}}; '
            f'{PTP4L} -m -f "$f" </dev/null >{d}/ptp4l-$n.log 2>&1 & echo $! > /run/ptp4l-$n.pid; done']


def restart_command(node_dir: Path, instance: str = "", conf_text: str | None = None) -> list[str]:
    """argv (run inside the node) that stops one ptp4l and starts it again, on ``conf_text`` if given
    (written over its config first): how a lab test changes a running clock."""
    d = conf_dir(node_dir)
    conf = d / (f"fabricgen-{instance}.conf" if instance else SWITCH_CONF)
    pidfile = f"/run/ptp4l-{instance}.pid" if instance else "/run/ptp4l.pid"
    log = d / (f"ptp4l-{instance}.log" if instance else "ptp4l.log")
    write = f"printf %s {shlex.quote(conf_text)} > {shlex.quote(str(conf))}; " if conf_text is not None else ""
    return ["sh", "-c", f"{stop_script(pidfile)}; {write}{_start(str(conf), str(log), pidfile)}"]


def stop_command(instance: str = "") -> list[str]:
    """argv (run inside the node) that stops one ptp4l and waits until it is gone."""
    return ["sh", "-c", stop_script(f"/run/ptp4l-{instance}.pid" if instance else "/run/ptp4l.pid")]


def stop_script(pidfile: str) -> str:
    p = shlex.quote(pidfile)
    return (f'pid=$(cat {p} 2>/dev/null); if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; '
            'for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done; fi; rm -f ' + p)
