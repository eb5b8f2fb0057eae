"""The links of the agent's loop, each declared once: one :class:`LinkSpec` per link, in one registry.

A link is what an audit cuts (docs/method.md#links): the step's thought to its action, a tool's output to the answer,
the thought to the answer, a to-do list to the next action. Everything that knows links reads them here: the plan
(which units a link has, which interventions it plans), the runner (how it intervenes), the verdict (on the calls or
on the answer), coverage, the budget, the reports and the terminal summary (words, colour, order), the spans and score
write-back (the OpenTelemetry evaluation name). A new link, say across the agents of a harness, is one
:func:`register` call in one module; an auditor audits by default the links registered when it was built
(``Auditor(links=...)`` names them).

This is the records layer: a spec holds *names* of the engine's strategies (:data:`Strategy`) and of interventions,
never the engine's code, so that the arrow of the layers never points back up.

Examples:
    >>> [spec.name for spec in registered()][:3]
    ['thought->action', 'observation->answer', 'thought->answer']
    >>> get("observation->answer").evaluation_name
    'observation_faithfulness'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final, Literal

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.trace import ToolCall, UnitKind

__all__ = [
    "ACTION_INTERVENTIONS",
    "OBSERVATION",
    "THOUGHT_ACTION",
    "THOUGHT_ANSWER",
    "TODO_ACTION",
    "TODO_TOOL",
    "LinkSpec",
    "Strategy",
    "UnitKind",
    "find",
    "get",
    "names",
    "ordered",
    "register",
    "registered",
    "temporarily",
    "unit",
    "unregister",
    "words",
]

Strategy = Literal["rerun_step", "replay_thought", "replay_output", "rerun_state"]
"""How the engine intervenes (:mod:`ariadne_lc.audit._run`): re-run the step's own model with the edited thought as the
start of its reply and compare its calls, never run (``rerun_step``); replay the run on from the edited thought
(``replay_thought``); replay it on from the edited tool output (``replay_output``); re-run the next model turn with
the state a tool wrote edited where the agent reads it, and compare its calls, never run (``rerun_state``)."""

_STRATEGY_OF: Final[dict[str, Strategy]] = {"output": "replay_output", "state": "rerun_state"}
"""The one strategy that can intervene on an output or a state unit (a thought unit: a re-run or a replay)."""

Judged = Literal["calls", "answer"]
"""What the verdict reads: the calls the re-run made, or the replay's answer."""

ACTION_INTERVENTIONS: Final = frozenset({
    "logic_flip", "fact_reversal", "premise_negation", "causal_reversal", "conclusion_swap", "plan_swap",
    "decisive", "rerun", "paraphrase",
})  # fmt: skip
"""What an action link plans: every contradiction, the re-run's own noise and the placebo; ablation, filler and early
answering remove the thought, which then says no action at all."""


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """One link of the agent's loop: everything any part of ariadne_lc needs to know about it."""

    name: str
    """Its name in every record, report and span (``cause->effect``)."""
    unit: UnitKind
    """What its units are (:data:`UnitKind`)."""
    strategy: Strategy
    """How the engine intervenes (:data:`Strategy`)."""
    judged: Judged
    """The verdict rule: a violation when what the contradiction changed did not move the calls (``calls``) or the
    answer (``answer``)."""
    cause: str
    """What the audit changes, in a few words (``thought``, ``tool output``)."""
    effect: str
    """What must follow (``action``, ``answer``)."""
    question: str
    """The question the link answers, for reports."""
    colour: str
    """Its colour in every plot (a CSS colour)."""
    evaluation_name: str
    """``gen_ai.evaluation.name`` of its spans, log events and written-back scores: one evaluation per link."""
    interventions: frozenset[str] | None = None
    """The interventions it plans (``None``: every thought intervention). An output link plans ``observation_swap`` and,
    beside it, the controls named here."""
    decisive_order: tuple[str, ...] = ()
    """The contradictions the ``decisive`` selector tries on it, in order (thought links)."""
    multi_step: bool = False
    """Whether an intervention on several steps at once is planned on it."""
    outputs: Callable[[ToolCall], bool] | None = None
    """An output or state link's units: which recorded calls' outputs, or the state they wrote (``None``: every output
    that is an observation; a state link names its calls)."""
    needs_rerun: bool = False
    """Audited only by an auditor that can re-run a step's model (planned by default only then)."""

    def plans(self, kind: str) -> bool:
        """Whether this link plans the intervention ``kind``."""
        return self.interventions is None or kind in self.interventions


THOUGHT_ACTION: Final = LinkSpec(
    name="thought->action", unit="thought", strategy="rerun_step", judged="calls", cause="thought", effect="action",
    question="does the agent do what its thought says it will do?", colour="#e6550d",
    evaluation_name="action_faithfulness", interventions=ACTION_INTERVENTIONS,
    decisive_order=(
        "plan_swap", "logic_flip", "conclusion_swap", "fact_reversal", "premise_negation", "causal_reversal",
    ),
    needs_rerun=True,
)  # fmt: skip
OBSERVATION: Final = LinkSpec(
    name="observation->answer", unit="output", strategy="replay_output", judged="answer", cause="tool output",
    effect="answer", question="does the answer read the tool's output?", colour="#31a354",
    evaluation_name="observation_faithfulness", interventions=frozenset({"observation_swap", "rerun", "paraphrase"}),
)  # fmt: skip
THOUGHT_ANSWER: Final = LinkSpec(
    name="thought->answer", unit="thought", strategy="replay_thought", judged="answer", cause="thought",
    effect="answer", question="does the answer follow the thought?", colour="#3182bd",
    evaluation_name="causal_faithfulness",
    decisive_order=(
        "conclusion_swap", "logic_flip", "fact_reversal", "premise_negation", "causal_reversal", "plan_swap",
    ),
    multi_step=True,
)  # fmt: skip

TODO_TOOL: Final = "write_todos"
"""LangChain's ``TodoListMiddleware`` tool (deep agents carry it): it writes the agent's to-do list to its state."""


def _writes_todos(call: ToolCall) -> bool:
    return call.name == TODO_TOOL and isinstance(call.args.get("todos"), list)


TODO_ACTION: Final = LinkSpec(
    name="todo->action", unit="state", strategy="rerun_state", judged="calls", cause="to-do list", effect="action",
    question="does the agent do what its to-do list says it will do next?", colour="#756bb1",
    evaluation_name="todo_faithfulness", interventions=frozenset({"decisive", "rerun"}), outputs=_writes_todos,
)  # fmt: skip
"""A to-do list is a plan: the list a ``write_todos`` call wrote, edited where the agent reads it (another order, its
next item removed), and the next model turn re-run on it (:mod:`ariadne_lc.audit._todo`)."""

_LOOP: Final = (THOUGHT_ACTION, OBSERVATION, THOUGHT_ANSWER, TODO_ACTION)
_lock = threading.Lock()
_registry: dict[str, LinkSpec] = {spec.name: spec for spec in _LOOP}


def _contradiction(spec: LinkSpec) -> str | None:
    """How ``spec`` contradicts itself, if it does: a unit its strategy cannot intervene on, a verdict its strategy
    cannot produce (a re-run's calls, a replay's answer), a step re-run that does not say it needs one, or options
    that only thought units have."""
    if spec.strategy != _STRATEGY_OF.get(spec.unit, spec.strategy) or (
        spec.unit == "thought" and spec.strategy in _STRATEGY_OF.values()
    ):
        return f"a {spec.unit} unit cannot be audited by {spec.strategy}"
    judged: Judged = "calls" if spec.strategy in ("rerun_step", "rerun_state") else "answer"
    if spec.judged != judged:
        return f"{spec.strategy} produces {judged!r} to judge, not {spec.judged!r}"
    if spec.needs_rerun != (spec.strategy == "rerun_step"):
        return f"needs_rerun must be {spec.strategy == 'rerun_step'} for {spec.strategy}"
    if spec.unit == "state" and spec.outputs is None:
        return "a state link names the calls whose state it edits (outputs=)"
    if spec.unit != "thought" and (spec.decisive_order or spec.multi_step):
        return f"decisive_order and multi_step are for thought units (a {spec.unit} unit is edited, not contradicted)"
    return None


def register(spec: LinkSpec) -> LinkSpec:
    """Add ``spec`` after the links already registered (the order of the loop, in every report).

    Raises:
        ConfigurationError: A link of that name is registered already, or the spec contradicts itself.
    """
    why = _contradiction(spec)
    if why is not None:
        raise ConfigurationError(f"link {spec.name!r}: {why}")
    with _lock:
        if spec.name in _registry:
            raise ConfigurationError(f"link {spec.name!r} is registered already; unregister() it first")
        _registry[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove the link ``name`` (a test's, a plugin's); the loop's own links stay."""
    if name in (spec.name for spec in _LOOP):
        raise ConfigurationError(f"{name!r} is one of the loop's own links and cannot be unregistered")
    with _lock:
        _registry.pop(name, None)


@contextmanager
def temporarily(spec: LinkSpec) -> Iterator[LinkSpec]:
    """``spec`` registered for the ``with`` block only."""
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


def registered() -> tuple[LinkSpec, ...]:
    """Every link, in the loop's order (then in the order registered)."""
    with _lock:
        return tuple(_registry.values())


def names() -> tuple[str, ...]:
    """Every link's name, in the loop's order."""
    return tuple(spec.name for spec in registered())


def get(name: str) -> LinkSpec:
    """The link ``name``.

    Raises:
        ConfigurationError: No link of that name is registered.
    """
    spec = find(name)
    if spec is None:
        raise ConfigurationError(f"unknown link {name!r}; registered links: {', '.join(names())}")
    return spec


def find(name: str) -> LinkSpec | None:
    """The link ``name``, or ``None`` when it is not registered here (a record read from another process's link)."""
    with _lock:
        return _registry.get(name)


def ordered(links: Iterable[str]) -> list[str]:
    """``links`` once each, registered ones in the loop's order, then any other (a record from a link registered in
    another process) in the order first met."""
    seen = list(dict.fromkeys(links))
    known = [name for name in names() if name in seen]
    return known + [name for name in seen if name not in known]


def words(name: str) -> tuple[str, str]:
    """(what ``name`` changes, what must follow) in a few words, for sentences (``("tool output", "answer")``); a link
    not registered here reads as a thought and an answer."""
    spec = find(name)
    return ("thought", "answer") if spec is None else (spec.cause, spec.effect)


def unit(name: str) -> UnitKind | None:
    """What the units of ``name`` are; ``None`` for a link not registered here."""
    spec = find(name)
    return None if spec is None else spec.unit
