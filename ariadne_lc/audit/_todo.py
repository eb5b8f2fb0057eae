"""The ``todo->action`` link: does the agent do what its to-do list says it will do next (docs/method.md#links)?

A to-do list is a plan. LangChain's ``TodoListMiddleware`` (which deep agents carry) gives the agent a ``write_todos``
tool; the list it writes goes to the ``todos`` state channel, and the agent reads it back in its own call and the
tool's "Updated todo list to [...]" message. The item the agent works on next (the first ``in_progress`` one, else
the first ``pending`` one) says what its next call does.

One audit: the list is edited so that its next item is another one (the next two open items in the other order,
else the next item removed, else the next item rewritten to name another call, as a plan is by a plan swap), kept
only when the action the new next item implies is not the one the old implies
(the ``thought->action`` link's action reader and comparison: an item that names no tool commits to nothing, and no
edit of it is decisive); the edited list is written everywhere the agent reads it (its ``write_todos`` call, the
tool's message, the ``todos`` channel); the model turn after the list is re-run on that state, its calls read and
never run (:meth:`~ariadne_lc.replay.Replayer.derive_next_action`). A violation is a re-run whose calls stayed where
the old list pointed. The ``rerun`` control re-runs the turn on the list as written (the re-run's own noise).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import AIMessage, ToolMessage

from ariadne_lc._twin import Call, Flow
from ariadne_lc.audit._action import ActionGates, action_verdict
from ariadne_lc.audit._decisive import critic_call
from ariadne_lc.audit._outcome import Edits, Outcome, stage_failed
from ariadne_lc.audit._plan import PlannedAudit
from ariadne_lc.interventions import ControlType, Critic, Intervention, InterventionType
from ariadne_lc.interventions.actions import (
    ActionReader,
    ImpliedAction,
    RuleActionReader,
    ToolSpec,
    compatible,
    tool_specs,
)
from ariadne_lc.otel import AuditSpans
from ariadne_lc.records import Decisiveness
from ariadne_lc.replay import Replayer, StateEdit
from ariadne_lc.replay._action import DerivedAction
from ariadne_lc.replay._derive import with_tool_calls
from ariadne_lc.replay._inputs import Unchecked
from ariadne_lc.scoring import Similarity
from ariadne_lc.trace import ToolCall, Trace

__all__ = ["Auditing", "TodoEdit", "next_item", "render", "state_edit", "todo_audit", "todo_edits", "todo_gate"]

_DONE = "completed"
TODOS_CHANNEL = "todos"
"""The state channel ``TodoListMiddleware`` writes the list to."""


@dataclass(frozen=True, slots=True)
class TodoEdit:
    """One edit of a to-do list: the list as edited, and how."""

    todos: tuple[Mapping[str, Any], ...]
    method: str
    """``todo:reorder`` (the next two open items swapped), ``todo:remove`` (the next item dropped),
    ``todo:replace`` (the next item said of another call: a plan swap of its text), or the control's name."""


def _content(item: Any) -> str:
    return str(item.get("content", "")) if isinstance(item, Mapping) else str(item)


def _open(todos: Sequence[Any]) -> list[int]:
    """The positions of the items not done, the one worked on (``in_progress``) first."""
    ongoing = [i for i, t in enumerate(todos) if isinstance(t, Mapping) and t.get("status") == "in_progress"]
    rest = [
        i for i, t in enumerate(todos) if i not in ongoing and not (isinstance(t, Mapping) and t.get("status") == _DONE)
    ]
    return ongoing + rest


def next_item(todos: Sequence[Any]) -> str | None:
    """What the list says the agent does next: its ``in_progress`` item, else its first ``pending`` one."""
    found = _open(todos)
    return _content(todos[found[0]]) if found else None


def render(todos: Sequence[Any]) -> str:
    """The list as one text (an audit record's "thought"): one line per item, its status first."""
    lines = []
    for item in todos:
        status = item.get("status", "pending") if isinstance(item, Mapping) else "pending"
        lines.append(f"[{status}] {_content(item)}")
    return "\n".join(lines)


def todo_edits(todos: Sequence[Any]) -> list[TodoEdit]:
    """The edits that give the list another next item, in the order tried: the next two open items swapped (each
    keeping its place's status), then the next item removed. None when the list has no open item."""
    found = _open(todos)
    if not found:
        return []
    items = [dict(t) if isinstance(t, Mapping) else {"content": str(t)} for t in todos]
    out: list[TodoEdit] = []
    distinct = [i for i in found[1:] if _content(items[i]).strip() != _content(items[found[0]]).strip()]
    if distinct:
        first, second = found[0], distinct[0]
        swapped = [dict(t) for t in items]
        swapped[first]["content"], swapped[second]["content"] = items[second]["content"], items[first]["content"]
        out.append(TodoEdit(tuple(swapped), "todo:reorder"))
    removed = [t for i, t in enumerate(items) if i != found[0]]
    out.append(TodoEdit(tuple(removed), "todo:remove"))
    return out


def _read(reader: ActionReader, query: str, text: str, tools: tuple[ToolSpec, ...]) -> Call[ImpliedAction]:
    aread = getattr(reader, "aread_action", None)
    if aread is None:
        return Call(lambda: reader.read_action(query, text, tools),
                    lambda: asyncio.to_thread(reader.read_action, query, text, tools))  # fmt: skip
    return Call(lambda: reader.read_action(query, text, tools), lambda: aread(query, text, tools))


def _replaced(todos: Sequence[Any], text: str) -> TodoEdit:
    """The list with its next item's content replaced by ``text`` (its status kept)."""
    items = [dict(t) if isinstance(t, Mapping) else {"content": str(t), "status": "pending"} for t in todos]
    items[_open(todos)[0]]["content"] = text
    return TodoEdit(tuple(items), "todo:replace")


def todo_gate(
    reader: ActionReader,
    query: str,
    todos: Sequence[Any],
    tools: tuple[ToolSpec, ...],
    replace: Callable[[str], Call[Intervention]] | None = None,
) -> Flow[tuple[TodoEdit | None, Decisiveness, ImpliedAction | None]]:
    """The first edit of the list (:func:`todo_edits`, then its next item replaced by ``replace``'s edit of it: a
    plan swap) whose next item implies another action than the list's own next item, the gate's record, and the
    action the edit implies (``no_commitment`` when the next item names no action; ``not_decisive`` when no edit
    changes it)."""
    first = next_item(todos) or ""
    before = yield _read(reader, query, first, tools)
    if before.key is None:
        return None, Decisiveness(outcome="no_commitment", reader=before.reader, form="action"), None
    edits, tried, later = todo_edits(todos), 0, replace
    while tried < len(edits) or later is not None:
        if tried == len(edits) and later is not None:  # the list's own edits spent: the item said of another call
            made, later = (yield later(first)), None
            if not made.applicable or not made.intervened or made.intervened.strip() == first.strip():
                break
            edits.append(_replaced(todos, made.intervened))
        edit = edits[tried]
        tried += 1
        after = yield _read(reader, query, next_item(edit.todos) or "", tools)
        if after.key is not None and not compatible(before, after):
            record = Decisiveness(
                outcome="decisive",
                reader=after.reader,
                form="action",
                original_implied=before.key,
                intervened_implied=after.key,
                attempts=tried,
            )
            return edit, record, after
    record = Decisiveness(
        outcome="not_decisive", reader=before.reader, form="action", original_implied=before.key, attempts=tried
    )
    return None, record, None


def state_edit(call: ToolCall, message_id: str | None, edited: Sequence[Mapping[str, Any]]) -> Callable[..., StateEdit]:
    """Given the state before the next model turn, the edit that writes ``edited`` everywhere the agent reads the list
    ``call`` wrote: the call's arguments in its step's message (``message_id``), the tool's message, the channel."""
    old, new = list(call.args.get(TODOS_CHANNEL) or []), [dict(t) for t in edited]

    def edit(values: Mapping[str, Any]) -> StateEdit:
        messages: dict[str, Any] = {}
        for message in values.get("messages", ()):
            if isinstance(message, AIMessage) and message.id == message_id and message.id:
                calls = [
                    {**c, "args": {**c["args"], TODOS_CHANNEL: new}} if c.get("id") == call.id else dict(c)
                    for c in message.tool_calls
                ]
                messages[message.id] = with_tool_calls(message, calls)
            elif isinstance(message, ToolMessage) and message.tool_call_id == call.id and message.id:
                text = message.content if isinstance(message.content, str) else message.text
                said = text.replace(str(old), str(new)) if str(old) in text else f"Updated todo list to {new}"
                messages[message.id] = message.model_copy(update={"content": said})
        return StateEdit(messages=messages, channels={TODOS_CHANNEL: new})

    return edit


class Auditing(Protocol):
    """What the to-do audit needs of the runner (:class:`~ariadne_lc.audit._run.Runner`; declared here: no circle)."""

    @property
    def replayer(self) -> Replayer: ...

    @property
    def spans(self) -> AuditSpans: ...

    @property
    def actions(self) -> ActionGates | None: ...

    @property
    def tau(self) -> float: ...

    @property
    def allow_unchecked(self) -> bool: ...

    def plan_critic(self, trace: Trace, k: int) -> Critic: ...


def todo_audit(runner: Auditing, trace: Trace, planned: PlannedAudit) -> Flow[Outcome]:
    """The ``todo->action`` audit (module docstring): the list edited so that its next item is another, kept when
    the action that item implies changed; the next model turn re-run on the edited state, its calls compared."""
    k = planned.steps[0]
    step = trace.step(k)
    call = step.tool_calls[planned.call_index or 0]
    todos = list(call.args.get("todos") or [])
    original = render(todos)
    made: Edits | None = None
    error: Exception | None = None
    implied: ImpliedAction | None = None
    edit: TodoEdit | None = None
    with runner.spans.stage("intervene") as stage:
        try:
            if planned.kind == ControlType.RERUN:
                edit = TodoEdit(tuple(todos), f"control:{ControlType.RERUN}")
                made = Edits({k: Intervention(type=planned.kind, original=original, intervened=original,
                                             applicable=True, method=edit.method)})  # fmt: skip
            else:
                tools = tool_specs(runner.replayer.tools_for(trace, k))
                reader = runner.actions.reader if runner.actions is not None else RuleActionReader()
                critic = runner.plan_critic(trace, k + 1)  # the next turn's tools and calls

                def replace(text: str) -> Call[Intervention]:
                    return critic_call(critic, text, InterventionType.PLAN_SWAP, trace.query)

                edit, record, implied = yield from todo_gate(reader, trace.query, todos, tools, replace)
                if edit is None:
                    made = Edits({k: Intervention.not_applicable(planned.kind, original, record.outcome)}, {k: record})
                else:  # the kind the decisive selector resolved to: todo_reorder, todo_remove, todo_replace
                    kind = edit.method.replace(":", "_")
                    intervened = Intervention(type=kind, original=original, intervened=render(edit.todos),
                                              applicable=True, method=edit.method)  # fmt: skip
                    made = Edits({k: intervened}, {k: record}, kind=kind)
        except Exception as exc:
            error = stage_failed(stage, "intervention", trace, planned, exc)
    if made is None or not made.applicable or edit is None:
        return Outcome(made=made, error=error)
    derived: DerivedAction | None = None
    replayer, todo = runner.replayer, state_edit(call, step.message_id, edit.todos)
    with runner.spans.stage("replay") as stage:
        try:
            derived = yield Call(
                lambda: replayer.derive_next_action(trace, k, todo, changes=2),
                lambda: replayer.aderive_next_action(trace, k, todo, changes=2),
            )
        except Exception as exc:
            error = stage_failed(stage, "to-do re-run", trace, planned, exc)
    if derived is None:
        return Outcome(made=made, error=error)
    if derived.unchecked is not None and not runner.allow_unchecked:
        reason = Unchecked(derived.unchecked).reason()
        return Outcome(made=made, error=error, derived=derived, unscored=reason)
    verdict = action_verdict(trace.step(k + 1).tool_calls, derived, implied, runner.tau)
    similarity = Similarity(value=verdict.similarity, method="calls")
    return Outcome(made=made, similarity=similarity, error=error, derived=derived, action=verdict)
