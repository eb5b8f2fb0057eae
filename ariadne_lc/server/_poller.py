"""Sampled online audits of a LangGraph Server deployment: poll for finished turns, feed the online auditor.

The server runs the agent, so no callback of ours sees its runs. :class:`ServerPoller` looks for them
instead: each poll lists the deployment's threads updated since its cursor (``POST /threads/search``,
newest first, read back to the cursor), reads each thread's turns off its checkpoints, and *offers*
every finished turn to an :class:`~ariadne_lc.online.OnlineAuditor` whose auditor is a
:class:`~ariadne_lc.server.RemoteAuditor`. From there it is the online auditor's machinery unchanged:
the deterministic hash sample, filters, rate limit, model-call budget, bounded queue, the job store
(SQLite or Postgres), the workers, retries and the metrics (meter ``ariadne_lc.online``).

Exactly once per turn, across restarts:

- a turn's trace id is the id of the run that started it, and the job store keeps one job per trace id
  (a second offer of the same turn adds nothing), so nothing is audited twice;
- the sample is a hash of the trace id, so a turn offered again after a restart gets the same answer;
- the cursor (the ``updated_at`` of the newest thread fully offered) lives in the job store
  (:meth:`~ariadne_lc.online.JobStore.set_cursor`) and is saved only after the offered turns are
  committed there (``flush_persisted``). A thread that gets a new turn is updated again, so it is read again
  on the next poll; threads are taken oldest first, so a bounded poll (``max_threads_per_poll``) leaves
  the rest for the next one, and nothing newer than the cursor is skipped. A crash between the commit
  and the cursor save re-offers those turns, which the job store ignores.

Bounded: at most ``max_threads_per_poll`` threads are read per poll (and ``max_scan`` listed), and the
online auditor's queue, rate limit and budget apply as for live traffic (they skip and count, never
defer). The server is only read; the opt-in verdict write is the remote auditor's.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ariadne_lc.errors import AriadneError, ConfigurationError
from ariadne_lc.online import DEFAULT_JOB_STORE_PATH, DEFAULT_SAMPLE_RATE, JobStore, OnlineAuditor
from ariadne_lc.server._auditor import RemoteAuditor

__all__ = [
    "DEFAULT_FLUSH_TIMEOUT",
    "DEFAULT_MAX_SCAN",
    "DEFAULT_MAX_THREADS_PER_POLL",
    "DEFAULT_POLL_INTERVAL",
    "PollReport",
    "ServerPoller",
]

logger = logging.getLogger("ariadne_lc.server")

DEFAULT_POLL_INTERVAL = 30.0
"""Seconds between polls (:meth:`ServerPoller.start`)."""
DEFAULT_MAX_THREADS_PER_POLL = 100
"""Threads whose history one poll reads at most."""
DEFAULT_MAX_SCAN = 2000
"""Threads one poll lists at most while reading back to its cursor."""
DEFAULT_FLUSH_TIMEOUT = 300.0
"""Seconds a poll waits for its offered turns to be committed before it leaves the cursor where it was."""
_PAGE = 100
_RECENT = 10_000


def _when(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


@dataclass(frozen=True, slots=True)
class PollReport:
    """What one poll did."""

    threads: int
    """Threads read (their checkpoints)."""
    offered: int
    """Finished turns offered to the online auditor for the first time in this process."""
    cursor: str | None
    """The cursor after the poll (``None``: nothing found yet)."""
    more: bool
    """Threads newer than the cursor are left for the next poll (the poll was bounded)."""


class ServerPoller:
    """Finds new finished turns on a LangGraph Server and hands a sample to the online audit machinery.

    Args:
        auditor: The :class:`RemoteAuditor` the audits run with (the deployment's graph, the server).
        assistant: Only threads of this assistant (graph name in ``langgraph.json``, or assistant id);
            ``None``: every thread on the server.
        jobs: The job store (path, ``postgresql://`` URI or a :class:`~ariadne_lc.online.JobStore`); the
            cursor lives there too.
        sample_rate: Fraction of finished turns audited (hash of the trace id).
        max_threads_per_poll, max_scan: Bounds of one poll.
        flush_timeout: See :data:`DEFAULT_FLUSH_TIMEOUT`.
        name: The online auditor's name (metrics attribute ``ariadne.online.name``).
        **online_options: More :class:`~ariadne_lc.online.OnlineAuditor` keywords (``run_filter``,
            ``max_audits_per_minute``, ``max_model_calls_per_hour``, ``interventions``, ``step``,
            ``max_concurrency``, ``meter_provider``, ...).

    Examples:
        >>> remote = RemoteAuditor(graph, "http://127.0.0.1:2024")  # doctest: +SKIP
        >>> poller = ServerPoller(remote, assistant="agent", jobs="audits.db", sample_rate=0.05)  # doctest: +SKIP
        >>> poller.start()  # polls every 30 s and audits in this process  # doctest: +SKIP
    """

    def __init__(
        self,
        auditor: RemoteAuditor,
        *,
        assistant: str | None = None,
        jobs: JobStore | str | Path = DEFAULT_JOB_STORE_PATH,
        sample_rate: float = DEFAULT_SAMPLE_RATE,
        max_threads_per_poll: int = DEFAULT_MAX_THREADS_PER_POLL,
        max_scan: int = DEFAULT_MAX_SCAN,
        flush_timeout: float = DEFAULT_FLUSH_TIMEOUT,
        name: str | None = None,
        **online_options: Any,
    ) -> None:
        if not isinstance(auditor, RemoteAuditor):
            raise ConfigurationError(f"ServerPoller takes a RemoteAuditor, got {type(auditor).__name__}")
        if max_threads_per_poll < 1 or max_scan < max_threads_per_poll:
            raise ConfigurationError(
                f"need 1 <= max_threads_per_poll <= max_scan, got {max_threads_per_poll} and {max_scan}"
            )
        if flush_timeout <= 0:
            raise ConfigurationError(f"flush_timeout must be positive, got {flush_timeout}")
        self.remote = auditor
        self.assistant = assistant
        self.max_threads_per_poll = max_threads_per_poll
        self.max_scan = max_scan
        self.flush_timeout = flush_timeout
        self.online = OnlineAuditor(
            auditor.graph,
            auditor=auditor,
            jobs=jobs,
            sample_rate=sample_rate,
            name=name or f"server:{assistant or 'all'}",
            **online_options,
        )
        """The online auditor the turns are offered to: its ``stats``, ``jobs`` and ``start``/``shutdown``."""
        self.cursor_name = f"langgraph-server:{auditor.server.url}:{assistant or '*'}"
        """The job store key of this poller's cursor."""
        self._graph_id: str | None = None
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def jobs(self) -> JobStore:
        return self.online.jobs

    # -- one poll ----------------------------------------------------------------------------------

    def _filter(self) -> dict[str, Any] | None:
        if self.assistant is None:
            return None
        if self._graph_id is None:
            self._graph_id = self.remote.server.assistant_graph_id(self.assistant)
        return {"graph_id": self._graph_id}

    def _newer(self, cursor: datetime | None) -> list[dict[str, Any]]:
        """Threads updated at or after the cursor (the boundary is read again: ties are not lost), oldest first."""
        found: list[dict[str, Any]] = []
        metadata = self._filter()
        while len(found) < self.max_scan:
            page = self.remote.server.threads(metadata=metadata, limit=_PAGE, offset=len(found))
            fresh = [t for t in page if cursor is None or _when(t["updated_at"]) >= cursor]
            found.extend(fresh)
            if len(fresh) < len(page) or len(page) < _PAGE:
                break
        return sorted(found[: self.max_scan], key=lambda t: _when(t["updated_at"]))

    def poll(self) -> PollReport:
        """Offer the finished turns of the threads updated since the cursor; save the cursor once committed.

        Raises:
            ServerUnavailableError: The server does not answer (the cursor stays; poll again later).
        """
        saved = self.jobs.cursor(self.cursor_name)
        cursor = None if saved is None else _when(saved)
        newer = self._newer(cursor)
        batch = newer[: self.max_threads_per_poll]
        offered = 0
        for thread in batch:
            for trace in self.remote.traces(str(thread["thread_id"])):
                if trace.final_answer is None or trace.interrupted or trace.trace_id in self._recent:
                    continue
                self.online.offer(trace)
                offered += 1
                self._recent[trace.trace_id] = None
                if len(self._recent) > _RECENT:
                    self._recent.popitem(last=False)
        new_cursor = saved
        if batch:
            if self.online.flush_persisted(self.flush_timeout):
                new_cursor = _when(batch[-1]["updated_at"]).isoformat()
                self.jobs.set_cursor(self.cursor_name, new_cursor)
            else:
                logger.warning(
                    "ariadne server poller: the offered turns were not committed within %.0f s; the cursor stays at %s",
                    self.flush_timeout,
                    saved,
                )
        return PollReport(threads=len(batch), offered=offered, cursor=new_cursor, more=len(newer) > len(batch))

    # -- running -----------------------------------------------------------------------------------

    def start(self, *, interval: float = DEFAULT_POLL_INTERVAL, audit: bool = True) -> None:
        """Poll every ``interval`` seconds on a daemon thread; with ``audit``, run the audits in this process
        (the online auditor's workers). A poll that fails is logged and tried again at the next interval."""
        if interval <= 0:
            raise ConfigurationError(f"interval must be positive, got {interval}")
        if self._thread is not None:
            raise ConfigurationError("this poller is already started")
        if audit:
            self.online.start()
        self._thread = threading.Thread(target=self._loop, args=(interval,), name="ariadne-server-poller", daemon=True)
        self._thread.start()

    def _loop(self, interval: float) -> None:
        while not self._stop.is_set():
            try:
                report = self.poll()
                if report.more:
                    continue
            except AriadneError as exc:
                logger.warning("ariadne server poller: %s", exc)
            except Exception:
                logger.exception("ariadne server poller: a poll failed")
            self._stop.wait(interval)

    def shutdown(self, timeout: float = 30.0, *, drain: bool = True) -> None:
        """Stop polling, then shut the online auditor down (see :meth:`~ariadne_lc.online.OnlineAuditor.shutdown`)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.online.shutdown(timeout, drain=drain)
