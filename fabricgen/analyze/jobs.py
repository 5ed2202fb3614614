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

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabricgen.analyze.fabric import Fabric
from fabricgen.analyze.flows import GIB, Job
from fabricgen.errors import FabricError, Problem

# The intent loader's YAML helpers: duplicate keys rejected, every node's line indexed.
from fabricgen.intent import _line_index, _UniqueKeyLoader, dotted, line_for


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
    try:
        text = Path(path).read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=_UniqueKeyLoader)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - SafeLoader subclass
    except OSError as exc:
        raise FabricError.single(source, "", f"cannot read jobs file: {exc.strerror}",
                                 "pass an existing file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FabricError.single(source, "", f"malformed YAML: {getattr(exc, 'problem', None) or exc}",
                                 "fix the YAML syntax", mark.line + 1 if mark else None) from None
    lines = dict(_line_index(node)) if node is not None else {}
    try:
        spec = JobsFile.model_validate(data)
    except ValidationError as exc:
        raise FabricError(source, [Problem(dotted(tuple(err["loc"])), str(err["msg"]).removeprefix("Value error, "),
                                           "see the jobs file format in fabricgen/analyze/jobs.py",
                                           line_for(lines, tuple(err["loc"]))) for err in exc.errors()]) from None
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
