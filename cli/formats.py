"""How the CLI prints findings (text, JSON, SARIF 2.1.0, GitHub annotations), statistics,
the rule catalog and summaries. Lines, columns and cells shown are 1-based; in notebooks
lines are relative to the cell, "cell N" the Nth of the notebook's cells, markdown ones
included (`perf_lint.analyzers.findings.cell_label`, written out here: a warm run that the
run cache answers never imports the analyzer)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from perf_lint import __version__

if TYPE_CHECKING:
    from perf_lint.analyzers import Finding

HOMEPAGE = "https://github.com/perf-lint/perf-lint"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FORMATS = ("text", "json", "sarif", "github")
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


@lru_cache(maxsize=None)
def catalog() -> tuple:
    """TPL000 and every rule (imports the analyzer on first use)."""
    from perf_lint.analyzers import CATALOG

    return CATALOG


def lookup(code: str):
    """The catalog entry for a code (any case), or None."""
    return next((rule for rule in catalog() if rule.code == code.upper()), None)


@dataclass(frozen=True)
class Item:
    """A finding in a file (`path` as displayed)."""

    path: str
    finding: Finding


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]|##\[")


def printable(text: str) -> str:
    """`text` safe on one line of a CI log: control characters (line breaks too) as Python
    escapes (`\\n`), and `##[` (GitHub's legacy workflow command, anywhere in a line) as `#\\x23[`."""
    return _UNSAFE.sub(lambda match: "#\\x23[" if match.group() == "##[" else ascii(match.group())[1:-1], text)


def shown(path: str) -> str:
    """A path as printed at the start of a line: `printable`, and behind `./` when a CI
    runner would take the line for a workflow command (`::error ...`)."""
    path = printable(path)
    return f"./{path}" if path.lstrip().startswith("::") else path


def diff_line(line: str) -> str:
    """A line of a `--diff` (` `, `+` or `-` and a line of the file) safe in a CI log: `##[`
    as `#\\x23[` and, where a runner would take it for a workflow command (a context line
    whose text starts with `::`, blanks aside), that first `:` as `\\x3a`."""
    line = line.replace("##[", "#\\x23[")
    blank = len(line) - len(line.lstrip())
    return f"{line[:blank]}\\x3a{line[blank + 1:]}" if line.startswith("::", blank) else line


# -- findings ------------------------------------------------------------------------------
def location(item: Item) -> str:
    """`path:line:col` or, in a notebook, `path:cell N:line:col`."""
    r = item.finding.range
    cell = "" if item.finding.cell is None else f"cell {item.finding.cell + 1}:"
    return f"{shown(item.path)}:{cell}{r.start_line + 1}:{r.start_col + 1}"


def text(items: list[Item]) -> str:
    return "".join(f"{location(i)}: {i.finding.code} {printable(i.finding.message)}\n" for i in items)


def finding_dict(item: Item) -> dict:
    data = item.finding.to_dict()
    head = {key: data.pop(key) for key in ("code", "message", "severity")}
    data["related"] = [{**r, "path": item.path} if r["path"] is None else r for r in data["related"]]
    return {**head, "path": item.path, **data}


def log_json(data) -> str:
    """JSON for a CI log: `##[` in a string (a path, say) as `#\\u0023[`, the same value."""
    return json.dumps(data, indent=2, ensure_ascii=False).replace("##[", "#\\u0023[") + "\n"


def json_findings(items: list[Item]) -> str:
    return log_json([finding_dict(i) for i in items])


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(items: list[Item]) -> str:
    """GitHub Actions workflow commands. Notebook positions are cell-relative, so those
    annotate the file and say where in the message."""
    lines = []
    for item in items:
        f, r = item.finding, item.finding.range
        props = [f"file={_escape_property(uri_path(item.path))}"]
        message = f.message
        if f.cell is None:
            props += [f"line={r.start_line + 1}", f"col={r.start_col + 1}",
                      f"endLine={r.end_line + 1}", f"endColumn={r.end_col + 1}"]
        else:
            message = f"cell {f.cell + 1}, line {r.start_line + 1}, column {r.start_col + 1}: {message}"
        props.append(f"title={_escape_property(f.code)}")
        lines.append(f"::{_GITHUB_COMMAND.get(f.severity, 'warning')} {','.join(props)}::{_escape_data(message)}\n")
    return "".join(lines)


def uri_path(path: str) -> str:
    return path.replace(os.sep, "/")


def _file_uri(path: str) -> str:
    from pathlib import Path  # only SARIF needs it: 8 ms of a warm `perf-lint check`

    return Path(path).as_uri()


def _artifact(path: str) -> dict:
    """A path under the current folder relative to %SRCROOT%, anything else as a file URI."""
    relative = os.path.normpath(path)
    if os.path.isabs(relative) or relative.split(os.sep)[0] == os.pardir:
        return {"uri": _file_uri(os.path.abspath(path))}
    from urllib.parse import quote

    return {"uri": quote(os.fsencode(uri_path(relative))), "uriBaseId": "%SRCROOT%"}


def help_uri(rule) -> str:
    """The rule's page (docs/rules/, generated from its docs)."""
    return f"{HOMEPAGE}/blob/main/docs/rules/{rule.code}.md"


def _rule_descriptor(rule) -> dict:
    docs = rule.docs()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": docs, "markdown": docs},
        "help": {"text": docs, "markdown": docs},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": _SARIF_LEVEL.get(rule.severity, "warning"),
                                 "enabled": bool(rule.default_enabled)},
        "properties": {"tags": [rule.family()], "fixable": bool(rule.fixable)},
    }


def _sarif_result(item: Item, index: dict) -> dict:
    f, r = item.finding, item.finding.range
    message = f.message if f.cell is None else f"{f.message} (notebook cell {f.cell + 1})"
    result = {
        "ruleId": f.code,
        "level": _SARIF_LEVEL.get(f.severity, "warning"),
        "message": {"text": message},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": _artifact(item.path),
                "region": {
                    "startLine": r.start_line + 1,
                    "startColumn": r.start_col + 1,
                    "endLine": r.end_line + 1,
                    "endColumn": r.end_col + 1,
                },
            },
        }],
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    if f.cell is not None:
        result["properties"] = {"cell": f.cell + 1}
    return result


def sarif(items: list[Item], errors: list[tuple[str, str]]) -> str:
    """SARIF 2.1.0 for GitHub code scanning; `errors` are (path, message) of files not checked."""
    index = {rule.code: i for i, rule in enumerate(catalog())}
    notifications = [
        {
            "level": "error",
            "message": {"text": message},
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(path)}}],
        }
        for path, message in errors
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "perf-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": HOMEPAGE,
                "rules": [_rule_descriptor(rule) for rule in catalog()],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _file_uri(os.getcwd()).rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
            "results": [_sarif_result(item, index) for item in items],
        }],
    }
    return log_json(log)


def render_findings(items: list[Item], fmt: str, errors: list[tuple[str, str]]) -> str:
    if fmt == "json":
        return json_findings(items)
    if fmt == "sarif":
        return sarif(items, errors)
    if fmt == "github":
        return github(items)
    return text(items)


# -- statistics ----------------------------------------------------------------------------
def statistics(items: list[Item]) -> list[dict]:
    """Count of findings per code (and how many have a fix), in code order."""
    counts = Counter(i.finding.code for i in items)
    fixable = Counter(i.finding.code for i in items if i.finding.fix is not None)
    rows = []
    for code in sorted(counts):
        rule = lookup(code)
        rows.append({"code": code, "name": rule.name if rule else "", "count": counts[code], "fixable": fixable[code]})
    return rows


def render_statistics(items: list[Item], fmt: str) -> str:
    rows = statistics(items)
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(
        f"{row['count']:>{width}}  {row['code']:<7} {row['name']}"
        + (f" ({row['fixable']} fixable)" if row["fixable"] else "") + "\n"
        for row in rows
    )


# -- rule catalog --------------------------------------------------------------------------
def rule_row(rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "family": rule.family(),
        "severity": rule.severity,
        "fixable": bool(rule.fixable),
        "probe": rule.probe,
        "default_enabled": bool(rule.default_enabled),
        "summary": rule.summary,
    }


def render_rules(fmt: str) -> str:
    rows = [rule_row(rule) for rule in catalog()]
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    header = ("CODE", "NAME", "FAMILY", "SEVERITY", "FIX", "PROBE", "DEFAULT", "SUMMARY")
    table = [header] + [
        (r["code"], r["name"], r["family"], r["severity"], "yes" if r["fixable"] else "no",
         r["probe"] or "-", "on" if r["default_enabled"] else "off", r["summary"])
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    return "".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] + "\n"
        for row in table
    )


# -- summaries (stderr) --------------------------------------------------------------------
def check_summary(items: list[Item], failed: int) -> str:
    fixable = sum(1 for i in items if i.finding.fix is not None)
    line = f"Found {plural(len(items), 'finding')}"
    if fixable:
        line += f" ({fixable} fixable with --fix)"
    return line + _failed(failed) + ".\n"


def fix_summary(fixed: int, remaining: list[Item], failed: int) -> str:
    line = f"Found {plural(fixed + len(remaining), 'finding')} ({fixed} fixed, {len(remaining)} remaining)"
    return line + _failed(failed) + ".\n"


def diff_summary(fixable: int, files: int, failed: int) -> str:
    line = f"Would fix {plural(fixable, 'finding')} in {plural(files, 'file')}" if files else "No fixes available"
    return line + _failed(failed) + ".\n"


def _failed(failed: int) -> str:
    return f"; {plural(failed, 'error')} (see above)" if failed else ""
