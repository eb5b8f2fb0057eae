"""Ctrl-C in every long command: stop within seconds, keep what is done, stop the local model server, say how to
resume, exit 130.

Why a handler of our own rather than Python's default: a shell that starts a job in the background without job
control (``cmd &`` in a script, many CI runners and agent harnesses) starts it with SIGINT *ignored*, and Python keeps
that; such a ``calibrate`` ran on for minutes after ``kill -INT`` (issue 28). Every long command installs
:func:`interruptible`'s handler, so SIGINT is obeyed however the command was started.

What happens on Ctrl-C:

1. The first SIGINT raises :class:`KeyboardInterrupt` in the main thread, where every command's loop runs. It unwinds
   through the ``with`` blocks: each result already stored stays stored (every command stores as it goes), the local
   llama.cpp server is stopped by its ``with`` block, and the command prints ``interrupted: <what is kept and how to
   resume>`` and exits with :data:`EXIT_INTERRUPTED`.
2. Work in flight on other threads (a replay the auditor's thread pool runs, a calibration job at
   ``--concurrency`` > 1) is not waited for: if the process has not exited :data:`GRACE_SECONDS` after the first
   SIGINT, it prints the same line and exits at once (``os._exit``). What such work had stored is kept: the stores
   write each record whole (SQLite transactions; the calibration log drops a torn last line on reading). A local
   model server left behind then exits by itself within a second, as it does whenever its parent is gone
   (:mod:`ariadne_lc.local._serve`).
3. A second SIGINT exits at once, the same way.

A command whose framework handles SIGINT itself (Celery's worker: a warm shutdown that waits for the tasks in flight)
calls :meth:`Interruption.begin` when that shutdown starts, for the same deadline and the same line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType

import typer

from ariadne_lc.cli._common import console, err_console

__all__ = ["EXIT_INTERRUPTED", "GRACE_SECONDS", "Interruption", "interruptible", "uninterrupted"]

EXIT_INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)."""

GRACE_SECONDS = 5.0
"""How long after the first Ctrl-C work in flight may take to wind down before the process exits regardless."""


class _Shield:
    """Main-thread state of :func:`uninterrupted` (signal handlers run on the main thread only)."""

    depth = 0
    pending = False


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A block that Ctrl-C does not cut in two (storing one trace's results: all of them or none, so that a resumed
    run can tell a finished trace): the interruption takes effect when the block ends, the deadline runs already."""
    _Shield.depth += 1
    try:
        yield
    finally:
        _Shield.depth -= 1
    if _Shield.depth == 0 and _Shield.pending:
        _Shield.pending = False
        raise KeyboardInterrupt


class Interruption:
    """One command's interruption: whether it happened, its deadline, and the one announcement it makes.

    Args:
        kept: What the command has kept so far and how to resume, as one sentence (see :func:`interruptible`).
    """

    def __init__(self, kept: Callable[[], str]) -> None:
        self.kept = kept
        self.interrupted = False
        self._announced = False
        self._lock = threading.RLock()  # the signal handler may run while the main thread holds it

    def announce(self) -> None:
        """Print ``interrupted: ...`` once, whichever thread gets here first; never raises."""
        with self._lock:
            if self._announced:
                return
            self._announced = True
            try:
                what = self.kept()
            except Exception as exc:  # the hint must not hide the interruption itself
                what = f"(what was kept could not be counted: {type(exc).__name__}: {exc})"
            err_console.print(f"[yellow]interrupted: {what}[/yellow]", highlight=False, soft_wrap=True)

    def exit_now(self) -> None:
        """Announce, then end the process at once (no ``finally``, no ``atexit``: see the module docstring)."""
        self.announce()
        with suppress(Exception):  # a progress bar hid the terminal's cursor; no finally will show it again
            console.show_cursor(True)
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        os._exit(EXIT_INTERRUPTED)

    def begin(self) -> None:
        """The command stops: from now on the process exits within :data:`GRACE_SECONDS` (once; never raises)."""
        with self._lock:
            if self.interrupted:
                return
            self.interrupted = True
        threading.Thread(target=self._deadline, name="ariadne-interrupt-deadline", daemon=True).start()

    def on_sigint(self, signum: int, frame: FrameType | None) -> None:
        """The SIGINT handler :func:`interruptible` installs: unwind the main thread; the second time, exit."""
        if self.interrupted:  # the second Ctrl-C: wait for nothing
            self.exit_now()
        self.begin()
        if _Shield.depth:
            _Shield.pending = True
            return
        raise KeyboardInterrupt

    def _deadline(self) -> None:
        threading.Event().wait(GRACE_SECONDS)
        self.exit_now()  # still alive: work on another thread holds the process


@contextmanager
def interruptible(kept: Callable[[], str]) -> Iterator[None]:
    """Run a long command's work so that Ctrl-C stops it as the module docstring says.

    Args:
        kept: What the command has kept so far and how to resume, as one sentence
            (``"12 audits kept in runs/cal; run the same command again to resume"``). Called once, after the
            interruption, possibly on another thread: read the stores, not state the main thread is changing.

    Raises:
        typer.Exit: With :data:`EXIT_INTERRUPTED` after Ctrl-C.

    Examples:
        >>> with interruptible(lambda: "nothing to keep"):
        ...     pass
    """
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    stop = Interruption(kept)
    previous = signal.signal(signal.SIGINT, stop.on_sigint)
    try:
        yield
    except KeyboardInterrupt:
        stop.interrupted = True
        stop.announce()
        raise typer.Exit(EXIT_INTERRUPTED) from None
    finally:
        if not stop.interrupted:  # once interrupted, a second Ctrl-C during the exit must still exit at once
            signal.signal(signal.SIGINT, previous)
