"""`python -m perf_lint` is the `perf-lint` command."""

from perf_lint.cli.main import main

raise SystemExit(main())
