"""Pins the public surface: additions are deliberate, removals are breaking."""

import ariadne_lc

EXPECTED = {
    "Aggregate",
    "AnswerMatchScorer",
    "AriadneCallbackHandler",
    "AriadneError",
    "AuditReport",
    "AuditResult",
    "Auditor",
    "ByLengthScorer",
    "CheckpointRef",
    "ConfigurationError",
    "ControlType",
    "CriticError",
    "EmbeddingScorer",
    "FirstConclusiveScorer",
    "InMemoryResultStore",
    "InMemoryTraceStore",
    "Intervention",
    "InterventionType",
    "LLMCritic",
    "LLMJudge",
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "NumericAnswerScorer",
    "PlaceboComparison",
    "Redundancy",
    "ReplayDidNotFinishError",
    "ReplayError",
    "ReplayResult",
    "Replayer",
    "ResultStore",
    "RuleCritic",
    "RuleParaphraser",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "Similarity",
    "SimilarityMetrics",
    "SpanRef",
    "Step",
    "StepContribution",
    "StepNotFoundError",
    "StoreError",
    "ToolCall",
    "ToolPolicy",
    "Trace",
    "TraceError",
    "TraceNotFoundError",
    "TraceStore",
    "__version__",
    "select_steps",
}


def test_all_is_sorted_complete_and_importable() -> None:
    assert ariadne_lc.__all__ == sorted(ariadne_lc.__all__)
    assert set(ariadne_lc.__all__) >= EXPECTED
    for name in ariadne_lc.__all__:
        assert getattr(ariadne_lc, name) is not None


def test_every_error_is_an_ariadne_error() -> None:
    for name in ariadne_lc.__all__:
        obj = getattr(ariadne_lc, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, ariadne_lc.AriadneError)
