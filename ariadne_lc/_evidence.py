"""What an audit's verdict rests on: the decisiveness gate's reading, the similarity of the answers, the calls a
re-run made, the tool output swapped, and the units of the run the plan kept. Records of evidence, each a part of an
:class:`~ariadne_lc.records.AuditResult` (:mod:`ariadne_lc._result`), a leaf of the package."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from ariadne_lc.trace import ToolCall

__all__ = [
    "REJECTIONS", "ActionCheck", "Decisiveness", "GateOutcome", "ObservationSwap", "RunUnits", "SimilarityMetrics",
]  # fmt: skip

GateOutcome = Literal["decisive", "not_decisive", "no_commitment", "placebo_kept", "placebo_changed", "incoherent"]
"""What the decisiveness gate decided (docs/method.md#the-decisiveness-gate):

- ``decisive``: the contradiction changed the answer the thought implies (it is replayed and scored);
- ``not_decisive``: no edit the critic made within its attempts changed it (``not_applicable``, never scored);
- ``no_commitment``: the original thought implies no answer, so no contradiction of it can be checked;
- ``placebo_kept``: a paraphrase kept the implied answer (a valid placebo);
- ``placebo_changed``: every paraphrase tried changed it (no placebo: ``not_applicable``);
- ``incoherent``: every edit the critic made within its attempts contradicted itself (a stated calculation it does
  not hold, a calculation resting on the premise it negates, ...: :mod:`ariadne_lc.interventions.coherence`), so
  none was read (``not_applicable``, never scored).
"""

REJECTIONS: Final[tuple[GateOutcome, ...]] = ("not_decisive", "incoherent", "no_commitment")
"""The gate's outcomes that leave a unit without a verdict, the one that got furthest first: a unit (or a ``decisive``
selection that tried several kinds) with several is reported with the first (the one place they are ranked)."""


class Decisiveness(BaseModel):
    """The decisiveness gate's record for one audit: what the original and the intervened thought imply."""

    model_config = ConfigDict(frozen=True)

    outcome: GateOutcome
    reader: str
    """Which reader decided (``rule``, ``model:<name>``)."""
    form: str = "none"
    """How the original thought states its commitment (``calculation``, ``number``, ``option``, ``yes_no``,
    ``text``, ``none``): false-alarm rates differ by form, so reports break them down by it."""
    original_implied: str | None = None
    """The answer the original thought implies."""
    intervened_implied: str | None = None
    """The answer the accepted edit implies (for a rejection: the last edit tried)."""
    similarity: float | None = None
    """S between the two implied answers, by the audit's own scorer (decisive when S <= τ)."""
    attempts: int = 0
    """Edits the gate read (the first and each revision)."""
    rejected: tuple[str, ...] = ()
    """Each rejected edit and why, in order."""
    incoherent: int = 0
    """Edits rejected unread because they contradicted themselves (part of ``attempts``; each ``rejected`` entry
    of theirs starts with ``incoherent:``)."""


class SimilarityMetrics(BaseModel):
    """m(a, a*) = [J, C, L, E, S]."""

    model_config = ConfigDict(frozen=True)

    jaccard: float
    char: float
    length: float
    exact: float
    semantic: float | None
    """S; ``None`` when the scorer was inconclusive."""


class ActionCheck(BaseModel):
    """What a ``thought->action`` audit compared: the step's recorded calls and the calls the agent made when its
    model was re-run with the intervened thought as the start of its reply. None of them was executed."""

    model_config = ConfigDict(frozen=True)

    recorded: tuple[ToolCall, ...]
    """The step's calls in the live run (the agent's action with the original thought)."""
    derived: tuple[ToolCall, ...]
    """The calls the re-run made (empty: the action "no call"). A call to an unknown tool or with arguments that
    fail the tool's schema is recorded here as made; it is never run."""
    deriver: str
    """Who re-ran the step's model: ``middleware`` (the graph's :class:`~ariadne_lc.AriadneMiddleware` re-ran the
    model call with the thought as prefill), ``model:<name>``, or a tool-call deriver's name."""
    tracks: bool | None = None
    """Whether the derived calls do what the intervened thought says (``None``: the gate read no implied action)."""
    invalid: tuple[str, ...] = ()
    """Why derived calls are not calls the graph could run (an unknown tool, arguments that fail its schema)."""


class ObservationSwap(BaseModel):
    """What an ``observation->answer`` audit changed: one tool output, one value in it."""

    model_config = ConfigDict(frozen=True)

    tool: str
    """The tool whose output was changed."""
    call_id: str | None
    """The call it answered (parallel calls: one output changed at a time)."""
    original: str
    """The output as recorded."""
    swapped: str | None
    """The output the replay served instead; ``None`` when the swapper found no other value (the audit is then
    ``not_applicable``, and this record still says which call it was for)."""
    method: str
    """How the value was chosen (``rule:number``, ``rule:yes_no``, ``rule:entity``, ``llm``)."""
    variant: int = 0
    """Which other value this is when each output is given several (``Auditor(observation_swaps=...)``): 0 for
    the swapper's first, 1 for that value swapped again, and so on."""
    mode: str | None = None
    """How the answer was read (docs/method.md#the-output-gate): ``value``, the answer repeated ``old_values`` and
    should now hold ``new_values``; ``move``, every value (or the whole output) changed, so any answer reading the
    output must move; ``None``, a reader decided (a swapper that knows neither)."""
    old_values: tuple[str, ...] = ()
    """The values taken out of the output."""
    new_values: tuple[str, ...] = ()
    """The values put in."""


class RunUnits(BaseModel):
    """The units of one audited run and how many of them the plan kept (docs/method.md#the-budget): carried by each
    of the run's results, so coverage counts every unit, those the budget left out included."""

    model_config = ConfigDict(frozen=True)

    thoughts: int
    """Steps with a thought that the plan has an audit for."""
    outputs: int
    """Tool outputs that the plan has an audit for."""
    states: int = 0
    """State a tool wrote (to-do lists) that the plan has an audit for."""
    by_link: dict[str, tuple[int, int]]
    """Per link: (units kept, units); kept/units is each kept unit's inclusion probability."""
    run_calls: int
    """The run's own model calls."""
    budget_calls: int | None
    """The model calls the plan could spend on the run (``None``: every unit, no budget)."""
    planned_calls: int
    """The model calls of the kept audits, all run (a gate that refuses an edit saves its replay)."""
    agents: tuple[str, ...] = ()
    """The trace ids of the agent runs the run's tool calls started (sub-agents, ``ToolCall.agents``): coverage says
    how many of them were not audited with it."""
