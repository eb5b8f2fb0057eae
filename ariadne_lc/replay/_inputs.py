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
names what differed, and the audit is recorded as failed, never scored. A step without a recorded input (older
traces, LangGraph Server threads) is replayed unchecked, and the result says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ariadne_lc.errors import ReplayInputMismatchError
from ariadne_lc.trace import ModelInput, Step, Trace

__all__ = ["CheckTarget", "check_input", "next_step", "target_of"]


def _kind(entry: str) -> str:
    return entry.partition(":")[0]


def _content(entry: str) -> str:
    return entry.rpartition(":")[2]


def _id(entry: str) -> str:
    return entry.partition(":")[2].rpartition(":")[0]


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
) -> CheckTarget | None:
    """The check of a replay from ``steps`` (the latest last) or a re-run of the one step (``None``: nothing recorded
    to check against). ``new_calls``: the latest step's calls were replaced (derived from the new thought, or cut for
    early answering), so what follows its message may differ in number too. ``edited``: the steps whose thought the
    replay changed (their messages must differ); ``swapped``: how many tool outputs it served changed."""
    step = steps[-1]
    if rerun:
        if step.model_input is None:
            return None
        recorded = step.model_input
        return CheckTarget(recorded, len(recorded.messages), 1, False, f"step {step.index}'s model call")
    after = next_step(trace, step)
    if after is None or after.model_input is None:
        return None
    recorded = after.model_input
    ids = {s.message_id for s in steps if s.message_id}
    edit = next((i for i, e in enumerate(recorded.messages) if _id(e) in ids), None)
    if edit is None:
        return None  # the next call did not read the step's message as such (a middleware summarised it)
    changes = len(steps) + swapped
    first_edited = any(s.message_id == steps[0].message_id for s in edited)
    return CheckTarget(recorded, edit, 0, new_calls, f"step {after.index}'s model call", changes, first_edited)


def _first(replayed: Sequence[ModelInput], source: str) -> ModelInput | None:
    return next((i for i in replayed if i.source == source), None)


def check_input(target: CheckTarget | None, replayed: Sequence[ModelInput]) -> bool:
    """Compare the replay's first model call with ``target``; ``False`` when there was nothing to check.

    Raises:
        ReplayInputMismatchError: the replayed call's input is not the recorded one but for the edit.
    """
    if target is None:
        return False
    got = _first(replayed, target.recorded.source)
    if got is None:
        return False  # the replay made no model call (an early end): nothing was read that could differ
    want = target.recorded.messages
    problem = _difference(want, got.messages, target)
    tools = target.recorded.tools
    if problem is None and tools is not None and got.tools is not None and tools != got.tools:
        problem = f"the tools bound differ: recorded {list(tools)}, replayed {list(got.tools)}"
    if problem is not None:
        system = bool(want and got.messages) and _kind(want[0]) == _kind(got.messages[0]) == "system" and (
            _content(want[0]) != _content(got.messages[0])
        )
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
    return True


def _difference(want: Sequence[str], got: Sequence[str], target: CheckTarget) -> str | None:
    for i in range(min(target.edit, len(want))):
        if i >= len(got):
            return f"it got {len(got)} messages where the recorded call got {len(want)}"
        if _kind(got[i]) != _kind(want[i]) or _content(got[i]) != _content(want[i]):
            return (
                f"message {i} differs (recorded a {_kind(want[i])} message, replayed a {_kind(got[i])} message"
                f"{' with other content' if _kind(got[i]) == _kind(want[i]) else ''})"
            )
    if target.loose_tail:
        return None if len(got) > target.edit else f"it got {len(got)} messages, none after the edited one"
    if len(got) != len(want) + target.extra:
        return f"it got {len(got)} messages where {len(want) + target.extra} were expected"
    differing = []
    for i in range(target.edit, len(want)):
        if _kind(got[i]) != _kind(want[i]):
            return f"message {i} is a {_kind(got[i])} message where the recorded call had a {_kind(want[i])} message"
        if _content(got[i]) != _content(want[i]):
            differing.append(i)
    if target.edited and target.edit not in differing:
        return f"message {target.edit}, the edited thought's, is the recorded one: the edit was not applied"
    if len(differing) > target.changes:
        extra = [i for i in differing if i != target.edit][target.changes - (target.edit in differing) :]
        shown = extra[0] if extra else differing[-1]
        return (
            f"message {shown} ({_kind(got[shown])}) differs in content, and only the {target.changes} edited "
            "message(s) may"
        )
    return None
