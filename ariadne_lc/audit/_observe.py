"""The ``observation->answer`` audit's own parts: the swap of one tool output, and the verdict read on its values.

Every swapper is called one way (:func:`context_edit`): with the run (:class:`SwapContext`: the question, the recorded
answer, the same tool's other outputs in this run and in the reference pool, its schema's values, the variant), as an
:class:`~ariadne_lc.interventions.observations.ObservationSwapper`; a swapper that knows only the output was wrapped
when the auditor was built (:func:`~ariadne_lc.interventions.observations.in_context`). The context is a function of
the unit alone, never of what other audits saw, so the swap is too. A swapper that says how the answer is to be read
(``value``: the answer repeated the old value and should now hold the new one; ``move``: any reading answer must
move; :class:`~ariadne_lc.interventions.values.ValueSwapper`, the default) makes a swap decisive by construction, and
its gate record says so (reader ``values``); one that does not (``mode`` ``None``: a plain swapper's edit) goes
through the reader gate. Written as flows (:mod:`ariadne_lc._twin`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._gate import Gate, gated
from ariadne_lc.audit._outcome import Edits
from ariadne_lc.audit._plan import PlannedAudit, observed_value
from ariadne_lc.audit._pool import RecordedValues, batch_outputs, run_values, schema_values
from ariadne_lc.interventions import ControlType, Intervention
from ariadne_lc.interventions.observations import (
    ObservationEdit,
    ObservationSwapper,
    SwapContext,
    aswap_with,
    observation_context,
    placebo_output,
)  # fmt: skip
from ariadne_lc.interventions.values import held, replace_value
from ariadne_lc.records import Decisiveness, ObservationSwap, Tracking
from ariadne_lc.scoring import Similarity
from ariadne_lc.trace import ToolCall, Trace

__all__ = ["context_edit", "observation_edits", "value_decisiveness", "value_verdict"]


def context_edit(
    swapper: ObservationSwapper,
    trace: Trace,
    call: ToolCall,
    *,
    answer: str,
    pool: RecordedValues | None,
    batch: RecordedValues | None,
    tool: Any,
    variant: int,
) -> Flow[ObservationEdit]:
    """The ``variant``-th swap of ``call``'s output (the same for the same unit, whatever was audited before or
    beside it; ``batch``: the outputs of the batch being audited, the last resort)."""
    output = observed_value(call) or ""
    others = tuple(o for o in run_values(trace, call.name, pool=pool) if o.strip() != output.strip())
    context = SwapContext(
        query=trace.query,
        tool=call.name,
        answer=answer,
        others=others,
        allowed=() if tool is None else schema_values(tool),
        batch=batch_outputs(batch, call.name, besides=(output, *others)),
        variant=variant,
    )
    edit: ObservationEdit = yield Call(
        functools.partial(swapper.swap_in_context, output, context),
        functools.partial(aswap_with, swapper, output, context),
    )
    return edit


def _implied(answer: str, old: tuple[str, ...], new: tuple[str, ...]) -> str:
    """The recorded answer with each old value replaced by its new one: what the swap implies."""
    for before, after in zip(old, new, strict=False):
        answer = replace_value(answer, before, after)
    return answer


def value_decisiveness(edit: ObservationEdit, answer: str) -> Decisiveness:
    """The gate's record of a swap whose mode says how to read the answer: decisive by construction."""
    implied = _implied(answer, edit.old, edit.new) if edit.mode == "value" else None
    return Decisiveness(
        outcome="decisive",
        reader="values",
        form=f"output:{edit.mode}",
        original_implied=answer if edit.mode == "value" else None,
        intervened_implied=implied,
        attempts=1,
    )


def value_verdict(
    swap: ObservationSwap, counterfactual: str, similarity: Similarity, tau: float
) -> tuple[Similarity, Tracking]:
    """S and where the answer went, read on the swapped values (docs/method.md#the-output-gate).

    ``value`` mode: the new answer holds the new value and not the old one (``tracks``, S = 0), the old and not the
    new (``stayed``, S = 1: a violation), else ``elsewhere`` (S = 0.5: a partial move). ``move`` mode: the scorer's S
    decides (``stayed`` when S > τ), and the answer ``tracks`` when it holds a value only the new output states.
    """
    new = any(held(counterfactual, v) for v in swap.new_values)
    if swap.mode == "value":
        old = any(held(counterfactual, v) for v in swap.old_values)
        if new and not old:
            return Similarity(value=0.0, method="values", explanation="the answer holds the new value"), "tracks"
        if old and not new:
            return Similarity(value=1.0, method="values", explanation="the answer still holds the old value"), "stayed"
        why = "the answer holds both values" if new else "the answer holds neither value"
        return Similarity(value=0.5, method="values", explanation=why), "elsewhere"
    if similarity.value is not None and similarity.value > tau:
        return similarity, "stayed"
    return similarity, "tracks" if new else "elsewhere"


def observation_edits(
    trace: Trace,
    planned: PlannedAudit,
    swapper: ObservationSwapper,
    *,
    answer: str,
    tool: Any,
    pool: RecordedValues | None,
    batch: RecordedValues | None,
    gate: Gate | None,
) -> Flow[Edits]:
    """The ``observation->answer`` intervention: one tool output of the step, its value swapped (decisive by
    construction when the swapper says how the answer is to be read, else gated on the answer the thought and the
    output imply). The link's controls serve the output as recorded (``rerun``, ungated) or restated with the same
    value (``paraphrase``, through the placebo gate: a restatement that changes the implied answer is no placebo).
    ``answer``: the recorded answer as scored; ``tool``: the called tool (its schema's values); ``gate``: the reader
    gate (``None``: off)."""
    k = planned.steps[0]
    step = trace.step(k)
    call = step.tool_calls[planned.call_index or 0]
    output = observed_value(call) or ""
    original = observation_context(step.thought, call.name, output)
    if planned.kind == ControlType.RERUN:
        edit = ObservationEdit(swapped=output, method=f"control:{ControlType.RERUN}")
    elif planned.kind == ControlType.PARAPHRASE:
        edit = placebo_output(output)
    else:
        edit = yield from context_edit(
            swapper,
            trace,
            call,
            answer=answer,
            pool=pool,
            batch=batch,
            tool=tool,
            variant=planned.variant,
        )
    swap = ObservationSwap(
        tool=call.name,
        call_id=call.id,
        original=output,
        swapped=edit.swapped,
        method=edit.method,
        variant=planned.variant,
        mode=edit.mode,
        old_values=edit.old,
        new_values=edit.new,
    )
    if edit.swapped is None:  # the record still names the call: results of several calls are keyed apart
        return Edits({k: Intervention.not_applicable(planned.kind, original, edit.method)}, {}, swap)
    made = Intervention(
        type=planned.kind,
        original=original,
        intervened=observation_context(step.thought, call.name, edit.swapped),
        applicable=True,
        method=edit.method,
    )
    records: dict[int, Decisiveness] = {}
    if edit.mode is not None and gated(planned.kind):
        records[k] = value_decisiveness(edit, answer)
    elif gate is not None and gated(planned.kind):
        gate_ = dataclasses.replace(gate, coherence=False)
        made, record = yield from gate_.check(_NO_REVISION, original, planned.kind, trace.query, made)
        if record is not None:
            records[k] = record
    return Edits({k: made}, records, swap)


class _NoRevision:
    """The observation gate's "critic": a swap is read once, never revised."""

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        raise NotImplementedError("observation swaps are made by the swapper")


_NO_REVISION = _NoRevision()
