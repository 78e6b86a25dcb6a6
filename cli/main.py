"""The `perf-lint` command: `check`, `rules`, `explain`, `server` and `profile`.

Exit codes: 0 no findings, 1 findings (or, with --diff, fixes to apply), 2 usage,
configuration or file error. Findings go to stdout; errors and summaries to stderr.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import importlib
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from perf_lint import __version__
from . import files, formats, runcache

if TYPE_CHECKING:
    from perf_lint.analyzers import Config

# The analyzer (and libcst under it) is imported inside the functions that use it: a
# warm re-run that the run cache answers, `--help` and `--version` never pay for it.

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
PARALLEL_MIN_FILES = 16  # below twice this, worker start-up costs more than it saves

CHECK_EPILOG = """\
Locations are `path:line:column` (1-based). In notebooks they are
`path:cell N:line:column`: the Nth cell of the notebook, counting from 1 with
markdown cells included (as `perf-lint profile --cell N` takes it), and line/column
within the cell.

Directories are searched for .py and .ipynb files, skipping .git, virtualenvs
(.venv, venv, any folder with a pyvenv.cfg), node_modules, __pycache__,
.ipynb_checkpoints, .virtual_documents (jupyter-lsp's), .perf-lint* and the
configured `exclude` patterns. Files and folders named on the command line are checked (a folder with all it holds) even
if `exclude` matches them, unless --force-exclude is given.

Each file uses the nearest pyproject.toml with a [tool.perf-lint] table above it,
unless --config or --no-config is given. --select replaces the configured selection
(and its ignore list); --ignore and --extend-select add to it.

Exit status: 0 no findings, 1 findings (with --diff: fixes to apply), 2 error
(usage, configuration, unreadable or skipped file, failed write, internal error).
Only regular files are read, up to `max-file-size` bytes (default 10 MiB)."""


class UsageError(Exception):
    """A command line that cannot be run (exit 2)."""


def codes(value: str) -> list[str]:
    """A comma-separated list of code prefixes."""
    return [part.strip() for part in value.split(",") if part.strip()]


LOOPBACK = "127.0.0.1"


def host_port(value: str) -> tuple[str, int]:
    """`[HOST:]PORT`; without a host, loopback only."""
    host, colon, port = value.rpartition(":")
    host = host.strip("[]") if colon else LOOPBACK
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT, got {value!r}")
    return host, int(port)


def error(message: str) -> int:
    print(f"perf-lint: error: {formats.printable(message)}", file=sys.stderr)
    return EXIT_ERROR


def file_error(path: str, message: str) -> None:
    print(formats.printable(f"{formats.shown(path)}: error: {message}"), file=sys.stderr)


def component(module: str):
    """A part of perf-lint developed separately, or None when this install lacks it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


# -- configuration -------------------------------------------------------------------------
def config_file(path: str) -> Config:
    """An explicit --config file: a pyproject.toml (its [tool.perf-lint] table) or a TOML
    file with the settings at top level."""
    from perf_lint.analyzers import parse_config
    from perf_lint.analyzers.config import read_toml

    data = read_toml(path)
    tool = data.get("tool")
    table = tool.get("perf-lint", {}) if isinstance(tool, dict) else data
    return parse_config(table, path)


class Configs:
    """The configuration of each path, with the command-line selection on top: the
    nearest pyproject.toml (loaded once each) or one --config / --no-config for all."""

    def __init__(self, args: argparse.Namespace) -> None:
        from perf_lint.analyzers import Config

        self.select, self.ignore, self.extend_select = args.select, args.ignore or [], args.extend_select or []
        self.by_folder: dict[str, Config] = {}
        self.by_file: dict[str | None, Config] = {}
        defaults = self.override(Config())  # validates the command-line codes
        self.single: Config | None = None
        if args.no_config:
            self.single = defaults
        elif args.config:
            self.single = self.override(config_file(args.config))

    def override(self, config: Config) -> Config:
        return config.with_selection(self.select, self.ignore, self.extend_select)

    def __call__(self, path: str) -> Config:
        from perf_lint.analyzers import Config, find_pyproject, load_config

        if self.single is not None:
            return self.single
        folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        if folder not in self.by_folder:
            pyproject = find_pyproject(folder)
            if pyproject not in self.by_file:
                self.by_file[pyproject] = self.override(load_config(pyproject) if pyproject else Config())
            self.by_folder[folder] = self.by_file[pyproject]
        return self.by_folder[folder]


# -- check ---------------------------------------------------------------------------------
@dataclass
class FileResult:
    """What checking one file gave: findings (those left after --fix), fixes, an error."""

    findings: list = field(default_factory=list)  # perf_lint.analyzers.Finding
    fixed: Counter = field(default_factory=Counter)  # code -> findings fixed
    diff: str = ""
    error: str | None = None
    reads: dict = field(default_factory=dict)  # the other files the analysis read: {path: (size, mtime_ns)}


def unified_diff(path: str, before, after) -> str:
    """The diff of a source's units (the file, or each changed notebook cell)."""
    from perf_lint.analyzers.parse import lines_of

    chunks = []
    for old, new in zip(before.units, after.units):
        if old.text == new.text:
            continue
        name = formats.shown(path) if old.cell is None else f"{formats.shown(path)}:cell {old.cell + 1}"
        for line in difflib.unified_diff(lines_of(old.text), lines_of(new.text), name, name):
            line = formats.diff_line(line)  # (file content cannot forge a workflow command in a CI log)
            chunks.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


def check_file(path: str, config: Config, mode: str, cache_folder: str | None = None) -> FileResult:
    """Check one file; `mode` is "check", "fix" (write the fixes) or "diff" (show them).
    With `cache_folder`, findings of unchanged files come from the cache (check mode only)."""
    from perf_lint.analyzers import SourceError, analyze, fix_source, read_source, render
    from perf_lint.analyzers.project import recording

    from .cache import Cache

    try:
        data = files.read_bytes(path, config.max_file_size)
    except files.Skipped as exc:
        return FileResult(error=f"skipped: {exc}")
    except OSError as exc:
        return FileResult(error=f"cannot read: {exc.strerror}")
    store = Cache(cache_folder) if cache_folder and mode == "check" else None
    summaries = _summaries(cache_folder) if store else None
    key = store.key(path, data, config) if store else None
    if store and key is not None:
        cached = store.get(key)
        if cached is not None:
            return FileResult(cached[0], reads=cached[1])
    try:
        source = read_source(path, data)
        with recording() as consulted:
            findings = analyze(source, config)
        if store and key is not None:
            store.put(key, findings, consulted)
        if summaries is not None:
            summaries.save()
        fixing = mode != "check" and any(f.fix for f in findings)
        result = fix_source(source, config) if fixing else None
        remaining = analyze(result.source, config) if result and result.changed else None
    except SourceError as exc:
        return FileResult(error=str(exc))
    except Exception as exc:  # a bug of ours must not stop the other files
        return FileResult(error=f"internal error, please report it: {type(exc).__name__}: {exc}")
    if result is None or remaining is None or all(a.text == b.text for a, b in zip(source.units, result.source.units)):
        return FileResult(findings, reads=consulted)  # no text changed: nothing to write (not even a notebook's JSON)
    try:
        new = render(result.source)
    except UnicodeEncodeError as exc:
        return FileResult(findings, error=f"not fixed: the fixed text cannot be encoded as {exc.encoding}")
    fixed = Counter(f.code for f in findings) - Counter(f.code for f in remaining)
    if mode == "diff":
        return FileResult(findings, fixed, unified_diff(path, source, result.source))
    try:
        files.write_atomic(path, new, data)
    except files.WriteError as exc:
        return FileResult(findings, error=f"not fixed: {exc}")
    return FileResult(remaining, fixed)


@functools.cache
def _summaries(cache_folder: str):
    """The module summaries kept in `cache_folder`, installed for this process's analyses."""
    from perf_lint.analyzers.importers import keep_summaries

    from .cache import ModuleSummaries

    summaries = ModuleSummaries(cache_folder)
    keep_summaries(summaries)
    return summaries


def _check_one(item: tuple) -> FileResult:
    return check_file(*item)


def run_checks(per_file: list[tuple[str, Config]], mode: str, cache_folder: str | None, jobs: int | None):
    """Outcomes in input order; files are checked in parallel processes when there are many."""
    items = [(path, config, mode, cache_folder) for path, config in per_file]
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(items) < 2 * PARALLEL_MIN_FILES:
        yield from map(_check_one, items)
        return
    from concurrent.futures import ProcessPoolExecutor  # here: its import (multiprocessing) is 20 ms of a warm run

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_check_one, items, chunksize=max(1, min(32, len(items) // (jobs * 8))))


def check(args: argparse.Namespace) -> int:
    if args.statistics and args.format in ("sarif", "github"):
        raise UsageError(f"--statistics cannot be combined with --format {args.format}")
    mode = "diff" if args.diff else "fix" if args.fix else "check"
    run_key = None
    cache_folder = runcache.cache_folder() if mode == "check" and not args.no_cache else None
    if cache_folder:
        options = {k: v for k, v in vars(args).items() if k not in ("handler", "jobs")}
        run_key = runcache.key(options, args.paths)
        stored = runcache.load(cache_folder, run_key)
        if stored is not None:
            sys.stdout.write(stored["stdout"])
            sys.stdout.flush()
            sys.stderr.write(stored["stderr"])
            return stored["status"]
    from perf_lint.analyzers import ConfigError

    try:
        configs = Configs(args)
        paths, failed = files.discover(args.paths, configs, args.force_exclude)
        per_file = [(path, configs(path)) for path in paths]
    except ConfigError as exc:
        return error(str(exc))
    for path, message in failed:
        file_error(path, message)
    items: list[formats.Item] = []
    diffs: list[str] = []
    fixed: Counter = Counter()
    consulted: dict = {}
    for path, outcome in zip([p for p, _ in per_file], run_checks(per_file, mode, cache_folder, args.jobs)):
        consulted.update(outcome.reads)
        if outcome.error:
            failed.append((path, outcome.error))
            file_error(path, outcome.error)
        items.extend(formats.Item(path, finding) for finding in outcome.findings)
        fixed += outcome.fixed
        if outcome.diff:
            diffs.append(outcome.diff)
        elif mode == "fix" and outcome.fixed and not args.quiet:
            listed = ", ".join(f"{code} x{count}" for code, count in sorted(outcome.fixed.items()))
            print(f"{formats.shown(path)}: fixed {formats.plural(sum(outcome.fixed.values()), 'finding')} ({listed})", file=sys.stderr)
    if mode == "diff":
        out = "".join(diffs)
        summary = formats.diff_summary(sum(fixed.values()), len(diffs), len(failed))
        status = EXIT_FINDINGS if diffs else EXIT_OK
    else:
        if args.statistics:
            out = formats.render_statistics(items, args.format)
        else:
            out = formats.render_findings(items, args.format, failed)
        if mode == "fix":
            summary = formats.fix_summary(sum(fixed.values()), items, len(failed))
        else:
            summary = formats.check_summary(items, len(failed))
        status = EXIT_FINDINGS if items else EXIT_OK
    sys.stdout.write(out)
    sys.stdout.flush()
    summary = "" if args.quiet else summary
    sys.stderr.write(summary)
    if failed:
        return EXIT_ERROR
    status = EXIT_OK if args.exit_zero else status
    if cache_folder and run_key is not None:
        runcache.store(cache_folder, run_key, out, summary, status, consulted)
    return status


# -- other commands ------------------------------------------------------------------------
def list_rules(args: argparse.Namespace) -> int:
    sys.stdout.write(formats.render_rules(args.format))
    return EXIT_OK


def explain(args: argparse.Namespace) -> int:
    rule = formats.lookup(args.code)
    if rule is None:
        return error(f"unknown rule code {args.code!r} (see `perf-lint rules`)")
    sys.stdout.write(rule.docs())
    return EXIT_OK


def server(args: argparse.Namespace) -> int:
    lsp = component("perf_lint.server.lsp")
    if lsp is None:
        return error("the language server is not available in this installation (no perf_lint.server.lsp)")
    return lsp.serve(tcp=args.tcp or None) or EXIT_OK


def profile_unavailable(args: argparse.Namespace) -> int:
    return error("the profiler is not available in this installation (no perf_lint.cli.profile_cmd)")


# -- the parser ----------------------------------------------------------------------------
def add_check(commands) -> None:
    parser = commands.add_parser(
        "check",
        help="check .py files and notebooks for performance pitfalls",
        description="Check Python files and Jupyter notebooks for PyTorch performance pitfalls.",
        epilog=CHECK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or folders (default: .)")
    parser.add_argument("--format", choices=formats.FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--select", type=codes, action="extend", metavar="CODES",
                        help="comma-separated code prefixes to enable, replacing the configured selection")
    parser.add_argument("--ignore", type=codes, action="extend", metavar="CODES",
                        help="comma-separated code prefixes to disable")
    parser.add_argument("--extend-select", type=codes, action="extend", metavar="CODES",
                        help="comma-separated code prefixes to enable in addition (rules off by default)")
    parser.add_argument("--fix", action="store_true", help="apply the safe fixes in place, then report what remains")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff of what --fix would change and write nothing, even with --fix "
                             "(exit 1 if there is something to fix)")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--statistics", action="store_true", help="print the number of findings per code instead")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", metavar="PATH",
                        help="settings file for every path: a pyproject.toml ([tool.perf-lint]) or a TOML file "
                             "with the settings at top level")
    source.add_argument("--no-config", action="store_true", help="ignore configuration files")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply `exclude` patterns to paths named on the command line too")
    parser.add_argument("--no-cache", action="store_true",
                        help="neither read nor write the findings cache (.perf-lint-cache/ in the current folder; "
                             "not used if it is a symbolic link)")
    parser.add_argument("-j", "--jobs", type=int, metavar="N",
                        help="check files in N processes (default: one per CPU; 1 = serial)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only (no summary)")
    parser.set_defaults(handler=check)


def add_profile(commands, wanted: bool) -> None:
    """`profile` is configured by perf_lint.cli.profile_cmd, imported only when used."""
    parser = commands.add_parser(
        "profile", help="measure findings: run the code as written and fixed under torch.profiler"
    )
    if not wanted:
        return
    profile_cmd = component("perf_lint.cli.profile_cmd")
    if profile_cmd is None:
        parser.add_argument("args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
        parser.set_defaults(handler=profile_unavailable)
        return
    profile_cmd.configure(parser)
    parser.set_defaults(handler=profile_cmd.run)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="perf-lint",
        description="Find PyTorch training-performance pitfalls statically, then prove them by measurement.",
    )
    parser.add_argument("--version", action="version", version=f"perf-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_check(commands)

    rules = commands.add_parser("rules", help="list the rules", description="List every rule.")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    rules.set_defaults(handler=list_rules)

    explain_parser = commands.add_parser("explain", help="show a rule's documentation")
    explain_parser.add_argument("code", help="a rule code, e.g. TPL101")
    explain_parser.set_defaults(handler=explain)

    serve = commands.add_parser("server", help="run the language server", description="Run the LSP server.")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    transport.add_argument("--tcp", type=host_port, metavar="[HOST:]PORT",
                           help="listen on a TCP port instead, on 127.0.0.1 unless HOST is given; anyone who can "
                                "connect can run code through it (profiling), so never expose it beyond your machine")
    serve.set_defaults(handler=server)

    add_profile(commands, wanted=argv[:1] == ["profile"])
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        args = build_parser(argv).parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    try:
        return args.handler(args)
    except UsageError as exc:
        return error(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`perf-lint check | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception:  # exit 2 like any error, not 1 ("findings") as a traceback would
        import traceback

        print(f"perf-lint: internal error, please report it at {formats.HOMEPAGE}/issues:", file=sys.stderr)
        print("\n".join(map(formats.printable, traceback.format_exc().splitlines())), file=sys.stderr)
        return EXIT_ERROR
