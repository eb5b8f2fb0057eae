"""What a replay returns, its tool policy and the messages it writes in place of tools."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ariadne_lc.records import ReplayMode
from ariadne_lc.trace import InterruptRecord, Step

__all__ = [
    "DEFAULT_MAX_TURNS",
    "EARLY_ANSWER_INSTRUCTION",
    "EARLY_ANSWER_TOOL_MESSAGE",
    "UNAVAILABLE_TOOL_MESSAGE",
    "ReplayResult",
    "ToolPolicy",
]

DEFAULT_MAX_TURNS = 25
"""Model turns a replay may take after the fork before it is stopped, at least: a replay of a longer recorded run may
take twice the turns the run took from the fork, plus five."""

UNAVAILABLE_TOOL_MESSAGE = (
    "Tool '{name}' is unavailable during this audit replay: the call differs from the recorded run "
    "and the tool is not declared safe to re-run."
)

EARLY_ANSWER_INSTRUCTION = (
    "Stop reasoning here and do not call any tools. Based only on what is above, give your final answer now."
)
"""The human message that ends an early-answering replay."""
EARLY_ANSWER_TOOL_MESSAGE = (
    "Tool '{name}' is not available: the reasoning was cut here. Give your final answer now without tools."
)
"""The refusal a tool call gets after the cut of an early-answering replay."""


class ToolPolicy(StrEnum):
    """What happens when the replayed agent calls a tool."""

    RECORDED = "recorded"
    """Serve recorded outputs; run only tools declared safe; refuse the rest (the default)."""
    LIVE = "live"
    """Let the graph run its tools for real (only for tools without side effects)."""


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """What the counterfactual run did."""

    answer: str | None
    """The final answer a*, read as the recorder reads a live run's: the structured response as JSON when the
    run ended with one, else the text of the last AI message; ``None`` if the run produced none."""
    steps: tuple[Step, ...]
    """The counterfactual model turns from the substituted one on."""
    fork_checkpoint_id: str
    """The production checkpoint the replay forked from (before the step, in the step's own namespace)."""
    replay_thread_id: str
    """The isolated thread the replay ran in (in a saver of its own)."""
    model_calls: int
    """Chat model calls the replay made."""
    tools_recorded: int = 0
    """Tool calls answered with recorded outputs."""
    tools_live: int = 0
    """Tool calls that ran for real (declared safe, or the live policy)."""
    tools_unavailable: tuple[str, ...] = ()
    """Names of tools refused during the replay; a non-empty tuple flags the result."""
    interrupts_answered: tuple[InterruptRecord, ...] = ()
    """Human-in-the-loop interrupts the replay went through, each resumed with the recorded answer."""
    fork_checkpoint_ns: str = ""
    """The checkpoint namespace of the fork (empty for the top-level graph, ``node:<task id>|...`` inside subgraphs)."""
    replay_mode: ReplayMode = "recorded"
    """``rederive`` when the step's tool calls were re-derived from the substituted thought (they are the first
    counterfactual step's ``tool_calls``, with what the tool policy answered); ``recorded`` when they were kept."""
    tool_call_deriver: str | None = None
    """The deriver that re-derived them (its ``name``)."""
    input_checked: bool = False
    """The replay's first model call was checked against the recorded one and found the same but for the edit
    (:mod:`ariadne_lc.replay._inputs`); ``False`` when it could not be, and :attr:`unchecked` says why."""
    unchecked: str | None = None
    """Why the replay's input could not be checked (no recorded input, no model call, ...); ``None`` when it was."""
