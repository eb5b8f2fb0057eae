"""A replay of what an agent handed back: the result a supervisor's worker or a swarm agent returned, changed where
its caller reads it, and the caller alone run on from its next turn (:attr:`~ariadne_lc.trace.ToolCall.handed_back`).

The caller's state before that turn is copied aside at every graph level with the returned message changed
(:class:`~ariadne_lc.replay._fork.StateEdit`); the agent handed to never runs again (a node that would run it again is
a breakpoint the replay stops at: :meth:`~ariadne_lc.replay.Replayer.isolated_graph` with ``guard``), nor does any
tool; the turn must read its recorded input with that one message changed (the replay invariant).
"""

from __future__ import annotations

from collections.abc import Mapping

from ariadne_lc._twin import Flow
from ariadne_lc.errors import ConfigurationError, NotReplayableError
from ariadne_lc.replay._drive import check_step
from ariadne_lc.replay._fork import StateEdit, copy_levels
from ariadne_lc.replay._inputs import changed_target
from ariadne_lc.replay._run import Replaying, Run
from ariadne_lc.replay._saver import replay_saver
from ariadne_lc.replay._tools import Served
from ariadne_lc.replay._types import ReplayResult
from ariadne_lc.trace import HandedBack, Step, Trace

__all__ = ["handed_back", "handed_back_flow"]


def handed_back(trace: Trace, outputs: Mapping[str, str]) -> tuple[Step, HandedBack, str] | None:
    """The step whose hand-off's result ``outputs`` swaps, that result, and the new one (``None``: none)."""
    for step in trace.steps:
        for call in step.tool_calls:
            text = outputs.get(call.id or "") if call.handed_back is not None else None
            if text is not None and call.handed_back is not None:
                if len(outputs) > 1:
                    raise ConfigurationError("a hand-off's result is swapped alone, never beside other outputs")
                return step, call.handed_back, text
    return None


def handed_back_flow(replayer: Replaying, trace: Trace, step: Step, back: HandedBack, text: str) -> Flow[ReplayResult]:
    """Serve ``text`` as what the agent step ``step`` handed to returned (``back``), and replay the caller alone from
    its next turn: the caller's state before that turn, copied aside with the returned message changed, runs on (the
    agent handed to never runs again); its turn must read the recorded input with that one message changed."""
    after = trace.steps[step.index + 1] if step.index + 1 < len(trace.steps) else None
    if after is None:
        raise NotReplayableError(
            f"step {step.index}'s hand-off has no later turn of its caller in trace {trace.trace_id}: nothing read the "
            "result back"
        )
    check_step(trace, after.index, thought_needed=False)
    levels, _ = yield from replayer.locate(after)
    run = Run(replayer, trace, after, early=False)
    held = next((m for m in levels[-1].before.values["messages"] if m.id == back.message_id), None)
    if held is None:
        raise NotReplayableError(f"the result handed back is not in the state before step {after.index}")
    edit = StateEdit(messages={back.message_id: held.model_copy(update={"content": text})})
    iso_saver = replay_saver()
    copy_levels(levels, iso_saver, run.thread, edit=edit)
    guard: list[str] = []  # the agents handed to: reaching one again would run it (and its tools) for real
    served = Served(trace)
    iso = replayer.isolated_graph(iso_saver, intercept=True, guard=guard, served=served)
    what = "the result handed back"
    target = changed_target(after, back.message_id, changes=1, edited=text != back.text, what=what)
    return (yield from run.on(iso, levels, served, target, intercept=True, forked=None, deriver=None, guard=guard))
