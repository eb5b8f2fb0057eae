"""Resolving the auditor's options: who reads the gates, which links are audited."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel

from ariadne_lc._fingerprint import differences, graph_fingerprint, prompt_lines, system_prompts_of
from ariadne_lc.errors import ConfigurationError, GraphChangedError
from ariadne_lc.interventions import Critic
from ariadne_lc.interventions.implied import AnswerReader, CachedReader, ModelReader, RuleReader
from ariadne_lc.links import get, names, ordered, registered
from ariadne_lc.records import Link
from ariadne_lc.replay import Replayer
from ariadne_lc.trace import Trace

__all__ = ["Interventions", "check_graph", "resolve_links", "resolve_reader"]

logger = logging.getLogger("ariadne_lc.audit")


def resolve_reader(reader: AnswerReader | BaseChatModel | None, critic: Critic) -> AnswerReader:
    """The gate's reader, cached: the one given (a chat model becomes a :class:`ModelReader`), else the critic's
    model when it has one, else the offline :class:`RuleReader`."""
    if isinstance(reader, CachedReader):
        return reader
    if isinstance(reader, BaseChatModel):
        return CachedReader(ModelReader(reader))
    if reader is not None:
        if not isinstance(reader, AnswerReader):
            raise ConfigurationError(f"reader must be an AnswerReader or a chat model, got {type(reader).__name__}")
        return CachedReader(reader)
    critic_model = getattr(critic, "model", None)
    if isinstance(critic_model, BaseChatModel):
        return CachedReader(ModelReader(critic_model))
    return CachedReader(RuleReader())


Interventions = str | Sequence[str]


def resolve_links(links: Sequence[Link] | None, replayer: Replayer) -> tuple[Link, ...]:
    """The links to audit: those given (validated), else every registered link this auditor can audit (one that
    re-runs a step's model only with a way to do so: :attr:`~ariadne_lc.links.LinkSpec.needs_rerun`)."""
    if links is None:  # a tool-call deriver (graph code) audits the action link when asked to, not by default
        auto = replayer.action_source is not None and replayer.action_source is not replayer.tool_call_deriver
        return tuple(spec.name for spec in registered() if not spec.needs_rerun or auto)
    chosen = (links,) if isinstance(links, str) else tuple(links)
    unknown = [k for k in chosen if k not in names()]
    if unknown or not chosen:
        raise ConfigurationError(f"links must name some of {list(names())}, got {list(chosen)}")
    for name in chosen:
        if get(name).needs_rerun and replayer.action_source is None:
            raise ConfigurationError(
                f"the {name} link needs a way to re-run the step's model: record the agent with "
                "AriadneMiddleware (create_agent), or pass Auditor(graph, model=<the agent's chat model>)"
            )
    return tuple(ordered(chosen))


def check_graph(graph: Any, trace: Trace, *, allow_change: bool) -> None:
    """Refuse ``trace`` if it was recorded under another graph than ``graph`` (unless ``allow_change``).

    Raises:
        GraphChangedError: The fingerprints differ; the error lists what changed.
    """
    if trace.graph is None or allow_change:
        return
    if trace.graph.partial:
        _check_prompt(graph, trace)
        return
    try:
        current = graph_fingerprint(graph)
    except Exception:  # a graph the fingerprint cannot read: say so, do not block the audit on it
        logger.warning(
            "ariadne: cannot fingerprint the auditor's graph; trace %s is audited unchecked",
            trace.trace_id,
            exc_info=True,
        )
        return
    changed = differences(trace.graph, current)
    if changed:
        raise GraphChangedError(
            f"trace {trace.trace_id} was recorded under another graph than the auditor's: "
            f"{'; '.join(changed)}. A replay would measure the new graph, not the recorded run; "
            "pass Auditor(..., allow_graph_change=True) to audit it anyway",
            changed,
        )


def _check_prompt(graph: Any, trace: Trace) -> None:
    """A trace recorded by ``AriadneMiddleware`` knows the system prompt its model was given: the graph's own must be
    in it, line by line (middleware listed before ``AriadneMiddleware`` may add lines, never change them). A
    sub-agent's or a worker's run is replayed on its own graph, so only a run of this graph's own top-level agent node
    is checked (its steps at the top level, in the node that holds the prompt)."""
    assert trace.graph is not None
    prompts = system_prompts_of(graph)
    nodes = {s.node for s in trace.steps}
    if trace.parent is not None or len(nodes) != 1 or any(s.checkpoint.checkpoint_ns for s in trace.steps):
        return
    prompt = prompts.get(next(iter(nodes)))
    if prompt is not None and not set(prompt_lines(prompt)) <= set(trace.graph.system_lines):
        raise GraphChangedError(
            f"trace {trace.trace_id} was recorded under another graph than the auditor's: the system prompt changed "
            "(a line of the graph's system prompt is not in the prompt the recorded run's model was given). A replay "
            "would measure the new prompt, not the recorded run; pass Auditor(..., allow_graph_change=True) to audit "
            "it anyway",
            ["system prompt changed"],
        )
