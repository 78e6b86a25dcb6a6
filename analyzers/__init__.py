"""perf_lint.analyzers: source text (+ config) -> findings and fixes. No torch, no LSP."""

from .config import Config, ConfigError, find_pyproject, load_config, parse_config
from .engine import analyze
from .findings import Edit, Finding, Fix, Range, Related
from .fixes import FixResult, apply_edits, fix_source, fixed_text, render
from .rules import ALL_RULES, CATALOG, rule_by_code
from .source import Source, SourceError, mask_ipython, notebook_source, python_source, read_source

__all__ = [
    "ALL_RULES", "CATALOG", "Config", "ConfigError", "Edit", "Finding", "Fix", "FixResult", "Range", "Related", "Source",
    "SourceError", "analyze", "find_pyproject", "apply_edits", "fix_source", "fixed_text", "load_config", "mask_ipython",
    "notebook_source", "parse_config", "python_source", "read_source", "render", "rule_by_code",
]
