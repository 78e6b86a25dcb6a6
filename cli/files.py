"""Files for the CLI: which paths to check, and safe in-place writes for `--fix`."""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from perf_lint.analyzers import Config

EXTENSIONS = (".py", ".ipynb")
# Folders never entered when walking a directory (besides virtualenvs and `.perf-lint*`).
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__",
    ".ipynb_checkpoints", ".virtual_documents", ".tox", ".nox", ".mypy_cache", ".pytest_cache", "site-packages",
})


class WriteError(Exception):
    """A fixed file that could not be written; the original is untouched."""


def display_path(path: str) -> str:
    """How a path is shown: as given on the command line, normalized (`./a.py` -> `a.py`)."""
    return os.path.normpath(path)


def skipped_dir(path: str) -> bool:
    name = os.path.basename(path)
    return (
        name in SKIPPED_DIRS
        or name.startswith(".perf-lint")
        or os.path.isfile(os.path.join(path, "pyvenv.cfg"))
    )


def discover(
    paths: list[str], config_for: Callable[[str], Config], force_exclude: bool = False
) -> tuple[list[str], list[tuple[str, str]]]:
    """The files to check under `paths` (sorted, unique) and (path, message) errors for
    paths that do not exist or cannot be listed.

    Directories are walked for `.py`/`.ipynb` files, skipping `SKIPPED_DIRS`,
    virtualenvs, `.perf-lint*` and each folder's configured `exclude` patterns. A file
    or folder named explicitly is always checked (a file whatever its extension, a folder
    with all it holds), unless `force_exclude` is set and an `exclude` pattern matches it.
    `config_for` may raise ConfigError.
    """
    found: set[str] = set()
    errors: list[tuple[str, str]] = []
    for given in paths:
        path = display_path(given)
        if not os.path.exists(path):
            errors.append((path, "no such file or directory"))
        elif force_exclude and config_for(path).excluded(path):
            continue
        elif os.path.isdir(path):
            found.update(_walk(path, config_for, errors, filter_excluded=not config_for(path).excluded(path)))
        else:
            found.add(path)
    return sorted(found), errors


def _walk(top: str, config_for: Callable[[str], Config], errors: list, filter_excluded: bool) -> list[str]:
    def unreadable(exc: OSError) -> None:
        errors.append((display_path(exc.filename), f"cannot list directory: {exc.strerror}"))

    files: list[str] = []
    for folder, dirs, names in os.walk(top, onerror=unreadable):
        # what `folder` holds follows `folder`'s configuration
        excluded = config_for(folder).excluded if filter_excluded else _never
        dirs[:] = sorted(
            d for d in dirs if not skipped_dir(os.path.join(folder, d)) and not excluded(os.path.join(folder, d))
        )
        files.extend(
            display_path(os.path.join(folder, name))
            for name in names
            if name.endswith(EXTENSIONS) and not excluded(os.path.join(folder, name))
        )
    return files


def _never(path: str) -> bool:
    return False


class Skipped(Exception):
    """A file not read: not a regular file, or over the size limit."""


NOT_REGULAR = "not a regular file (a FIFO, a device or a socket)"


def read_bytes(path: str, limit: int) -> bytes:
    """A regular file's bytes: anything else (a FIFO, a device, a socket) or a file over
    `limit` bytes raises Skipped, without blocking or reading more than `limit` + 1 bytes."""
    if not stat.S_ISREG(os.stat(path).st_mode):  # not even opened
        raise Skipped(NOT_REGULAR)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as handle:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):  # replaced since the stat above
            raise Skipped(NOT_REGULAR)
        if opened.st_size > limit:
            raise Skipped(f"{opened.st_size:,} bytes, over max-file-size ({limit:,})")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew since
        raise Skipped(f"over max-file-size ({limit:,} bytes)")
    return data


def read_only(path: str) -> bool:
    """No write permission for us, or no write bit at all (which root would ignore)."""
    mode = os.stat(path).st_mode
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def _keep_owner(path: str, original: os.stat_result) -> None:
    """Give the new file the original's owner and group where we may (root, or our group)."""
    current = os.stat(path)
    if (current.st_uid, current.st_gid) != (original.st_uid, original.st_gid):
        try:
            os.chown(path, original.st_uid, original.st_gid)
        except PermissionError:
            pass


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def _lease(fd: int):
    """Take a read lease on `fd` (Linux): returns a function telling whether it still holds
    (no process opened the file for writing since; one that does waits until `fd` is closed),
    False if another process has the file open for writing now, None where leases are not
    available (another system, a file that is not ours, some network filesystems)."""
    try:
        import fcntl
        import signal

        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGWINCH)  # a broken lease signals this (ignored), not SIGIO (fatal)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except (ImportError, AttributeError):
        return None
    except OSError as exc:
        return False if exc.errno == errno.EAGAIN else None
    return lambda: fcntl.fcntl(fd, fcntl.F_GETLEASE) == fcntl.F_RDLCK


def _replace(temporary: str, target: str, expected: bytes) -> None:
    """Rename `temporary` over `target` if it still is the file that held `expected` and no
    other process has it open for writing: checked last, right before the rename."""
    fd = os.open(target, os.O_RDONLY)
    try:
        held = _lease(fd)
        with open(fd, "rb", closefd=False) as handle:
            now = handle.read()
        if now != expected or not os.path.samestat(os.stat(target), os.fstat(fd)):
            raise WriteError("file changed on disk while it was being fixed (run again)")
        if held is False or held and not held():
            raise WriteError("another process has the file open for writing (run again)")
        os.replace(temporary, target)
    finally:
        os.close(fd)  # ends the lease: a writer waiting on it goes on


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace the file's content with `data`, all or nothing.

    Writes a temporary file in the same folder (same file mode), then renames it over the
    file, only if the file still holds `expected` (what was read and fixed) and no other
    process is writing it (see `_replace`). A symlink is followed only to a file inside the
    project (the current folder). Raises WriteError; the original stays as it was.
    """
    target = os.path.realpath(path)
    if target != os.path.abspath(path) and not _inside(target, os.path.realpath(os.getcwd())):
        raise WriteError(f"it is a symbolic link to {target}, outside the project (the current folder)")
    try:
        original = os.stat(target)
        if read_only(target):
            raise WriteError("file is read-only")
        import tempfile  # only --fix writes: its import is 4 ms of a warm `perf-lint check`

        fd, temporary = tempfile.mkstemp(
            dir=os.path.dirname(target), prefix=f".{os.path.basename(target)}.", suffix=".perf-lint-tmp"
        )
    except OSError as exc:
        raise WriteError(f"cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(original.st_mode))
        _keep_owner(temporary, original)
        _replace(temporary, target, expected)
    except OSError as exc:
        os.unlink(temporary)
        raise WriteError(f"cannot write: {exc.strerror}") from None
    except BaseException:
        os.unlink(temporary)
        raise
