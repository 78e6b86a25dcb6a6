"""Start perf-lint's language server from the libraries bundled with the extension.

The extension runs `python -I -S perf_lint_server.py`: isolated mode keeps the current
folder (the workspace), PYTHON* variables and site-packages off `sys.path`, and no `.pth`
file runs, so nothing in an opened folder or an environment can be imported by accident.
Exit status 3: this Python is too old; 4: no bundled libcst for this Python or platform.
"""

import os
import sys

OLDEST = (3, 10)
TOO_OLD, NO_BUNDLE = 3, 4


def main() -> int:
    if sys.version_info < OLDEST:
        sys.stderr.write("perf-lint needs Python %d.%d or newer; %s is Python %d.%d\n"
                         % (OLDEST + (sys.executable,) + tuple(sys.version_info[:2])))
        return TOO_OLD
    libs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")
    native = os.path.join(libs, "cp%d%d" % sys.version_info[:2])
    if not os.path.isdir(native):
        sys.stderr.write("perf-lint: the extension bundles no libcst for Python %d.%d; install perf-lint in %s "
                         "and set perfLint.importStrategy to fromEnvironment\n" % (sys.version_info[:2] + (sys.executable,)))
        return NO_BUNDLE
    sys.path[:0] = [os.path.join(libs, "common"), native]
    try:
        import libcst.native  # noqa: F401  # the compiled parser: another platform's fails here
    except ImportError as exc:
        sys.stderr.write("perf-lint: the bundled libcst does not load on this platform (%s); install perf-lint in %s "
                         "and set perfLint.importStrategy to fromEnvironment\n" % (exc, sys.executable))
        return NO_BUNDLE
    from perf_lint.cli.main import main as cli

    return cli(["server", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
