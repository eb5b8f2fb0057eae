"""Pins the public surface: additions are deliberate, removals are breaking."""

import ariadne_lc

EXPECTED = {
    "Aggregate",
    "AnswerMatchScorer",
    "AriadneCallbackHandler",
    "AriadneError",
    "AriadneMiddleware",
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
    "JobState",
    "JobStore",
    "LLMCritic",
    "LLMJudge",
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "NumericAnswerScorer",
    "OnlineAuditor",
    "OnlineStats",
    "PlaceboComparison",
    "Redundancy",
    "ReplayDidNotFinishError",
    "ReplayError",
    "ReplayResult",
    "Replayer",
    "ResultStore",
    "RuleCritic",
    "RuleParaphraser",
    "RunFilter",
    "SQLiteJobStore",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "ShutdownReport",
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
    "record",
    "select_steps",
}


def test_all_is_sorted_complete_and_importable() -> None:
    assert ariadne_lc.__all__ == sorted(ariadne_lc.__all__)
    assert set(ariadne_lc.__all__) >= EXPECTED
    for name in ariadne_lc.__all__:
        assert getattr(ariadne_lc, name) is not None


def test_online_package_names_are_importable() -> None:
    import ariadne_lc.online

    for name in ariadne_lc.online.__all__:
        assert getattr(ariadne_lc.online, name) is not None


def test_every_error_is_an_ariadne_error() -> None:
    for name in ariadne_lc.__all__:
        obj = getattr(ariadne_lc, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, ariadne_lc.AriadneError)
