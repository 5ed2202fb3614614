"""What ``frr-reload.py`` prints: the ``--test --stdout`` listing compare_config shows, the errors of its log a
failed commit reports, and the one "failure" that is none (a port moved into a tenant VRF's namespace)."""

from __future__ import annotations

import re


def parse_frr_reload_test(text: str) -> tuple[list[str], list[str]]:
    """``frr-reload.py --test --stdout`` stdout -> (lines to delete, lines to add).

    The listing is ``Lines To Delete`` / ``===`` / commands, then ``Lines To Add`` / ``===`` /
    commands; context lines (``router bgp 65001``) repeat before every sub-command, and
    deletions are printed as the ``no ...`` commands frr-reload would run.
    """
    to_delete: list[str] = []
    to_add: list[str] = []
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line == "Lines To Delete":
            current = to_delete
            continue
        if line == "Lines To Add":
            current = to_add
            continue
        if not line.strip() or set(line.strip()) == {"="}:
            continue
        if current is not None:
            current.append(line)
    return to_delete, to_add


def frr_reload_errors(stderr: str) -> str:
    """The ERROR/WARNING records (and vtysh ``% ...`` / ``line N:`` complaints) of frr-reload's log."""
    keep: list[str] = []
    for raw in stderr.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", raw).rstrip()
        if not line.strip():
            continue
        if re.search(r"\b(ERROR|WARNING|CRITICAL)\b", line) or line.lstrip().startswith(("%", "line ", "b'line")):
            keep.append(line.strip())
    return "\n".join(keep)


FAILED_REMOVE = "we failed to remove this command"  # frr-reload.py's words for a line it could not delete
_FAILED_REMOVE_RE = re.compile(r'"interface (\S+) -- [^"]*" ' + FAILED_REMOVE)


def moved_port_failures(output: str, candidate: str) -> list[str]:
    """The ports whose old default-VRF ``interface`` stanza frr-reload could not delete because the port
    now lives in a tenant VRF's namespace (the candidate has ``interface <port> vrf <v>``): vtysh cannot enter
    ``interface <port>`` in the default VRF once zebra moved the port, yet adding the VRF stanza moves its
    config with it.  [] when frr-reload's output holds anything else, or no such line: a real failure."""
    in_vrf = set(re.findall(r"^interface (\S+) vrf \S+$", candidate, re.MULTILINE))
    ports: list[str] = []
    for line in (ln.strip() for ln in output.splitlines()):
        if not line:
            continue
        m = _FAILED_REMOVE_RE.search(line)
        if m is None or m.group(1) not in in_vrf:
            return []
        ports.append(m.group(1))
    return ports
