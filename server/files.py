"""Files for the CLI: which paths to check, and safe in-place writes for `--fix`."""

from __future__ import annotations

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

    files = []
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


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


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


def write_atomic(path: str, data: bytes, expected: bytes) -> None:
    """Replace the file's content with `data`, all or nothing.

    Writes a temporary file in the same folder (same file mode), then, only if the file
    still holds `expected` (what was read and fixed), renames it over the file. A symlink
    is followed: its target is replaced. Raises WriteError; the original stays as it was.
    """
    target = os.path.realpath(path)
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
        if read_bytes(target) != expected:
            raise WriteError("file changed on disk while it was being fixed (run again)")
        os.replace(temporary, target)
    except OSError as exc:
        os.unlink(temporary)
        raise WriteError(f"cannot write: {exc.strerror}") from None
    except BaseException:
        os.unlink(temporary)
        raise
