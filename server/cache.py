"""The findings cache of `perf-lint check`: `.perf-lint-cache/` under the project.

An entry is keyed by the file's bytes, its kind, the rules enabled for it, their
options and the perf-lint version, so any change to one of them misses. Entries are
written atomically (temp file + rename), so concurrent runs can share the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from perf_lint import __version__
from perf_lint.analyzers import Config, Edit, Finding, Fix, Range
from perf_lint.analyzers.rules import enabled_rules

CACHE_DIR = ".perf-lint-cache"


def _range(data: list) -> Range:
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
    }


def decode(data: dict) -> Finding:
    fix = data["fix"]
    return Finding(
        data["code"], data["message"], data["severity"], data["cell"], _range(data["range"]),
        None if fix is None else Fix(fix["title"], tuple(Edit(e["cell"], _range(e["range"]), e["text"]) for e in fix["edits"])),
        data["probe"],
    )


class Cache:
    def __init__(self, root: str) -> None:
        self.folder = os.path.join(root, CACHE_DIR, __version__)

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

    def get(self, key: str) -> list[Finding] | None:
        try:
            with open(self._file(key), encoding="utf-8") as handle:
                return [decode(item) for item in json.load(handle)]
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a missing or damaged entry is a miss

    def put(self, key: str, findings: list[Finding]) -> None:
        target = self._file(key)
        try:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            ignore = os.path.join(self.folder, "..", ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as handle:
                    handle.write("# created by perf-lint\n*\n")
            fd, temp = tempfile.mkstemp(dir=os.path.dirname(target), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump([encode(f) for f in findings], handle)
            os.replace(temp, target)
        except OSError:
            pass  # a read-only project still gets its findings, just not cached
