"""perf-lint: PyTorch performance pitfalls, found statically and proven by measurement."""

__version__ = "0.1.0"
