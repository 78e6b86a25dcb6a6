"""A per-test time limit without extra plugins (SIGALRM in the main thread)."""

from __future__ import annotations

import functools
import signal


def timeout(seconds: int):
    """Fail a test that runs longer than `seconds`."""

    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            def expire(signum, frame):
                raise TimeoutError(f"{test.__name__} took more than {seconds} s")

            previous = signal.signal(signal.SIGALRM, expire)
            signal.alarm(seconds)
            try:
                return test(*args, **kwargs)
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)

        return run

    return wrap
