"""The agents' model as a calibration uses it: its calls counted, it as the gate's reader, one run recorded on it.

:func:`record_job` records one real run of a job's agent (a recorder on the graph). A failure of the agent is in
its trace and the calibration goes on; a model endpoint that does not answer (:func:`_unreachable`) stops the run
with :class:`~ariadne_lc.errors.ModelUnavailableError`, nothing of the job stored, so the same command resumes it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel

from ariadne_lc.calibration._plan import CalibrationJob
from ariadne_lc.calibration.agents import ANSWER_MAX_TOKENS
from ariadne_lc.calibration.prompts import reader_prompt
from ariadne_lc.errors import ModelUnavailableError
from ariadne_lc.interventions.implied import ModelReader
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.trace import Trace

__all__ = ["ReaderChoice", "calibration_reader", "counted", "record_job"]

ReaderChoice = Literal["model", "rule"]
"""The gate's reader in a calibration: the agents' own model (few-shot, :func:`calibration_reader`) or the rule
reader."""


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it wraps) says the model endpoint did not answer, not that the agent failed:
    langchain's :class:`~langchain_core.exceptions.ModelConnectionError` (what its OpenAI client raises for a
    refused or reset connection), or a connection error of the HTTP stack beneath. A timeout is not: the server
    is there, only slow (a loaded machine), and the run goes on with the job recorded as it ended."""
    import httpx
    from langchain_core.exceptions import ModelConnectionError

    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(chain) < 8:  # a bounded walk down the cause chain
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(e, TimeoutError | httpx.TimeoutException) or "Timeout" in type(e).__name__ for e in chain):
        return False
    return any(isinstance(e, ModelConnectionError | ConnectionError | httpx.TransportError) for e in chain)


class _CallCounter(BaseCallbackHandler):
    """Counts every call of the model it is attached to (agents, replays, critic, judge, reference)."""

    run_inline = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0

    def _count(self) -> None:
        with self._lock:
            self.calls += 1

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self._count()

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self._count()


def calibration_reader(model: BaseChatModel, label: str | None = None) -> ModelReader:
    """The agents' own model as the gate's reader: the few-shot reader chat with the question and the thought
    (:func:`~ariadne_lc.calibration.prompts.reader_prompt`), a short answer."""
    return ModelReader(
        model,
        max_tokens=ANSWER_MAX_TOKENS,
        prompt=lambda query, thought: reader_prompt(thought, query),
        name=None if label is None else f"model:{label}",
    )


def counted(model: BaseChatModel) -> tuple[BaseChatModel, Callable[[], int]]:
    """A copy of ``model`` that counts its calls, and the function that reads the count."""
    counter = _CallCounter()
    callbacks = list(model.callbacks) if isinstance(model.callbacks, list) else []
    return model.model_copy(update={"callbacks": [*callbacks, counter]}), lambda: counter.calls


def record_job(job: CalibrationJob, graph: Any) -> Trace:
    """One real run of ``job``'s agent on ``graph``, recorded; a run that left no trace gives one that carries its
    error (see the module docstring for a model that did not answer)."""
    traces: list[Trace] = []
    # synchronous: the trace is read right after the run (the recorder builds off the agent's thread by default)
    handler = AriadneCallbackHandler(on_trace=traces.append, synchronous=True)
    thread = f"calib-{job.agent}-{job.p}-{job.query.id}-{uuid.uuid4().hex[:8]}"
    error: str | None = None
    try:
        graph.invoke(
            {"messages": [("user", job.query.question)]},
            {
                "configurable": {"thread_id": thread},
                "callbacks": [handler],
                "metadata": {"query_id": job.query.id, "domain": job.query.domain},
                "tags": [f"domain:{job.query.domain}", f"calibration:{job.agent}"],
            },
        )
    except Exception as exc:  # the trace (if any) records it; the run goes on
        if _unreachable(exc):
            raise ModelUnavailableError(
                f"the agents' model did not answer ({type(exc).__name__}: {exc}) while running {job.agent} on "
                f"{job.query.id}; nothing of this job was stored: the same command resumes the run"
            ) from exc
        error = f"{type(exc).__name__}: {exc}"
    if traces:
        return traces[-1]
    return Trace(trace_id=uuid.uuid4().hex, thread_id=thread, query=job.query.question, error=error or "no trace")
