"""The findings cache of `perf-lint check`, in `runcache.cache_folder()` under the project.

An entry is keyed by the file's path and bytes (the same bytes in another folder import
other modules), the rules enabled for it, their options and the perf-lint version, so any
change to one of them misses; it also lists the other files the analysis consulted (the
project's modules it imports, with their sizes and modification times), and is a miss
when one of them changed. Entries are written atomically (temp file + rename), so
concurrent runs can share the cache; one that is damaged or of the wrong shape is a miss
(and rewritten).

`ModuleSummaries` keeps, beside them, what the project model learns from the text of every
module of the project (its imports, whether it may use a GPU: `importers.Summaries`), so that
a run after an edit reads only the modules that changed to find who imports what.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from perf_lint import __version__
from perf_lint.analyzers import Config, Edit, Finding, Fix, Range, Related
from perf_lint.analyzers.importers import Summaries
from perf_lint.analyzers.rules import enabled_rules

from .runcache import ignore_all, reads, unchanged

NONE = type(None)


def _of(value, *kinds):
    """`value` if its type is one of `kinds`, else TypeError (a damaged or foreign entry)."""
    if type(value) not in kinds:
        raise TypeError(type(value).__name__)
    return value


def _range(data: list) -> Range:
    if len(_of(data, list)) != 4 or any(type(value) is not int for value in data):
        raise TypeError("range")
    return Range(*data)


def encode(finding: Finding) -> dict:
    fix = finding.fix
    return {
        "code": finding.code, "message": finding.message, "severity": finding.severity, "cell": finding.cell,
        "range": list(finding.range.__dict__.values()), "probe": finding.probe,
        "fix": None if fix is None else {
            "title": fix.title,
            "edits": [{"cell": e.cell, "range": list(e.range.__dict__.values()), "text": e.text} for e in fix.edits],
        },
        "related": [[r.path, r.line, r.message] for r in finding.related],
    }


def decode(data: dict) -> Finding:
    """The finding `encode` gave `data`; raises KeyError or TypeError on any other shape."""
    fix = _of(_of(data, dict)["fix"], dict, NONE)
    return Finding(
        _of(data["code"], str), _of(data["message"], str), _of(data["severity"], str), _of(data["cell"], int, NONE),
        _range(data["range"]),
        None if fix is None else Fix(_of(fix["title"], str), tuple(
            Edit(_of(_of(e, dict)["cell"], int, NONE), _range(e["range"]), _of(e["text"], str))
            for e in _of(fix["edits"], list)
        )),
        _of(data["probe"], str, NONE),
        tuple(_related(item) for item in _of(data["related"], list)),
    )


def _related(data: list) -> Related:
    if len(_of(data, list)) != 3:
        raise TypeError("related")
    return Related(_of(data[0], str, NONE), _of(data[1], int), _of(data[2], str))


class Cache:
    def __init__(self, folder: str) -> None:
        self.folder = folder

    @staticmethod
    def key(path: str, data: bytes, config: Config) -> str:
        rules = enabled_rules(config, path)
        digest = hashlib.sha256()
        for part in (
            __version__, os.path.abspath(path), str(config.enabled("TPL000", path)),
            ",".join(rule.code for rule in rules), repr(sorted((r.code, sorted(config.rule_options(r.code).items())) for r in rules)),
        ):
            digest.update(part.encode() + b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".json")

    def get(self, key: str) -> tuple[list[Finding], dict] | None:
        """(findings, the other files read making them), or None."""
        try:
            with open(self._file(key), encoding="utf-8") as handle:
                entry = _of(json.load(handle), dict)
            consulted = reads(entry["reads"])
            if not unchanged(consulted):
                return None
            return [decode(item) for item in _of(entry["findings"], list)], consulted
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a missing or damaged entry is a miss

    def put(self, key: str, findings: list[Finding], consulted: dict) -> None:
        """Store `findings`, made having read the files `consulted` ({path: (size, mtime_ns)})."""
        target = self._file(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            ignore_all()
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"findings": [encode(f) for f in findings], "reads": consulted}, handle)
            os.replace(temp, target)
        except OSError:
            pass  # a read-only project still gets its findings, just not cached


class ModuleSummaries(Summaries):
    """The summaries of the project's modules (`importers.Summaries`), in one file of the cache
    folder, read at the first `get` and written (atomically) by `save` when something was put.
    A damaged or foreign file is read as empty; an entry of the wrong shape is a miss."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, "modules.json")
        self._entries: dict | None = None
        self._changed = False

    def _loaded(self) -> dict:
        if self._entries is None:
            try:
                with open(self.path, encoding="utf-8") as handle:
                    self._entries = _of(json.load(handle), dict)
            except (OSError, ValueError, TypeError):
                self._entries = {}
        return self._entries

    def get(self, path: str) -> tuple[int, int, str, list] | None:
        entry = self._loaded().get(path)
        if type(entry) is not list or len(entry) != 4 or type(entry[0]) is not int or type(entry[1]) is not int or (
                type(entry[2]) is not str or type(entry[3]) is not list):
            return None
        return entry[0], entry[1], entry[2], entry[3]

    def put(self, path: str, size: int, mtime: int, digest: str, summary: list) -> None:
        self._loaded()[path] = [size, mtime, digest, summary]
        self._changed = True

    def save(self) -> None:
        """Write the summaries when one was put since the last save (a run reads each module once)."""
        if not self._changed:
            return
        self._changed = False
        entries = {path: entry for path, entry in self._loaded().items() if os.path.exists(path)}  # (deleted: dropped)
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            ignore_all()
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(self.path), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entries, handle)
            os.replace(temp, self.path)
        except OSError:
            pass  # a read-only project is summarized again next run
