"""napalm driver for a Linux switch running FRR (tested against FRR 8.4 + lldpd 1.0).

Connection: SSH through netmiko (``device_type="linux"``).  Every device command runs
on its own SSH *exec* channel of netmiko's transport, not by typing into netmiko's
interactive shell: that gives exit statuses, a separate stderr, no prompt/paging
heuristics on multi-megabyte JSON, and a byte-exact stdin used to upload candidate
configs of any size (``cat > file`` + sha256 check).

optional_args (all optional):

==================  ===========================  =============================================
``port``            22                           SSH port (any other netmiko argument, e.g.
                                                 ``ssh_config_file``, ``allow_agent``, passes through)
``key_file``        None                         private key for key auth
``use_keys``        True if key_file / no pw     let paramiko use keys
``sudo``            auto: username != "root"     prefix privileged commands with ``sudo -n``
``frr_config_path`` ``/etc/frr/frr.conf``        FRR integrated config (startup config)
``frr_reload``      ``/usr/lib/frr/frr-reload.py``
``vtysh``           ``vtysh``
``lldpcli``         ``lldpcli``
``candidate_dir``   ``<config dir>/.fabricgen``  private (0700) directory for uploaded candidates;
                                                 they are removed after use, and leftovers of a
                                                 killed run by the next deploy that locks the device
``verify_reload``   True                         saved = running: after every reload (commit and
                                                 rollback) ``frr-reload --test`` of the saved file
                                                 must find nothing left; else the commit fails and
                                                 is undone.  Turn off only for candidates that
                                                 restate FRR defaults (such a line never shows in
                                                 the running config, so it stays "to add" forever)
``command_timeout`` 120                          seconds per command
``reload_timeout``  600                          seconds for ``frr-reload --reload``
``read_only``       False                        dry runs and validate: the candidate is never written
                                                 to the device; each check of it runs on a private temp
                                                 file that exists only while that command runs, and
                                                 commit_config refuses
``silent_peer``     30                           seconds a switch may acknowledge nothing (not even
                                                 TCP keepalives) before its connection counts as
                                                 lost, whatever command runs (0 = the kernel's own)
``ptp4l_*``                                      where linuxptp's ptp4l.conf goes and which unit
                                                 runs it (napalm_frr.services)
==================  ===========================  =============================================

Config replace workflow (see ``commit_config``): the candidate is uploaded at load time
and checked with ``vtysh --dryrun -f``; ``compare_config`` asks ``frr-reload.py --test``
whether anything would change and shows a unified diff; ``commit_config`` saves the
running config to ``<frr_config_path>.rollback``, installs the candidate as
``frr_config_path`` and runs ``frr-reload.py --reload``; any failure restores the
rollback point and raises ``ReplaceConfigException``.

A candidate may also be a JSON bundle of frr.conf and service files (linuxptp's ptp4l.conf): each goes
to its own file, diffed with the FRR part and its daemon restarted only when it changed
(``napalm_frr.services``).

Tenant VRFs (Linux + FRR: network namespaces) need their kernel side made before FRR's reload and removed
between two reloads: ``napalm_frr.tenants`` (``fabricgen_setup`` and the commit's ``_remove_tenants``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import posixpath
import secrets
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from napalm.base import NetworkDriver, models
from napalm.base.exceptions import (
    CommandErrorException,
    ConnectionClosedException,
    MergeConfigException,
    ReplaceConfigException,
)
from napalm.base.netmiko_helpers import netmiko_args

from fabricgen.napalm_kit import (
    SILENT_PEER_SECONDS,
    CommandResult,
    ConfigUndetermined,
    DeviceLocked,
    LinuxHealthGetters,
    LinuxPtpGetters,
    NetmikoTransport,
    Transport,
    known_hosts_option,
    redact,
)
from napalm_frr import services as S
from napalm_frr.config import canonical_lines, missing_policy, sanitize_frr_config, touched_stanzas, unified_diff
from napalm_frr.parsers.bgp import parse_bgp_neighbors, parse_bgp_neighbors_detail
from napalm_frr.parsers.decode import load_json, natural_key
from napalm_frr.parsers.facts import parse_frr_defaults, parse_key_values, parse_show_version, parse_uptime
from napalm_frr.parsers.interfaces import parse_interfaces, parse_interfaces_counters, parse_interfaces_ip
from napalm_frr.parsers.lldp import parse_lldp_neighbors, parse_lldp_neighbors_detail
from napalm_frr.parsers.reload import FAILED_REMOVE, frr_reload_errors, moved_port_failures, parse_frr_reload_test
from napalm_frr.parsers.routes import count_ecmp_paths, parse_route
from napalm_frr.tenants import TenantSetup

log = logging.getLogger(__name__)
READ_ONLY = "(read-only: not on the device)"  # a read_only driver's candidate "path" (FrrDriver._on_file)


def listing_hunk(lines: list[str], sign: str) -> str:
    """frr-reload's listing of lines to delete or add as a unified diff hunk: a line followed by a
    more indented one is the context frr-reload repeats, the others are what it runs."""
    if not lines:
        return ""
    body = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        context = len(nxt) - len(nxt.lstrip()) > len(line) - len(line.lstrip())
        body.append((" " if context else sign) + line)
    shared = sum(1 for ln in body if ln[0] == " ")
    old, new = (len(body), shared) if sign == "-" else (shared, len(body))
    return f"@@ -1,{old} +1,{new} @@ frr-reload.py --test\n" + "\n".join(body) + "\n"


# --------------------------------------------------------------------------- driver


class FrrDriver(LinuxHealthGetters, LinuxPtpGetters, TenantSetup, NetworkDriver):
    """napalm driver for Linux + FRR switches (platform name ``frr``)."""

    vendor = "FRRouting"
    platform = "frr"  # napalm's convention: the driver's platform name

    def __init__(self, hostname: str, username: str, password: str, timeout: int = 60,
                 optional_args: dict[str, Any] | None = None) -> None:
        self.hostname = hostname
        self.username = username
        self.password = password
        self.timeout = timeout
        self.force_no_enable = True
        self.use_canonical_interface = False
        args = dict(optional_args or {})
        self.optional_args = args
        self.netmiko_optional_args = netmiko_args(args)
        if "use_keys" not in self.netmiko_optional_args:
            self.netmiko_optional_args["use_keys"] = bool(args.get("key_file")) or not password
        sudo = args.get("sudo")
        self.sudo: bool = (username not in ("root", "")) if sudo is None else bool(sudo)
        self.frr_config_path: str = str(args.get("frr_config_path", "/etc/frr/frr.conf"))
        self.frr_reload: str = str(args.get("frr_reload", "/usr/lib/frr/frr-reload.py"))
        self.vtysh_bin: str = str(args.get("vtysh", "vtysh"))
        self.lldpcli_bin: str = str(args.get("lldpcli", "lldpcli"))
        self.state_dir: str = f"{posixpath.dirname(self.frr_config_path) or '/etc/frr'}/.fabricgen"
        self.candidate_dir: str = str(args.get("candidate_dir", self.state_dir)).rstrip("/") or "/tmp"
        self.verify_reload: bool = bool(args.get("verify_reload", True))
        # after a reload, re-apply policy a routing daemon lacks (see _repair_daemons)
        self.repair_daemons: bool = bool(args.get("repair_daemons", True))
        self.last_changes = ""  # frr-reload.py --test's own listing of the last compare_config
        self.reload_notes: list[str] = []  # what the last reload tolerated, reported by fabricgen_verify
        # the (fromfile, tofile, old lines, new lines) compare_config diffed, for deploy's impact labels
        # (fabricgen.deploy.impact); None when its diff is not a plain diff of two sides
        self.last_sides: list[tuple[str, str, list[str], list[str]]] | None = None
        self.command_timeout: float = float(args.get("command_timeout", 120))
        self.reload_timeout: float = float(args.get("reload_timeout", 600))
        self.silent_peer: float = float(args.get("silent_peer", SILENT_PEER_SECONDS))
        self.read_only: bool = bool(args.get("read_only", False))
        self.known_hosts = known_hosts_option(args)
        # Set by deploy: a set event makes every command outside a commit stop waiting at once.
        self.cancel: threading.Event | None = None
        self._critical = 0  # > 0 while a commit or rollback runs: those are never cut short
        self.transport: Transport | None = None
        self._candidate: str | None = None
        self._candidate_path: str | None = None
        self._read_only_text = ""  # read_only: the candidate the temp-file commands feed to FRR
        self.services = S.placed(args)  # service files (ptp4l.conf): device path and unit
        self.service_settle: float = float(args.get("service_settle", 1))
        self._sides: dict[str, S.Candidate] = {}  # the loaded candidate's service files
        self._sides_committed: list[S.Placed] = []  # changed by this session's last commit: what rollback() undoes
        self._frr_unchanged: bool | None = None  # compare_config found nothing for FRR to do (None: not compared)
        self._rollback_saved = False  # fabricgen_setup saved the rollback point before it changed anything
        self._init_tenants()  # napalm_frr.tenants: what the setup script made, the VRFs a commit removes

    # ------------------------------------------------------------------ connection

    def _open_transport(self) -> Transport:
        """Build the connection (tests override this to return a recorded-output fake)."""
        return NetmikoTransport(self.hostname, self.username, self.password, self.timeout,
                                self.netmiko_optional_args, self.known_hosts, self.silent_peer)

    def open(self) -> None:
        self.transport = self._open_transport()

    def close(self) -> None:
        if self.transport is None:
            return
        try:
            if self._candidate_path and self.transport.is_alive():
                self.discard_config()
        finally:
            self.transport.close()
            self.transport = None

    def is_alive(self) -> models.AliveDict:
        return {"is_alive": self.transport is not None and self.transport.is_alive()}

    # ------------------------------------------------------------------ command helpers

    def _run(self, command: str, stdin: str | None = None, timeout: float | None = None) -> CommandResult:
        if self.transport is None:
            raise ConnectionClosedException(f"{self.hostname}: not connected (call open())")
        log.debug("%s: run %s", self.hostname, redact(command))
        cancel = None if self._critical else self.cancel
        return self.transport.run(command, stdin=stdin, timeout=timeout or self.command_timeout, cancel=cancel)

    @contextlib.contextmanager
    def uninterruptible(self) -> Iterator[None]:
        """Commands inside run to completion (or their timeout) even after Ctrl-C: a commit or a
        rollback cut in half would leave the device between two configs."""
        self._critical += 1
        try:
            yield
        finally:
            self._critical -= 1

    def _check(self, command: str, stdin: str | None = None, timeout: float | None = None) -> str:
        res = self._run(command, stdin=stdin, timeout=timeout)
        if not res.ok:
            raise CommandErrorException(
                f"{self.hostname}: `{redact(command)}` exited {res.exit_status}: {res.error_text()[:2000]}")
        return res.stdout

    def _priv(self, command: str) -> str:
        """A shell command run with root rights on the host."""
        return f"sudo -n sh -c {shlex.quote(command)}" if self.sudo else command

    def _frr_sh(self, command: str) -> str:
        """A shell command run where FRR lives (the host here; SONiC: the bgp container)."""
        return self._priv(command)

    def _vtysh(self, *commands: str) -> str:
        return self._frr_sh(" ".join([self.vtysh_bin] + [f"-c {shlex.quote(c)}" for c in commands]))

    def _vtysh_json(self, command: str) -> Any:
        return load_json(self._check(self._vtysh(command)), command)

    def _lldpcli(self, args: str) -> str:
        return self._priv(f"{self.lldpcli_bin} {args}")

    def _host_sh(self, command: str) -> str:
        """An unprivileged shell command on the host (ip, cat /proc/...)."""
        return command

    # ------------------------------------------------------------------ getters

    _FACTS_PROBE = (
        "printf 'uptime=%s\\nhostname=%s\\nserial=%s\\nmodel=%s\\n' "
        "\"$(cut -d' ' -f1 /proc/uptime)\" \"$(hostname)\" "
        "\"$(cat /sys/class/dmi/id/product_serial 2>/dev/null)\" "
        "\"$(cat /sys/class/dmi/id/product_name 2>/dev/null)\""
    )

    def _ip_link(self) -> list[dict[str, Any]]:
        data = load_json(self._check(self._host_sh("ip -j -d -s link show")), "ip -j -d -s link show")
        return data if isinstance(data, list) else []

    def _interface_names(self) -> list[str]:
        return sorted((str(link.get("ifname")) for link in self._ip_link() if link.get("ifname")),
                      key=natural_key)

    def get_facts(self) -> models.FactsDict:
        """Facts: os_version and hostname from ``show version`` (FRR's configured hostname),
        uptime from /proc/uptime, serial/model from DMI when readable (else "")."""
        os_version, frr_hostname = parse_show_version(self._check(self._vtysh("show version")))
        kv = parse_key_values(self._check(self._host_sh(self._FACTS_PROBE)))
        system_hostname = kv.get("hostname", "")
        hostname = frr_hostname or system_hostname.split(".")[0]
        fqdn = system_hostname if "." in system_hostname and system_hostname.startswith(hostname) else hostname
        return {
            "os_version": os_version,
            "uptime": parse_uptime(kv.get("uptime", "")),
            "interface_list": self._interface_names(),
            "vendor": self.vendor,
            "serial_number": kv.get("serial", ""),
            "model": kv.get("model", ""),
            "hostname": hostname,
            "fqdn": fqdn,
        }

    def get_interfaces(self) -> dict[str, models.InterfaceDict]:
        links = self._ip_link()
        frr = self._vtysh_json("show interface json")
        now = self._check(self._frr_sh("date '+%Y/%m/%d %H:%M:%S'")).strip()
        return parse_interfaces(links, frr if isinstance(frr, dict) else {}, now)

    def get_interfaces_counters(self) -> dict[str, models.InterfaceCounterDict]:
        return parse_interfaces_counters(self._ip_link())

    def get_interfaces_ip(self) -> dict[str, models.InterfacesIPDict]:
        data = load_json(self._check(self._host_sh("ip -j addr show")), "ip -j addr show")
        return parse_interfaces_ip(data if isinstance(data, list) else [])

    def _lldp_doc(self) -> dict[str, Any]:
        data = load_json(self._check(self._lldpcli("show neighbors -f json")), "lldpcli show neighbors")
        return data if isinstance(data, dict) else {}

    def get_lldp_neighbors(self) -> dict[str, list[models.LLDPNeighborDict]]:
        return parse_lldp_neighbors(self._lldp_doc())

    def get_lldp_neighbors_detail(self, interface: str = "") -> models.LLDPNeighborsDetailDict:
        return parse_lldp_neighbors_detail(self._lldp_doc(), interface)

    def get_bgp_neighbors(self) -> dict[str, models.BGPStateNeighborsPerVRFDict]:
        summary = self._vtysh_json("show bgp vrf all summary json")
        neighbors = self._vtysh_json("show bgp vrf all neighbors json")
        return parse_bgp_neighbors(summary if isinstance(summary, dict) else {},
                                     neighbors if isinstance(neighbors, dict) else {})

    def get_bgp_neighbors_detail(self, neighbor_address: str = "") -> dict[str, models.PeerDetailsDict]:
        neighbors = self._vtysh_json("show bgp vrf all neighbors json")
        return parse_bgp_neighbors_detail(neighbors if isinstance(neighbors, dict) else {},
                                            neighbor_address)

    def get_route_to(  # type: ignore[override]  # napalm's base says one RouteDict; its drivers return a list
            self, destination: str = "", protocol: str = "", longer: bool = False) -> dict[str, list[models.RouteDict]]:
        """Routes to ``destination`` (prefix or address) in the default VRF, one entry per next hop.

        Note the value is a *list* of RouteDicts per prefix (napalm's documented shape,
        whatever its type hint says); ``selected_next_hop`` marks FIB-installed ECMP members.
        """
        family = "ipv6" if ":" in destination else "ip"
        cmd = f"show {family} route"
        if destination:
            cmd += f" {destination}"
            if longer:
                cmd += " longer-prefixes"
        if protocol and not destination:
            cmd += f" {protocol.lower()}"
        data = self._vtysh_json(cmd + " json")
        return parse_route(data if isinstance(data, dict) else {}, protocol)

    def get_ecmp_paths(self, prefix: str) -> int:
        """Number of FIB-installed next hops of the best route to ``prefix`` (0 = no route)."""
        routes = self.get_route_to(prefix)
        return count_ecmp_paths(routes)

    def get_config(self, retrieve: str = "all", full: bool = False, sanitized: bool = False,
                   format: str = "text") -> models.ConfigDict:
        """running = ``show running-config``; startup = the file at frr_config_path;
        candidate = the loaded candidate ("" if none).  ``full`` is ignored (FRR has no
        "show running-config all")."""
        out: models.ConfigDict = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            out["running"] = self._check(self._vtysh("show running-config"))
        if retrieve in ("all", "startup"):
            res = self._run(self._frr_sh(f"cat {shlex.quote(self.frr_config_path)}"))
            out["startup"] = res.stdout if res.ok else ""
        if retrieve in ("all", "candidate"):
            out["candidate"] = self._candidate or ""
        if sanitized:
            out = {"running": sanitize_frr_config(out["running"]), "startup": sanitize_frr_config(out["startup"]),
                   "candidate": sanitize_frr_config(out["candidate"])}
        return out

    def cli(self, commands: list[str], encoding: str = "text") -> dict[str, str | dict[str, Any]]:
        """Run shell commands on the device (``vtysh -c ...`` for FRR CLI); output per command."""
        if encoding not in ("text", "json"):
            raise NotImplementedError(f"encoding {encoding!r} is not supported")
        out: dict[str, str | dict[str, Any]] = {}
        for command in commands:
            res = self._run(command)
            text = res.stdout if res.ok else res.stdout + res.stderr
            out[command] = load_json(text, command) if encoding == "json" and res.ok else text
        return out

    # ------------------------------------------------------------------ config: paths

    @property
    def frr_file(self) -> S.DeviceFile:
        """frr.conf and its rollback, staging and previous copies (named like the service files')."""
        return S.DeviceFile(self.frr_config_path)

    def _new_token(self) -> str:
        return secrets.token_hex(6)

    def _remote_candidate_path(self, token: str, name: str) -> str:
        return f"{self.candidate_dir}/fabricgen-{token}-{name}"

    def _upload(self, wrap: Any, path: str, text: str) -> None:
        """Write ``text`` to ``path`` through ``wrap`` (a command wrapper) and verify its sha256."""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        q = shlex.quote(path)
        d = shlex.quote(posixpath.dirname(path) or "/")
        out = self._check(wrap(f"umask 077; mkdir -p {d} && cat > {q} && sha256sum {q}"), stdin=text)
        got = out.split()[0] if out.split() else ""
        if got != digest:
            raise ReplaceConfigException(f"{self.hostname}: upload of {path} corrupted (sha256 {got} != {digest})")

    @staticmethod
    def _read_source(filename: str | None, config: str | None) -> str:
        if filename:
            return Path(filename).read_text(encoding="utf-8")
        if config is not None:
            return config
        raise ReplaceConfigException("load_replace_candidate needs a filename or a config string")

    # ------------------------------------------------------------------ config: FRR steps

    def _on_file(self, path: str, command: Any) -> CommandResult:
        """Run ``command(quoted path)`` where FRR lives.  ``path`` READ_ONLY: the candidate goes to a private
        temp file (mktemp) that exists only while the command runs: a read-only driver writes nothing that
        stays on the device (issue 23: a dry run changes nothing)."""
        if path != READ_ONLY:
            return self._run(self._frr_sh(command(shlex.quote(path))))
        text = self._read_only_text
        script = f'f=$(mktemp) || exit 1; trap \'rm -f "$f"\' EXIT; cat > "$f"; {command(chr(34) + "$f" + chr(34))}'
        return self._run(self._frr_sh(script), stdin=text)

    def _frr_load(self, text: str, token: str) -> str:
        """Upload an FRR candidate and syntax-check it; return its device path (READ_ONLY: not uploaded)."""
        if not text.strip():
            raise ReplaceConfigException("empty FRR candidate: a full replace would delete the whole config")
        text = text if text.endswith("\n") else text + "\n"
        if self.read_only:
            self._read_only_text = text
            path = READ_ONLY
        else:
            path = self._remote_candidate_path(token, "frr.conf")
            self._upload(self._frr_sh, path, text)
        res = self._on_file(path, lambda f: f"{self.vtysh_bin} --dryrun -f {f}")
        if not res.ok:
            if path != READ_ONLY:
                self._run(self._frr_sh(f"rm -f {shlex.quote(path)}"))
            raise ReplaceConfigException(f"{self.hostname}: FRR rejects the candidate:\n{res.error_text()}")
        return path

    def _frr_test(self, path: str) -> tuple[list[str], list[str]]:
        """``frr-reload.py --test`` against the running config: (lines to delete, lines to add)."""
        res = self._on_file(path, lambda f: f"{self.frr_reload} --test {f}")
        if not res.ok:
            detail = redact(frr_reload_errors(res.stderr)) or res.error_text()
            raise ReplaceConfigException(f"{self.hostname}: frr-reload --test failed:\n{detail}")
        return parse_frr_reload_test(res.stdout)

    def _frr_diff(self, path: str, text: str, fromfile: str = "running", tofile: str = "candidate") -> str:
        """Unified diff running -> candidate in FRR's own stanza order, "" when FRR would change nothing;
        only the stanzas frr-reload's listing touches (``touched_stanzas``), so lines another writer
        manages never show as changes nor raise the impact label.

        Also "" -> a diff of the *saved* file when only it differs from the candidate (an
        interrupted commit, a hand edit): the next reboot would load it, so it is a change.
        ``last_changes`` keeps frr-reload.py --test's own listing of what it will run.
        """
        to_delete, to_add = self._frr_test(path)
        self.last_changes = "\n".join([f"-{line}" for line in to_delete] + [f"+{line}" for line in to_add])
        self.last_sides = None
        if not to_delete and not to_add:
            saved = self._run(self._frr_sh(f"cat {shlex.quote(self.frr_config_path)}"))
            old, new = canonical_lines(saved.stdout if saved.ok else ""), canonical_lines(text)
            fromfile = f"saved ({self.frr_config_path})"
            diff = unified_diff(old, new, fromfile, tofile)
            self.last_sides = [(fromfile, tofile, old, new)] if diff else None
            return diff
        old, new = canonical_lines(self._check(self._vtysh("show running-config"))), canonical_lines(text)
        old, new = touched_stanzas(old, to_delete + to_add), touched_stanzas(new, to_delete + to_add)
        diff = unified_diff(old, new, fromfile, tofile)
        if diff:
            self.last_sides = [(fromfile, tofile, old, new)]
            return diff
        # The texts match line for line but FRR still has work to do (implicit defaults):
        # show frr-reload's own listing as the hunk.
        return f"--- {fromfile}\n+++ {tofile}\n" + listing_hunk(to_delete, "-") + listing_hunk(to_add, "+")

    def _install(self, src: str) -> None:
        dst = shlex.quote(self.frr_config_path)
        tmp = shlex.quote(self.frr_file.staging)
        self._check(self._frr_sh(
            f"set -e; cp {shlex.quote(src)} {tmp}; "
            f"chown --reference={dst} {tmp} 2>/dev/null || true; "
            f"chmod --reference={dst} {tmp} 2>/dev/null || true; mv -f {tmp} {dst}"))

    def _reload(self) -> CommandResult:
        return self._run(self._frr_sh(f"{self.frr_reload} --reload {shlex.quote(self.frr_config_path)}"),
                         timeout=self.reload_timeout)

    def _save_rollback_point(self) -> None:
        """``show running-config`` -> ``<frr.conf>.rollback``; the startup file -> ``<frr.conf>.fabricgen-prev``."""
        r = shlex.quote(self.frr_file.rollback)
        rn = shlex.quote(self.frr_file.rollback + ".new")
        c = shlex.quote(self.frr_config_path)
        prev = shlex.quote(self.frr_file.previous)
        show = f"{self.vtysh_bin} -c 'show running-config no-header'"
        try:
            self._check(self._frr_sh(
                f"set -e; {show} > {rn}; test -s {rn}; mv -f {rn} {r}; "
                f"if [ -e {c} ]; then cp -p {c} {prev}; else rm -f {prev}; fi"))
        except CommandErrorException as exc:
            raise ReplaceConfigException(f"{self.hostname}: cannot save the rollback point: {exc}") from exc

    def _apply_installed(self) -> str:
        """Reload the installed frr.conf; return "" on success or the reason it failed (any exception,
        timeout or non-zero exit is a reason, never an escape past the restore)."""
        try:
            res = self._reload()
        except Exception as exc:  # noqa: BLE001 - a timeout or a dropped session must still restore
            return f"frr-reload --reload did not complete: {type(exc).__name__}: {exc}"
        if not res.ok:
            failed = f"frr-reload --reload exited {res.exit_status}:\n{res.error_text()[:4000]}"
            return self._unless_moved_ports(res, lambda: self._candidate or "", failed)
        return self._saved_equals_running() if self.verify_reload else ""

    def _unless_moved_ports(self, res: CommandResult, config: Callable[[], str], failed: str) -> str:
        """``failed``, unless the reload of ``config`` failed only to delete the default-VRF stanzas of ports now
        in a tenant VRF's namespace and FRR then runs exactly ``config`` ("" then, with a note).  vtysh cannot enter
        ``interface <port>`` in the default VRF once the port moved, and needs not: the added ``interface <port>
        vrf <v>`` takes its config along.  A commit that adds a tenant (the setup script moved the port) and the
        restore of a commit that removed one (the undo moved it back in) both meet it."""
        output = res.stdout + "\n" + res.stderr
        moved = moved_port_failures(output, config()) if FAILED_REMOVE in output else []
        if not moved:
            return failed
        left = self._saved_equals_running()
        if left:
            return f"{failed}\n{left}"
        self.reload_notes.append(f"ports {', '.join(moved)} moved into their tenant VRF: frr-reload could not "
                                 "delete their default-VRF stanzas, which went with them; running = the config")
        return ""

    def _saved_equals_running(self) -> str:
        """"" when ``frr-reload --test`` of the saved file finds nothing to do, else the pending lines."""
        try:
            to_delete, to_add = self._frr_test(self.frr_config_path)
        except Exception as exc:  # noqa: BLE001
            return f"cannot compare the saved config with the running one: {type(exc).__name__}: {exc}"
        if to_delete or to_add:
            pending = "\n".join([f"-{x}" for x in to_delete] + [f"+{x}" for x in to_add])
            return (f"the saved config ({self.frr_config_path}) differs from the running config; still "
                    f"pending:\n{redact(pending)[:4000]}")
        return ""

    def _restore_rollback_point(self) -> str:
        """Install and reload the saved running config, then put the saved startup file back byte for
        byte when it matches that running config (else the running config is saved: saved = running
        after every rollback); return "" or the reason it failed."""
        try:
            self._install(self.frr_file.rollback)
            res = self._reload()
        except Exception as exc:  # noqa: BLE001 - report every failure path, never raise past the caller
            return f"restoring the rollback point failed: {type(exc).__name__}: {exc}"
        if not res.ok:
            failed = f"frr-reload --reload of the rollback point exited {res.exit_status}: {res.error_text()[:2000]}"
            reason = self._unless_moved_ports(res, self._saved_text, failed)
            if reason:
                return reason
        c = shlex.quote(self.frr_config_path)
        prev = shlex.quote(self.frr_file.previous)
        res = self._run(self._frr_sh(f"if [ -e {prev} ]; then cp -p {prev} {c}; fi"))
        if not res.ok:
            return f"restoring {self.frr_config_path} failed: {res.error_text()[:2000]}"
        if not self.verify_reload or not self._saved_equals_running():
            return ""
        try:  # the previous startup file never matched the running config: save the running one
            self._install(self.frr_file.rollback)
        except CommandErrorException as exc:
            return str(exc)
        return self._saved_equals_running()

    def _frr_precheck(self, path: str) -> None:
        """Read-only checks before anything changes: vtysh's parser and frr-reload's loader."""
        if path == READ_ONLY:
            raise ReplaceConfigException(f"{self.hostname}: a read-only connection (dry run, validate) never "
                                         "commits")
        res = self._run(self._frr_sh(f"{self.vtysh_bin} --dryrun -f {shlex.quote(path)}"))
        if not res.ok:
            raise ReplaceConfigException(f"{self.hostname}: FRR rejects the candidate:\n{res.error_text()}")
        self._frr_test(path)

    def _frr_apply(self, path: str) -> None:
        """Save the rollback point, install ``path`` as frr.conf, reload, check saved = running and
        that every daemon holds its policy; restore and raise on any failure."""
        if not self._rollback_saved:
            self._save_rollback_point()
        try:
            self._install(path)
        except CommandErrorException as exc:
            raise ReplaceConfigException(f"{self.hostname}: cannot install the candidate: {exc}") from exc
        reason = self._remove_tenants() or self._apply_installed()
        if not reason and self._new_l3vnis:
            reason = self._settle_l3vnis()
        if not reason and self.repair_daemons:
            try:
                self._repair_daemons(self._candidate or "")
            except Exception as exc:  # noqa: BLE001
                reason = f"re-applying policy to a daemon failed: {type(exc).__name__}: {exc}"
        if reason:
            restore = self._undo_and_restore()
            if restore:
                raise ConfigUndetermined(
                    f"{self.hostname}: commit failed ({reason}) AND restoring the previous config failed "
                    f"({restore}); the device config is undetermined")
            raise self._restored(reason)

    def _frr_rollback(self) -> None:
        res = self._run(self._frr_sh(f"test -s {shlex.quote(self.frr_file.rollback)}"))
        if not res.ok:
            raise CommandErrorException(f"{self.hostname}: no rollback point at {self.frr_file.rollback}")
        reason = self._undo_and_restore()
        if reason:
            raise CommandErrorException(f"{self.hostname}: rollback failed: {reason}")

    def _undo_and_restore(self) -> str:
        """Undo a commit that ran the setup script: FRR first lets go of the tenant VRFs this run added, while
        their namespaces exist (``_release_added``: L3VNI unbound, the rollback point reloaded with each kept as
        its ``netns`` line), and of the default-VRF stanzas of the ports of the tenants it removed, while those
        ports are still in the default VRF (``_drop_returned``); then the journal (what this session's setup
        script created removed, what its ``remove`` removed made again); once zebra no longer binds the added
        VRFs and has the removed ones bound again with their ports (``_until_returned``), FRR's rollback point.
        "" or why not; a failed release or drop alone is a note when the rollback point then runs exactly."""
        self.reload_notes = []  # what the undone commit noted no longer holds; what the undo notes follows
        point = self._run(self._frr_sh(f"cat {shlex.quote(self.frr_file.rollback)}")) if self._setup_journal else None
        added, released = self._release_added(point.stdout) if point is not None and point.ok else ([], "")
        remade = self._setup_journal is not None and bool(self._remade)
        back, self._returned = (self._returned if self._setup_journal else None), None
        dropped = self._drop_returned(back) if back is not None else ""
        undone = self._undo_setup()
        unbound = self._until_unbound(added) if added and not undone else ""
        returned = self._until_returned(back) if back is not None and not undone else ""
        restore = self._restore_rollback_point()
        failed = "; ".join(r for r in (undone, unbound, returned, restore) if r)
        before = "; ".join(r for r in (released, dropped) if r)
        if failed:
            self._remade = {}
            return failed + (f" (before that, {before})" if before else "")
        if before:
            self.reload_notes.append(f"undo: {before}; the rollback point runs all the same")
        if remade:
            self._settle_remade()
        return ""

    def _restored(self, reason: str) -> ReplaceConfigException:
        """The failed commit, its previous config restored, with what the undo noted (a re-made tenant's L3VNI
        bound again, say): an operator reads it in the deploy report, which shows no notes of a failed device."""
        notes, self.reload_notes = self.reload_notes, []
        said = "".join(f"\nafter the undo: {n}" for n in notes)
        return ReplaceConfigException(f"{self.hostname}: commit failed, previous config restored: {reason}{said}")

    # ------------------------------------------------------------------ config: napalm API

    def load_replace_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        """Upload the candidate FRR config (file path, or text) and check it with ``vtysh --dryrun``.

        Raises ReplaceConfigException when FRR's parser rejects a line (nothing changes
        on the device) or the config is empty.
        """
        frr, sides = S.split_candidate(self._read_source(filename, config))
        self.discard_config()
        candidates = self._read_services(sides)
        token = self._new_token()
        self._candidate_path = self._frr_load(frr, token)
        self._candidate = frr
        for c in candidates.values():
            if c.changed and not self.read_only:
                c.upload = self._remote_candidate_path(token, c.placed.spec.name)
                self._upload(self._priv, c.upload, c.text)
        self._sides = candidates

    def load_merge_candidate(self, filename: str | None = None, config: str | None = None) -> None:
        raise MergeConfigException(
            "FrrDriver only supports full replace (load_replace_candidate): fabricgen renders the whole "
            "frr.conf, and a merge could not be rolled back exactly")

    def compare_config(self) -> str:
        """Unified diff running -> candidate ("" when FRR would change nothing).

        FRR decides whether anything changes: ``frr-reload.py --test`` (the same code
        that will apply it) lists lines to delete/add.  If it lists nothing the answer
        is "", even when the texts differ cosmetically (comments, ``!``, ``exit``,
        ``frr version``).  Otherwise the result is a difflib unified diff of
        ``show running-config`` and the candidate, both normalised the same way,
        which an operator reads like any config diff.
        """
        if self._candidate is None or self._candidate_path is None:
            return ""
        diff = self._frr_diff(self._candidate_path, self._candidate)
        self._frr_unchanged = not diff
        known = self.last_sides is not None or not diff  # None: FRR's hunk is frr-reload's listing (label the text)
        sides = list(self.last_sides or [])
        for c in self._sides.values():
            if c.changed:
                old, new = (c.device or "").splitlines(), c.text.splitlines()
                diff += unified_diff(old, new, c.placed.path, c.placed.spec.name)
                sides.append((c.placed.path, c.placed.spec.name, old, new))
        self.last_sides = sides if known and sides else None
        return diff

    def commit_config(self, message: str = "", revert_in: int | None = None) -> None:
        """Replace FRR's config with the candidate.

        Steps: ``vtysh --dryrun -f`` and ``frr-reload.py --test`` on the candidate; save
        ``show running-config`` to ``<frr_config_path>.rollback``; install the candidate
        as ``frr_config_path``; ``frr-reload.py --reload`` (its exit status reports every line vtysh or
        a daemon rejected); with ``verify_reload``, ``frr-reload.py --test`` must then
        find nothing left to do.  On any failure the
        rollback point is installed and reloaded and ReplaceConfigException raised.
        ``message`` is not stored (FRR has no commit log); ``revert_in`` (commit
        confirm) is not supported.  Service files (ptp4l.conf) go in after FRR's part; when compare_config
        found nothing for FRR to do and a service file changes, FRR is not reloaded at all (its rollback
        point is still saved, so rollback() finds the config it runs).
        """
        if revert_in is not None:
            raise NotImplementedError("commit confirm (revert_in) is not supported; use rollback()")
        if self._candidate is None or self._candidate_path is None:
            raise ReplaceConfigException("no candidate loaded (load_replace_candidate first)")
        frr_too = not (self._frr_unchanged and any(c.changed for c in self._sides.values()))
        if frr_too:
            self._frr_precheck(self._candidate_path)
            self._frr_apply(self._candidate_path)
        elif self._candidate_path == READ_ONLY:
            raise ReplaceConfigException(f"{self.hostname}: a read-only connection (dry run, validate) never commits")
        elif not self._rollback_saved:  # a service file alone changes: FRR is not reloaded, and rollback() finds
            self._save_rollback_point()  # the config it runs
        reason = self._apply_services()
        if reason:  # all or nothing: FRR's part goes back too
            restore = self._undo_and_restore() if frr_too or self._setup_journal else ""
            if restore:
                raise ConfigUndetermined(f"{self.hostname}: commit failed ({reason}) AND restoring the previous FRR "
                                         f"config failed ({restore}); the device config is undetermined")
            raise self._restored(reason)
        self.discard_config()

    def discard_config(self) -> None:
        if self._candidate_path and self._candidate_path != READ_ONLY and self.transport is not None:
            self._run(self._frr_sh(f"rm -f {shlex.quote(self._candidate_path)}"))
        uploads = " ".join(shlex.quote(c.upload) for c in self._sides.values() if c.upload)
        if uploads and self.transport is not None:
            self._run(self._priv(f"rm -f {uploads}"))
        self._candidate = None
        self._candidate_path = None
        self._sides = {}
        self._frr_unchanged = None
        self._rollback_saved = False
        self._removing = None

    def rollback(self) -> None:
        """Restore the config saved by the last commit (``<frr_config_path>.rollback``) and reload it, and the
        service files this session's last commit changed (their ``.rollback`` files), restarting their daemons."""
        self._frr_rollback()
        for p in self._sides_committed:
            self._check(self._priv(S.restore_command(p)))
        self._sides_committed = []

    # ------------------------------------------------------------------ config: service files (napalm_frr.services)

    def _read_services(self, sides: dict[str, str]) -> dict[str, S.Candidate]:
        """The device's copy of each service file (read-only); refuses a file fabricgen did not write."""
        out: dict[str, S.Candidate] = {}
        for name, text in sorted(sides.items()):
            p = self.services[name]
            device = S.parse_read(self._check(self._priv(S.read_command(p))))
            S.refuse_foreign(self.hostname, p, device)
            out[name] = S.Candidate(p, text, device, "")
        return out

    def _apply_services(self) -> str:
        """Install each changed service file and restart its daemon; on a failure put back every one this
        commit changed and return why ("" = done)."""
        self._sides_committed = []
        for c in self._sides.values():
            if not c.changed:
                continue
            p = c.placed
            self._sides_committed.append(p)
            try:
                self._check(self._priv(S.install_command(p, c.upload)))
                res = self._run(self._priv(S.restart_command(p, self.service_settle)))
                reason = "" if res.ok else (f"{p.service} did not stay active on the new {p.spec.name} ({p.path}): "
                                            f"{res.error_text()[:2000]}")
            except Exception as exc:  # noqa: BLE001 - every failure restores
                reason = f"installing {p.path} failed: {type(exc).__name__}: {exc}"
            if reason:
                for done in self._sides_committed:
                    res = self._run(self._priv(S.restore_command(done)))
                    if not res.ok:
                        raise ConfigUndetermined(f"{self.hostname}: commit failed ({reason}) AND restoring "
                                                 f"{done.path} failed: {res.error_text()[:2000]}")
                self._sides_committed = []
                return reason
        return ""

    def has_pending_commit(self) -> bool:
        return False

    # ------------------------------------------------------------------ fabricgen extensions (see deploy.phases)

    # Daemons that apply routing policy: each keeps its own copy of route-maps and prefix-lists,
    # and `show running-config` shows them merged (zebra's copy hides a bgpd that lost its own).
    POLICY_DAEMONS = ("bgpd",)

    def _daemon_running(self, daemon: str) -> str:
        return self._check(self._frr_sh(f"{self.vtysh_bin} -d {daemon} -c 'show running-config'"))

    def _repair_daemons(self, candidate: str) -> list[str]:
        """Re-apply every policy object of ``candidate`` that a routing daemon lacks; returns what it did."""
        done = []
        for daemon in self.POLICY_DAEMONS:
            missing = missing_policy(candidate, self._daemon_running(daemon))
            if not missing:
                continue
            lines = [line.strip() for stanza in missing.values() for line in stanza]
            args = " ".join(f"-c {shlex.quote(c)}" for c in ["configure terminal", *lines])
            self._check(self._frr_sh(f"{self.vtysh_bin} -d {daemon} {args}"))
            left = missing_policy(candidate, self._daemon_running(daemon))
            if left:
                raise CommandErrorException(f"{self.hostname}: {daemon} still lacks {', '.join(sorted(left))} "
                                            f"after re-applying it")
            done.append(f"{daemon} had lost {', '.join(sorted(missing))}; re-applied")
        return done

    def fabricgen_vtysh(self, command: str) -> str:
        """One vtysh command's output, run where FRR lives (the host; SONiC: the bgp container): readers
        that need FRR's own view on every FRR-based platform (validate --tenants)."""
        return self._check(self._vtysh(command))

    def fabricgen_reset_bgp(self) -> None:
        """Hard-reset every BGP session (``clear bgp *``): new keepalive/hold times apply only to a
        session that re-establishes."""
        self._check(self._vtysh("clear bgp *"))

    def fabricgen_frr_defaults(self) -> dict[str, str]:
        """Per running FRR daemon (``show daemons``), the ``frr defaults`` profile its own running config
        shows ("" = none): FRR reads the profile only when a daemon starts, so a daemon started without
        the config keeps the built-in one while ``show running-config`` merges both (validate
        frr-defaults).  One command for every daemon."""
        vtysh = self.vtysh_bin
        script = (f"for d in $({vtysh} -c 'show daemons'); do printf '%s ' \"$d\"; "
                  f"{vtysh} -d \"$d\" -c 'show running-config' | sed -n 's/^frr defaults //p' | head -n 1; "
                  f"echo; done")
        return parse_frr_defaults(self._check(self._frr_sh(script)))

    def _saved_text(self) -> str:
        res = self._run(self._frr_sh(f"cat {shlex.quote(self.frr_config_path)}"))
        return res.stdout if res.ok else ""

    def fabricgen_verify(self) -> tuple[list[str], list[str]]:
        """After a commit (or a deploy that changed nothing): every daemon holds its policy (re-applied
        when one lost it, e.g. a bgpd restarted alone) and the saved config equals the running one.
        Returns (what was repaired or needs a restart to repair, problems left): a daemon on another
        ``frr defaults`` profile than the saved config's is named, since no reload can change it."""
        problems = []
        repaired: list[str] = []
        notes, self.reload_notes = self.reload_notes, []
        saved = self._saved_text()
        try:
            repaired = self._repair_daemons(saved)
        except CommandErrorException as exc:
            problems.append(str(exc))
        mismatch = self._saved_equals_running()
        if mismatch:
            problems.append(mismatch)
        want = next((ln.split()[2] for ln in saved.splitlines() if ln.startswith("frr defaults ")
                     and len(ln.split()) == 3), "")
        other = {d: p for d, p in self.fabricgen_frr_defaults().items() if want and p != want}
        if other:
            runs = ", ".join(f"{d} runs `frr defaults {p or '(none)'}`" for d, p in sorted(other.items()))
            repaired.append(f"{runs}, frr.conf declares `frr defaults {want}`: FRR reads it only when a daemon "
                            f"starts (a reload cannot change it); restart FRR (`systemctl restart frr`)")
        return notes + repaired, problems

    def fabricgen_persisted_diff(self) -> str:
        """Saved config vs the loaded candidate ("" = equal) in FRR's order: what a reboot would load."""
        if self._candidate is None:
            return ""
        return unified_diff(canonical_lines(self._saved_text()), canonical_lines(self._candidate),
                              f"saved ({self.frr_config_path})", "build")

    @property
    def lock_path(self) -> str:
        return f"{self.state_dir}/deploy.lock"

    def fabricgen_lock(self, run: str, owner: str, takeover: frozenset[str] = frozenset(),
                       who: dict[str, Any] | None = None) -> None:
        """Take the device's deploy lock (a file under its config directory), or raise DeviceLocked
        naming the holder; a lock of a run in ``takeover`` (a dead run being resumed, or one
        ``--break-lock`` found dead) is taken over, with every candidate and temp file it left.  ``who``
        (user, host, PID) is stored so that a later run can tell whether the holder still lives.
        Candidates older than 10 minutes (a killed run's) are removed on every lock."""
        entry: dict[str, Any] = {"run": run, "owner": owner, "since": self._now_iso()}
        if who:
            entry["who"] = who
        text = json.dumps(entry) + "\n"
        d, lock = shlex.quote(self.state_dir), shlex.quote(self.lock_path)
        res = self._run(self._frr_sh(
            f"umask 077; mkdir -p {d} && find {d} -name 'fabricgen-*' -mmin +10 -delete; "
            f"if (set -C; cat > {lock}) 2>/dev/null; then echo TAKEN; else echo HELD; cat {lock}; fi"), stdin=text)
        if not res.ok:
            raise CommandErrorException(f"{self.hostname}: cannot take the deploy lock {self.lock_path}: "
                                        f"{res.error_text()}")
        if res.stdout.startswith("TAKEN"):
            return
        holder_text = res.stdout.partition("\n")[2].strip()
        try:
            holder = json.loads(holder_text)
        except ValueError:
            holder = {}
        if isinstance(holder, dict) and holder.get("run") in takeover:
            # the dead run's leftovers go with its lock: uploaded candidates, a half-installed frr.conf
            leftovers = " ".join([*(shlex.quote(path) for path in (self.frr_file.staging,
                                                                   self.frr_file.rollback + ".new")),
                                  *(shlex.quote(p.staging) for p in self.services.values())])
            self._check(self._frr_sh(f"umask 077; cat > {lock} && find {d} -name 'fabricgen-*' -delete && "
                                     f"rm -f {leftovers}"), stdin=text)
            return
        holder_name = (f"{holder.get('owner')} (run {holder.get('run')}, since {holder.get('since')})"
                       if isinstance(holder, dict) and holder else repr(holder_text))
        raise DeviceLocked(f"{self.hostname}: locked by another deploy: {holder_name}; lock {self.lock_path} (fix: "
                           f"wait for it, or `fabricgen deploy --break-lock` once that deploy is surely gone)",
                           holder if isinstance(holder, dict) else {})

    def fabricgen_unlock(self, run: str) -> None:
        lock = shlex.quote(self.lock_path)
        self._run(self._frr_sh(f"grep -qF {shlex.quote(json.dumps(run))} {lock} 2>/dev/null && rm -f {lock}; true"))

    @staticmethod
    def _now_iso() -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def get_bfd_peers(self) -> list[dict[str, Any]]:
        """BFD sessions: ``[{"peer", "status", "receive_interval", "transmit_interval", "detect_multiplier"}]``
        (ms) from ``show bfd peers json``."""
        data = self._vtysh_json("show bfd peers json")
        return [{"peer": str(p.get("peer", "")), "status": str(p.get("status", "")),
                 "receive_interval": int(p.get("receive-interval", 0)),
                 "transmit_interval": int(p.get("transmit-interval", 0)),
                 "detect_multiplier": int(p.get("detect-multiplier", 0))}
                for p in (data if isinstance(data, list) else []) if isinstance(p, dict)]
