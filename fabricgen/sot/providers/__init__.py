"""Source-of-truth providers: one module each, all speaking `fabricgen.sot.objects`.

A provider translates the neutral objects into its server's records and back (the `Provider`
protocol of fabricgen.sot.engine); it decides nothing about the fabric.  Adding a server kind
(Infrahub, say) is one module here and one line in PROVIDERS.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

# --<name> URL on the command line -> "module:class" of its provider
PROVIDERS: dict[str, str] = {
    "netbox": "fabricgen.sot.providers.netbox:NetBox",
    "nautobot": "fabricgen.sot.providers.nautobot:Nautobot",
}


class SotError(Exception):
    """A source of truth that cannot be reached or refuses a request; the message never holds the token."""


def load(name: str) -> Callable[..., Any]:
    module, _, attr = PROVIDERS[name].partition(":")
    provider: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return provider


T = TypeVar("T")


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def parallel(fn: Callable[[list[T]], list[Any]], batches: Iterable[list[T]], workers: int) -> list[Any]:
    """Run `fn` on each batch, `workers` at a time; the results in batch order."""
    batches = list(batches)
    if workers <= 1 or len(batches) <= 1:
        return [r for b in batches for r in fn(b)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [r for rs in pool.map(fn, batches) for r in rs]
