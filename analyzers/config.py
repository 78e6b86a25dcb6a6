"""Configuration: `[tool.perf-lint]` in pyproject.toml, resolved once into an immutable Config.

```toml
[tool.perf-lint]
select = ["TPL"]            # code prefixes; default: every rule enabled by default
ignore = ["TPL401"]
extend-select = ["TPL9"]    # add to the default set (for rules off by default)
exclude = ["build/*"]       # glob patterns, matched against paths relative to this file
per-file-ignores = { "tests/*" = ["TPL101"] }
max-file-size = 10485760    # bytes; a larger file is skipped (an error), never read
assume-device = "auto"      # "cuda": code runs on a GPU even where it never says so; "cpu": never
include-tests = false       # check tests/, conftest.py and test_*.py, *_test.py holding tests with the performance rules

[tool.perf-lint.TPL101]     # rule options, one table per rule
num-workers = 8
```
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field, replace

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

_LIST_KEYS = {"select", "ignore", "extend-select", "exclude", "extend-exclude"}
_KEYS = _LIST_KEYS | {"per-file-ignores", "max-file-size", "assume-device", "include-tests", "keep-traces"}
DEVICES = ("auto", "cuda", "cpu")
MAX_FILE_SIZE = 10 * 1024 * 1024
MAX_PYPROJECT = 2**20  # bytes of a pyproject.toml read (real ones are a few KiB)
KEEP_TRACES = 20


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and key."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    options: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()
    max_file_size: int = MAX_FILE_SIZE  # bytes
    # where the code runs: "auto" (on CUDA where the source names it), "cuda" (always), "cpu" (never)
    assume_device: str = "auto"
    include_tests: bool = False  # test code is not training code: only TPL000 runs on it by default
    keep_traces: int = KEEP_TRACES  # `perf-lint profile`: run folders kept in the traces folder
    root: str | None = None  # folder of the pyproject.toml it came from
    path: str | None = None  # that pyproject.toml
    _cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def enabled(self, code: str, path: str | None = None) -> bool:
        key = (code, path)
        if key not in self._cache:
            self._cache[key] = self._enabled(code, path)
        return self._cache[key]

    def _enabled(self, code: str, path: str | None) -> bool:
        from .rules import rule_by_code

        rule = rule_by_code(code)
        default = True if rule is None else rule.default_enabled
        selectors = (self.select or (("ALL",) if default else ())) + self.extend_select
        if _decide(code, selectors, self.ignore) is not True:
            return False
        if path is not None:
            relative = self.relative(path)
            if code != "TPL000" and not self.include_tests and self._test_code(path):
                return False
            for pattern, codes in self.per_file_ignores:
                if _matches(relative, pattern) and any(_prefix(code, c) for c in codes):
                    return False
        return True

    def _test_code(self, path: str) -> bool:
        """A file of a test suite: under `tests/` (below the project's root), or `test/` when a
        file of that folder holds tests (not Uformer's `test/`, its evaluation scripts),
        `conftest.py`, or named `test_*.py` or `*_test.py` and holding tests (not TCN's
        `add_test.py`, the script that trains on the adding problem)."""
        from .project import project_root

        name = os.path.basename(path)
        if name == "conftest.py" or (name.startswith("test_") or name.rsplit(".", 1)[0].endswith("_test")) and \
                name.endswith((".py", ".ipynb")) and self._holds_tests(path):
            return True
        absolute = os.path.abspath(path)
        top = os.path.abspath(self.root) if self.root else project_root(os.path.dirname(absolute))
        if not absolute.startswith(top + os.sep):
            return False
        parts = os.path.relpath(absolute, top).split(os.sep)[:-1]
        return "tests" in parts or any(part == "test" and self._test_folder(os.path.join(top, *parts[:index + 1]))
                                       for index, part in enumerate(parts))

    def _test_folder(self, folder: str) -> bool:
        """Whether a file of `folder` (not of its subfolders) holds tests."""
        key = ("test folder", folder)
        if key not in self._cache:
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                names = []
            self._cache[key] = any(name.endswith(".py") and self._holds_tests(os.path.join(folder, name)) for name in names)
        return self._cache[key]

    def _holds_tests(self, path: str) -> bool:
        """Whether a file defines tests or uses a test framework (one that cannot be read: yes);
        read once per path, not once per rule `enabled` is asked about."""
        key = ("holds tests", path)
        if key not in self._cache:
            try:
                with open(path, encoding="utf-8", errors="replace") as file:
                    self._cache[key] = _TESTS.search(file.read(MAX_FILE_SIZE)) is not None
            except OSError:
                self._cache[key] = True
        return self._cache[key]

    def rule_options(self, code: str) -> dict:
        return dict(dict(self.options).get(code, ()))

    def relative(self, path: str) -> str:
        absolute = os.path.abspath(path)
        if self.root and absolute.startswith(os.path.abspath(self.root) + os.sep):
            return os.path.relpath(absolute, self.root).replace(os.sep, "/")
        return path.replace(os.sep, "/")

    def excluded(self, path: str) -> bool:
        relative = self.relative(path)
        return any(_matches(relative, pattern) for pattern in self.exclude)

    def with_overrides(self, where: str = "settings", **changes) -> "Config":
        """A copy with command-line or editor settings on top (list values are validated;
        `where` names their origin in error messages, e.g. "command line")."""
        for key in ("select", "ignore", "extend_select"):
            if changes.get(key) is not None:
                changes[key] = tuple(_codes(changes[key], key.replace("_", "-"), where))
        changes = {k: v for k, v in changes.items() if v is not None}
        return replace(self, _cache={}, **changes)


    def with_selection(self, select=None, ignore=(), extend_select=(), where: str = "settings") -> "Config":
        """A copy with a command line's or an editor's rule selection on top: `select`
        replaces the selection and its ignore list; `ignore` and `extend_select` add to them."""
        if select is not None:
            return self.with_overrides(where, select=select, ignore=ignore, extend_select=extend_select)
        return self.with_overrides(where, ignore=self.ignore + tuple(ignore),
                                   extend_select=self.extend_select + tuple(extend_select))


def _prefix(code: str, selector: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def _decide(code: str, select, ignore):
    """Ruff's rule: the longest matching selector wins; True, False, or None if none match."""
    best, verdict = -1, None
    for selector, value in [(s, True) for s in select] + [(s, False) for s in ignore]:
        if _prefix(code, selector):
            length = 0 if selector == "ALL" else len(selector)
            if length > best or (length == best and value is False):
                best, verdict = length, value
    return verdict


_TESTS = re.compile(r"^\s*\"?(def test_|class Test|async def test_|import pytest|from pytest |import unittest|from unittest )", re.M)


def _matches(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*"):
        return True
    parts = relative.split("/")
    return any(fnmatch.fnmatch(part, pattern) for part in parts) if "/" not in pattern else False


def _codes(values, key: str, where: str) -> list[str]:
    from .rules import CATALOG

    if isinstance(values, str) or not isinstance(values, (list, tuple)):
        raise ConfigError(f"{where}: '{key}' must be a list of rule codes, got {values!r}")
    codes = [rule.code for rule in CATALOG]
    for value in values:
        if not isinstance(value, str) or not (value == "ALL" or any(c.startswith(value.upper()) for c in codes)):
            raise ConfigError(f"{where}: '{key}' has unknown rule code {value!r} (see `perf-lint rules`)")
    return [v if v == "ALL" else v.upper() for v in values]


def parse_config(table: dict, path: str | None = None) -> Config:
    """Validate a `[tool.perf-lint]` table; unknown keys and codes are errors."""
    from .rules import rule_by_code

    where = f"{path or 'configuration'} [tool.perf-lint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    values: dict = {}
    options = []
    for key, value in table.items():
        if key.upper().startswith("TPL") and key[3:].isdigit():
            rule = rule_by_code(key.upper())
            if rule is None:
                raise ConfigError(f"{where}: unknown rule table '{key}'")
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: '{key}' must be a table of options")
            for option, option_value in value.items():
                if option not in rule.options:
                    known = ", ".join(rule.options) or "none"
                    raise ConfigError(f"{where}.{key}: unknown option '{option}' (known: {known})")
                expected = type(rule.options[option])
                if not isinstance(option_value, expected) or isinstance(option_value, bool) is not (expected is bool):
                    raise ConfigError(f"{where}.{key}: '{option}' must be {expected.__name__}, got {option_value!r}")
                if expected is int and isinstance(option_value, int) and option_value < 1:  # the int options are counts
                    raise ConfigError(f"{where}.{key}: '{option}' must be a positive integer, got {option_value!r}")
            options.append((key.upper(), tuple(value.items())))
        elif key not in _KEYS:
            raise ConfigError(f"{where}: unknown key '{key}' (known: {', '.join(sorted(_KEYS))}, TPLxxx tables)")
        elif key in ("exclude", "extend-exclude"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: '{key}' must be a list of glob patterns")
            values["exclude"] = values.get("exclude", ()) + tuple(value)
        elif key == "max-file-size":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where}: 'max-file-size' must be a positive number of bytes, got {value!r}")
            values["max_file_size"] = value
        elif key == "keep-traces":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{where}: 'keep-traces' must be a positive number of runs, got {value!r}")
            values["keep_traces"] = value
        elif key == "include-tests":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: 'include-tests' must be true or false, got {value!r}")
            values["include_tests"] = value
        elif key == "assume-device":
            if value not in DEVICES:
                raise ConfigError(f"{where}: 'assume-device' must be one of {', '.join(DEVICES)}, got {value!r}")
            values["assume_device"] = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'per-file-ignores' must be a table of pattern = [codes]")
            values["per_file_ignores"] = tuple(
                (pattern, tuple(_codes(codes, f"per-file-ignores.{pattern}", where))) for pattern, codes in value.items()
            )
        else:
            values[key.replace("-", "_")] = tuple(_codes(value, key, where))
    root = os.path.dirname(os.path.abspath(path)) if path else None
    return Config(options=tuple(options), root=root, path=path, **values)


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.perf-lint] table."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as handle:
                    if b"[tool.perf-lint" in handle.read(MAX_PYPROJECT + 1):
                        return candidate
            except OSError:
                pass
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def load_config(start: str = ".") -> Config:
    """The configuration that applies to `start` (a file or folder); defaults if none."""
    path = find_pyproject(start)
    if path is None:
        return Config()
    tool = read_toml(path).get("tool", {})
    return parse_config(tool.get("perf-lint", {}) if isinstance(tool, dict) else {}, path)


def read_toml(path: str) -> dict:
    """A TOML file's table; any file that is not valid TOML raises ConfigError."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PYPROJECT + 1)
        if len(data) > MAX_PYPROJECT:
            raise ConfigError(f"{path}: over {MAX_PYPROJECT // 2**20} MiB, not read as configuration")
        return tomllib.loads(data.decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply") from None
    except ValueError as exc:  # TOMLDecodeError, or an integer too long to convert
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
