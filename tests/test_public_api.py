"""Pins the public surface: additions are deliberate, removals are breaking."""

import ariadne_lc

EXPECTED = [
    "AnswerMatchScorer",
    "AriadneCallbackHandler",
    "AriadneError",
    "AriadneMiddleware",
    "AuditReport",
    "AuditResult",
    "Auditor",
    "ByLengthScorer",
    "ConfigurationError",
    "ControlType",
    "CriticError",
    "EmbeddingScorer",
    "FirstConclusiveScorer",
    "InMemoryResultStore",
    "InMemoryTraceStore",
    "InterventionOptions",
    "InterventionType",
    "LLMCritic",
    "LLMJudge",
    "MissingExtraError",
    "NoCheckpointerError",
    "NoThoughtError",
    "NotReplayableError",
    "NumericAnswerScorer",
    "OnlineAuditor",
    "OutputOptions",
    "ReplayDidNotFinishError",
    "ReplayError",
    "ReplayInputMismatchError",
    "ReplayOptions",
    "ResultStore",
    "RuleCritic",
    "RuleParaphraser",
    "SQLiteResultStore",
    "SQLiteTraceStore",
    "ScoringOptions",
    "StepNotFoundError",
    "StoreError",
    "Trace",
    "TraceError",
    "TraceNotFoundError",
    "TraceStore",
    "__version__",
    "flush_traces",
    "record",
]
"""What wrapping an agent needs: the handler, the stores, the auditors and their options, critics and scorers, results,
errors."""


def test_all_is_sorted_complete_and_importable() -> None:
    assert ariadne_lc.__all__ == sorted(ariadne_lc.__all__)
    assert ariadne_lc.__all__ == EXPECTED
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


def test_moved_names_live_in_their_modules() -> None:
    """The names that left the top level (House 3) are where the package docstring says."""
    import ariadne_lc.audit
    import ariadne_lc.online
    import ariadne_lc.records
    import ariadne_lc.replay
    import ariadne_lc.scoring
    import ariadne_lc.trace

    homes = {
        ariadne_lc.records: ["Aggregate", "PlaceboComparison", "Redundancy", "SimilarityMetrics", "StepContribution"],
        ariadne_lc.trace: ["CheckpointRef", "SpanRef", "Step", "ToolCall"],
        ariadne_lc.replay: ["ReplayResult", "Replayer", "ToolPolicy"],
        ariadne_lc.audit: ["AuditSink", "select_steps"],
        ariadne_lc.scoring: ["Similarity"],
        ariadne_lc.online: ["JobState", "JobStore", "OnlineStats", "RunFilter", "SQLiteJobStore", "ShutdownReport"],
    }
    for module, names in homes.items():
        for name in names:
            assert name in module.__all__, (module.__name__, name)
            assert not hasattr(ariadne_lc, name) or name in ariadne_lc.__all__, name


def test_version_is_one_value() -> None:
    from ariadne_lc._version import __version__

    assert ariadne_lc.__version__ is __version__ and __version__
