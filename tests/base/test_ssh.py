"""Host keys are verified on every SSH path, and an unknown or changed key never receives a password.

A real SSH server (paramiko's server side, on 127.0.0.1) records every authentication
attempt; fabricgen's one SSH helper connects to it the way validate (paramiko) and the
drivers (netmiko) do.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import paramiko
import pytest

from fabricgen.base import ssh
from fabricgen.base.ssh import (
    ConnectionLost,
    HostKeyError,
    NetmikoTransport,
    connect,
    fingerprint,
    known_hosts_name,
    netmiko_connect,
)

PASSWORD = "s3cret-never-sent"


class Recorder(paramiko.ServerInterface):
    def __init__(self, attempts: list[str]) -> None:
        self.attempts = attempts

    def get_allowed_auths(self, username: str) -> str:
        return "password,publickey"

    def check_auth_password(self, username: str, password: str) -> int:
        self.attempts.append(f"password {username} {password}")
        return paramiko.AUTH_SUCCESSFUL

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        self.attempts.append(f"publickey {username}")
        return paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return paramiko.OPEN_SUCCEEDED


class Vanishing(Recorder):
    """A device that accepts a command, then drops off the network (its side of the connection closes)."""

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        threading.Timer(0.3, channel.get_transport().close).start()
        return True


class Server:
    """One SSH server with its own host key; ``attempts`` lists every authentication it received."""

    def __init__(self, interface: type[Recorder] = Recorder) -> None:
        self.interface = interface
        self.key = paramiko.ECDSAKey.generate()
        self.attempts: list[str] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.port = self.sock.getsockname()[1]
        self.transports: list[paramiko.Transport] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            t = paramiko.Transport(conn)
            t.add_server_key(self.key)
            self.transports.append(t)
            try:
                t.start_server(server=self.interface(self.attempts))
            except (paramiko.SSHException, EOFError, OSError):
                continue

    def known_hosts(self, path: Path, key: paramiko.PKey | None = None) -> Path:
        k = key or self.key
        path.write_text(f"{known_hosts_name('127.0.0.1', self.port)} {k.get_name()} {k.get_base64()}\n")
        return path

    def close(self) -> None:
        self.sock.close()
        for t in self.transports:
            t.close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    try:
        yield s
    finally:
        s.close()


def test_unknown_key_is_refused_before_any_password(server: Server, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(HostKeyError) as err, connect("127.0.0.1", "admin", PASSWORD, None, empty, port=server.port):
        pass
    text = str(err.value)
    assert f"[127.0.0.1]:{server.port}" in text and fingerprint(server.key) in text and "unknown" in text
    assert fingerprint(server.key).startswith("ecdsa-sha2-nistp256 SHA256:")
    assert server.attempts == []


def test_changed_key_is_refused_before_any_password(server: Server, tmp_path: Path) -> None:
    old = paramiko.ECDSAKey.generate()
    known = server.known_hosts(tmp_path / "known_hosts", old)
    with pytest.raises(HostKeyError, match="CHANGED") as err, \
            connect("127.0.0.1", "admin", PASSWORD, None, known, port=server.port):
        pass
    assert fingerprint(server.key) in str(err.value) and fingerprint(old) in str(err.value)
    assert server.attempts == []


def test_known_key_logs_in(server: Server, tmp_path: Path) -> None:
    known = server.known_hosts(tmp_path / "known_hosts")
    with connect("127.0.0.1", "admin", PASSWORD, None, known, port=server.port) as client:
        transport = client.get_transport()
        assert transport is not None and transport.is_authenticated()
    assert server.attempts == [f"password admin {PASSWORD}"]


def test_netmiko_path_refuses_an_unknown_key(server: Server, tmp_path: Path) -> None:
    """The drivers' path (netmiko, as the frr/sonic transport and napalm's nxos_ssh use it)."""
    with pytest.raises(HostKeyError, match="unknown") as err:
        netmiko_connect("linux", "127.0.0.1", "admin", PASSWORD, 5, tmp_path / "missing_known_hosts",
                        port=server.port, use_keys=False, allow_agent=False)
    assert "file does not exist" in str(err.value) and fingerprint(server.key) in str(err.value)
    assert server.attempts == []


def test_a_device_that_vanishes_mid_command_is_given_up_at_once(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 D8: the command raises ConnectionLost (what deploy journals as undetermined) instead of waiting
    out its timeout, and every connection carries the silent-peer bound (keepalive + TCP user timeout)."""
    server = Server(Vanishing)
    try:
        known = server.known_hosts(tmp_path / "known_hosts")
        with connect("127.0.0.1", "admin", PASSWORD, None, known, port=server.port) as client:
            monkeypatch.setattr(ssh, "netmiko_connect", lambda *a, **kw: SimpleNamespace(remote_conn_pre=client))
            transport = NetmikoTransport("127.0.0.1", "admin", PASSWORD, 600, {}, known, silent_peer=12)
            sock = client.get_transport().sock  # type: ignore[union-attr]
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 4
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 12_000
            start = time.monotonic()
            with pytest.raises(ConnectionLost, match="SSH connection to 127.0.0.1 lost during `frr-reload --reload`"):
                transport.run("frr-reload --reload", timeout=600)
            assert time.monotonic() - start < 10
            assert not transport.is_alive()
            with pytest.raises(ConnectionLost):  # and every later command at once
                transport.run("true")
    finally:
        server.close()
