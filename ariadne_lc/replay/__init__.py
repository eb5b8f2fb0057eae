"""Fork the user's own graph at a recorded step, substitute the thought, and run on to a new answer.

How (all verified on langgraph 1.2, see DESIGN.md):

1. Find the checkpoint *before* the step: in the step's checkpoint namespace, the snapshot whose
   pending tasks include the task id the recorder saw. For a step inside a subgraph (any depth),
   the same is done at every level of its task path (``parent:<task>|...|model:<task>``): at each
   enclosing level, the checkpoint before the task that ran the subgraph. The history is only read.
2. Copy those checkpoints raw (values, channel versions, ids) into a fresh thread of a separate
   in-memory saver, dropping the pending writes of the tasks on the path (so they run again) and
   keeping the others. Kept ids mean LangGraph derives the same task ids, hence the same subgraph
   namespaces: the copy resumes into each subgraph where the step was taken, as after an interrupt.
   Write the step's own AI message with the thought replaced (same id, tool calls kept) as the
   step's node, in its namespace. The edited reasoning goes where the model put its own
   (``reasoning_content``, inside a ``<think>`` block; :mod:`ariadne_lc._thoughts`), so the graph
   reads the message in its own format. The production thread's head and history stay exactly as they were.
3. Resume. Under the ``recorded`` tool policy no tool node runs: the isolated copy of the graph has
   a breakpoint before every tool node, subgraphs included, and at each one we answer the calls
   ourselves (a call identical to a recorded one gets the recorded output, a tool declared safe
   runs live, anything else gets an explicit "unavailable during audit" message and the result is
   flagged) and write the tool messages as that tool node. Side-effecting tools never re-run.
4. Human in the loop: an ``interrupt()`` reached during the replay is resumed with the answer the
   recorded run gave to the same node asking the same thing (``Trace.interrupts``); a question the
   recording never answered ends the replay with :class:`~ariadne_lc.errors.UnansweredInterruptError`.
   A replay never waits for a human.

The control flow is written once, as a :mod:`ariadne_lc._twin` flow yielding LangGraph calls
(:mod:`._ops`); the sync and async methods only choose the driver (``run_sync`` / ``run_async``).

Three variants serve the controls and multi-step interventions:

- **Several steps at once** (:meth:`Replayer.replay_steps`): the fork is the checkpoint before the
  *latest* chosen step; every chosen step's AI message in that state is rewritten in place (same id,
  tool calls and tool outputs kept) and the latest one is written as usual. Steps between them stay
  as recorded, so the replayed context is exactly T_ι(q, K) = {ι(s_i) if i ∈ K else s_i}. (Forking at
  the earliest step would re-sample the steps in between.) The steps must share one (sub)graph.
- **Ablation** is an ordinary replay with an empty thought: the message, its tool calls and their
  recorded outputs stay, only the text is gone.
- **Early answering** (:meth:`Replayer.replay_early_answer`): the run is cut right after step k's
  thought. Its message is written without its tool calls, followed by a human message asking for
  the final answer now, as the tool node, so that the graph's own edge leads back to the model.
  Tool calls after the cut are refused whatever the tool policy, and listed in ``tools_unavailable``.

**The step's own tool calls** (``Replayer(tool_calls="rederive", tool_call_deriver=...)``): the substituted
message's tool calls are replaced by those a deriver (:mod:`._derive`: a function, or a continuation call to a
chat model) derives from the new thought, with new ids, before it is written; the tool policy answers them like
any other call (a call identical to a recorded one gets the recorded output). The default, ``"recorded"``, keeps
the step's calls and outputs. Only the step the replay forks at is re-derived: the earlier steps of a multi-step
intervention keep theirs, whose outputs the later steps were written after.

What LangGraph makes impossible is refused with
:class:`~ariadne_lc.errors.SubgraphNotReplayableError`, naming the case: a subgraph compiled with
``checkpointer=False`` (no history), a graph run by a tool (replays never run tool nodes), a
subgraph with tools called from inside a node's function under the recorded policy (no breakpoint
can be set in it), a subgraph the given graph does not contain.
"""

from ariadne_lc.replay._derive import (
    CONTINUATION_INSTRUCTION,
    ContinuationDeriver,
    DeriveFunction,
    FunctionDeriver,
    StepContext,
    ToolCallDeriver,
)
from ariadne_lc.replay._fork import StateEdit
from ariadne_lc.replay._replayer import Replayer
from ariadne_lc.replay._types import (
    DEFAULT_MAX_TURNS,
    EARLY_ANSWER_INSTRUCTION,
    EARLY_ANSWER_TOOL_MESSAGE,
    UNAVAILABLE_TOOL_MESSAGE,
    ReplayResult,
    ToolPolicy,
)

__all__ = [
    "CONTINUATION_INSTRUCTION",
    "DEFAULT_MAX_TURNS",
    "EARLY_ANSWER_INSTRUCTION",
    "EARLY_ANSWER_TOOL_MESSAGE",
    "UNAVAILABLE_TOOL_MESSAGE",
    "ContinuationDeriver",
    "DeriveFunction",
    "FunctionDeriver",
    "ReplayResult",
    "Replayer",
    "StateEdit",
    "StepContext",
    "ToolCallDeriver",
    "ToolPolicy",
]
