"""Planning the change window: what refuses a deploy up front, the waves, and what runs between them.

A staged rollout (``--waves``, ``--canary``) changes the devices a preview found changing, wave by
wave, validating the fabric between waves (``validate_between``) and stopping at the first wave
that did not end as planned (``wave_failure``) unless the operator goes on.
"""

from __future__ import annotations

from rich.console import Console

from fabricgen.deploy import report as R
from fabricgen.deploy.context import DeployOptions, RunContext
from fabricgen.deploy.waves import Wave, auto_waves, load_waves
from fabricgen.plan.model import Plan
from fabricgen.render.manifest import Build


def opts_refusals(plan: Plan, build: Build, hosts: list[str], opts: DeployOptions) -> list[str]:
    """Why this deploy must not start: unchecked or changed files (unless --force),
    settings the platforms cannot deploy (unless --accept-undeployable)."""
    from fabricgen.plan.deployable import undeployable

    out: list[str] = []
    if not opts.force:
        out += build.problems(plan.switches[h] for h in hosts)
    if not opts.accept_undeployable:
        for item in undeployable(plan, hosts):
            out.append(f"{item.message} (fix: {item.fix}, or --accept-undeployable to deploy the rest)")
    return out


def accepted_gaps(plan: Plan, hosts: list[str]) -> dict[str, list[str]]:
    """--accept-undeployable: per selected device, the intent settings its platform will not deploy (D3)."""
    from fabricgen.plan.deployable import undeployable

    out: dict[str, list[str]] = {}
    for item in undeployable(plan, hosts):
        for host in hosts:
            sw = plan.switches[host]
            if sw.platform == item.platform and sw.role in item.roles:
                out.setdefault(host, []).append(f"{item.setting}: platform {item.platform} cannot deploy it: "
                                                f"{item.why}")
    return out


def plan_waves(plan: Plan, opts: DeployOptions, preview: R.DeployReport) -> list[Wave]:
    """The waves over the devices the preview found changing (or failing); see fabricgen.deploy.waves."""
    todo = sorted(h for h, o in preview.outcomes.items() if o.status != R.UNCHANGED)
    if opts.waves == "auto":
        canary = opts.canary if opts.canary in todo else None
        return auto_waves(plan, todo, canary)
    waves = load_waves(str(opts.waves), plan, todo)
    if opts.canary is not None:
        rest = [Wave(0, [h for h in w.hosts if h != opts.canary], w.note) for w in waves]
        waves = [Wave(0, [opts.canary], "canary")] + [w for w in rest if w.hosts]
        for i, w in enumerate(waves, 1):
            w.number = i
    return waves


def print_waves(console: Console, waves: list[Wave]) -> None:
    from rich.table import Table

    t = Table(title=f"rollout: {len(waves)} wave(s), the fabric validated between them")
    for col in ("wave", "switches", "kind"):
        t.add_column(col)
    for w in waves:
        t.add_row(str(w.number), ", ".join(w.hosts), w.note)
    console.print(t)


def wave_failure(wave: Wave, results: dict[str, R.DeviceOutcome]) -> str:
    """"wave N: host: reason" for the first device of the wave that did not end as planned."""
    for host in wave.hosts:
        o = results.get(host)
        if o is None:
            return f"wave {wave.number}: {host}: no result"
        if o.status not in (R.CHANGED, R.UNCHANGED):
            return f"wave {wave.number}: {host}: {o.status}: {o.reason}"
    return ""


def validate_between(plan: Plan, ctx: RunContext, wave: Wave) -> str:
    """Wait (up to --wave-timeout) for the between-wave checks to pass; "" or why the rollout stops."""
    import time

    from fabricgen.validate import CHECKS, run_validate

    checks = tuple(dict.fromkeys(c for c in ctx.opts.wave_checks if c in CHECKS))
    window = plan.health.window_seconds if ctx.opts.wave_health is None else ctx.opts.wave_health
    judged = ", ".join((*checks, f"health over {window:g} s")) if window else ", ".join(checks)
    deadline = time.monotonic() + ctx.opts.wave_timeout
    while True:
        found = run_validate(plan, checks, workers=ctx.opts.workers, lab_dir=ctx.opts.lab_dir,
                             known_hosts=ctx.opts.known_hosts, health_window=window or None).failures
        if not found:
            ctx.console.print(f"wave {wave.number}: fabric validates ({judged})", markup=False,
                              highlight=False)
            return ""
        if time.monotonic() > deadline or ctx.cancel.wait(1.0):
            first = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return (f"after wave {wave.number} ({', '.join(wave.hosts)}) the fabric does not validate: "
                    f"{first.device} {first.check} {first.item}: expected {first.expected}, got {first.actual}{more}")


def ask_operator(opts: DeployOptions, console: Console, question: str) -> bool:
    if opts.ask is not None:
        return bool(opts.ask(question))
    import sys

    if not sys.stdin.isatty():
        console.print("(not a terminal: stopping)", markup=False, highlight=False)
        return False
    console.print(f"{question} [y/N] ", end="", markup=False, highlight=False)
    return sys.stdin.readline().strip().lower() in ("y", "yes")
