"""Going through human-in-the-loop interrupts during a replay with the answers the recording holds.

A replayed interrupt gets a recorded answer when the same node asked the same thing (the
``interrupt()`` value, compared as JSON after dropping tool-call ids, which providers draw afresh
for every call). Recorded answers are used in order and each at most once, so a question asked
twice gets the two answers the human gave. A question the recording never answered stops the replay
with :class:`~ariadne_lc.errors.UnansweredInterruptError`: it never waits for a human.
"""

from __future__ import annotations

from typing import Any

from ariadne_lc.errors import UnansweredInterruptError
from ariadne_lc.recorder._run import jsonable_value
from ariadne_lc.trace import InterruptRecord

__all__ = ["Answers", "pending_interrupts"]


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        call_like = "name" in value and "args" in value
        return {k: _comparable(v) for k, v in value.items() if k != "tool_call_id" and not (call_like and k == "id")}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    return value


class Answers:
    """The recorded answers not used yet."""

    def __init__(self, records: tuple[InterruptRecord, ...]) -> None:
        self._left = [r for r in records if r.answered]
        self.used: list[InterruptRecord] = []

    def take(self, node: str | None, value: Any) -> InterruptRecord:
        """The recorded answer to ``node`` asking ``value``, or :class:`UnansweredInterruptError`."""
        wanted = _comparable(jsonable_value(value))
        for i, record in enumerate(self._left):
            if (record.node is None or node is None or record.node == node) and _comparable(record.value) == wanted:
                self.used.append(self._left.pop(i))
                return record
        raise UnansweredInterruptError(
            f"the replay reached an interrupt of node {node!r} asking {wanted!r}, which the recorded run never "
            "answered (the counterfactual run asked something else); it stops here instead of waiting for a human",
            node=node,
            value=wanted,
        )


def pending_interrupts(snapshot: Any) -> list[tuple[str | None, Any]]:
    """(innermost asking node, Interrupt) for every unanswered interrupt, subgraphs included."""
    found: dict[str, tuple[str | None, Any]] = {}

    def walk(snap: Any) -> None:
        for task in snap.tasks:
            for asked in getattr(task, "interrupts", ()):
                found[asked.id] = (task.name, asked)  # deeper levels are walked later and win
            state = getattr(task, "state", None)
            if state is not None and hasattr(state, "tasks"):
                walk(state)

    walk(snapshot)
    return list(found.values())
