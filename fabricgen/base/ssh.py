"""The one SSH helper of fabricgen: verified host keys for every connection it opens, and the
command transport the Linux-shell drivers run on.

Drivers (netmiko for ``frr``/``sonic``, napalm's ``nxos_ssh``) and validate's server
pings all connect through here, so host keys are checked the same way everywhere:

* known_hosts is ``--known-hosts FILE``, else ``$FABRICGEN_KNOWN_HOSTS``, else the lab's own
  ``known_hosts`` (when deploy/validate target a running lab), else ``~/.ssh/known_hosts``;
* a host that is not in it, or whose key differs, is refused while the SSH handshake is
  still at key exchange: paramiko checks the host key before it authenticates, so no
  password or key signature is ever sent to it;
* the refusal (:class:`HostKeyError`) names the host, the key's SHA256 fingerprint (as
  ``ssh-keygen -l`` prints it) and the file, so the operator can compare it out of band.

:class:`NetmikoTransport` runs each command of the ``frr`` and ``sonic`` drivers on its own exec
channel (exit status, separate stderr, byte-exact stdin); :class:`CommandInterrupted` is how every
driver stops at its next command after Ctrl-C.  A device that goes silent (management link down, sshd
blocked) is given up after :data:`SILENT_PEER_SECONDS`, whatever command runs (:func:`bound_silence`):
the command raises :class:`ConnectionLost`, never waits out a 600 s reload timeout.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import os
import re
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import paramiko
from napalm.base.exceptions import (
    CommandErrorException,
    CommandTimeoutException,
    ConnectionClosedException,
    ConnectionException,
    ReplaceConfigException,
)

KNOWN_HOSTS_ENV = "FABRICGEN_KNOWN_HOSTS"
# A device that acknowledges nothing (neither data nor TCP keepalive probes) for this long is gone: its
# SSH connection is closed by the kernel and the command in flight raises ConnectionLost (issue 23 D8).
SILENT_PEER_SECONDS = 30.0


def default_known_hosts() -> Path:
    """``$FABRICGEN_KNOWN_HOSTS`` if set, else ``~/.ssh/known_hosts``."""
    env = os.environ.get(KNOWN_HOSTS_ENV)
    return Path(env) if env else Path.home() / ".ssh" / "known_hosts"


def fingerprint(key: paramiko.PKey) -> str:
    """``ssh-ed25519 SHA256:...``: the form ``ssh-keygen -lf`` and ``ssh`` print."""
    digest = base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")
    return f"{key.get_name()} SHA256:{digest}"


def known_hosts_name(host: str, port: int = 22) -> str:
    """How known_hosts names a host: ``198.18.0.1``, or ``[198.18.0.1]:2222`` off port 22."""
    return host if port == 22 else f"[{host}]:{port}"


class HostKeyError(ConnectionException):
    """The device's host key is unknown or changed; nothing was sent to it."""

    def __init__(self, host: str, problem: str, known_hosts: Path | str, got: str, expected: str = "") -> None:
        self.host, self.problem, self.known_hosts = host, problem, str(known_hosts)
        self.got, self.expected = got, expected
        if problem == "changed":
            text = (f"host key of {host} CHANGED: it offers {got}, {known_hosts} has {expected}; refused before "
                    f"authenticating (possible man-in-the-middle, or the device was rebuilt: verify the new key "
                    f"out of band, then replace its line in {known_hosts})")
        else:
            where = known_hosts if Path(known_hosts).is_file() else f"{known_hosts} (file does not exist)"
            text = (f"host key of {host} is unknown: it offers {got}, which is not in {where}; refused before "
                    f"authenticating (verify the fingerprint out of band, then add the key: "
                    f"ssh-keyscan {host} >> {known_hosts})")
        super().__init__(text)


class StrictHostKeyPolicy(paramiko.MissingHostKeyPolicy):
    """Refuse a host paramiko found no key for: known keys are checked by paramiko itself."""

    def __init__(self, known_hosts: Path) -> None:
        self.known_hosts = known_hosts

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        raise HostKeyError(hostname, "unknown", self.known_hosts, fingerprint(key))


def _host_key_failure(exc: BaseException, host: str, known_hosts: Path) -> HostKeyError | None:
    """The HostKeyError behind ``exc`` (netmiko wraps paramiko's exceptions in its own)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, HostKeyError):
            return seen
        if isinstance(seen, paramiko.BadHostKeyException):
            return HostKeyError(host, "changed", known_hosts, fingerprint(seen.key), fingerprint(seen.expected_key))
        seen = seen.__cause__ or seen.__context__
    return None


def strict_client(known_hosts: Path) -> paramiko.SSHClient:
    """A paramiko client that knows only ``known_hosts`` and refuses everything else."""
    client = paramiko.SSHClient()
    if known_hosts.is_file():
        client.load_host_keys(str(known_hosts))
    client.set_missing_host_key_policy(StrictHostKeyPolicy(known_hosts))
    return client


@contextlib.contextmanager
def connect(host: str, username: str | None, password: str | None, key_file: str | None, known_hosts: Path,
            timeout: float = 20.0, port: int = 22) -> Iterator[paramiko.SSHClient]:
    """An open, host-key-verified paramiko client (validate's exec channels)."""
    client = strict_client(known_hosts)
    try:
        try:
            client.connect(host, port=port, username=username, password=password, key_filename=key_file,
                           look_for_keys=not key_file, allow_agent=not key_file, timeout=timeout,
                           banner_timeout=timeout, auth_timeout=timeout)
        except Exception as exc:
            failure = _host_key_failure(exc, host, known_hosts)
            if failure is not None:
                raise failure from None
            raise
        yield client
    finally:
        client.close()


# Host-key settings fabricgen decides; a caller's netmiko arguments never override them.
_NETMIKO_HOST_KEY_ARGS = ("ssh_strict", "system_host_keys", "alt_host_keys", "alt_key_file")


def netmiko_connect(device_type: str, host: str, username: str, password: str | None, timeout: float,
                    known_hosts: Path, **netmiko_kwargs: Any) -> Any:
    """A netmiko connection whose paramiko client verifies the host key against ``known_hosts``."""
    from netmiko import ConnectHandler

    kwargs = {k: v for k, v in netmiko_kwargs.items() if k not in _NETMIKO_HOST_KEY_ARGS}
    conn = ConnectHandler(device_type=device_type, host=host, username=username, password=password or "",
                          timeout=timeout, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=str(known_hosts), auto_connect=False, **kwargs)
    conn.key_policy = StrictHostKeyPolicy(known_hosts)
    try:
        conn._open()  # netmiko's documented split of construction and connection
    except Exception as exc:
        with contextlib.suppress(Exception):
            conn.paramiko_cleanup()
        failure = _host_key_failure(exc, host, known_hosts)
        if failure is not None:
            raise failure from None
        raise
    return conn


def known_hosts_option(optional_args: dict[str, Any]) -> Path:
    """A driver's ``known_hosts`` optional argument, else the default file."""
    value = optional_args.get("known_hosts")
    return Path(str(value)) if value else default_known_hosts()


# --------------------------------------------------------------------------- command transport


_SECRET_WORDS_RE = re.compile(
    r"\b(password|authentication-key|key-string|md5|secret)(\s+(?:\d\s+)?)(\S+)", re.IGNORECASE)


def redact(text: str) -> str:
    """Hide anything following password-like keywords (error texts echo config lines)."""
    return _SECRET_WORDS_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}<removed>", text)


@dataclass(frozen=True)
class CommandResult:
    command: str
    stdout: str
    stderr: str
    exit_status: int

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def error_text(self) -> str:
        return redact((self.stderr.strip() + "\n" + self.stdout.strip()).strip())


class Transport(Protocol):
    """What the drivers need from a connection: run one shell command, optionally feeding stdin."""

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: threading.Event | None = None) -> CommandResult: ...

    def is_alive(self) -> bool: ...

    def close(self) -> None: ...


def _netmiko_reason(text: str) -> str:
    """netmiko's connection errors open with the line that says what happened (then generic advice)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[0] if lines else ""


class ConnectionLost(ConnectionClosedException):
    """The device stopped answering (or closed the connection) while a command ran: whether the command
    finished on the device is unknown."""


class ConfigUndetermined(ReplaceConfigException):
    """A commit failed and so did restoring the previous config (or the device went silent in between):
    the device may run neither the old config nor the new one.  Deploy journals it as undetermined, for
    ``--resume`` to retry once the device answers."""


def bound_silence(sock: Any, seconds: float) -> None:
    """Make the kernel close ``sock`` once the peer has acknowledged nothing for ``seconds``.

    TCP keepalive probes (SO_KEEPALIVE, every third of ``seconds`` once idle) give an idle
    connection something to acknowledge, and TCP_USER_TIMEOUT closes the connection when data or
    probes stay unacknowledged that long (tcp(7); the kernel commit that added it: "when used with
    SO_KEEPALIVE, TCP_USER_TIMEOUT will overtake keepalive").  A live device answers probes from
    its kernel, so a reload that prints nothing for minutes is not cut short.  Where the platform
    lacks an option (not Linux), that part is skipped.
    """
    step = max(1, int(seconds // 3))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in (("TCP_KEEPIDLE", step), ("TCP_KEEPINTVL", step), ("TCP_KEEPCNT", 3),
                        ("TCP_USER_TIMEOUT", int(seconds * 1000))):
        option = getattr(socket, name, None)
        if option is not None:
            sock.setsockopt(socket.IPPROTO_TCP, option, value)


class CommandInterrupted(CommandErrorException):
    """The operator interrupted the run (Ctrl-C) while this command was waiting for output."""


class DeviceLocked(CommandErrorException):
    """Another deploy holds the device's own deploy lock; ``holder`` is that lock's content (run, owner,
    since and, when fabricgen wrote it, ``who``: the owner's user, host and PID, for ``--break-lock``)."""

    def __init__(self, message: str, holder: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.holder: dict[str, Any] = dict(holder or {})


class NetmikoTransport:
    """netmiko ``linux`` connection; commands run on exec channels of its paramiko transport."""

    def __init__(self, hostname: str, username: str, password: str, timeout: int,
                 netmiko_kwargs: dict[str, Any], known_hosts: Path | None = None,
                 silent_peer: float = SILENT_PEER_SECONDS) -> None:
        from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException

        try:
            self._conn = netmiko_connect("linux", hostname, username, password, timeout,
                                         known_hosts or default_known_hosts(), **netmiko_kwargs)
        except NetmikoAuthenticationException as exc:
            raise ConnectionException(f"authentication failed for {username}@{hostname}: "
                                      f"{_netmiko_reason(str(exc))}") from exc
        except NetmikoTimeoutException as exc:
            raise ConnectionException(f"cannot connect to {hostname}: {_netmiko_reason(str(exc))}") from exc
        self.hostname = hostname
        self.default_timeout = float(timeout)
        self.silent_peer = float(silent_peer)
        if self.silent_peer > 0:
            bound_silence(self._transport().sock, self.silent_peer)

    def _lost(self, transport: Any, during: str, heard: float | None = None) -> ConnectionLost:
        """Why the connection is gone, with the bound that applied (``heard``: when the device last sent
        anything, time.monotonic())."""
        cause = getattr(transport, "saved_exception", None) if transport is not None else None
        why = f": {type(cause).__name__}: {cause}" if cause is not None and str(cause) else ""
        silent = time.monotonic() - heard if heard is not None else 0.0
        if self.silent_peer > 0 and (silent >= 0.8 * self.silent_peer or
                                     (isinstance(cause, OSError) and cause.errno == errno.ETIMEDOUT)):
            why = (f": no answer for {silent:.0f}s (a device silent for {self.silent_peer:.0f}s is given up: "
                   f"TCP keepalive and user timeout)")
        return ConnectionLost(f"SSH connection to {self.hostname} lost{during}{why}")

    def _transport(self) -> Any:
        transport = self._transport_or_none()
        if transport is None or not transport.is_active():
            raise self._lost(transport, "")
        return transport

    def run(self, command: str, stdin: str | None = None, timeout: float | None = None,
            cancel: threading.Event | None = None) -> CommandResult:
        """Run on a fresh exec channel; ``cancel`` set = stop waiting at once (CommandInterrupted)."""
        limit = float(timeout or self.default_timeout)
        transport = self._transport()
        try:
            chan = transport.open_session(timeout=min(limit, self.silent_peer or 30.0))
        except (paramiko.SSHException, OSError, EOFError) as exc:  # no answer to the channel request
            raise ConnectionLost(f"SSH connection to {self.hostname}: no channel for `{redact(command)}`: "
                                 f"{type(exc).__name__}: {exc}") from exc
        heard = [time.monotonic()]  # when the device last sent anything
        try:
            return self._exchange(chan, command, stdin, limit, cancel, heard)
        except (paramiko.SSHException, OSError, EOFError) as exc:
            if self._transport_alive():
                raise
            raise self._lost(self._transport_or_none(), f" during `{redact(command)}`", heard[0]) from exc
        finally:
            with contextlib.suppress(Exception):  # a dead transport's channel is closed already
                chan.close()

    def _exchange(self, chan: Any, command: str, stdin: str | None, limit: float,
                  cancel: threading.Event | None, heard: list[float]) -> CommandResult:
        """One command on an open channel: send stdin, read both streams to EOF and the exit status."""
        chan.settimeout(limit)
        chan.exec_command(command)
        if stdin is not None:
            chan.sendall(stdin.encode("utf-8"))
        chan.shutdown_write()
        out: list[bytes] = []
        err: list[bytes] = []
        deadline = time.monotonic() + limit
        while True:
            progressed = False
            while chan.recv_ready():
                out.append(chan.recv(65536))
                progressed = True
            while chan.recv_stderr_ready():
                err.append(chan.recv_stderr(65536))
                progressed = True
            # sshd may report the exit status before it has forwarded all output: stop only at EOF.
            if (chan.exit_status_ready() and chan.eof_received and not chan.recv_ready()
                    and not chan.recv_stderr_ready()):
                break
            if time.monotonic() > deadline:
                raise CommandTimeoutException(f"{self.hostname}: command timed out after {limit:.0f}s")
            if cancel is not None and cancel.is_set():
                raise CommandInterrupted(f"{self.hostname}: interrupted while waiting for `{redact(command)}`")
            if not self._transport_alive():
                raise self._lost(self._transport_or_none(), f" during `{redact(command)}`", heard[0])
            if progressed:
                heard[0] = time.monotonic()
            else:
                select.select([chan], [], [], 0.05)
        status = chan.recv_exit_status()
        return CommandResult(command, b"".join(out).decode("utf-8", "replace"),
                             b"".join(err).decode("utf-8", "replace"), status)

    def _transport_or_none(self) -> Any:
        client = getattr(self._conn, "remote_conn_pre", None)
        return client.get_transport() if client is not None else None

    def _transport_alive(self) -> bool:
        transport = self._transport_or_none()
        return bool(transport is not None and transport.is_active())

    def is_alive(self) -> bool:
        try:
            self._transport()
        except ConnectionClosedException:
            return False
        return True

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a dead session must not raise
            self._conn.disconnect()
