"""`fabricgen sot push|diff|pull --netbox URL | --nautobot URL`: the plan in a source of truth, and back.

push   create what the plan has and the source of truth lacks (tagged `fabricgen`); changes to objects
       fabricgen owns are listed and written only with --apply; nothing it does not own is ever
       changed, nothing at all is deleted
diff   what push would do, plus conflicts and stale objects; with --lldp FILE (a `fabricgen validate
       --format json` report) a three-way view of every cable: plan, source of truth, live LLDP
pull   the source of truth's facts (reserved addresses, device serial / asset tag / rack / position)
       into <intent>.sot.yaml, which the plan honours (docs/sot.md)

The API token comes from $FABRICGEN_<SERVER>_TOKEN, $FABRICGEN_<SERVER>_TOKEN_FILE or --token-file,
never from the command line, and is never printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from typing import Any

from fabricgen.errors import FabricError
from fabricgen.sot.providers import PROVIDERS

EXIT_OK, EXIT_DRIFT, EXIT_USAGE = 0, 1, 2
SHOW = 40  # change lines printed per action before the rest is counted (--format json lists all)


class _RefuseToken(argparse.Action):
    """--token VALUE: refused without echoing the value (argparse would print it as an unknown argument)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.exit(EXIT_USAGE, f"error: {option_string}: a token is never taken from the command line (it would "
                    "stay in the shell history and the process list) (fix: export FABRICGEN_NETBOX_TOKEN / "
                    "FABRICGEN_NAUTOBOT_TOKEN, or pass --token-file FILE)\n")


def register_cli(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from fabricgen.base.options import positive_int

    p = sub.add_parser("sot", help="push the plan into NetBox or Nautobot, diff it, pull its facts back",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=["push", "diff", "pull"])
    p.add_argument("-i", "--intent", default="inventory/fabric.yaml", help="fabric intent YAML")
    where = p.add_mutually_exclusive_group(required=True)
    for name in PROVIDERS:
        where.add_argument(f"--{name}", metavar="URL", help=f"the {name} server (its base URL)")
    p.add_argument("--token-file", metavar="FILE", help="a file holding the API token alone (else the environment)")
    p.add_argument("--token", "--api-token", nargs="?", action=_RefuseToken, help=argparse.SUPPRESS)
    p.add_argument("--apply", action="store_true", help="push: also write changes to objects fabricgen owns")
    p.add_argument("--lldp", metavar="FILE", help="diff: a `fabricgen validate --format json` report (three-way)")
    p.add_argument("--facts", metavar="FILE", help="pull: where to write the facts (default <intent>.sot.yaml)")
    p.add_argument("--format", choices=["table", "json"], default="table")
    p.add_argument("--workers", type=positive_int, default=4, help="requests in flight at once (default 4)")
    p.set_defaults(func=cmd_sot)


def _provider(args: argparse.Namespace) -> tuple[str, str, Any, str]:
    from fabricgen.sot.providers import load
    from fabricgen.sot.token import find_token

    name = next(n for n in PROVIDERS if getattr(args, n, None))
    url = str(getattr(args, name))
    if not url.startswith(("http://", "https://")):
        raise FabricError.single(f"--{name}", "url", f"{url!r} is not an http(s) URL",
                                 f"pass the server's base URL, e.g. --{name} http://127.0.0.1:8000")
    token, _ = find_token(name, args.token_file)
    return name, url, load(name)(url, token, workers=args.workers), token


def cmd_sot(args: argparse.Namespace) -> int:
    from fabricgen.plan.build import load_plan
    from fabricgen.sot.providers import SotError
    from fabricgen.sot.token import redact

    plan = load_plan(args.intent)
    name, url, provider, token = _provider(args)
    try:
        if args.action == "pull":
            return _pull(args, plan, provider, name, url)
        return _push_or_diff(args, plan, provider)
    except SotError as exc:
        sys.stderr.write(f"error: {redact(str(exc), token)}\n")
        return EXIT_DRIFT


def _push_or_diff(args: argparse.Namespace, plan: Any, provider: Any) -> int:
    from fabricgen.sot import engine
    from fabricgen.sot.mapping import desired

    want = desired(plan)
    write = args.action == "push"
    def say(msg: str) -> None:  # progress on stderr in both formats: stdout holds only the result
        sys.stderr.write(f"  {msg}\n")
        sys.stderr.flush()

    result = engine.run(provider, want, write=write, apply=args.apply, progress=say)
    three: list[str] = []
    if args.lldp:
        from fabricgen.sot.live import read_lldp, sot_far_ends, three_way

        three = three_way(plan, sot_far_ends(result.cables), read_lldp(args.lldp))
    if args.format == "json":
        doc = {"provider": result.provider, "action": args.action, "applied": result.applied,
               "writes": result.writes, "objects": result.objects, "read": result.read,
               "seconds": round(result.seconds, 2), "objects_per_second": round(result.rate, 1),
               "changes": [{"kind": c.kind, "key": c.key, "action": c.action, "text": c.line()}
                           for c in result.changes],
               "three_way": three}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        _print(result, args.action, three)
    pending = result.count("update") if not result.applied else 0
    if write:
        return EXIT_DRIFT if result.count("conflict") else EXIT_OK
    return EXIT_DRIFT if result.drift or three or pending else EXIT_OK


def _print(result: Any, action: str, three: list[str]) -> None:
    out = sys.stdout.write
    write = action == "push"
    shown: Counter[str] = Counter()
    hidden: Counter[str] = Counter()
    for c in result.changes:
        if write and c.action == "create":
            continue  # done: counted below
        if shown[c.action] >= SHOW:
            hidden[c.action] += 1
            continue
        shown[c.action] += 1
        out(c.line() + "\n")
    for act, n in hidden.items():
        out(f"... {n} more `{act}` line(s) (--format json lists them all)\n")
    per_kind: dict[str, Counter[str]] = {}
    for c in result.changes:
        per_kind.setdefault(c.kind, Counter())[c.action] += 1
    if per_kind:
        actions = ("create", "update", "conflict", "stale")
        out("kind                 " + "  ".join(f"{a:>8}" for a in actions) + "\n")
        for kind, counts in per_kind.items():
            out(f"{kind:<20} " + "  ".join(f"{counts[a]:>8}" for a in actions) + "\n")
    for line in three:
        out(f"three-way: {line}\n")
    updates = result.count("update")
    verb = "push" if write else "diff"
    summary = (f"{verb} ({result.provider}): {result.writes} writes, {result.objects} objects in the plan, "
               f"{result.read} read, {result.seconds:.1f} s, {result.rate:.0f} objects/s")
    if write and updates and not result.applied:
        summary += f"; {updates} change(s) to fabricgen's objects not written (rerun with --apply)"
    if not write and not result.drift and not three:
        summary += "; the source of truth matches the plan"
    if result.count("conflict"):
        summary += f"; {result.count('conflict')} conflict(s) with objects fabricgen does not own, left alone"
    out(summary + "\n")


def _pull(args: argparse.Namespace, plan: Any, provider: Any, name: str, url: str) -> int:
    from pathlib import Path

    from fabricgen.plan import pulled as facts
    from fabricgen.sot.mapping import desired

    want = desired(plan)
    provider.prepare(want, False)
    got = provider.facts(want)
    path = Path(args.facts) if args.facts else facts.facts_path(args.intent)
    facts.write(path, f"{name} {url}", plan.settings.name, got)
    devices = sum(1 for v in got["devices"].values() if any(x not in ("", None) for x in v.values()))
    sys.stdout.write(f"pull ({name}): {len(got['reserved'])} reserved address(es), facts of {devices} device(s) "
                     f"-> {path}\n")
    return EXIT_OK
