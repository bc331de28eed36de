"""Turn SIGTERM into an exception and hold signals over short critical sections, so interrupted writes clean up.

Python's default SIGTERM kills the process without running `finally` blocks or `except BaseException` clean-up,
which would leave half-written temporary folders behind. Inside `terminate_as_interrupt()` a SIGTERM raises
`Terminated` (a KeyboardInterrupt, so the CLI reports it like Ctrl-C) and the usual clean-up runs.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_HELD = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM."""


def _raise_terminated(signum, frame) -> None:  # noqa: ARG001
    raise Terminated(f"received signal {signal.Signals(signum).name}")


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated`; outside, the previous handler is back.

    Signal handlers can only be set from the main thread; elsewhere (e.g. a Dask worker thread) this does nothing.
    """
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_held() -> Iterator[None]:
    """Delay SIGINT/SIGTERM until the block ends (for a few renames that must happen together or not at all).

    Python runs signal handlers in the main thread only, so a block in another thread is never interrupted by
    them; in the main thread the handlers are swapped for a recorder and the first signal is re-delivered after.
    (`pthread_sigmask` is not enough: the kernel hands the signal to another thread and Python still raises here.)
    """
    if not _in_main_thread():
        yield
        return
    received: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: received.append(signum)) for sig in _HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if received:
            handler = previous[received[0]]
            if callable(handler):
                handler(received[0], None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), received[0])
