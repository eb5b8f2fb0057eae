"""The auditor's option objects: their checks, their defaults (the auditor's), and the flat keywords as shorthands."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import ariadne_lc
from ariadne_lc import Auditor, ConfigurationError, InMemoryResultStore, RuleCritic
from ariadne_lc.audit import (
    DEFAULT_INTERVENTION,
    DEFAULT_MIN_THOUGHT_CHARS,
    DEFAULT_OUTPUT,
    DEFAULT_REPLAY,
    DEFAULT_SCORING,
    AuditorOptions,
    FinishedAudit,
    InterventionOptions,
    OutputOptions,
    ReplayOptions,
    ResultStoreSink,
    ScoringOptions,
    SpanSink,
)
from ariadne_lc.audit._gate import DEFAULT_GATE_ATTEMPTS
from ariadne_lc.interventions import RuleParaphraser
from ariadne_lc.interventions.implied import CachedReader
from ariadne_lc.replay import DEFAULT_MAX_TURNS, ToolPolicy
from ariadne_lc.scoring import DEFAULT_LAMBDA, DEFAULT_TAU, AnswerMatchScorer
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_RRR_THRESHOLD, DEFAULT_SEED
from tests.helpers import MODELS, build_agent, record

GROUPS = (InterventionOptions, ReplayOptions, ScoringOptions, OutputOptions)


class Collect:
    def __init__(self) -> None:
        self.seen: list[FinishedAudit] = []

    def accept(self, finished: FinishedAudit) -> None:
        self.seen.append(finished)


def _graph() -> Any:
    return build_agent(MODELS["unfaithful"](), "hand", InMemorySaver())


def test_the_flat_keywords_are_exactly_the_objects_fields_each_in_one_object() -> None:
    names = [f.name for group in GROUPS for f in dataclasses.fields(group)]
    assert len(names) == len(set(names))
    assert set(AuditorOptions.__annotations__) == set(names)
    assert AuditorOptions.__required_keys__ == frozenset()


def test_the_defaults_are_the_auditors_of_before() -> None:
    assert tuple(g() for g in GROUPS) == (DEFAULT_INTERVENTION, DEFAULT_REPLAY, DEFAULT_SCORING, DEFAULT_OUTPUT)
    assert dataclasses.asdict(DEFAULT_INTERVENTION) == {
        "budget": 3.0,
        "critic": None,
        "paraphraser": None,
        "swapper": None,
        "observation_swaps": 1,
        "recorded_values": None,
        "contradictions_per_step": 1,
        "thought_similarity": None,
        "min_thought_chars": DEFAULT_MIN_THOUGHT_CHARS,
        "seed": DEFAULT_SEED,
        "decisive": True,
        "reader": None,
        "action_reader": None,
        "gate_attempts": DEFAULT_GATE_ATTEMPTS,
    }
    assert dataclasses.asdict(DEFAULT_REPLAY) == {
        "tool_policy": ToolPolicy.RECORDED,
        "safe_tools": (),
        "tool_node": None,
        "max_turns": DEFAULT_MAX_TURNS,
        "tool_calls": "recorded",
        "tool_call_deriver": None,
        "allow_graph_change": False,
        "allow_unchecked": False,
        "agents": None,
    }
    assert dataclasses.asdict(DEFAULT_SCORING) == {
        "scorer": None,
        "tau": DEFAULT_TAU,
        "lam": DEFAULT_LAMBDA,
        "min_strength": None,
        "answer_extractor": None,
        "confidence": DEFAULT_CONFIDENCE,
        "rrr_threshold": DEFAULT_RRR_THRESHOLD,
    }
    assert dataclasses.asdict(DEFAULT_OUTPUT) == {
        "tracer_provider": None,
        "logger_provider": None,
        "evaluation_events": ("span", "log"),
        "capture_content": None,
        "redact": None,
        "result_store": None,
        "score_writers": (),
        "sinks": (),
    }


def test_an_auditor_of_no_options_resolves_the_defaults() -> None:
    auditor = Auditor(_graph())
    assert isinstance(auditor.critic, RuleCritic) and isinstance(auditor.paraphraser, RuleParaphraser)
    assert isinstance(auditor.scorer, AnswerMatchScorer) and isinstance(auditor.reader, CachedReader)
    assert (auditor.tau, auditor.lam, auditor.min_strength) == (DEFAULT_TAU, DEFAULT_LAMBDA, None) and auditor.decisive
    assert (auditor.seed, auditor.confidence) == (DEFAULT_SEED, DEFAULT_CONFIDENCE)
    assert auditor.rrr_threshold == DEFAULT_RRR_THRESHOLD and auditor.min_thought_chars == DEFAULT_MIN_THOUGHT_CHARS
    assert auditor.allow_graph_change is False
    replayer = auditor.replayer
    assert replayer.tool_policy is ToolPolicy.RECORDED and replayer.safe_tools == frozenset()
    assert replayer.max_turns == DEFAULT_MAX_TURNS
    assert auditor.replay_mode == "recorded" and [type(s) for s in auditor.sinks] == [SpanSink]


@pytest.mark.parametrize(
    ("group", "options", "match"),
    [
        (ScoringOptions, {"tau": 1.5}, r"tau must be in \[0, 1\], got 1.5"),
        (ScoringOptions, {"tau": -0.1}, "tau must be"),
        (ScoringOptions, {"lam": -1}, "lam must not be negative"),
        (ScoringOptions, {"min_strength": 2.0}, "min_strength must be in .* pass None"),
        (ScoringOptions, {"confidence": 1.0}, r"confidence must be in \(0, 1\)"),
        (ScoringOptions, {"confidence": 0.0}, "confidence"),
        (ScoringOptions, {"rrr_threshold": 1.2}, "rrr_threshold"),
        (InterventionOptions, {"gate_attempts": 0}, "gate_attempts must be at least 1.*decisive=False"),
        (InterventionOptions, {"action_reader": object()}, "action_reader must be an ActionReader"),
        (ReplayOptions, {"tool_policy": "sometimes"}, "unknown tool_policy 'sometimes'"),
        (ReplayOptions, {"max_turns": 0}, "max_turns must be at least 1"),
        (ReplayOptions, {"tool_calls": "invented"}, "unknown tool_calls"),
        (ReplayOptions, {"tool_calls": "rederive"}, "needs a tool_call_deriver"),
        (ReplayOptions, {"tool_call_deriver": lambda thought, context: []}, "only used with tool_calls='rederive'"),
        (OutputOptions, {"sinks": [object()]}, r"a sink needs an accept\(finished\) method, got object"),
    ],
)
def test_each_object_checks_its_values_where_it_is_built(group: Any, options: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        group(**options)
    with pytest.raises(ConfigurationError, match=match):  # the flat shorthand goes through the same check
        Auditor(_graph(), **options)
    with pytest.raises(ConfigurationError, match=match):  # and so does a replace
        dataclasses.replace(group(), **options)


def test_the_objects_are_frozen_keyword_only_and_keep_immutable_copies() -> None:
    tools = ["divide", "add"]
    replay = ReplayOptions(tool_policy="live", safe_tools=(t for t in tools))
    assert replay.tool_policy is ToolPolicy.LIVE and replay.safe_tools == ("divide", "add")
    sink = Collect()
    sinks: list[Any] = [sink]
    output = OutputOptions(sinks=sinks)
    sinks.append(object())  # the caller's list changing later does not reach the options
    assert output.sinks == (sink,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        replay.max_turns = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        ScoringOptions(0.5)  # type: ignore[misc]
    assert hash(ScoringOptions(tau=0.5)) == hash(ScoringOptions(tau=0.5))


def test_an_auditor_of_objects_is_the_auditor_of_flat_keywords() -> None:
    graph = _graph()
    trace = record(graph)
    store = InMemoryResultStore()
    flat = Auditor(
        graph,
        tau=0.6,
        lam=3,
        min_strength=0.1,
        decisive=False,
        seed=7,
        confidence=0.9,
        rrr_threshold=0.2,
        min_thought_chars=5,
        tool_policy="live",
        safe_tools=["divide"],
        max_turns=9,
        allow_graph_change=True,
        result_store=store,
    )
    grouped = Auditor(
        graph,
        intervention=InterventionOptions(decisive=False, seed=7, min_thought_chars=5),
        replay=ReplayOptions(tool_policy="live", safe_tools=["divide"], max_turns=9, allow_graph_change=True),
        scoring=ScoringOptions(tau=0.6, lam=3, min_strength=0.1, confidence=0.9, rrr_threshold=0.2),
        output=OutputOptions(result_store=store),
    )
    for auditor in (flat, grouped):
        assert (auditor.tau, auditor.lam, auditor.min_strength, auditor.decisive, auditor.reader) == (
            0.6,
            3,
            0.1,
            False,
            None,
        )
        assert (auditor.seed, auditor.confidence, auditor.rrr_threshold, auditor.min_thought_chars) == (7, 0.9, 0.2, 5)
        assert auditor.replayer.tool_policy is ToolPolicy.LIVE and auditor.replayer.safe_tools == frozenset({"divide"})
        assert auditor.replayer.max_turns == 9 and auditor.allow_graph_change is True
        assert [type(s) for s in auditor.sinks] == [SpanSink, ResultStoreSink]
    (a,) = flat.audit(trace, interventions=["logic_flip"])
    (b,) = grouped.audit(trace, interventions=["logic_flip"])
    assert (a.status, a.label, a.phi, a.violation) == (b.status, b.label, b.phi, b.violation)
    assert a.violation  # the unfaithful agent's answer does not follow its thought
    assert len(store.list_results()) == 2


def test_flat_keywords_fill_in_an_object_given_for_other_fields() -> None:
    sink = Collect()
    auditor = Auditor(
        _graph(), scoring=ScoringOptions(tau=0.5), lam=4, output=OutputOptions(sinks=[sink]), capture_content=False
    )
    assert (auditor.tau, auditor.lam) == (0.5, 4)
    assert auditor.sinks[-1] is sink and auditor.spans.capture_content is False


def test_an_option_given_twice_names_both() -> None:
    graph = _graph()
    with pytest.raises(ConfigurationError, match=r"tau is given twice: scoring=ScoringOptions\(tau=0.5\) and tau=0.6"):
        Auditor(graph, scoring=ScoringOptions(tau=0.5), tau=0.6)
    with pytest.raises(ConfigurationError, match=r"decisive is given twice: intervention=InterventionOptions\("):
        Auditor(graph, intervention=InterventionOptions(decisive=False), decisive=False)
    with pytest.raises(ConfigurationError, match="tool_policy is given twice"):
        Auditor(graph, replay=ReplayOptions(tool_policy="live"), tool_policy="recorded")


def test_a_keyword_that_is_no_option_is_a_type_error() -> None:
    graph = _graph()
    with pytest.raises(TypeError, match="unexpected keyword argument 'taus'"):
        Auditor(graph, taus=0.5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'interventions'"):  # kinds go to audit()
        Auditor(graph, interventions=["logic_flip"])  # type: ignore[call-arg]


def test_an_object_in_the_wrong_place_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="scoring must be a ScoringOptions, got ReplayOptions"):
        Auditor(_graph(), scoring=ReplayOptions())  # type: ignore[arg-type]


def test_the_objects_are_exported_where_the_auditor_is() -> None:
    for group in GROUPS:
        assert getattr(ariadne_lc, group.__name__) is group
        assert getattr(ariadne_lc.audit, group.__name__) is group
