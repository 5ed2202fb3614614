"""`--jobs FILE`: several jobs placed on server subsets (fragmented placement).

    jobs:
      - name: llm-a
        servers: [gpu0001..gpu0016, gpu0033]   # names or first..last ranges, in rank order
        pattern: ring                           # ring | tree | alltoall (default: the command's)
        qps_per_conn: 4                         # default: the command's --qps-per-conn

Bad input exits 2 naming the file, line, field and fix, like the intent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import GIB, Job
from fabricgen.errors import FabricError, Problem

# The intent's bounded YAML reader and its error mapping: same limits, lines and fixes.
from fabricgen.intent import reader as intent_file
from fabricgen.intent.model import dotted, line_for, validation_problem


class JobSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
    servers: list[str] = Field(min_length=1)
    pattern: Literal["ring", "tree", "alltoall"] | None = None
    qps_per_conn: int | None = Field(default=None, ge=1, le=64)
    message_mib: int = Field(default=GIB >> 20, ge=1)


class JobsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    jobs: list[JobSpec] = Field(min_length=1)


def load_jobs(path: str | Path, fabric: Fabric, pattern: str, qps: int, cross_rail: bool = False) -> list[Job]:
    source = str(path)
    data, lines = intent_file.load(path)
    try:
        spec = JobsFile.model_validate(data)
    except ValidationError as exc:
        raise FabricError(source, [validation_problem(err, lines) for err in exc.errors()]) from None
    index = {name: i for i, name in enumerate(fabric.servers)}
    jobs: list[Job] = []
    problems: list[Problem] = []
    owner: dict[int, str] = {}
    for j, js in enumerate(spec.jobs):
        picked: list[int] = []
        for k, item in enumerate(js.servers):
            loc = ("jobs", j, "servers", k)
            first, _, last = item.partition("..")
            if first not in index or (last and last not in index):
                bad = first if first not in index else last
                problems.append(Problem(dotted(loc), f"no server {bad!r} in the plan",
                                        f"use server names such as {fabric.servers[0]!r}", line_for(lines, loc)))
                continue
            lo, hi = index[first], index[last] if last else index[first]
            if hi < lo:
                problems.append(Problem(dotted(loc), f"range {item!r} runs backwards", "write first..last",
                                        line_for(lines, loc)))
                continue
            for s in range(lo, hi + 1):
                if s in owner:
                    problems.append(Problem(dotted(loc), f"server {fabric.servers[s]} is already in job {owner[s]}",
                                            "place every server in at most one job", line_for(lines, loc)))
                    break
                owner[s] = js.name
                picked.append(s)
        jobs.append(Job(js.name, tuple(picked), js.pattern or pattern, js.qps_per_conn or qps,
                        js.message_mib << 20, cross_rail))
    if problems:
        raise FabricError(source, problems)
    return jobs
