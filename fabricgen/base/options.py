"""The command-line options the stages share, declared once: intent, build, scope, workers, connection.

Each stage's `register_cli` adds its own options and calls these for the common ones, so `-i`,
`-b`, `--limit/--role`, `--workers`, `--lab-dir` and `--known-hosts` mean the same, with the same
help and defaults, wherever they appear.
"""

from __future__ import annotations

import argparse

DEFAULT_INTENT = "inventory/fabric.yaml"
DEFAULT_LAB_INTENT = "inventory/lab/fabric.yaml"
DEFAULT_BUILD = "build"
ROLES = ("leaf", "spine", "super_spine")


def positive_int(text: str) -> int:
    """argparse type of counts such as --workers: a whole number, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (fix: pass 1 or more)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not 1 or more (fix: pass 1 or more, or leave it out)")
    return value


def add_intent(p: argparse.ArgumentParser, default: str = DEFAULT_INTENT, what: str = "fabric intent YAML") -> None:
    p.add_argument("-i", "--intent", default=default, help=f"{what} (default {default})")


def add_build(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("-b", "--build", default=DEFAULT_BUILD, help=f"{what} (default {DEFAULT_BUILD}/)")


def add_scope(p: argparse.ArgumentParser) -> None:
    """--limit or --role: which switches a live command touches (default every switch of the plan)."""
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("--limit", help="comma-separated hostnames")
    scope.add_argument("--role", choices=ROLES, help="only the switches of this role")


def add_workers(p: argparse.ArgumentParser, default: int | None, what: str) -> None:
    shown = "automatic" if default is None else str(default)
    p.add_argument("--workers", type=positive_int, default=default, help=f"{what} (default {shown})")


def add_connection(p: argparse.ArgumentParser) -> None:
    """Where the lab is and which SSH host keys to trust (connect.connection_settings reads them)."""
    p.add_argument("--lab-dir", default=None,
                   help="the lab's state directory (default: wherever `fabricgen lab up` of this fabric put it, "
                        "else .fabricgen/lab/)")
    p.add_argument("--known-hosts", default=None,
                   help="SSH known_hosts to verify devices against (default $FABRICGEN_KNOWN_HOSTS, the lab's, "
                        "or ~/.ssh/known_hosts)")
