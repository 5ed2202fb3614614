"""Render: Plan -> files on disk, via one thin Jinja2 template set per platform.

Python computes; templates only lay out text.  Each platform module exposes
`render(switch, plan, env) -> {filename: text}`.  Output is written into a
scratch directory beside the target and swapped in at the end (fabricgen.base.outdir),
so a failed render leaves the previous output intact, and only a directory an
earlier render made is ever replaced.  Large fabrics render in worker
processes (fork: the plan is shared copy-on-write, nothing is pickled).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jinja2

from fabricgen.base import pool
from fabricgen.base.outdir import replaced_dir
from fabricgen.base.templating import environment, to_compact_json_file
from fabricgen.catalog.registry import host_platform, platform
from fabricgen.errors import FabricError
from fabricgen.plan.model import Plan, Switch
from fabricgen.plan.physical import Cabling, cabling
from fabricgen.render import inventory, manifest
from fabricgen.render.summary import plan_dict

RenderFn = Callable[[Switch, Plan, jinja2.Environment], dict[str, str]]


def renderer(name: str) -> RenderFn:
    """The render function the platform's registry record names."""
    return platform(name).render_fn()


def render_switch(sw: Switch, plan: Plan, env: jinja2.Environment | None = None) -> dict[str, str]:
    return renderer(sw.platform)(sw, plan, env or environment())


@dataclass
class RenderResult:
    outdir: Path
    files: int
    lines: int
    switches: int


def inside(root: str | Path, *names: str) -> Path:
    """root/names..., each name one plain path component, so nothing is written outside `root`.

    Defence in depth: the intent model already restricts hostnames and server names to
    RFC 1123 labels; a name that escaped it still cannot climb out of the output.
    """
    for name in names:
        if not name or name in (".", "..") or "/" in name or "\0" in name:
            raise FabricError.single(str(root), "", f"refusing to write {name!r}: not a plain file name",
                                     "report this as a fabricgen bug: the intent model should have refused it")
    return Path(root, *names)


def _inside(root: str, rel: str) -> str:
    """`inside(root, *rel.split("/"))` as a string, without building a Path (30K files at 128K GPUs)."""
    names = rel.split("/")
    if "" in names or "." in names or ".." in names or "\0" in rel:
        inside(root, *names)  # raises, naming the component
    return f"{root}/{rel}"


Job = tuple[str, list[str]]  # (kind, names): kind is "switches", "hosts" or "inventory"


def _write(root: str, rel: str, text: str | bytes | bytearray, hashes: dict[str, str], mode: int | None = None) -> str:
    """Write one output file and note its hash for the manifest (no second read of what was just written).

    `mode`: set on the open file (executable scripts), where a chmod by path would look the name up again.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    path = _inside(root, rel)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    hashes[rel] = manifest.text_sha256(data)
    return path


def _run_job(args: tuple[Job, str]) -> tuple[int, int, dict[str, str]]:
    """Write one slice of the output; returns (files, config lines, their hashes).  Runs in a forked worker."""
    (kind, names), root = args
    plan: Plan = pool.shared()
    hashes: dict[str, str] = {}
    if kind == "switches":
        os.makedirs(inside(root, "configs"), exist_ok=True)
        env = environment()
        files = lines = 0
        for host in names:
            outputs = render_switch(plan.switches[host], plan, env)
            with contextlib.suppress(FileExistsError):
                os.mkdir(inside(root, "configs", host))  # the host name refused whole if it is not one name
            for name, text in outputs.items():
                _write(root, f"configs/{host}/{name}", text, hashes)
                files += 1
                lines += text.count("\n")
        return files, lines, hashes
    if kind == "hosts":
        record = host_platform()
        render_host = record.render_fn()
        servers = {s.name: s for s in plan.hosts()}
        inside(root, record.output_dir).mkdir(exist_ok=True)
        files = 0
        env, mode = environment(), 0o755 if record.executable else None
        for name in names:
            for fname, text in render_host(servers[name], plan, env).items():
                _write(root, f"{record.output_dir}/{fname}", text, hashes, mode)
                files += 1
        return files, 0, hashes
    inventory.write(plan, Path(root, "inventory"))
    return 3, 0, hashes


def _plan_files(plan: Plan, root: str, physical: Cabling) -> dict[str, str]:
    """plan.json (compact JSON: read by programs, `fabricgen plan --json` prints it indented) and cabling.csv,
    from the same cables; returns their hashes."""
    over = physical.overfull
    if over:  # a cabling plan no hardware takes: one plug per cage
        raise FabricError.single(plan.source, "cabling", f"{len(over)} cage(s) would take more than one plug, "
                                 "e.g. " + ", ".join(f"{d} cage {c}: {n}" for d, c, n in over[:3]),
                                 "report this as a fabricgen bug (fabricgen.plan.physical groups the cables)")
    hashes: dict[str, str] = {}
    _write(root, "plan.json", to_compact_json_file(plan_dict(plan, physical.counts)), hashes)
    _write(root, "cabling.csv", physical.csv, hashes)
    return hashes


class CablingAhead:
    """The plan's cabling (`physical.cabling`), computed in a child forked as soon as the topology is built.

    It reads no address, so it runs on the core the plan build leaves idle (one process builds the plan): 7 CPU s
    of the render at 128K GPUs.  Give `start` to `load_plan(topology_done=...)` and this object to `render_all`;
    a fabric small enough to render in one process (or `workers=1`) computes its cabling there, as before.  Used
    as a context manager, it stops a child whose result was never asked for (the plan or the render failed first).
    """

    def __init__(self, workers: int | None = None) -> None:
        self._workers = workers
        self._job: pool.Forked[Cabling] | None = None

    def __enter__(self) -> CablingAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def started(self) -> bool:
        """A child is computing the cabling and its result was not taken yet."""
        return self._job is not None

    def start(self, plan: Plan) -> None:
        if self._job is None and (self._workers or _workers(plan)) > 1:
            self._job = pool.Forked(functools.partial(cabling, plan))

    def result(self, plan: Plan) -> Cabling:
        """The child's cabling, or the plan's computed here if no child was started."""
        job, self._job = self._job, None
        return cabling(plan) if job is None else job.get()

    def close(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.close()


def _jobs(plan: Plan, workers: int) -> list[Job]:
    """Slices of similar cost, the inventory (one job of its own) first so it does not finish last; plan.json and
    cabling.csv are written by the render's own process (`render_all`)."""
    jobs: list[Job] = [("inventory", [])]
    jobs += [("switches", c) for c in _chunks(list(plan.switches), workers * 4)]
    jobs += [("hosts", c) for c in _chunks([s.name for s in plan.hosts()], workers * 2)]
    return jobs


def _chunks(items: list[str], n: int) -> list[list[str]]:
    size = max(1, -(-len(items) // n))
    return [items[i:i + size] for i in range(0, len(items), size)]


def _workers(plan: Plan) -> int:
    """Render workers for a plan: one per core (at most 8) past 200 switches; a smaller fabric renders faster than
    a pool forks."""
    return min(os.cpu_count() or 1, 8) if len(plan.switches) > 200 else 1


def render_all(plan: Plan, outdir: str | Path, workers: int | None = None,
               checks: Callable[[Path], None] | None = None, force: bool = False,
               ahead: CablingAhead | None = None) -> RenderResult:
    """Write every output of the plan into `outdir` atomically.

    `outdir` must be new, empty or an earlier render's output (`force` replaces any other
    directory; see fabricgen.base.outdir for what is refused even then).  `checks` (if given) runs
    on the scratch directory before the swap; raising there keeps the previous output in place.
    `ahead`: the cabling started while the plan was built (`CablingAhead`).
    """
    target = Path(outdir)
    hosts = list(plan.switches)
    workers = workers if workers is not None else _workers(plan)
    source = Path(plan.source)
    keep = [source] if source.is_file() else []
    ahead = ahead or CablingAhead()
    with replaced_dir(target, force=force, keep=keep) as tmp:
        jobs = [(job, str(tmp)) for job in _jobs(plan, workers)]
        if workers > 1:
            with pool.forked_pool(workers, plan) as workers_pool:  # the plan is shared copy-on-write
                pending = workers_pool.map_async(_run_job, jobs, chunksize=1)
                # plan.json and cabling.csv here, beside the workers: this process waits for them anyway
                with pool.collector_off():  # the plan's JSON and ~1M cables at 128K GPUs, none cyclic
                    plan_hashes = _plan_files(plan, str(tmp), ahead.result(plan))
                counts = pending.get()
        else:
            with pool.serial(plan):
                counts = [_run_job(job) for job in jobs]
            plan_hashes = _plan_files(plan, str(tmp), ahead.result(plan))
        files = sum(c[0] for c in counts) + len(plan_hashes)
        lines = sum(c[1] for c in counts)
        if checks is not None:
            checks(tmp)  # reads the files; never rewrites them, so the hashes taken at write time hold
        written = {rel: sha for c in counts for rel, sha in c[2].items()} | plan_hashes
        manifest.write(tmp, plan, checked=checks is not None, known=written)  # what deploy and validate will push
    return RenderResult(target, files + 2, lines, len(hosts))  # + the manifest and the marker
