"""Fetch the SONiC files fabricgen's shipped SONiC facts are made from, pinned to one commit each.

A maintainer's tool (`make sonic-platform` runs it through tools/sonic_facts.py when no
SONIC_PLATFORM tree is given); fabricgen itself never fetches anything.  Writes
``<dir>/device/<vendor>/<platform>/<HWSKU>/...`` exactly as sonic-buildimage lays them out, and
GCU's field rules as sonic-utilities does (``<dir>/sonic-utilities/generic_config_updater/``),
from raw.githubusercontent.com.  sonic-buildimage shares many SKU files through symlinks;
GitHub's raw view serves a symlink as the text of its target, which is followed here.  A
directory that exists and was not made by this tool is never written into.

    python tools/sonic_fetch.py [DIR]      (default: the cache folder `default_dest()` names)
"""

from __future__ import annotations

import os
import posixpath
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from fabricgen.base.outdir import swap_in

COMMIT = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"  # same as the YANG models fabricgen checks against
BASE_URL = f"https://raw.githubusercontent.com/sonic-net/sonic-buildimage/{COMMIT}"
UTILITIES_COMMIT = "691b1bbc4"  # sonic-net/sonic-utilities, as the test oracle's copy (its README)
UTILITIES_URL = f"https://raw.githubusercontent.com/sonic-net/sonic-utilities/{UTILITIES_COMMIT}"
GCU_RULES = "generic_config_updater/gcu_field_operation_validators.conf.json"
URL_ENV = "FABRICGEN_SONIC_BUILDIMAGE_URL"
MARKER = ".fetched-by-fabricgen"

# device/<vendor>/<platform> -> its HWSKU directories
SKUS: dict[str, tuple[str, ...]] = {
    "device/mellanox/x86_64-nvidia_sn5600-r0": ("Mellanox-SN5600-O128", "ACS-SN5600", "Mellanox-SN5600-C256S1",
                                                "Mellanox-SN5600-C224O8"),
    "device/mellanox/x86_64-mlnx_msn2700-r0": ("ACS-MSN2700",),
    "device/arista/x86_64-arista_7060dx5_64s": ("Arista-7060DX5-64S",),
    "device/dell/x86_64-dell_z9864f-r0": ("Dell-Z9864f-O64",),
}
PLATFORM_FILES = ("platform.json", "platform_asic", "default_sku")
SKU_FILES = ("port_config.ini", "hwsku.json", "pg_profile_lookup.ini", "buffers.json.j2", "buffers_dynamic.json.j2",
             "buffers_defaults_t0.j2", "buffers_defaults_t1.j2", "buffers_defaults_objects.j2", "qos.json.j2",
             "sai.profile")
MAX_LINKS = 8

Fetch = Callable[[str], bytes | None]


def http_fetch(url: str) -> bytes | None:
    """The body at `url`, or None when it does not exist (404)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310 - fixed https / file URLs
            data: bytes = resp.read()
            return data
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, FileNotFoundError):
            return None
        raise


def _symlink_target(path: str, body: bytes) -> str | None:
    """GitHub raw serves a symlink as its target path: one short line, no newline, a relative path."""
    if len(body) > 256 or b"\n" in body or not body:
        return None
    text = body.decode("utf-8", "replace")
    if text.startswith(("{", "#", "[")) or " " in text:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(path), text))


def fetch_file(path: str, base: str, fetch: Fetch) -> bytes | None:
    """One repository file, following symlinks."""
    for _ in range(MAX_LINKS):
        body = fetch(f"{base}/{path}")
        if body is None:
            return None
        target = _symlink_target(path, body)
        if target is None:
            return body
        path = target
    raise RuntimeError(f"{path}: more than {MAX_LINKS} symlinks (fix: check {URL_ENV}: it should point at "
                       "sonic-buildimage's device/ tree)")


def default_dest() -> Path:
    """A cache folder named by the commit, so a new pin fetches afresh."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "fabricgen" / f"sonic-platform-{COMMIT[:12]}"


def fetch_platform(dest: Path, base: str = BASE_URL, fetch: Fetch = http_fetch,
                   utilities: str | None = UTILITIES_URL) -> list[Path]:
    """Fetch every SKU's files into `dest` (atomically: a failed fetch leaves nothing behind)."""
    dest = Path(dest)
    if dest.exists() and not (dest / MARKER).exists():
        raise FileExistsError(f"{dest} exists and was not made by `make sonic-platform`; leaving it alone "
                              "(fix: fetch into another directory, or move this one away)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    written: list[Path] = []
    try:
        for platform, skus in SKUS.items():
            wanted = [f"{platform}/{name}" for name in PLATFORM_FILES]
            wanted += [f"{platform}/{sku}/{name}" for sku in skus for name in SKU_FILES]
            for path in wanted:
                body = fetch_file(path, base, fetch)
                if body is None:
                    continue
                out = tmp / path
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(body)
                written.append(dest / path)
            for sku in skus:
                if not (tmp / platform / sku / "port_config.ini").is_file():
                    raise RuntimeError(f"{platform}/{sku}/port_config.ini not found at {base}")
        if utilities is not None:
            body = fetch_file(GCU_RULES, utilities, fetch)
            if body is None:
                raise RuntimeError(f"{GCU_RULES} not found at {utilities}")
            out = tmp / "sonic-utilities" / GCU_RULES
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(body)
            written.append(dest / "sonic-utilities" / GCU_RULES)
        (tmp / MARKER).write_text(f"sonic-buildimage {COMMIT}\nsonic-utilities {UTILITIES_COMMIT}\n",
                                  encoding="utf-8")
        tmp.chmod(0o755)  # mkdtemp makes it 0700
        swap_in(tmp, dest)
    except BaseException:
        _rmtree(tmp)
        raise
    return written


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    dest = Path(args[0]) if args else default_dest()
    base = os.environ.get(URL_ENV, BASE_URL)
    try:
        files = fetch_platform(dest, base)
    except (OSError, RuntimeError, urllib.error.URLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(files)} SONiC SKU files of sonic-buildimage {COMMIT[:10]} -> {dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
