"""Configuration for each document: `[tool.perf-lint]` in pyproject.toml plus editor settings.

Editor settings come from `workspace/configuration` (section `perfLint`, per workspace
folder), or from `initializationOptions` / `didChangeConfiguration` for clients that do
not answer it. Only settings the user set are sent; `configurationPreference` decides how
`select`/`ignore`/`extendSelect` combine with pyproject's (ruff's model): "editorFirst"
(default) puts them on top as `perf-lint check`'s options do (`select` replaces the
selection, `ignore` and `extendSelect` add to its lists), "filesystemFirst" ignores them
where a pyproject.toml with `[tool.perf-lint]` applies, "editorOnly" reads no
pyproject.toml. A pyproject.toml is re-read when its
mtime or size changes (checked on every analysis) or when the client reports a change.
A bad configuration is reported once and the last good one (or the defaults) stays.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Callable

from perf_lint.analyzers import Config, ConfigError, load_config
from perf_lint.analyzers.config import find_pyproject

SECTION = "perfLint"
PREFERENCES = ("editorFirst", "filesystemFirst", "editorOnly")
_CODE_LISTS = {"select": "select", "ignore": "ignore", "extendSelect": "extend_select"}
_KNOWN = set(_CODE_LISTS) | {
    "debounceMs", "showSyntaxErrors", "configurationPreference",
    "profiling.enabled", "profiling.python", "profiling.steps", "profiling.timeoutS",
    "profiling.runner", "profiling.rayAddress", "profiling.numGpus",
}


@dataclass(frozen=True)
class EditorSettings:
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] | None = None
    debounce_ms: int = 150
    show_syntax_errors: bool = False
    preference: str = "editorFirst"  # or "filesystemFirst", "editorOnly"
    profiling_enabled: bool = True
    profiling_python: str | None = None
    profiling_steps: tuple[int, int, int] | None = None
    profiling_timeout_s: float | None = None  # None: the profiler's default
    profiling_runner: str = "local"  # or "ray"
    profiling_ray_address: str | None = None  # None: RAY_ADDRESS or a Ray instance on this machine
    profiling_num_gpus: float | None = None  # GPUs per Ray task; None: the profiler's default (1)


def _flatten(raw: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in raw.items():
        if isinstance(value, dict) and f"{prefix}{key}" == "profiling":
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def parse_editor_settings(raw) -> EditorSettings:
    """Validate the `perfLint` settings object; raises ConfigError naming the bad key."""
    if raw is None:
        return EditorSettings()
    if not isinstance(raw, dict):
        raise ConfigError(f"editor settings '{SECTION}' must be an object, got {raw!r}")
    flat = _flatten(raw)
    unknown = sorted(set(flat) - _KNOWN)
    if unknown:
        raise ConfigError(f"editor settings '{SECTION}': unknown key '{unknown[0]}' (known: {', '.join(sorted(_KNOWN))})")
    values: dict = {}
    for key, attr in _CODE_LISTS.items():
        if flat.get(key) is not None:
            values[attr] = tuple(flat[key]) if isinstance(flat[key], list) else flat[key]
    try:
        Config().with_overrides(**values)  # validates the codes
    except ConfigError as exc:
        raise ConfigError(f"editor settings '{SECTION}': {str(exc).removeprefix('settings: ')}") from None
    if flat.get("debounceMs") is not None:
        value = flat["debounceMs"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 10_000:
            raise ConfigError(f"editor settings '{SECTION}.debounceMs' must be a number of milliseconds in 0..10000, got {value!r}")
        values["debounce_ms"] = int(value)
    for key, attr in (("showSyntaxErrors", "show_syntax_errors"), ("profiling.enabled", "profiling_enabled")):
        if flat.get(key) is not None:
            if not isinstance(flat[key], bool):
                raise ConfigError(f"editor settings '{SECTION}.{key}' must be true or false, got {flat[key]!r}")
            values[attr] = flat[key]
    preference = flat.get("configurationPreference")
    if preference is not None:
        if preference not in PREFERENCES:
            raise ConfigError(f"editor settings '{SECTION}.configurationPreference' must be one of "
                              f"{', '.join(map(repr, PREFERENCES))}, got {preference!r}")
        values["preference"] = preference
    python = flat.get("profiling.python")
    if python not in (None, ""):
        if not isinstance(python, str):
            raise ConfigError(f"editor settings '{SECTION}.profiling.python' must be a path to a Python interpreter, got {python!r}")
        values["profiling_python"] = os.path.expanduser(python)
    steps = flat.get("profiling.steps")
    if steps is not None:
        if (not isinstance(steps, list) or len(steps) != 3
                or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in steps) or steps[2] < 1):
            raise ConfigError(f"editor settings '{SECTION}.profiling.steps' must be [wait, warmup, active] (integers, active >= 1), got {steps!r}")
        values["profiling_steps"] = tuple(steps)
    timeout = flat.get("profiling.timeoutS")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (timeout > 0 and math.isfinite(timeout)):
            raise ConfigError(f"editor settings '{SECTION}.profiling.timeoutS' must be a positive number of seconds, got {timeout!r}")
        values["profiling_timeout_s"] = float(timeout)
    runner = flat.get("profiling.runner")
    if runner is not None:
        if runner not in ("local", "ray"):
            raise ConfigError(f"editor settings '{SECTION}.profiling.runner' must be \"local\" or \"ray\", got {runner!r}")
        values["profiling_runner"] = runner
    address = flat.get("profiling.rayAddress")
    if address not in (None, ""):
        if not isinstance(address, str):
            raise ConfigError(f"editor settings '{SECTION}.profiling.rayAddress' must be a Ray cluster address such as \"head:6379\", got {address!r}")
        values["profiling_ray_address"] = address.strip()
    gpus = flat.get("profiling.numGpus")
    if gpus is not None:
        if isinstance(gpus, bool) or not isinstance(gpus, (int, float)) or not (gpus >= 0 and math.isfinite(gpus)):
            raise ConfigError(f"editor settings '{SECTION}.profiling.numGpus' must be a number of GPUs >= 0, got {gpus!r}")
        values["profiling_num_gpus"] = float(gpus)
    return EditorSettings(**values)


@dataclass(frozen=True)
class Resolved:
    """What one analysis needs: the user's config, the engine's (TPL000 always on), settings."""

    config: Config
    engine: Config
    editor: EditorSettings
    excluded: bool


class Settings:
    """Editor settings per scope and pyproject configs per file, with last-good fallbacks."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self.report = report  # called once per distinct problem
        self.editor: dict[str, EditorSettings] = {"": EditorSettings()}
        self._pyprojects: dict[str, tuple[tuple[int, int] | None, Config]] = {}  # path -> (stamp, last good)
        self._resolved: dict[tuple, tuple[Config, Config]] = {}
        self._reported: set[str] = set()

    # -- editor settings -----------------------------------------------------------------
    def set_editor(self, raw_by_scope: dict[str, object]) -> None:
        """New editor settings, by scope URI ("" = global); a bad scope keeps its old value."""
        editor = {}
        for scope, raw in raw_by_scope.items():
            try:
                editor[scope] = parse_editor_settings(raw)
            except ConfigError as exc:
                self._problem(str(exc) + "; keeping the previous editor settings")
                editor[scope] = self.editor.get(scope, self.editor.get("", EditorSettings()))
        editor.setdefault("", self.editor.get("", EditorSettings()))
        self.editor = editor

    def editor_for(self, uri: str) -> EditorSettings:
        scope = max((s for s in self.editor if uri.startswith(s)), key=len, default="")
        return self.editor[scope]

    # -- pyproject -----------------------------------------------------------------------
    def invalidate(self) -> None:
        """Re-read every pyproject.toml on next use (each keeps its last good config)."""
        self._pyprojects = {path: (None, config) for path, (_, config) in self._pyprojects.items()}

    def pyproject_config(self, path: str) -> Config:
        pyproject = find_pyproject(path)
        if pyproject is None:
            return Config()
        try:
            stat = os.stat(pyproject)
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = (0, 0)
        cached = self._pyprojects.get(pyproject)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            config = load_config(os.path.dirname(pyproject))
        except ConfigError as exc:
            good = cached[1] if cached is not None else Config()
            kept = "the previous configuration" if cached is not None else "the default configuration"
            self._problem(f"{exc}; using {kept} until it is fixed")
            config = good
        else:
            self._reported = {m for m in self._reported if not m.startswith(pyproject)}
        self._pyprojects[pyproject] = (stamp, config)
        return config

    def resolve(self, path: str, uri: str) -> Resolved:
        editor = self.editor_for(uri)
        base = Config() if editor.preference == "editorOnly" else self.pyproject_config(path)
        key = (base, editor)
        if key not in self._resolved:
            config = base
            if editor.preference != "filesystemFirst" or base.path is None:
                config = base.with_selection(editor.select, editor.ignore or (), editor.extend_select or ())
            engine = config.with_overrides(
                extend_select=config.extend_select + ("TPL000",),
                ignore=tuple(code for code in config.ignore if code != "TPL000"),
            )
            if len(self._resolved) > 64:
                self._resolved.clear()
            self._resolved[key] = (config, engine)
        config, engine = self._resolved[key]
        return Resolved(config, engine, editor, config.excluded(path))

    def _problem(self, message: str) -> None:
        if message not in self._reported:
            self._reported.add(message)
            self.report(message)
