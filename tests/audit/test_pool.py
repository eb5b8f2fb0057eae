"""The reference pool of recorded values (ariadne_lc.audit._pool): frozen, built once, bounded in UTF-8 bytes."""

from __future__ import annotations

import pytest

from ariadne_lc.audit import RecordedValues
from ariadne_lc.audit._pool import KEPT_PER_TOOL, MAX_VALUE_BYTES, run_values
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.trace import Step, ToolCall, Trace


def _trace(i: int, *outputs: str, tool: str | None = None) -> Trace:
    calls = [
        ToolCall(id=f"c{i}-{j}", name=tool or f"tool{i % 3}", args={"q": f"arg {i}-{j}", "n": j, "flag": True},
                 output=output)
        for j, output in enumerate(outputs)
    ]  # fmt: skip
    step = Step(index=0, node="agent", thought="", tool_calls=tuple(calls))
    return Trace(trace_id=f"t{i}", steps=(step,), final_answer="x")


def test_the_pool_is_bounded_in_utf8_bytes_and_keeps_the_newest() -> None:
    pool = RecordedValues.from_traces([_trace(i, f"{i:04d}" * 250) for i in range(100)], max_bytes=10_000)
    assert 0 < pool.nbytes <= pool.max_bytes == 10_000
    kept = [o for tool in ("tool0", "tool1", "tool2") for o in pool.outputs(tool)]
    assert 0 < len(kept) < 10 and f"{99:04d}" * 250 in kept  # the newest stay
    accented = RecordedValues.from_traces([_trace(0, "é" * 1000)])
    assert accented.nbytes == 2000 + sum(len(a.encode()) for a in accented.arguments("tool0"))  # 2 bytes per é
    assert RecordedValues.from_traces([_trace(0, "é" * 1000)], max_bytes=1999).outputs("tool0") == ()
    assert RecordedValues.from_traces([_trace(0, "é" * (MAX_VALUE_BYTES // 2 + 1))]).outputs("tool0") == ()
    with pytest.raises(ConfigurationError, match="max_bytes must not be negative"):
        RecordedValues.from_traces([], max_bytes=-1)


def test_the_pool_is_frozen_and_keeps_a_bounded_number_of_values_per_tool() -> None:
    pool = RecordedValues.from_traces([_trace(i, f"out {i}", tool="t") for i in range(KEPT_PER_TOOL + 5)])
    assert len(pool.outputs("t")) == KEPT_PER_TOOL and pool.outputs("t")[-1] == f"out {KEPT_PER_TOOL + 4}"
    assert "arg 0-0" not in pool.arguments("t") and "True" not in pool.arguments("t")  # oldest out; a flag is no value
    assert not hasattr(pool, "observe")  # nothing an audit could fill it with
    assert pool.outputs("unknown") == () and "1 tools" in repr(pool)


def test_a_unit_s_values_are_its_own_run_s_first_then_the_pool_s() -> None:
    run = _trace(1, "rainy", "sunny", "rainy", tool="sky")
    pool = RecordedValues.from_traces([_trace(2, "foggy", "sunny", tool="sky")])
    assert run_values(run, "sky", pool=None) == ("rainy", "sunny")  # in the order of the calls, once each
    assert run_values(run, "sky", pool=pool) == ("rainy", "sunny", "foggy")
    assert run_values(run, "sky", pool=pool, arguments=True)[:3] == ("arg 1-0", "0", "arg 1-1")


def test_acknowledgements_are_never_values_and_a_hand_offs_value_is_what_came_back() -> None:
    """A swap that finds no value in an output falls back on the tool's other values: a hand-off's "Successfully
    transferred" or a to-do list's "Updated todo list" must never be one (was: a supervisor's worker result swapped
    for the hand-off's acknowledgement); a hand-off's value is what the agent handed to returned."""
    from ariadne_lc.trace import HandedBack

    back = HandedBack(text="Apples cost 3 dollars.", message_id="m", trace_id="t~1")
    ack = "Successfully transferred to shopper"
    steps = (
        Step(index=0, node="agent", tool_calls=(
            ToolCall(id="h1", name="transfer_to_shopper", output=ack, handed_back=back),
            ToolCall(id="h2", name="transfer_to_shopper", output=ack),
            ToolCall(id="w", name="write_todos", args={"todos": []}, output="Updated todo list to []"),
        )),
    )  # fmt: skip
    trace = Trace(trace_id="t", steps=steps, final_answer="done")
    pool = RecordedValues.from_traces([trace])
    assert pool.outputs("transfer_to_shopper") == ("Apples cost 3 dollars.",) and pool.outputs("write_todos") == ()
    assert run_values(trace, "transfer_to_shopper", pool=None) == ("Apples cost 3 dollars.",)
