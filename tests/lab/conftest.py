"""Live-lab fixtures: skip cleanly where the lab cannot run (not root, FRR/lldpd/sshd missing)."""

from __future__ import annotations

import os
import shutil

import pytest

from fabricgen.lab.daemons import missing_tools


def lab_skip_reason() -> str | None:
    """Why the live lab cannot run on this host, None if it can."""
    if os.geteuid() != 0:
        return "live lab needs root (network namespaces, mounts)"
    missing = missing_tools()
    if missing:
        return f"live lab needs {', '.join(missing)} (apt install frr lldpd openssh-server)"
    if shutil.which("ping") is None:
        return "live lab tests need ping (iputils-ping)"
    if not os.path.isdir("/proc/self/ns"):
        return "no namespace support in /proc"
    return None


@pytest.fixture(scope="session")
def lab_host() -> None:
    """Gate for every live-lab test: skip (not fail) when the host cannot run a lab."""
    reason = lab_skip_reason()
    if reason:
        pytest.skip(reason)
