"""The replay invariant: a replay is the recorded run with exactly one thing changed, or it is refused.

The recorder keeps, per step, digests of what the model was given (:class:`~ariadne_lc.trace.ModelInput`: each
message, the system prompt as the middleware stack built it, the tools bound). A replay captures the same for
the first model call after its fork, from the same source, and :func:`check_input` compares the two before
anything is scored:

- **a re-run of step k** (the ``thought->action`` link): the model must get step k's recorded input with exactly
  one message more at the end, the contradicted thought as the start of its reply;
- **a replay from step k** (a contradicted thought, a swapped tool output, early answering): the model's first
  call after the fork is step k + 1's; every message before step k's own message must be the recorded one, the
  number of messages must match, and from step k's message on only the edited messages (the contradicted thought,
  the swapped tool output) may differ in content, never in kind, and an edited thought's message must differ (else
  the edit was not applied); where the step's calls were replaced (derived from the new thought, cut for early
  answering), what follows its message may differ in number too.

Anything else means the fork did not rebuild the state the recorded run had (a channel that keeps deltas copied
without its history, a reducer, a middleware that built another prompt): :class:`ReplayInputMismatchError`
names what differed, and the audit is recorded as failed, never scored.

Where the next call's record does not name the step's message (no message ids), the step's message is found by
position: right after the messages the step's own call read; where it holds no message of the step at all (a node
that builds its own prompt without the thought), its whole input must be the recorded one. Where no later call was
recorded at the step's level (the run ended, or another agent took over), the replay's first call is checked
against the step's own call: the same messages before the step's, then anything. What cannot be checked at all is
:class:`Unchecked`, with the reason: a step without a recorded input (older traces, LangGraph Server threads), a
replay whose calls were seen by another source than the record's and differ from it, a next call that holds none of
the step's messages and differs from its record. Such a replay gives no verdict unless the user allows it
(``Auditor(allow_unchecked=True)``), and every report counts the verdicts it gave. A replay that made no model call
after the fork (its answer comes from graph code, from the state) is checked on that state: the isolated thread's
checkpoint at the fork must hold the messages the production checkpoint held (:func:`same_messages`), so the fork
rebuilt the state the recorded run had. The tools bound are compared where both sides saw them (a chat model that
keeps no ``tools`` in its parameters shows none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ariadne_lc.errors import ReplayInputMismatchError
from ariadne_lc.trace import MessageDigest, ModelInput, Step, Trace

__all__ = [
    "UNCHECKED",
    "CheckTarget",
    "Unchecked",
    "changed_target",
    "check_input",
    "next_step",
    "same_messages",
    "target_of",
]


@dataclass(frozen=True, slots=True)
class CheckTarget:
    """What the first model call of a replay must have been given."""

    recorded: ModelInput
    """The recorded input it is checked against."""
    edit: int
    """Messages before this position must be the recorded ones."""
    extra: int
    """Messages the replayed call has beyond the recorded ones (the prefill of a re-run)."""
    loose_tail: bool
    """The messages after the edit may differ in number too (the step's calls were replaced or cut)."""
    where: str
    """Which recorded call this is, for the error."""
    changes: int = 0
    """How many messages from :attr:`edit` on may differ in content: the edited thoughts' messages and the swapped
    tool outputs; every other message must be the recorded one."""
    edited: bool = False
    """The message at :attr:`edit` must differ: the thought was edited, and a replay that shows the recorded message
    there did not apply the edit."""
    source_only: bool = False
    """Only the messages before :attr:`edit` are compared (the fallback when no later call was recorded)."""
    unlocated: bool = False
    """The next call's record holds no message of the edited step (by id or position): its whole input must be the
    recorded one (the edit did not reach it: a node that builds its own prompt); a difference cannot be told from
    the edit (a middleware that rewrote the history), so it is :class:`Unchecked`, not a mismatch."""


UNCHECKED: Final = "unchecked replay"
"""How an audit whose replay could not be checked says so (its ``inconclusive_reason`` starts with it)."""


@dataclass(frozen=True, slots=True)
class Unchecked:
    """A replay whose input could not be compared with a recorded one, and why."""

    why: str

    def reason(self) -> str:
        """Why such an audit gives no verdict, and what to do."""
        return (
            f"{UNCHECKED}: {self.why}; nothing checks that it is the recorded run with one thing changed, so no "
            "verdict (Auditor(allow_unchecked=True) scores it, counted apart in every report)"
        )


def next_step(trace: Trace, step: Step) -> Step | None:
    """The step that made the first model call after ``step``'s: the next one of the same graph level."""
    return next(
        (s for s in trace.steps[step.index + 1 :] if s.checkpoint.checkpoint_ns == step.checkpoint.checkpoint_ns),
        None,
    )


def target_of(
    trace: Trace,
    steps: Sequence[Step],
    *,
    rerun: bool = False,
    new_calls: bool = False,
    edited: Sequence[Step] = (),
    swapped: int = 0,
) -> CheckTarget | Unchecked:
    """The check of a replay from ``steps`` (the latest last) or a re-run of the one step (:class:`Unchecked`: nothing
    recorded to check against). ``new_calls``: the latest step's calls were replaced (derived from the new thought,
    or cut for early answering), so what follows its message may differ in number too. ``edited``: the steps whose
    thought the replay changed (their messages must differ); ``swapped``: how many tool outputs it served changed."""
    step = steps[-1]
    if step.model_input is None:
        return Unchecked(f"step {step.index} recorded no model input (an older trace, or a LangGraph Server thread)")
    if rerun:
        recorded = step.model_input
        return CheckTarget(recorded, len(recorded.messages), 1, False, f"step {step.index}'s model call")
    after = next_step(trace, step)
    if after is None or after.model_input is None:  # the run ended, or another agent took over: the step's own prefix
        first = steps[0].model_input or step.model_input
        where = f"step {steps[0].index}'s model call (no later call was recorded at its level: what it read)"
        return CheckTarget(first, len(first.messages), 0, True, where, source_only=True)
    recorded = after.model_input
    ids = {s.message_id for s in steps if s.message_id}
    read = recorded.digests()
    edit = next((i for i, m in enumerate(read) if m.id in ids), None)
    if edit is None and steps[0].model_input is not None:
        at = len(steps[0].model_input.messages)  # by position: right after what the step's own call read
        if at < len(read) and read[at].kind == "ai":
            edit = at
    if edit is None:  # the next call does not read the step's message: all of its input must be the recorded one
        where = f"step {after.index}'s model call (it does not read step {step.index}'s message)"
        return CheckTarget(recorded, len(recorded.messages), 0, False, where, unlocated=True)
    changes = len(steps) + swapped
    first_edited = any(s.message_id == steps[0].message_id for s in edited)
    return CheckTarget(recorded, edit, 0, new_calls, f"step {after.index}'s model call", changes, first_edited)


def changed_target(
    after: Step, message_id: str | None, *, changes: int, edited: bool, what: str
) -> CheckTarget | Unchecked:
    """The check of a re-run of step ``after`` whose state was changed from message ``message_id`` on (``what`` it
    reads there, for the error): its recorded input with ``changes`` messages changed from that message on, the
    message itself changed when ``edited``; :class:`Unchecked` when nothing recorded tells where that message is."""
    recorded = after.model_input
    if recorded is None:
        return Unchecked(f"step {after.index} recorded no model input (an older trace, or a LangGraph Server thread)")
    at = next((i for i, m in enumerate(recorded.digests()) if message_id and m.id == message_id), None)
    if at is None:
        return Unchecked(f"step {after.index}'s recorded input does not hold {what}")
    where = f"step {after.index}'s model call (it reads {what})"
    return CheckTarget(recorded, at, 0, False, where, changes=changes, edited=edited)


def same_messages(a: ModelInput, b: ModelInput) -> bool:
    """Whether two digests of message lists hold the same messages in the same order (ids and contents)."""
    return a.messages == b.messages


def _first(replayed: Sequence[ModelInput], source: str) -> ModelInput | None:
    return next((i for i in replayed if i.source == source), None)


def check_input(target: CheckTarget | Unchecked, replayed: Sequence[ModelInput]) -> Unchecked | None:
    """Compare the replay's first model call with ``target``: ``None`` when it was checked, else why it could not be.

    Raises:
        ReplayInputMismatchError: the replayed call's input is not the recorded one but for the edit.
    """
    if isinstance(target, Unchecked):
        return target
    got = _first(replayed, target.recorded.source)
    if got is None and not replayed:
        return Unchecked("the replay made no model call")
    cross = got is None  # seen by another source than the record's (an agent recorded by its middleware, replayed
    got = got or replayed[0]  # on a graph without it): compared all the same, and a difference is no proof
    want, read = target.recorded.digests(), got.digests()
    problem = _difference(want, read, target)
    tools = target.recorded.tools
    if problem is None and tools is not None and got.tools is not None and tools != got.tools:
        problem = f"the tools bound differ: recorded {list(tools)}, replayed {list(got.tools)}"
    if problem is not None and cross:
        return Unchecked(
            f"the replay's model call was seen by {got.source}, the record's by {target.recorded.source}, and they "
            f"differ ({problem}): audit with the graph the run was recorded with (its middleware included)"
        )
    if problem is not None and target.unlocated:
        return Unchecked(
            f"{target.where} differs from the recorded one ({problem}), and it holds no message of the edited step "
            "to tell the edit from another change (a middleware that rewrote the history)"
        )
    if problem is not None:
        system = bool(want and read) and want[0].kind == read[0].kind == "system" and want[0].digest != read[0].digest
        cause = (
            "The system prompt is not the recorded one: the auditor's graph is not the graph the run was recorded "
            "under (a changed prompt, or middleware that writes the prompt differently); audit with the recorded "
            "graph"
            if system
            else "The fork did not rebuild the state the recorded run had (a channel copied without its history, a "
            "reducer or a middleware that builds the model's input from something the copy lacks)"
        )
        raise ReplayInputMismatchError(
            f"the replay did not give the model the recorded input of {target.where}: {problem}. {cause}, so nothing "
            "was scored"
        )
    return None


def _difference(want: Sequence[MessageDigest], got: Sequence[MessageDigest], target: CheckTarget) -> str | None:
    for i in range(min(target.edit, len(want))):
        if i >= len(got):
            return f"it got {len(got)} messages where the recorded call got {len(want)}"
        if got[i].kind != want[i].kind or got[i].digest != want[i].digest:
            return (
                f"message {i} differs (recorded a {want[i].kind} message, replayed a {got[i].kind} message"
                f"{' with other content' if got[i].kind == want[i].kind else ''})"
            )
    if target.loose_tail:
        if target.source_only:
            return None if len(got) >= target.edit else f"it got {len(got)} messages, fewer than the step's call read"
        return None if len(got) > target.edit else f"it got {len(got)} messages, none after the edited one"
    if len(got) != len(want) + target.extra:
        return f"it got {len(got)} messages where {len(want) + target.extra} were expected"
    differing = []
    for i in range(target.edit, len(want)):
        if got[i].kind != want[i].kind:
            return f"message {i} is a {got[i].kind} message where the recorded call had a {want[i].kind} message"
        if got[i].digest != want[i].digest:
            differing.append(i)
    if target.edited and target.edit not in differing:
        return f"message {target.edit}, the edited thought's, is the recorded one: the edit was not applied"
    if len(differing) > target.changes:
        extra = [i for i in differing if i != target.edit][target.changes - (target.edit in differing) :]
        shown = extra[0] if extra else differing[-1]
        return (
            f"message {shown} ({got[shown].kind}) differs in content, and only the {target.changes} edited "
            "message(s) may"
        )
    return None
