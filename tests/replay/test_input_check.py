"""The replay invariant as documented (issue 42 item 1): every message's content is compared but the edited ones, an
edit that was not applied is caught, the paths that had no record to compare with are checked another way or give an
``unchecked`` result that is no verdict unless allowed, and every summary counts the verdicts it allowed."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from ariadne_lc import AriadneMiddleware, Auditor, InMemoryTraceStore
from ariadne_lc.coverage import coverage, coverage_line
from ariadne_lc.errors import ReplayInputMismatchError
from ariadne_lc.replay._inputs import CheckTarget, Unchecked, check_input, target_of
from ariadne_lc.stats import build_report
from ariadne_lc.testing import lookup, lookup_model, lookup_question
from ariadne_lc.trace import ModelInput, Trace

RECORDED = ModelInput(messages=("system::s", "human:h:q", "ai:a1:t1", "tool:o1:v1", "ai:a2:t2", "tool:o2:v2"))


def _target(**kw: Any) -> CheckTarget:
    return CheckTarget(RECORDED, 2, 0, False, "step 2's model call", **kw)


def _got(*messages: str, source: str = "callback") -> list[ModelInput]:
    return [ModelInput(messages=messages, source=source)]


def test_a_later_message_that_differs_in_content_is_a_mismatch() -> None:
    """Was: after the edit only message kinds were compared, so a replay whose every later message differed passed."""
    edited = ("system::s", "human:h:q", "ai:a1:T1", "tool:o1:v1", "ai:a2:t2", "tool:o2:v2")
    assert check_input(_target(changes=1, edited=True), _got(*edited)) is None
    later = ("system::s", "human:h:q", "ai:a1:T1", "tool:o1:v1", "ai:a2:XX", "tool:o2:v2")
    with pytest.raises(ReplayInputMismatchError, match=r"message 4 .* differs in content"):
        check_input(_target(changes=1, edited=True), _got(*later))


def test_an_edit_that_was_not_applied_is_a_mismatch() -> None:
    with pytest.raises(ReplayInputMismatchError, match="the edit was not applied"):
        check_input(_target(changes=1, edited=True), _got(*RECORDED.messages))


def test_a_swapped_output_may_differ_and_only_it() -> None:
    swapped = ("system::s", "human:h:q", "ai:a1:t1", "tool:o1:V1", "ai:a2:t2", "tool:o2:v2")
    assert check_input(_target(changes=1), _got(*swapped)) is None
    both = ("system::s", "human:h:q", "ai:a1:t1", "tool:o1:V1", "ai:a2:t2", "tool:o2:V2")
    with pytest.raises(ReplayInputMismatchError, match="only the 1 edited"):
        check_input(_target(changes=1), _got(*both))


def test_what_cannot_be_checked_says_why() -> None:
    assert check_input(_target(), []) == Unchecked("the replay made no model call")
    assert check_input(_target(), _got(*RECORDED.messages, source="middleware")) is None  # compared across sources
    later = ("system::s", "human:h:q", "ai:a1:t1", "tool:o1:v1", "ai:a2:XX", "tool:o2:v2")
    other = check_input(_target(), _got(*later, source="middleware"))
    assert isinstance(other, Unchecked) and "seen by middleware" in other.why


def _recorded() -> tuple[Any, Trace]:
    store = InMemoryTraceStore()
    graph = create_agent(lookup_model(3), [lookup], checkpointer=InMemorySaver(), middleware=[AriadneMiddleware(store)])
    graph.invoke({"messages": [("user", lookup_question(3, 1))]}, {"configurable": {"thread_id": "t"}})
    (trace,) = store.list_traces()
    return graph, trace


def test_ids_missing_are_found_by_position_and_a_last_step_by_its_own_input() -> None:
    _, trace = _recorded()
    step, after = trace.steps[0], trace.steps[1]
    assert after.model_input is not None and step.model_input is not None
    anonymous = after.model_input.model_copy(update={"messages": tuple(
        ":".join((e.split(":")[0], "", e.split(":")[-1])) for e in after.model_input.messages
    )})  # fmt: skip
    stripped = trace.model_copy(update={"steps": (step, after.model_copy(update={"model_input": anonymous}),
                                                  *trace.steps[2:])})  # fmt: skip
    target = target_of(stripped, [step], edited=[step])
    assert isinstance(target, CheckTarget) and target.edit == len(step.model_input.messages)
    alone = trace.model_copy(update={"steps": (step,)})  # no later call recorded at its level
    prefix = target_of(alone, [step])
    assert isinstance(prefix, CheckTarget) and prefix.source_only and prefix.edit == len(step.model_input.messages)


def test_a_trace_without_recorded_inputs_gives_no_verdict_unless_allowed_and_is_counted() -> None:
    graph, trace = _recorded()
    old = trace.model_copy(update={"steps": tuple(s.model_copy(update={"model_input": None}) for s in trace.steps)})
    results = Auditor(graph).audit(old)
    replayed = [r for r in results if r.link in ("thought->answer", "observation->answer") and not r.control]
    assert replayed and all(r.status != "scored" for r in replayed)
    assert any((r.inconclusive_reason or "").startswith("unchecked replay: step") for r in replayed)
    allowed = Auditor(graph, allow_unchecked=True).audit(old)
    scored = [r for r in allowed if r.status == "scored" and not r.control]
    assert scored and all(r.input_checked is False for r in scored if r.link != "thought->action")
    cov = coverage(allowed)
    assert cov.unchecked == sum(r.input_checked is False for r in scored) > 0
    assert f"{cov.unchecked} verdicts from unchecked replays" in coverage_line(cov)
    assert build_report(allowed).by_link["observation->answer"].unchecked > 0
    checked = [r for r in Auditor(graph).audit(trace) if r.status == "scored" and r.link != "thought->action"]
    assert checked and all(r.input_checked for r in checked)  # the recorded trace: every replay checked
