"""The ``observation->answer`` audit's own parts: the swap of one tool output, and the verdict read on its values.

A swapper that knows the run (:class:`~ariadne_lc.interventions.values.ValueSwapper`, the default) is given the
recorded answer, the tool's other recorded outputs and its schema's values (:class:`SwapContext`), and says how the
answer is to be read: ``value`` (the answer repeated the old value: it should now hold the new one) or ``move`` (any
reading answer must move). Such a swap is decisive by construction, and its gate record says so (reader ``values``).
A swapper that knows neither (``swap`` only: :class:`~ariadne_lc.interventions.observations.RuleObservationSwapper`,
a user's) goes through the reader gate as before. Written as flows (:mod:`ariadne_lc._twin`).
"""

from __future__ import annotations

import functools
from typing import Any, cast

from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._pool import RecordedValues, schema_values
from ariadne_lc.interventions.observations import ObservationEdit, ObservationSwapper
from ariadne_lc.interventions.values import SwapContext, held, replace_value
from ariadne_lc.records import Decisiveness, ObservationSwap, Tracking
from ariadne_lc.scoring import Similarity
from ariadne_lc.trace import ToolCall, Trace

__all__ = ["aswap_with", "context_edit", "legacy_edit", "value_decisiveness", "value_verdict"]


def context_edit(
    swapper: Any, trace: Trace, call: ToolCall, *, answer: str, pool: RecordedValues, tool: Any, variant: int
) -> Flow[ObservationEdit]:
    """The ``variant``-th swap of ``call``'s output by a swapper that reads the run (``swap_in_context``)."""
    output = call.output or ""
    others = tuple(o for o in pool.outputs(call.name) if o.strip() != output.strip())
    context = SwapContext(
        query=trace.query,
        tool=call.name,
        answer=answer,
        others=others,
        allowed=() if tool is None else schema_values(tool),
        variant=variant,
    )

    async def in_context() -> ObservationEdit:
        aswap = getattr(swapper, "aswap_in_context", None)
        if aswap is not None:
            return cast(ObservationEdit, await aswap(output, context))
        return cast(ObservationEdit, swapper.swap_in_context(output, context))

    edit: ObservationEdit = yield Call(functools.partial(swapper.swap_in_context, output, context), in_context)
    return edit


def legacy_edit(
    swapper: ObservationSwapper, output: str, variant: int, *, query: str, tool: str
) -> Flow[ObservationEdit]:
    """The ``variant``-th other value of ``output`` by a swapper that knows only the output: its edit applied
    ``variant + 1`` times in a row (so that any swapper gives several plausible values); one that repeats a value
    already tried (a yes/no flipped twice) is no new value."""
    seen = {output}
    current = output
    edit = ObservationEdit(swapped=None, method="no swap")
    for n in range(variant + 1):
        got: ObservationEdit = yield Call(
            functools.partial(swapper.swap, current, query=query, tool=tool),
            functools.partial(aswap_with, swapper, current, query=query, tool=tool),
        )
        edit = got
        if edit.swapped is None:
            return edit
        if edit.swapped in seen:
            return ObservationEdit(
                swapped=None, method=f"other value {n + 1} repeats one already tried ({edit.swapped!r})"
            )
        seen.add(edit.swapped)
        current = edit.swapped
    return edit


async def aswap_with(swapper: ObservationSwapper, output: str, *, query: str, tool: str) -> ObservationEdit:
    """``swapper.aswap`` when it has one, else its sync ``swap``."""
    aswap = getattr(swapper, "aswap", None)
    if aswap is not None:
        return cast(ObservationEdit, await aswap(output, query=query, tool=tool))
    return swapper.swap(output, query=query, tool=tool)


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
