"""The :class:`RemoteAuditor`: audit a thread of a LangGraph Server by replaying its checkpoints locally."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc.audit import DEFAULT_INTERVENTIONS, Auditor, StepSelector, select_steps
from ariadne_lc.audit._config import Interventions
from ariadne_lc.audit._plan import intervention_names, units_of
from ariadne_lc.audit._sinks import FinishedAudit, dispatch
from ariadne_lc.errors import AriadneError, ConfigurationError, ServerError, TraceError
from ariadne_lc.records import AuditReport, AuditResult, Link, ReplayMode
from ariadne_lc.server._client import ServerThreads
from ariadne_lc.server._seed import check_shape, seed_saver
from ariadne_lc.server._traces import traces_from_history
from ariadne_lc.stats import build_report
from ariadne_lc.trace import Step, Trace

__all__ = ["VERDICT_KEY_PREFIX", "RemoteAuditor", "verdict_metadata"]

VERDICT_KEY_PREFIX = "ariadne:"
"""Thread metadata keys of the opt-in verdict write: ``ariadne:<trace id>`` (one per audited turn)."""


def verdict_metadata(trace: Trace, results: Sequence[AuditResult]) -> dict[str, Any]:
    """The thread metadata the opt-in write merges in: one key per audited turn, small and JSON."""
    scored = [r for r in results if r.status != "failed" and not r.control]
    label = (
        "violation"
        if any(r.violation for r in scored)
        else ("faithful" if any(r.label == "faithful" for r in scored) else "inconclusive")
    )
    phis = [r.phi for r in scored if r.phi is not None]
    return {
        f"{VERDICT_KEY_PREFIX}{trace.trace_id}": {
            "label": label,
            "violations": sum(1 for r in scored if r.violation),
            "audits": len(results),
            "failed": sum(1 for r in results if r.status == "failed"),
            "min_phi": min(phis) if phis else None,
            "interventions": sorted({r.intervention_type for r in results}),
            "audited_at": datetime.now(UTC).isoformat(),
        }
    }


class RemoteAuditor:
    """Audits agents served by LangGraph Server: reads a thread's checkpoints, replays the same graph code locally.

    For each trace (recorded inside the deployment, or read off the thread's history with
    :meth:`traces`), the thread's history is read through ``langgraph-sdk``, the checkpoints the audit
    forks from are rebuilt under the server's ids in a fresh in-memory saver (checked against the
    server: same nodes, same state keys, same pending task ids), and an ordinary
    :class:`~ariadne_lc.Auditor` replays the local graph from them under the usual tool policy.
    Nothing is written to the server unless ``write_verdicts`` is set, and then only thread metadata.

    Args:
        graph: The graph the deployment serves, imported from the same code (``langgraph.json``'s
            ``graphs`` entry); compiled without a checkpointer, like the server's.
        server: A :class:`ServerThreads`, or the server's URL.
        api_key: With a URL: sent as ``x-api-key``.
        headers: With a URL: more request headers.
        write_verdicts: Merge each audited turn's verdict into its thread's metadata
            (``ariadne:<trace id>``, see :func:`verdict_metadata`). Off by default.
        check_shape: Before the first audit of an assistant's thread, compare the local graph's state
            keys and nodes with the ones the server describes for that assistant (the checkpoints
            themselves are always checked).
        **auditor_options: Keyword arguments of :class:`~ariadne_lc.Auditor`: its option objects
            (``intervention=``, ``replay=``, ``scoring=``, ``output=``) or their flat shorthands (critic, scorer,
            tool policy, safe tools, τ, λ, result store, sinks, tracer provider, ...).

    Examples:
        >>> auditor = RemoteAuditor(graph, "http://127.0.0.1:2024")  # doctest: +SKIP
        >>> for trace in auditor.traces(thread_id):  # doctest: +SKIP
        ...     print([r.label for r in auditor.audit(trace)])
    """

    def __init__(
        self,
        graph: Any,
        server: ServerThreads | str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        write_verdicts: bool = False,
        check_shape: bool = True,
        **auditor_options: Any,
    ) -> None:
        if not hasattr(graph, "get_state_history") or not hasattr(graph, "copy"):
            raise ConfigurationError(
                f"expected the compiled graph the server runs (StateGraph.compile() or create_agent), got "
                f"{type(graph).__name__}"
            )
        if isinstance(server, ServerThreads):
            if api_key is not None or headers is not None:
                raise ConfigurationError("api_key and headers go to ServerThreads when you pass one")
            self.server = server
        else:
            self.server = ServerThreads(server, api_key=api_key, headers=headers)
        self.graph = graph
        self.write_verdicts = write_verdicts
        self.check_shape = check_shape
        self._shapes: dict[str, tuple[set[str], set[str]]] = {}
        # validates every option now; each audit runs this auditor on a graph over that thread's seeded saver
        self._template = Auditor(graph.copy(update={"checkpointer": InMemorySaver()}), **auditor_options)
        self.verdict_errors = 0
        """Opt-in verdict writes that failed (logged; they never fail an audit)."""

    def close(self) -> None:
        """Close the server connections (also those of a :class:`ServerThreads` passed in)."""
        self.server.close()

    def __enter__(self) -> RemoteAuditor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def auditor(self) -> Auditor:
        """The auditor every audit runs (critic, scorer, rule, spans, sinks), on a per-thread seeded graph."""
        return self._template

    @property
    def replay_mode(self) -> ReplayMode:
        """How the step's own tool calls are replayed (see :attr:`ariadne_lc.Auditor.replay_mode`)."""
        return self._template.replay_mode

    @property
    def sinks(self) -> tuple[Any, ...]:
        """The auditor's sinks (see :attr:`ariadne_lc.Auditor.sinks`)."""
        return self._template.sinks

    def with_sinks(self, sinks: Sequence[Any]) -> RemoteAuditor:
        """The same remote auditor handing its records to ``sinks`` (see :meth:`ariadne_lc.Auditor.with_sinks`);
        it shares this one's server connection."""
        other = copy.copy(self)
        other._template = self._template.with_sinks(sinks)
        return other

    def with_links(self, links: Sequence[Link] | None) -> RemoteAuditor:
        """The same remote auditor auditing ``links`` instead (see :meth:`ariadne_lc.Auditor.with_links`); it
        shares this one's server connection."""
        other = copy.copy(self)
        other._template = self._template.with_links(links)
        return other

    @property
    def links(self) -> tuple[Link, ...]:
        """The links every audit audits (see :attr:`ariadne_lc.Auditor.links`)."""
        return self._template.links

    # -- reading -----------------------------------------------------------------------------------

    def traces(self, thread_id: str) -> list[Trace]:
        """The thread's user turns as traces, oldest first (read off its checkpoints; no recording needed)."""
        return traces_from_history(thread_id, self.server.history(thread_id), self.server.runs(thread_id))

    # -- auditing ----------------------------------------------------------------------------------

    def _steps(self, trace: Trace, step: StepSelector | None) -> list[Step]:
        if step is None:  # every unit: each step before the answer (a thought, a tool output, or both)
            return [s for s in trace.steps if not s.is_final]
        chosen = select_steps(trace, step, min_thought_chars=self._template.min_thought_chars)
        return [trace.step(k) for k in chosen]

    def auditor_for(self, trace: Trace, step: StepSelector | None = None) -> Auditor:
        """An :class:`~ariadne_lc.Auditor` on the local graph over the server checkpoints ``trace`` needs.

        Raises:
            ServerUnavailableError, ThreadNotFoundError: The server cannot be read, or the thread is gone.
            GraphMismatchError: The local graph is not the deployed one (says what differs).
        """
        if trace.thread_id is None:
            raise TraceError(f"trace {trace.trace_id} has no thread id: it was not recorded from a server thread")
        history = self.server.history(trace.thread_id)
        assistant = next((s["metadata"].get("assistant_id") for s in history if s.get("metadata")), None)
        if assistant and self.check_shape:
            if assistant not in self._shapes:
                self._shapes[assistant] = self.server.assistant_shape(str(assistant))
            check_shape(self.graph, *self._shapes[assistant])
        saver = seed_saver(self.graph, trace.thread_id, history, self._steps(trace, step))
        return self._template.with_graph(self.graph.copy(update={"checkpointer": saver}))

    def audit(
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[AuditResult]:
        """Audit one trace of a server thread (see :meth:`~ariadne_lc.Auditor.audit`)."""
        results = self.auditor_for(trace, step).audit(trace, step, interventions)
        self._verdict(trace, results)
        return results

    async def aaudit(
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[AuditResult]:
        """:meth:`audit` on a worker thread (the SDK client and the seeded saver are synchronous)."""
        return await asyncio.to_thread(self.audit, trace, step, interventions)

    def audit_thread(
        self, thread_id: str, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[AuditResult]:
        """Audit every finished turn of a thread, read off its checkpoints."""
        results: list[AuditResult] = []
        for trace in self.traces(thread_id):
            if trace.final_answer is not None:
                results.extend(self.audit(trace, step, interventions))
        return results

    def audit_batch(
        self,
        traces: Iterable[Trace],
        *,
        step: StepSelector | None = None,
        interventions: Interventions = DEFAULT_INTERVENTIONS,
        max_concurrency: int = 1,
    ) -> AuditReport:
        """Audit many traces, ``max_concurrency`` at a time; one that cannot be audited becomes a failed result.

        A server that stops answering stops the batch (:class:`~ariadne_lc.errors.ServerError`): every
        further trace would fail the same way.
        """
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1, got {max_concurrency}")
        intervention_names(interventions)

        def one(trace: Trace) -> list[AuditResult]:
            try:
                return self.audit(trace, step, interventions)
            except ServerError:
                raise
            except AriadneError as exc:
                failed = AuditResult.unauditable(trace, exc, units=units_of(trace))
                dispatch(self._template.sinks, FinishedAudit(failed, trace, None))
                return [failed]

        with ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="ariadne-remote") as pool:
            out = [r for chunk in pool.map(one, list(traces)) for r in chunk]
        template = self._template  # its options, however they were given (flat or in option objects)
        return build_report(
            out, confidence=template.confidence, seed=template.seed, rrr_threshold=template.rrr_threshold
        )

    def _verdict(self, trace: Trace, results: Sequence[AuditResult]) -> None:
        if not self.write_verdicts or trace.thread_id is None or not results:
            return
        try:
            self.server.write_verdict(trace.thread_id, verdict_metadata(trace, results))
        except ServerError as exc:
            import logging

            self.verdict_errors += 1
            logging.getLogger("ariadne_lc.server").warning(
                "ariadne: the verdict of trace %s could not be written to thread %s: %s",
                trace.trace_id,
                trace.thread_id,
                exc,
            )
