"""One device's deploy, phase by phase, as plain functions of a napalm driver.

lock -> diff -> commit -> check -> (rollback) -> unlock.  The runner strings them together
and journals each transition; later tooling (waves, drains, impact labels) can call them
one by one.  fabricgen's own drivers (frr, sonic, nxos) implement the optional extensions
used here (device lock, platform change list, post-commit verification); for any other
napalm driver those steps are skipped.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fabricgen.deploy.impact import DeviceImpact, device_impact
from fabricgen.plan.model import Switch

if TYPE_CHECKING:
    from napalm.base import NetworkDriver, models

CHECK_TIMEOUT = 60.0  # seconds the post-commit check waits for every session and prefix


class CheckFailed(Exception):
    """The post-commit check found the device unhealthy; the runner rolls it back."""


@dataclass
class Diff:
    text: str  # unified diff, "" = no change
    changes: str = ""  # the platform's own change list (FRR: frr-reload.py --test), when it has one
    # the normalised sides the driver diffed: [(fromfile, tofile, old lines, new lines)] (fabricgen drivers)
    sides: list[tuple[str, str, list[str], list[str]]] | None = None


@dataclass
class Sessions:
    """BGP sessions before a commit: the ones up, and the IPv4 prefixes each one carried."""

    up: set[str] = field(default_factory=set)
    accepted: dict[str, int] = field(default_factory=dict)


def accepted_prefixes(peer: models.BGPStateNeighborDict) -> int:
    """IPv4 prefixes a napalm ``get_bgp_neighbors`` peer accepted; drivers that cannot tell report
    -1 (napalm's nxos_ssh), and then the received count stands in."""
    af = peer.get("address_family", {}).get("ipv4")
    if af is None:
        return 0
    accepted = int(af.get("accepted_prefixes", 0) or 0)
    return accepted if accepted >= 0 else max(0, int(af.get("received_prefixes", 0) or 0))


def sessions(device: NetworkDriver) -> Sessions:
    vrf = device.get_bgp_neighbors().get("global")
    peers = vrf.get("peers", {}) if vrf is not None else {}
    out = Sessions()
    for ip, p in peers.items():
        if p.get("is_up"):
            out.up.add(ip)
        out.accepted[ip] = accepted_prefixes(p)
    return out


def live_mtu_gaps(device: NetworkDriver, sw: Switch) -> list[str]:
    """Ports whose live MTU differs from the plan on a platform whose config cannot set it."""
    from fabricgen.plan.deployable import mtu_mismatches, platform_sets_mtu

    if platform_sets_mtu(sw.platform):
        return []
    return mtu_mismatches(sw, device.get_interfaces())


def lock(device: NetworkDriver, run: str, owner: str, takeover: frozenset[str] = frozenset(),
         who: dict[str, Any] | None = None) -> None:
    """Take the device's own deploy lock (drivers that have one); raises DeviceLocked naming the holder."""
    take = getattr(device, "fabricgen_lock", None)
    if take is not None:
        take(run, owner, takeover, who)


def unlock(device: NetworkDriver, run: str) -> None:
    release = getattr(device, "fabricgen_unlock", None)
    if release is not None:
        release(run)


def diff(device: NetworkDriver, candidate: str) -> Diff:
    """Load the candidate and compare; the candidate stays loaded for :func:`commit`."""
    device.load_replace_candidate(config=candidate)
    text = device.compare_config()
    if not text:
        return Diff("")
    return Diff(text, str(getattr(device, "last_changes", "") or ""), getattr(device, "last_sides", None))


def impact(sw: Switch, d: Diff, day0: bool = False, sonic_release: str = "") -> DeviceImpact:
    """Label every hunk of the device's diff with what it does to traffic (fabricgen.deploy.impact); `day0`:
    the SONiC day-0 path (config load + config reload) applies it; `sonic_release` (platforms.sonic_release,
    "202411") dates GCU's field rules as they do ("20241100")."""
    sides = [(to, old, new) for _, to, old, new in d.sides] if d.sides else None
    branch = f"{sonic_release}00" if sonic_release.isdigit() else None
    return device_impact(sw.hostname, sw.platform, sides, d.text, hwsku=sw.sku, branch=branch, day0=day0)


def discard(device: NetworkDriver) -> None:
    device.discard_config()


def _uninterruptible(device: NetworkDriver) -> contextlib.AbstractContextManager[Any]:
    """A commit or rollback is never cut short by Ctrl-C (drivers that can cancel their reads)."""
    guard = getattr(device, "uninterruptible", None)
    return guard() if guard is not None else contextlib.nullcontext()


def setup(device: NetworkDriver, script: str) -> list[str]:
    """Run the switch's rendered setup script (its record's `lab_script`, Linux + FRR: tenants.sh) right
    before the commit, on drivers that can (napalm_frr `fabricgen_setup`); the config needs what it makes
    (a tenant VRF's namespace, its ports moved in).  Never in a dry run: the runner calls it only to commit."""
    run = getattr(device, "fabricgen_setup", None)
    if not script or run is None:
        return []
    with _uninterruptible(device):
        return list(run(script))


def commit(device: NetworkDriver) -> None:
    """Commit the loaded candidate; the driver restores the previous config on any failure inside."""
    with _uninterruptible(device):
        device.commit_config()


def repair(device: NetworkDriver) -> list[str]:
    """Post-commit consistency (drivers that verify themselves): saved = running, every daemon
    holds its config; re-applies what a daemon lacks.  Returns what it repaired; raises
    CheckFailed for what it could not."""
    verify = getattr(device, "fabricgen_verify", None)
    if verify is None:
        return []
    repaired, problems = verify()
    if problems:
        raise CheckFailed("\n".join(problems))
    return list(repaired)


def wanted_prefixes(before: Sessions, expected: dict[str, int]) -> dict[str, int]:
    """Per session up before the commit, the IPv4 prefixes it must carry after it.

    The plan's count when the session carried at least that many before (or nothing at
    all: a daemon that lost its policy); else what it carried before, as neighbors may
    still run the previous intent.  A commit must never cost a switch a route.
    """
    out = {}
    for ip in before.up:
        plan = expected.get(ip, 0)
        had = before.accepted.get(ip, 0)
        out[ip] = plan if had == 0 or had >= plan else had
    return out


def check(device: NetworkDriver, before: Sessions, expected: dict[str, int], timeout: float,
          cancel: threading.Event | None = None, grace: float = 10.0, poll: float = 1.0) -> None:
    """Wait until every session up before the commit is up again with its prefixes.

    ``expected`` maps neighbor address -> planned accepted IPv4 prefixes.  Once ``cancel``
    is set (Ctrl-C) the wait ends within ``grace`` seconds.  Raises CheckFailed naming
    every session still short.
    """
    from napalm.base.exceptions import ConnectionClosedException  # the [deploy] extra, as the drivers

    want = wanted_prefixes(before, expected)
    deadline = time.monotonic() + timeout
    cancelled_at: float | None = None
    problems: list[str] = []
    while True:
        problems = []
        try:
            now = sessions(device)
        except ConnectionClosedException:  # the device went silent: waiting cannot bring the session back
            raise
        except Exception as exc:  # noqa: BLE001 - daemons may be restarting right after the commit
            problems = [f"cannot read BGP state: {type(exc).__name__}: {exc}"]
        else:
            for ip in sorted(want):
                if ip not in now.up:
                    problems.append(f"BGP session {ip} was up before the commit and is down")
                elif now.accepted.get(ip, 0) < want[ip]:
                    problems.append(f"BGP session {ip} carries {now.accepted.get(ip, 0)} IPv4 prefixes, "
                                    f"expected {want[ip]}")
        if not problems:
            return
        if cancel is not None and cancel.is_set() and cancelled_at is None:
            cancelled_at = time.monotonic()
            deadline = min(deadline, cancelled_at + grace)
        if time.monotonic() >= deadline:
            waited = "until the interrupt's grace period ended" if cancelled_at else f"for {timeout:.0f}s"
            raise CheckFailed("post-commit check failed after waiting " + waited + ":\n" + "\n".join(problems))
        (cancel.wait(poll) if cancel is not None and cancelled_at is None else time.sleep(poll))


def stale_timers(device: NetworkDriver, sw: Switch) -> list[str]:
    """Planned sessions that are up on keepalive/hold times other than the plan's (they keep what they
    negotiated until reset); [] when the driver cannot tell (no neighbors detail)."""
    from fabricgen.validate.checks import check_timers

    if sw.bgp is None:
        return []
    try:
        detail = device.get_bgp_neighbors_detail()
    except NotImplementedError:
        return []
    return [f"{o.item} {o.actual}" for o in check_timers(sw, detail) if not o.ok and "negotiated" in o.actual]


def reset_sessions(device: NetworkDriver) -> None:
    """Reset every BGP session of the device (drivers that can), so changed timers take effect."""
    reset = getattr(device, "fabricgen_reset_bgp", None)
    if reset is not None:
        with _uninterruptible(device):
            reset()


def rollback(device: NetworkDriver) -> None:
    with _uninterruptible(device):
        device.rollback()
