"""FaithCheck-style step ablation over JSONL task suites: CCS per step and the redundancy ratio RRR."""

from ariadne_lc.ablation.runner import (
    AblationPlan,
    AblationReport,
    AblationRunner,
    CcsMetric,
    ItemResult,
    StepResult,
    answers_match,
    estimate_ablation,
    extract_answer,
    format_prompt,
)
from ariadne_lc.ablation.suite import CotStep, TaskItem, iter_suite, load_suite

__all__ = [
    "AblationPlan",
    "AblationReport",
    "AblationRunner",
    "CcsMetric",
    "CotStep",
    "ItemResult",
    "StepResult",
    "TaskItem",
    "answers_match",
    "estimate_ablation",
    "extract_answer",
    "format_prompt",
    "iter_suite",
    "load_suite",
]
