"""`python -m perf_lint` is the `perf-lint` command."""

from perf_lint.server.cli import main

raise SystemExit(main())
