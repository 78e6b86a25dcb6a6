"""perf_lint.cli: the command line (`perf-lint check`, `rules`, `explain`, `profile`, `server`)."""
