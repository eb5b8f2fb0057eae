"""Running an online auditor's workers and stopping it: start, flush, shut down.

:class:`RunControls` is a base of :class:`~ariadne_lc.online.OnlineAuditor`: each method is a thin front over the
auditor's :class:`~ariadne_lc.online._lifecycle.Lifecycle`, which owns the threads and the order of the steps. With a
trace store, runs reach the queue from the recorder's builder thread, so the recorder is flushed first.
"""

from __future__ import annotations

import asyncio
from typing import Self

from ariadne_lc.online._lifecycle import Lifecycle, ShutdownReport
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.store import TraceStore

__all__ = ["DEFAULT_TIMEOUT", "RunControls"]

DEFAULT_TIMEOUT = 30.0
"""Default timeout of :meth:`OnlineAuditor.force_flush` and :meth:`OnlineAuditor.shutdown`."""


class RunControls:
    """Starts the workers, flushes and shuts down; the auditor sets the attributes declared here."""

    handler: AriadneCallbackHandler
    trace_store: TraceStore | None
    _life: Lifecycle

    # -- workers -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Run audits in this process: workers on a daemon thread with its own event loop, each
        audit the synchronous ``Auditor.audit`` on a daemon thread of its own.

        Use it for sync serving and sync savers (``SqliteSaver``, ``InMemorySaver``, Postgres).
        Audits share the interpreter with the agent: at high sample rates prefer running them in
        another process (an ``OnlineAuditor`` on the same job store that calls ``start()`` and is
        never attached to runs).
        """
        self._life.start()

    async def astart(self) -> None:
        """Run audits as tasks in the running event loop (``Auditor.aaudit``); call it from the app's
        loop, e.g. in a FastAPI lifespan. Needed when the graph's saver is async-only
        (``AsyncSqliteSaver`` is bound to its loop). Blocking store calls go to a helper thread."""
        await self._life.astart()

    # -- flush and shutdown ------------------------------------------------------------------------

    def force_flush(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Persist every accepted run and, when this process runs workers, wait until every job
        persisted so far is done or failed. ``True`` if that happened within ``timeout`` seconds."""
        return self._flush_recorder(timeout) and self._life.force_flush(timeout)

    def _flush_recorder(self, timeout: float) -> bool:
        """With a trace store, runs reach the queue from the recorder's builder thread: wait for those first."""
        return self.trace_store is None or self.handler.flush(timeout)

    def flush_persisted(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """Commit every accepted run to the job store, without waiting for audits. ``True`` if that
        happened within ``timeout`` seconds (e.g. before a poller saves its cursor)."""
        return self._flush_recorder(timeout) and self._life.flush_persisted(timeout)

    async def aforce_flush(self, timeout: float = DEFAULT_TIMEOUT) -> bool:
        """:meth:`force_flush` without blocking the running loop (the waiting happens on a thread)."""
        return await asyncio.to_thread(self.force_flush, timeout)

    def shutdown(self, timeout: float = DEFAULT_TIMEOUT, *, drain: bool = True) -> ShutdownReport:
        """Refuse new runs, persist what was accepted, finish the queued audits (``drain``), stop the
        workers and release what is still in flight, all within ``timeout`` seconds.

        Nothing persisted is lost: unfinished jobs wait in the job store for the next start. Returns
        what was left; calling it again returns the same report.
        """
        self._flush_recorder(timeout)
        return self._life.shutdown(timeout, drain=drain)

    async def ashutdown(self, timeout: float = DEFAULT_TIMEOUT, *, drain: bool = True) -> ShutdownReport:
        """:meth:`shutdown` from the event loop the workers run on (or any loop)."""
        await asyncio.to_thread(self._flush_recorder, timeout)
        return await self._life.ashutdown(timeout, drain=drain)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.ashutdown()
