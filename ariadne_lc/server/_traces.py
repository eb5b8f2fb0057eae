"""Traces read off a server thread's checkpoint history: one per user turn, no recording needed.

Each snapshot of the history lists the tasks that ran from it, with their ids and what each wrote
(``result``). A user turn starts at an ``input`` checkpoint (the ``__start__`` task carries the input)
and runs until the next one. Its steps are the AI messages its tasks wrote, in order, each located by
the task that wrote it (``node:<task id>``, the same reference the recorder keeps) and by the id of
the checkpoint before it. A turn that paused at ``interrupt()`` and was resumed through the API is one
trace; the answers come from the resuming runs' ``command.resume`` when the runs are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc._messages import first_human_text, last_ai_text, messages_in, thought_of, tool_call_record, tool_outputs
from ariadne_lc.server._seed import checkpoint_id_of, from_json
from ariadne_lc.trace import CheckpointRef, InterruptRecord, Step, Trace

__all__ = ["traces_from_history"]


def _turns(chronological: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    turns: list[list[dict[str, Any]]] = []
    for snapshot in chronological:
        if (snapshot.get("metadata") or {}).get("source") == "input" or not turns:
            turns.append([])
        turns[-1].append(snapshot)
    return [t for t in turns if (t[0].get("metadata") or {}).get("source") == "input"]


def _time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def _resume_of(run: Mapping[str, Any] | None, interrupt_id: str | None) -> tuple[bool, Any]:
    command = ((run or {}).get("kwargs") or {}).get("command") or {}
    if "resume" not in command:
        return False, None
    resume = command["resume"]
    if isinstance(resume, dict) and interrupt_id is not None and interrupt_id in resume:
        return True, resume[interrupt_id]
    return True, resume


def _trace(thread_id: str, turn: Sequence[dict[str, Any]], runs: Mapping[str, Mapping[str, Any]]) -> Trace:
    first = turn[0]
    metadata = dict(first.get("metadata") or {})
    written: list[tuple[dict[str, Any], dict[str, Any], list[BaseMessage]]] = []
    query = ""
    interrupts: list[InterruptRecord] = []
    for i, snapshot in enumerate(turn):
        later = turn[i + 1] if i + 1 < len(turn) else None
        resumed_by = runs.get(str(((later or {}).get("metadata") or {}).get("run_id")))
        for task in snapshot.get("tasks") or ():
            if task["name"] == "__start__" and not query:
                query = first_human_text(task.get("result") or {})
            for raised in task.get("interrupts") or ():
                answered, resume = _resume_of(resumed_by, raised.get("id")) if later is not None else (False, None)
                interrupts.append(
                    InterruptRecord(
                        id=raised.get("id"),
                        node=task["name"],
                        task_path=f"{task['name']}:{task['id']}",
                        value=raised.get("value"),
                        answered=answered,
                        resume=resume,
                    )
                )
            if task.get("result") is not None:
                written.append((snapshot, task, list(messages_in(from_json(task["result"])))))
    outputs = tool_outputs(m for _, _, ms in written for m in ms)
    steps: list[Step] = []
    for snapshot, task, messages in written:
        for message in messages:
            if not isinstance(message, AIMessage):
                continue
            steps.append(
                Step(
                    index=len(steps),
                    node=task["name"],
                    langgraph_step=int((snapshot.get("metadata") or {}).get("step", -1)) + 1,
                    thought=thought_of(message),
                    tool_calls=tuple(tool_call_record(tc, outputs) for tc in message.tool_calls),
                    message_id=message.id,
                    checkpoint=CheckpointRef(
                        thread_id=thread_id,
                        task_id=task["id"],
                        task_path=f"{task['name']}:{task['id']}",
                        checkpoint_id=checkpoint_id_of(snapshot),
                    ),
                )
            )
    last = turn[-1]
    finished = not last.get("next")
    answer = last_ai_text(from_json(last.get("values") or {}).get("messages") or ()) if finished else None
    return Trace(
        trace_id=str(metadata.get("run_id") or checkpoint_id_of(first)),
        thread_id=thread_id,
        query=query,
        steps=tuple(steps),
        final_answer=answer,
        interrupted=not finished,
        interrupts=tuple(interrupts),
        agent_name=metadata.get("graph_id"),
        metadata={k: v for k, v in metadata.items() if k in ("graph_id", "assistant_id", "run_id", "user_id")},
        started_at=_time(first.get("created_at")) or datetime.now().astimezone(),
        ended_at=_time(last.get("created_at")),
    )


def traces_from_history(
    thread_id: str, history: Sequence[dict[str, Any]], runs: Iterable[Mapping[str, Any]] = ()
) -> list[Trace]:
    """One :class:`~ariadne_lc.trace.Trace` per user turn of a server thread, oldest first.

    Args:
        thread_id: The thread.
        history: Its top-level snapshots, newest first (:meth:`ServerThreads.history`).
        runs: Its runs (:meth:`ServerThreads.runs`), for the answers given to ``interrupt()``.
    """
    by_run = {str(r.get("run_id")): r for r in runs}
    return [_trace(thread_id, turn, by_run) for turn in _turns(list(reversed(history)))]
