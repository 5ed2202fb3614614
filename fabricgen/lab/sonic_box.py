"""A lab switch of platform `sonic`: FRR started the way SONiC's bgp container starts it.

SONiC's own scripts are the source (``dockers/docker-fpm-frr/`` of a sonic-buildimage tree the
user names with --sonic-platform; fabricgen does not ship SONiC's code): `docker_init.sh` decides
what happens to /etc/frr/frr.conf for the routing mode (split-unified:
`write_default_zebra_config` appends `no fpm use-next-hop-groups` and `fpm address 127.0.0.1`
unless present), and the supervisord template, rendered with the switch's
DEVICE_METADATA, decides which FRR daemons run (bfdd, ospfd, pimd, pathd only with
`frr_mgmt_framework_config: "true"`).  The lab runs that shell code itself and starts exactly the
template's FRR daemons with the template's command lines, with two substitutions for Debian's FRR:
zebra's `-M dplane_fpm_sonic` (SONiC's FPM module) becomes `-M dplane_fpm_nl`, and `-M snmp` is
dropped (no AgentX master in a lab node).  The template's SONiC programs (fpmsyncd, frrcfgd,
zsocket, rsyslogd, ...) and FRR daemons this FRR does not ship (mgmtd before FRR 9) are listed as
not run.  ConfigDB and `config replace` are stood in for by `fabricgen.lab.sonic_cli`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from fabricgen.lab import lossless_counters, sonic_cli
from fabricgen.lab.topology import LabError, SonicBox
from fabricgen.platforms.sonic import configdb as sonic_configdb

DOCKER = Path("dockers/docker-fpm-frr")
FRR_BIN = "/usr/lib/frr"
SYSTEM_PYTHON = "/usr/bin/python3"  # frr-reload.py's interpreter, so every FRR lab host has it
# SONiC's zebra module -> the one Debian's FRR ships (both speak FPM over TCP to 127.0.0.1:2620)
MODULE_STAND_INS: Mapping[str, str | None] = {"dplane_fpm_sonic": "dplane_fpm_nl", "snmp": None}


def docker_init_function(pack: Path) -> str:
    """`write_default_zebra_config()` exactly as docker_init.sh defines it."""
    text = (pack / DOCKER / "docker_init.sh").read_text(encoding="utf-8")
    fn = re.search(r"^write_default_zebra_config\(\)\n\{\n.*?^\}\n", text, re.M | re.S)
    if fn is None:
        raise LabError(f"{pack / DOCKER / 'docker_init.sh'} no longer defines write_default_zebra_config() "
                       "(fix: point the lab at the platform pack fabricgen pins)")
    return fn.group(0)


def docker_init_branch(pack: Path, mode: str) -> str:
    """The body of docker_init.sh's branch for a routing mode (what it does to /etc/frr)."""
    text = (pack / DOCKER / "docker_init.sh").read_text(encoding="utf-8")
    branch = re.search(rf'(?:el)?if \[ "\$CONFIG_TYPE" == "{re.escape(mode)}" \]; then\n(.*?)\n(?:elif|fi)\b',
                       text, re.S)
    if branch is None:
        raise LabError(f"docker_init.sh has no branch for docker_routing_config_mode {mode!r}")
    return branch.group(1)


def init_script(pack: Path, mode: str) -> str:
    """docker_init.sh's treatment of /etc/frr for `mode`, runnable in a lab node."""
    body = docker_init_branch(pack, mode)
    if "sonic-cfggen" in body:
        raise LabError(f"docker_routing_config_mode {mode!r} renders FRR from ConfigDB with sonic-cfggen, which the "
                       "lab does not run (fix: use split-unified, the mode fabricgen renders)")
    return "\n".join(["#!/bin/bash", "# SONiC docker_init.sh (docker-fpm-frr), the lines that treat /etc/frr",
                      "set -e", docker_init_function(pack).rstrip("\n"), body.strip("\n"), ""])


def supervisord_conf(pack: Path, metadata: Mapping[str, str]) -> str:
    """The bgp container's supervisord.conf for this DEVICE_METADATA.localhost."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(pack / DOCKER / "frr" / "supervisord")))
    return env.get_template("supervisord.conf.j2").render(DEVICE_METADATA={"localhost": dict(metadata)})


def supervisord_programs(conf: str) -> dict[str, str]:
    """[program:name] -> its command= line, in file order."""
    programs: dict[str, str] = {}
    for name, body in re.findall(r"^\[program:([\w-]+)\]\n(.*?)(?=^\[|\Z)", conf, re.M | re.S):
        command = re.search(r"^command=(.*)$", body, re.M)
        programs[name] = command.group(1).strip() if command else ""
    return programs


def lab_command(command: str) -> str:
    """A template FRR command line with the lab's module stand-ins."""
    words = shlex.split(command)
    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "-M" and i + 1 < len(words) and words[i + 1] in MODULE_STAND_INS:
            stand_in = MODULE_STAND_INS[words[i + 1]]
            if stand_in is not None:
                out += ["-M", stand_in]
            i += 2
            continue
        out.append(words[i])
        i += 1
    return shlex.join(out)


def container_daemons(conf: str, frr_bin: str = FRR_BIN) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """(FRR daemons to run with their command lines, zebra first; the programs not run, with why)."""
    daemons: list[tuple[str, str]] = []
    not_run: list[str] = []
    for name, command in supervisord_programs(conf).items():
        exe = command.split()[0] if command else ""
        if name == "vtysh_b":
            continue  # the lab runs `vtysh -b` itself once the daemons are up
        if not exe.startswith(f"{FRR_BIN}/"):
            not_run.append(f"{name} (SONiC's own program, not FRR)")
        elif not os.access(f"{frr_bin}/{os.path.basename(exe)}", os.X_OK):
            not_run.append(f"{name} (this FRR has no {os.path.basename(exe)})")
        else:
            daemons.append((os.path.basename(exe), lab_command(command)))
    daemons.sort(key=lambda d: d[0] != "zebra")
    if not daemons or daemons[0][0] != "zebra":
        raise LabError("the bgp container's supervisord template starts no zebra")
    return tuple(daemons), tuple(not_run)


def sonic_box(pack: Path, config_db: Mapping[str, Any]) -> SonicBox:
    """The lab node of a SONiC switch that boots with `config_db` (DEVICE_METADATA drives the container)."""
    metadata = config_db.get("DEVICE_METADATA", {}).get("localhost", {})
    mode = metadata.get("docker_routing_config_mode", "separated")
    daemons, not_run = container_daemons(supervisord_conf(pack, metadata))
    base = {k: v for k, v in metadata.items() if k != "frr_mgmt_framework_config"}
    restart = tuple((key, container_daemons(supervisord_conf(pack, meta))[0])
                    for key, meta in ((sonic_cli.MGMT_TRUE, {**base, "frr_mgmt_framework_config": "true"}),
                                      (sonic_cli.MGMT_OTHER, base)))
    return SonicBox(daemons=daemons, init_script=init_script(pack, mode),
                    config_db=json.dumps(config_db, indent=4, sort_keys=True) + "\n", not_run=not_run,
                    restart_daemons=restart)


_SUDO = """#!/bin/sh
# fabricgen lab, SONiC node: `sudo -n CMD` for root (the lab logs in as root), nothing else
[ "$1" = "-n" ] && shift
case "$1" in -*|"") echo "sudo: the lab's SONiC node takes only 'sudo -n COMMAND'" >&2; exit 1;; esac
[ "$(id -u)" = 0 ] || { echo "sudo: a password is required" >&2; exit 1; }
exec "$@"
"""
_DOCKER = """#!/bin/sh
# fabricgen lab, SONiC node: the bgp and lldp containers are the node itself (its FRR and lldpd)
[ "$1" = exec ] || { echo "docker: a lab SONiC node has only 'docker exec' into bgp and lldp" >&2; exit 1; }
shift
[ "$1" = -i ] && shift
case "$1" in bgp|lldp) ;; *) echo "Error response from daemon: No such container: $1" >&2; exit 1;; esac
shift
exec "$@"
"""


def write_bin(directory: Path) -> None:
    """The SONiC commands the driver runs, first on the node's PATH: sudo, docker, show, config, systemctl."""
    directory.mkdir(parents=True, exist_ok=True)
    # The system Python (frr-reload.py's own) on a copy of the modules it needs (standard library only):
    # inside a node /root is the node's, so an interpreter or a checkout under /root is not there.
    lib = directory / "lib"
    for module, parts in ((sonic_configdb, ("platforms", "sonic", "configdb.py")),
                          (lossless_counters, ("lab", "lossless_counters.py"))):
        target = lib.joinpath("fabricgen", *parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        for package in (target.parent, *target.parent.parents):  # empty __init__.py up to lib/fabricgen
            if package == lib:
                break
            if not (package / "__init__.py").exists():
                (package / "__init__.py").write_text("")
        shutil.copyfile(str(module.__file__), target)
    shutil.copyfile(sonic_cli.__file__, lib / "sonic_cli.py")
    scripts = {"sudo": _SUDO, "docker": _DOCKER}
    for name in ("show", "config", "systemctl"):
        extra = f" {shlex.quote(str(directory / sonic_cli.CONTAINER_FILE))}" if name == "systemctl" else ""
        scripts[name] = (f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(lib))} exec {SYSTEM_PYTHON} "
                         f'{shlex.quote(str(lib / "sonic_cli.py"))} {name}{extra} "$@"\n')
    for name, text in scripts.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)
