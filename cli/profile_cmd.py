"""`perf-lint profile`: prove a finding by measurement from the command line.

Runs the code around a finding as written and with its fix under torch.profiler (see
perf_lint.profiler) and prints the verdict. Exit status: 0 when it ran, whatever the
verdict or the code's own failure; 2 when nothing could run (bad path, no finding at
that cell/line, bad interpreter or no torch in it, a Ray cluster that cannot be reached
or has no GPU for the task).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import replace

from perf_lint.analyzers import ConfigError, SourceError, analyze, fixed_text, load_config, read_source, render
from perf_lint.analyzers.fixes import parses
from perf_lint.profiler import ProfileRequest, run_profile
from perf_lint.profiler.harness import SETUP_FAILURES
from perf_lint.profiler.sweep import winning_fix

EXIT_RAN, EXIT_ERROR, EXIT_INTERRUPTED = 0, 2, 130


def steps(text: str) -> tuple[int, int, int]:
    """`W,WU,A` -> (wait, warmup, active)."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) < 0 or values[2] < 1:
        raise argparse.ArgumentTypeError(f"expected WAIT,WARMUP,ACTIVE (whole numbers, ACTIVE >= 1), not {text!r}")
    return values


def positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"expected a positive number, not {text!r}")
        return value

    return parse


def interpreter(text: str) -> str:
    """An absolute path: the run's working directory is the script's, not this one."""
    found = text if os.sep in text or os.path.exists(text) else shutil.which(text) or text
    return os.path.abspath(found)


def gpus(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of GPUs >= 0, not {text!r}")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run the code around a finding twice under torch.profiler, as written (A) and with the fix (B), "
        "interleaved over several repeats, and report the measured difference with a verdict."
    )
    parser.add_argument("path", metavar="PATH", help="a .py file or a .ipynb notebook")
    parser.add_argument("--cell", type=positive(int), metavar="N",
                        help="cell N, counting from 1: the Nth cell of a notebook (markdown cells included, as "
                             "`perf-lint check` prints it) or the Nth `# %%%%` cell of a .py")
    parser.add_argument("--line", type=int, metavar="L",
                        help="1-based line of the finding (within --cell for a notebook); the smallest "
                             "function or loop around it is profiled")
    parser.add_argument("--rule", metavar="CODE", help="measure only this rule's finding (e.g. TPL101)")
    parser.add_argument("--python", type=interpreter, metavar="PATH",
                        help="interpreter that runs the code (default: this one; a relative path is from the current "
                             "directory, a bare name is looked up on PATH); it needs torch, not perf-lint")
    parser.add_argument("--steps", type=steps, metavar="W,WU,A",
                        help="profiler schedule: wait, warm-up and active steps (default 1,2,5)")
    parser.add_argument("--timeout", type=positive(float), default=120.0, metavar="S",
                        help="seconds before one run (one variant, one repeat) is killed (default 120)")
    parser.add_argument("--repeats", type=positive(int), default=3, metavar="N",
                        help="runs per variant, interleaved A B A B (default 3)")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument("--out", metavar="DIR", help="where traces and the report go "
                                                     "(default: .perf-lint/traces next to PATH)")
    parser.add_argument("--runner", choices=("local", "ray"), default="local",
                        help="where the runs happen: a child process here (default) or a task on a Ray cluster "
                             "(needs pip install 'perf-lint[ray]'; the workers need torch, not perf-lint)")
    parser.add_argument("--address", metavar="ADDR",
                        help="the Ray cluster (host:port of its head, or ray://host:port); default: RAY_ADDRESS, "
                             "else a Ray instance on this machine")
    parser.add_argument("--num-gpus", type=gpus, default=1.0, metavar="N",
                        help="GPUs each Ray task asks for (default 1; 0 on a CPU-only cluster)")
    parser.add_argument("--sweep", action="store_true",
                        help="run the fix with each candidate count it writes (num_workers 1, 2, 4, ... up to this "
                             "machine's cores) and offer the fastest, when it is confirmed faster than the code as written")
    parser.add_argument("--apply", action="store_true",
                        help="with --sweep: write the winning fix into PATH")
    parser.add_argument("--keep-traces", type=positive(int), metavar="N",
                        help="run folders kept in the traces folder, this one included (default: the setting "
                             "keep-traces, 20)")


def run(args: argparse.Namespace) -> int:
    if args.apply and not args.sweep:
        print("perf-lint: error: --apply writes the winner of --sweep: give --sweep too", file=sys.stderr)
        return EXIT_ERROR
    request = ProfileRequest(
        path=args.path, cell=None if args.cell is None else args.cell - 1, line=args.line, rule=args.rule, python=args.python, steps=args.steps,
        timeout_s=args.timeout, repeats=args.repeats, out_dir=args.out, runner=args.runner, address=args.address,
        num_gpus=args.num_gpus, sweep=args.sweep, keep_traces=args.keep_traces,
    )
    try:
        result = run_profile(request, progress=lambda message: print(f"perf-lint profile: {message}", file=sys.stderr))
    except KeyboardInterrupt:  # the running child was killed with its process group on the way out
        print("perf-lint profile: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.failure in SETUP_FAILURES:
        print(f"perf-lint: error: {result.error}", file=sys.stderr)
        return EXIT_ERROR
    if args.format == "json":
        print(json.dumps(result.to_dict(), indent=2))
    elif args.format == "markdown":
        print(result.to_markdown(), end="")
    else:
        print(result.to_text(), end="")
    if args.apply:
        print(f"perf-lint profile: {apply_winner(args.path, result)}", file=sys.stderr)
    return EXIT_RAN


def apply_winner(path: str, result) -> str:
    """Write the sweep's winning fix into `path`, if its finding is still where it was measured."""
    winner = (result.sweep or {}).get("winner")
    if not winner:
        return "nothing applied: the sweep has no winner"
    try:
        source = read_source(path)
        config = load_config(os.path.dirname(os.path.abspath(path)))
    except (SourceError, ConfigError, OSError) as exc:
        return f"nothing applied: cannot read {path} again ({exc})"
    fixes = [(f, fix) for f in analyze(source, config) if (fix := winning_fix(f, winner)) is not None]
    if not fixes:
        return f"nothing applied: {path} changed while it was profiled ({winner['code']} is no longer where it was)"
    finding, fix = fixes[0]
    fixed = fixed_text(source, [replace(finding, fix=fix)])
    if not parses(fixed):
        return "nothing applied: the fix would not parse"
    with open(path, "wb") as handle:
        handle.write(render(fixed))
    return f"applied to {path}: {fix.title} ({winner['ratio']:.2f}x faster than as written)"
