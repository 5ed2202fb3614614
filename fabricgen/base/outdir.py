"""Output directories fabricgen owns: refuse what it did not make, swap in one atomic step.

``render -o DIR`` replaces DIR as a whole, so it must only ever replace a directory that an
earlier render made.  Each output carries a marker file; a non-empty directory without it is
refused (``--force`` overrides that one rule).  Some targets are refused even with ``--force``:
a file, ``/``, the current directory, a directory holding the intent or fabricgen itself (or
any parent of those), a git checkout, and ``.fabricgen/`` (the lab's and deploy's state) or
anything holding or inside it.

The new output is built in a scratch directory beside the target and exchanged with it in a
single ``renameat2(RENAME_EXCHANGE)``, so the target path always exists and is always one
complete output.  A lock on the parent directory serialises renders into it; stale scratch
directories left by a killed render are removed by the next one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from fabricgen.errors import FabricError

MARKER = ".fabricgen-output"
MARKER_TEXT = ("This directory was written by `fabricgen render`; every render replaces it as a whole.\n"
               "Keep your own files elsewhere.\n")
SCRATCH = ".render-"  # scratch directories are named .<target name>.render-XXXXXXXX
STATE_DIR = ".fabricgen"  # what outlives a render (the lab) lives here, beside the output
DEFAULT_LAB_DIR = Path(STATE_DIR) / "lab"  # the lab's state (fabricgen lab --lab-dir)

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _refuse(target: Path, problem: str, fix: str) -> FabricError:
    return FabricError.single(str(target), "-o", problem, fix)


def _is_within(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _protected(extra: list[Path]) -> list[tuple[Path, str]]:
    """Paths whose directory, and every parent of it, render must never replace."""
    places = [(Path.cwd().resolve(), "the current directory"),
              (Path(__file__).resolve().parents[1], "fabricgen's own installation")]
    places += [(p.resolve(), f"the intent {p}") for p in extra]
    return places


def check_target(target: Path, force: bool, keep: list[Path] | None = None) -> Path:
    """The resolved output directory, or FabricError (exit 2) saying why render will not replace it.

    ``keep``: files render must not delete (the intent); any directory holding one is refused.
    """
    path = target.resolve()
    if path.exists() and not path.is_dir():
        raise _refuse(target, "is a file, not a directory: render writes a whole directory of outputs",
                      "pass a directory path for -o, such as build/")
    if path == Path(path.anchor):
        raise _refuse(target, "is the root directory", "pass a directory of its own for -o, such as build/")
    for inner, what in ((".git", "a .git directory"), (STATE_DIR, f"fabricgen's state directory {STATE_DIR}")):
        if inner in path.parts:
            raise _refuse(target, f"lies inside {what}", f"pass a directory outside {inner} for -o, such as build/")
    if (path / ".git").exists():
        raise _refuse(target, "is a git checkout: render would replace it, history included",
                      "pass a subdirectory for -o, such as build/")
    if (path / STATE_DIR).is_dir():
        raise _refuse(target, f"holds {STATE_DIR}/, the lab's and deploy's state that must outlive a render",
                      "pass a subdirectory for -o, such as build/")
    for place, what in _protected(keep or []):
        if _is_within(place, path):
            raise _refuse(target, f"holds {what} ({place}); render would delete it with the old output",
                          "pass a directory of its own for -o, such as build/")
    if force or not path.is_dir() or (path / MARKER).is_file():
        return path
    if any(path.iterdir()):
        raise _refuse(target, f"is not empty and was not written by fabricgen render (no {MARKER} file); "
                              "render replaces the whole directory",
                      "pass a new or empty directory, or move its files away, "
                      "or add --force to replace it and everything in it")
    return path


@contextlib.contextmanager
def _parent_lock(parent: Path) -> Iterator[None]:
    """flock on the parent directory: one render at a time swaps a directory in there."""
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise _refuse(parent, f"cannot be opened to lock it: {exc.strerror}",
                      "check the permissions of the output's parent directory") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another render into {parent} to finish", file=sys.stderr)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _scratch_prefix(target: Path) -> str:
    return f".{target.name}{SCRATCH}"


def _remove_stale_scratch(target: Path) -> None:
    """Scratch directories of renders that were killed (only ever removed under the parent lock)."""
    for stale in target.parent.glob(f"{_scratch_prefix(target)}*"):
        if stale.is_dir() and not stale.is_symlink():
            if (stale / MARKER).is_file():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    stale.rmdir()  # an empty one, made just before a kill


def _renameat2_exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False where libc, the kernel or the filesystem cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def swap_in(scratch: Path, target: Path) -> None:
    """Make the complete directory ``scratch`` become ``target``; the previous ``target`` is deleted.

    An absent or empty target is replaced by one rename(2); a full one is exchanged with
    renameat2(RENAME_EXCHANGE), so ``target`` exists throughout.  Without RENAME_EXCHANGE the
    old output is renamed aside first (a short window without ``target``) and restored if the
    second rename fails.
    """
    try:
        os.rename(scratch, target)  # succeeds when target is absent or an empty directory
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    if _renameat2_exchange(scratch, target):
        shutil.rmtree(scratch, ignore_errors=True)  # now holds the previous output
        return
    old = Path(tempfile.mkdtemp(prefix=_scratch_prefix(target), dir=target.parent))
    os.rename(target, old / "old")
    try:
        os.rename(scratch, target)
    except BaseException:
        os.rename(old / "old", target)
        raise
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def replaced_dir(target: str | Path, force: bool = False, keep: list[Path] | None = None) -> Iterator[Path]:
    """Yield a scratch directory that becomes ``target`` only if the block succeeds.

    The target is vetted by :func:`check_target` (under the lock, so two renders cannot both
    pass it and then collide); on any failure the scratch directory is removed and ``target``
    is as it was.
    """
    path = check_target(Path(target), force, keep)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _refuse(Path(target), f"its parent cannot be created: {exc.strerror}",
                      "pass an output directory in a writable place") from None
    with _parent_lock(path.parent):
        path = check_target(Path(target), force, keep)
        _remove_stale_scratch(path)
        scratch = Path(tempfile.mkdtemp(prefix=_scratch_prefix(path), dir=path.parent))
        try:
            (scratch / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
            yield scratch
            scratch.chmod(0o755)  # mkdtemp makes it 0700
            try:
                swap_in(scratch, path)
            except OSError as exc:
                raise _refuse(Path(target), f"cannot be replaced: {exc.strerror}",
                              "pass an output directory that is not a mount point, on a writable "
                              "filesystem") from None
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``: a reader (the
    node_exporter textfile collector) sees the old file or the new one, never half of one."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
