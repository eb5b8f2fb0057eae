"""Auditing agents deployed on LangGraph Server: record inside the deployment, audit from its checkpoints.

On LangGraph Server (``langgraph dev``, the self-hosted server, LangSmith Deployments) the server owns
the checkpointer and the threads; the graph module named in ``langgraph.json`` is compiled without a
checkpointer. Three parts, all in the deployment's own terms:

- **Recording** needs nothing from this package: the graph module wraps its graph with
  :func:`ariadne_lc.record` or :class:`ariadne_lc.AriadneMiddleware` into a trace store (SQLite
  locally, Postgres for a real deployment); the traces carry the server's thread ids and task ids.
- **Remote audit** (:class:`RemoteAuditor`): read the thread's checkpoint history through
  ``langgraph-sdk`` (:class:`ServerThreads`), rebuild the checkpoints the audit forks from in a fresh
  in-memory saver under the server's ids (:func:`seed_saver`, checked against the server), and replay
  the same graph code locally with an ordinary :class:`~ariadne_lc.Auditor`. Traces come from the
  trace store or straight from the checkpoints (:func:`traces_from_history`).
- **Sampled audits of a deployment** (:class:`ServerPoller`): find new finished runs, sample them
  and hand them to an online job store, exactly once per run across restarts.

Writes to the server: none, except the opt-in verdict in thread metadata (``write_verdicts=True``).
Needs the ``server`` extra (``langgraph-sdk``); running a local server for tests takes
``langgraph-cli[inmem]``.
"""

from ariadne_lc.server._auditor import VERDICT_KEY_PREFIX, RemoteAuditor, verdict_metadata
from ariadne_lc.server._client import DEFAULT_HISTORY_PAGE, DEFAULT_TIMEOUT, ServerThreads
from ariadne_lc.server._poller import (
    DEFAULT_FLUSH_TIMEOUT,
    DEFAULT_MAX_SCAN,
    DEFAULT_MAX_THREADS_PER_POLL,
    DEFAULT_POLL_INTERVAL,
    PollReport,
    ServerPoller,
)
from ariadne_lc.server._seed import seed_saver
from ariadne_lc.server._traces import traces_from_history

__all__ = [
    "DEFAULT_FLUSH_TIMEOUT",
    "DEFAULT_HISTORY_PAGE",
    "DEFAULT_MAX_SCAN",
    "DEFAULT_MAX_THREADS_PER_POLL",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_TIMEOUT",
    "VERDICT_KEY_PREFIX",
    "PollReport",
    "RemoteAuditor",
    "ServerPoller",
    "ServerThreads",
    "seed_saver",
    "traces_from_history",
    "verdict_metadata",
]
