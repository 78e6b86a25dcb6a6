"""The findings cache of `perf-lint check`, in `runcache.cache_folder()` under the project.

An entry is keyed by the file's bytes, its kind, the rules enabled for it, their
options and the perf-lint version, so any change to one of them misses; it also lists
the other files the analysis consulted (the project's modules it imports, with their
sizes and modification times), and is a miss when one of them changed. Entries are
written atomically (temp file + rename), so concurrent runs can share the cache; one
that is damaged or of the wrong shape is a miss (and rewritten).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from perf_lint import __version__
from perf_lint.analyzers import Config, Edit, Finding, Fix, Range, Related
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
    return Related(_of(data[0], str), _of(data[1], int), _of(data[2], str))


class Cache:
    def __init__(self, folder: str) -> None:
        self.folder = folder

    @staticmethod
    def key(path: str, data: bytes, config: Config) -> str:
        rules = enabled_rules(config, path)
        digest = hashlib.sha256()
        for part in (
            __version__, os.path.splitext(path)[1], str(config.enabled("TPL000", path)),
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
