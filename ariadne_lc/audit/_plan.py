"""Planning: which steps of a trace to audit, and with which concrete intervention each.

Everything here runs before any model or graph is called, so a bad request (a step out of range, an
unknown intervention, a trace without an answer) fails at once and costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ariadne_lc import links as links_registry
from ariadne_lc.errors import ConfigurationError, FinalStepError, TraceError, TraceNotFinishedError
from ariadne_lc.interventions import OBSERVATIONS, ControlType, parse_interventions, resolve
from ariadne_lc.links import LinkSpec
from ariadne_lc.records import Link, RunUnits
from ariadne_lc.replay._own import HANDOFF_PREFIXES
from ariadne_lc.trace import ToolCall, Trace, output_unit, state_unit

__all__ = [
    "ACTION_KINDS",
    "BOOKKEEPING_TOOLS",
    "DECISIVE",
    "DECISIVE_ORDER",
    "DEFAULT_INTERVENTIONS",
    "DEFAULT_MIN_THOUGHT_CHARS",
    "OBSERVATION_CONTROLS",
    "PlannedAudit",
    "StepSelector",
    "intervention_names",
    "is_bookkeeping",
    "nothing_to_audit_reason",
    "observed_value",
    "plan",
    "select_steps",
    "units_of",
]

DEFAULT_MIN_THOUGHT_CHARS = 20
"""``step="auto"`` picks the first step whose thought has at least this many non-space characters."""

StepSelector = int | Literal["auto", "all"] | Sequence[int]
"""An index, ``"auto"``, ``"all"``, or several indices to intervene on *at once*; ``None`` where a signature allows it:
every unit of the trace (docs/method.md#the-default-plan)."""

DECISIVE: Final = "decisive"
"""The selector of the default plan: per thought step and link, the first contradictions the link's gate accepts."""

DEFAULT_INTERVENTIONS: Final[tuple[str, ...]] = (DECISIVE, "observation_swap")
"""The default plan (``interventions=None`` everywhere: the auditor, the online and fleet workers, the CLI): on each
step with a thought, the first decisive contradictions on each thought link the graph allows
(``contradictions_per_step``, 1 by default); on each tool output, ``observation_swap`` (``observation_swaps`` values,
1 by default). With the rule critic and readers that costs no model call to plan; each audit is one replay (or one
re-run of the step's model on ``thought->action``)."""

DECISIVE_ORDER: Final[dict[str, tuple[str, ...]]] = {
    spec.name: spec.decisive_order for spec in (links_registry.THOUGHT_ACTION, links_registry.THOUGHT_ANSWER)
}
"""The contradictions the ``decisive`` selector tries, in order, per link of the loop (each link's
:attr:`~ariadne_lc.links.LinkSpec.decisive_order`): a plan is contradicted first by another tool or argument (an action
link), a conclusion first by another conclusion (an answer link)."""


@dataclass(frozen=True, slots=True)
class PlannedAudit:
    """One audit to run: a concrete kind on a set of steps, and how the kind was chosen."""

    kind: str
    """The contradiction or control to apply (a selector already resolved)."""
    steps: tuple[int, ...]
    """The steps intervened on together (one for a single-step audit), ascending."""
    selection: str
    """``fixed``, ``random`` or ``adaptive:<pattern>``."""
    link: Link = "thought->answer"
    """The link of the agent's loop the audit cuts (docs/method.md#links)."""
    call_index: int | None = None
    """``observation->answer``: which of the step's tool calls has its output changed."""
    output: str | None = None
    """``observation->answer``: that call's unit (:func:`~ariadne_lc.trace.output_unit`), ``output:#<call_index>``
    when not given."""
    variant: int = 0
    """``observation_swap``: which other value the output is given (0: the swapper's first; each next one swaps
    the previous value again, see ``Auditor(observation_swaps=...)``)."""
    inclusion: float = 1.0
    """The probability that the default plan's budget kept this audit's unit (1: every unit was kept;
    docs/method.md#the-budget): reports weight each verdict by its inverse."""

    @property
    def unit(self) -> tuple[int, str]:
        """The unit this audit is about: (step, ``thought``) or (step, the output's unit,
        :func:`~ariadne_lc.trace.output_unit`), the name coverage and the stored results use too."""
        if self.call_index is None:
            return self.steps[0], "thought"
        return self.steps[0], self.output or f"output:#{self.call_index}"

    @property
    def key(self) -> str:
        """This audit's identity within its run (unit, link, selector, variant): the same on every plan of the run,
        so a resumed audit knows what it has done and a result is stored once."""
        return f"{'+'.join(map(str, self.steps))}:{self.unit[1]}:{self.link}:{self.kind}:{self.variant}"


def _substantive(thought: str, min_chars: int) -> bool:
    return len("".join(thought.split())) >= min_chars


def _auditable(trace: Trace, index: int) -> int:
    """``index``, once it names a step that is followed by more of the run.

    The last model turn is never followed by one: its text (or, with structured output, its call) is
    the answer, so an intervention there rewrites the answer instead of testing what it depends on.
    """
    step = trace.step(index)  # raises StepNotFoundError
    if index == len(trace.steps) - 1:
        how = "its structured response" if step.structured_output else "its answer"
        raise FinalStepError(
            f"step {index} of trace {trace.trace_id} is the run's last model turn, which gave {how}: only steps "
            "followed by more of the run can be audited, as an intervention on the answer itself rewrites the "
            "answer. Choose an earlier step, or step='auto' / 'all'"
        )
    return index


def select_steps(trace: Trace, step: StepSelector, *, min_thought_chars: int = DEFAULT_MIN_THOUGHT_CHARS) -> list[int]:
    """The step indices to audit.

    Only steps followed by more of the run can be audited: intervening on the final answer itself
    would trivially "change" it, so naming the answer step raises
    :class:`~ariadne_lc.errors.FinalStepError`. ``"auto"`` is the first substantive step
    (docs/method.md#step-selection: a thought of at least ``min_thought_chars`` non-space characters,
    20 by default, so that a bare "ok" or a tool name is passed over), ``"all"`` every step with a
    thought, an int that step, and a list of ints those steps (which the auditor intervenes on
    together). ``"auto"`` and ``"all"`` may find none (see :func:`nothing_to_audit_reason`).
    """
    candidates = [s for s in trace.steps if not s.is_final and s.thought.strip()]
    if isinstance(step, str):
        if step == "auto":
            chosen = next((s for s in candidates if _substantive(s.thought, min_thought_chars)), None)
            return [] if chosen is None else [chosen.index]
        if step == "all":
            return [s.index for s in candidates]
    elif isinstance(step, int) and not isinstance(step, bool):
        return [_auditable(trace, step)]
    elif isinstance(step, Sequence) and step:
        indices = [k for k in step if isinstance(k, int) and not isinstance(k, bool)]
        if len(indices) == len(step):
            return sorted({_auditable(trace, k) for k in indices})
    raise ConfigurationError(f"step must be an int, 'auto', 'all' or a non-empty list of ints, got {step!r}")


def nothing_to_audit_reason(trace: Trace, step: StepSelector, *, min_thought_chars: int) -> str:
    """Why :func:`select_steps` found no step in ``trace`` (it only can for ``"auto"`` and ``"all"``)."""
    if len(trace.steps) <= 1:
        return "no step to audit: the agent answered at once (its only model turn is the answer)"
    before = [s for s in trace.steps if not s.is_final]
    if not before:
        return (
            f"no step to audit: no model turn before the answer called a tool, and step={step!r} picks only "
            "turns that did; name a step (an int) to audit another"
        )
    if not any(s.thought.strip() for s in before):
        return (
            f"no step to audit: none of the {len(before)} model turn(s) before the answer has a thought "
            "(bare tool calls)"
        )
    return (
        f"no step to audit: no thought before the answer has {min_thought_chars} non-space characters "
        f"(step={step!r}, min_thought_chars={min_thought_chars}); name a step to audit a shorter one"
    )


def intervention_names(interventions: str | Sequence[str]) -> list[str]:
    """The requested names, validated (raises :class:`~ariadne_lc.errors.ConfigurationError`)."""
    return parse_interventions(list(interventions) if not isinstance(interventions, str) else interventions)


ACTION_KINDS: Final = links_registry.ACTION_INTERVENTIONS
"""What the ``thought->action`` link audits (its :attr:`~ariadne_lc.links.LinkSpec.interventions`, declared once in
the registry): every contradiction, the rerun (the re-run's own noise) and the placebo; ablation, filler and early
answering remove the thought, which then says no action at all."""


OBSERVATION_CONTROLS = frozenset({ControlType.RERUN, ControlType.PARAPHRASE})
"""The controls of the ``observation->answer`` link, planned when an ``observation_swap`` is too (one per output, as
the swap): the rerun serves the output as recorded (the answer's own replay variability), the placebo serves it said
differently with the same value (:func:`~ariadne_lc.interventions.observations.placebo_output`)."""


def _links_of(kind: str, steps: tuple[int, ...], links: Sequence[LinkSpec], *, swapped: bool) -> list[LinkSpec]:
    """The links ``kind`` is planned on: a swap on the output links, a thought intervention on the thought links that
    plan it, and a control also on the output links that plan it when a swap is planned too (its baseline)."""
    single = len(steps) == 1
    out: list[LinkSpec] = []
    for spec in links:
        if not spec.plans(kind) or not (single or spec.multi_step):
            continue
        if (
            (spec.unit == "output" and (kind in OBSERVATIONS or (swapped and kind in OBSERVATION_CONTROLS)))
            or (spec.unit == "thought" and kind not in OBSERVATIONS)
            or (spec.unit == "state" and single)
        ):
            out.append(spec)
    return out


BOOKKEEPING_TOOLS: Final = ("write_todos",)
"""Tools whose output only acknowledges what the agent did (LangChain's ``TodoListMiddleware``: "Updated todo list
to ..."): bookkeeping, not an observation, so never an ``observation->answer`` unit. So are hand-offs between agents
(:data:`~ariadne_lc.replay._own.HANDOFF_PREFIXES`)."""


def is_bookkeeping(call: ToolCall) -> bool:
    """Whether ``call``'s output only acknowledges a to-do list or a hand-off (never an observation unit)."""
    return call.name in BOOKKEEPING_TOOLS or call.name.startswith(HANDOFF_PREFIXES)


def observed_value(call: ToolCall) -> str | None:
    """What the caller read back from ``call`` as an observation: what the agent a hand-off started returned
    (:attr:`~ariadne_lc.trace.ToolCall.handed_back`), else the tool's output, unless that only acknowledges (a to-do
    list written, a hand-off made: bookkeeping); ``None``: no observation. What a swap changes, and where the values
    it swaps in come from (:mod:`._pool`)."""
    if call.handed_back is not None:
        return call.handed_back.text
    return None if is_bookkeeping(call) else call.output


def _observed(call: ToolCall) -> bool:
    return observed_value(call) is not None


def _outputs(spec: LinkSpec, call: ToolCall) -> bool:
    """Whether ``call``'s output is a unit of the output link ``spec``."""
    return _observed(call) and (spec.outputs is None or spec.outputs(call))


def _writes(spec: LinkSpec, call: ToolCall, trace: Trace, index: int) -> bool:
    """Whether the state ``call`` (of step ``index``) wrote is a unit of the state link ``spec``: a call it names,
    followed by another model turn of the run (the turn that reads the state) that does more than write that state
    again (a list rewritten before anything is done: the rewritten list is the unit)."""
    if spec.outputs is None or not spec.outputs(call) or index + 1 >= len(trace.steps):
        return False
    after = trace.steps[index + 1].tool_calls
    return not after or not all(c.name == call.name for c in after)


def units_of(trace: Trace) -> RunUnits:
    """The units of ``trace`` under the default plan (each step with a thought before the answer, each observed tool
    output, each state a state link edits), counted without planning an audit: what coverage counts for a run whose
    audit failed as a whole."""
    thoughts = sum(1 for s in trace.steps if not s.is_final and s.thought.strip())
    outputs = sum(1 for s in trace.steps if not s.is_final for c in s.tool_calls if _observed(c))
    specs = [spec for spec in links_registry.registered() if spec.unit == "state"]
    states = sum(1 for s in trace.steps for c in s.tool_calls if any(_writes(p, c, trace, s.index) for p in specs))
    return RunUnits(thoughts=thoughts, outputs=outputs, states=states, by_link={}, run_calls=len(trace.steps),
                    budget_calls=None, planned_calls=0, agents=trace.agents_started)  # fmt: skip


def _call_steps(trace: Trace, links: Sequence[LinkSpec]) -> list[int]:
    """Every step before the answer with a tool output of an output link or a state of a state link, thought or not:
    those links' units."""
    outputs = [spec for spec in links if spec.unit == "output"]
    states = [spec for spec in links if spec.unit == "state"]
    return [
        s.index
        for s in trace.steps
        if not s.is_final
        and (
            any(_outputs(p, c) for p in outputs for c in s.tool_calls)
            or any(_writes(p, c, trace, s.index) for p in states for c in s.tool_calls)
        )
    ]


def plan(
    trace: Trace,
    step: StepSelector | None,
    interventions: str | Sequence[str],
    *,
    seed: int,
    min_thought_chars: int = DEFAULT_MIN_THOUGHT_CHARS,
    links: Sequence[Link] = ("thought->answer",),
    observation_swaps: int = 1,
    contradictions_per_step: int = 1,
) -> list[PlannedAudit]:
    """The audits to run on ``trace``: one per selected step (or one for a list of steps), name and link.

    ``step=None`` selects every unit: each step with a thought for the thought interventions, each step with a tool
    output for ``observation_swap`` (with or without a thought). Each thought intervention is planned on the thought
    links in ``links`` that plan it (:attr:`~ariadne_lc.links.LinkSpec.interventions`, in the loop's order; a
    multi-step intervention on ``thought->answer`` only; the ``decisive`` selector
    ``contradictions_per_step`` times, each the next decisive contradiction); ``observation_swap`` on the output
    links (``observation->answer``: every output that is an observation), once per tool call of the step that has an
    output (one output changed at a time; ``observation_swaps`` other values each), and beside it the ``rerun`` and
    ``paraphrase`` controls when they are requested too (:data:`OBSERVATION_CONTROLS`: on that link, once per output
    as well).

    An empty list means the trace has nothing to audit (see :func:`nothing_to_audit_reason`).

    Raises:
        TraceNotFinishedError: The turn stopped at an interrupt and was not resumed (yet).
        TraceError: The trace cannot be audited (its run failed, it is only the resumed half of a
            turn, or no final answer was recorded).
        StepNotFoundError: A requested step does not exist.
        FinalStepError: A requested step is the run's answer.
        ConfigurationError: An unknown intervention or a malformed ``step``.
    """
    names = intervention_names(interventions)
    specs = [links_registry.get(link) for link in links_registry.ordered(links)]
    if trace.error is not None:
        raise TraceError(f"trace {trace.trace_id} cannot be audited: {trace.error}")
    if trace.final_answer is None:
        if trace.interrupted:
            raise TraceNotFinishedError(
                f"trace {trace.trace_id} cannot be audited yet: its turn is waiting at an interrupt (thread "
                f"{trace.thread_id!r}) and has no final answer. Once the thread is resumed "
                "(Command(resume=...)) with a recorder writing to the same trace store, this trace is "
                f"completed in place: read it again (store.get({trace.trace_id!r})) and audit it"
            )
        raise TraceError(f"trace {trace.trace_id} cannot be audited: no final answer was recorded")
    units = step is None
    chosen = select_steps(trace, "all" if step is None else step, min_thought_chars=min_thought_chars)
    swapped = any(n in OBSERVATIONS for n in names)
    together = not units and not isinstance(step, str | int)
    targets = [tuple(chosen)] if together else [(k,) for k in chosen]
    if units:  # the output and state links' units: every step with an output or a state, thought or not
        calls = [spec for spec in specs if spec.unit == "state" or swapped]
        targets = sorted({*targets, *((k,) for k in _call_steps(trace, calls))})
    planned: list[PlannedAudit] = []
    for steps in targets:
        thought = trace.step(steps[0]).thought
        for name in names:
            kind, selection = resolve(name, thought, seed=seed, trace_id=trace.trace_id, step=steps[0])
            for spec in _links_of(kind, steps, specs, swapped=swapped):
                if spec.unit == "thought":
                    if units and not thought.strip():
                        continue  # a step with no text before its call has no thought unit
                    budget = contradictions_per_step if kind == DECISIVE else 1
                    planned += [
                        PlannedAudit(kind=kind, steps=steps, selection=selection, link=spec.name, variant=v)
                        for v in range(budget)
                    ]
                    continue
                state = spec.unit == "state"
                if state and not units:
                    continue  # a state unit is planned by the default plan only
                variants = range(observation_swaps if kind in OBSERVATIONS else 1)
                planned += [
                    PlannedAudit(
                        kind=kind,
                        steps=steps,
                        selection=selection,
                        link=spec.name,
                        call_index=i,
                        output=state_unit(call, i) if state else output_unit(call, i),
                        variant=v,
                    )
                    for i, call in enumerate(trace.step(steps[0]).tool_calls)
                    if (_writes(spec, call, trace, steps[0]) if state else _outputs(spec, call))
                    for v in variants
                ]
    return planned
