"""The README's commands table, docs/commands.md and docs/rules.md, generated from the CLI and the rule
catalogue (fabricgen/catalog/rules.py) so they cannot drift.

    python tools/cli_docs.py           rewrite both (`make docs-cli`)
    python tools/cli_docs.py --check   exit 1 if either is stale (tests/test_readme.py runs the same check)

The README holds the table between the `<!-- commands:start -->` and `<!-- commands:end -->` markers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fabricgen.cli import build_parser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "commands.md"
RULES_DOC = ROOT / "docs" / "rules.md"
START, END = "<!-- commands:start -->", "<!-- commands:end -->"
COMMON = {"-h", "--help", "--sonic-platform", "--debug", "-i", "--intent"}  # every command has these


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, help, parser) of each sub-command, in the order the CLI registers them."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            out += [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return out


def commands() -> list[tuple[str, str, argparse.ArgumentParser]]:
    """Every command as a user types it ("lab up", "analyze ecmp", ...), with its help and parser."""
    out = []
    for name, text, sub in _subparsers(build_parser()):
        nested = _subparsers(sub)
        if nested:
            out += [(f"{name} {child}", child_help, parser) for child, child_help, parser in nested]
        else:
            out.append((name, text, sub))
    return out


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and not set(a.option_strings) & COMMON
            and a.help != argparse.SUPPRESS]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def readme_table() -> str:
    rows = ["| command | what it does | options |", "|---|---|---|"]
    for name, text, parser in commands():
        opts = ", ".join(f"`{max(a.option_strings, key=len)}`" for a in _options(parser))
        rows.append(f"| `fabricgen {name}` | {_cell(text)} | {opts or '-'} |")
    return "\n".join(rows) + "\n"


def reference() -> str:
    out = ["# Command reference", "",
           "Generated from the CLI by `make docs-cli` (tools/cli_docs.py); a test fails when it is stale.",
           "Every command also takes `-i/--intent INTENT` where it reads an intent (default",
           "`inventory/fabric.yaml`; for `lab`, `inventory/lab/fabric.yaml`), `--sonic-platform DIR` (SONiC SKU",
           "files fabricgen does not ship) and `--debug` (the traceback of an unexpected error). On `lab` and",
           "`analyze` those two go before the sub-command: `fabricgen lab --sonic-platform DIR up -i INTENT`.",
           ""]
    for name, text, parser in commands():
        out += [f"## `fabricgen {name}`", "", _cell(text) + ".", "", "| option | what it does |", "|---|---|"]
        for a in _options(parser):
            flags = ", ".join(f"`{s}`" for s in a.option_strings)
            choices = f" ({', '.join(map(str, a.choices))})" if a.choices else ""
            out.append(f"| {flags} | {_cell(a.help or '')}{_cell(choices)} |")
        out.append("")
    return "\n".join(out)


def with_table(readme: str) -> str:
    head, sep, rest = readme.partition(START)
    if not sep or END not in rest:
        raise SystemExit(f"{README}: the {START} / {END} markers are missing")
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{readme_table()}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    from fabricgen.catalog.rules import markdown

    wanted = {README: with_table(README.read_text(encoding="utf-8")), REFERENCE: reference(), RULES_DOC: markdown()}
    stale = [p for p, text in wanted.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale (fix: make docs-cli)", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
