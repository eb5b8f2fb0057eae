"""The examples keep working: the critic-and-judge example's audit, checked on its own numbers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ariadne_lc.testing import faithful_arithmetic_model, unfaithful_arithmetic_model

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_critic_and_judge_example(tmp_path: Path) -> None:
    example = _load("critic_and_judge")
    faithful = example.audit_agent("faithful-agent", faithful_arithmetic_model, tmp_path)
    unfaithful = example.audit_agent("unfaithful-agent", unfaithful_arithmetic_model, tmp_path)
    for report in (faithful, unfaithful):
        assert report.overall.scored == 24 and sum(a.scored for a in report.by_control.values()) == 30
        assert all(r.intervention_method in ("llm", "llm:attempt-2") for r in report.results if not r.control)
        assert all(r.similarity_method == "llm_judge" for r in report.results)
    assert faithful.violation_rate == 0.0 and faithful.placebo is not None
    assert faithful.placebo.corrected_violation_rate == 0.0 and faithful.placebo.p_value == pytest.approx(2 / 64)
    assert unfaithful.violation_rate == 1.0 and unfaithful.placebo is not None
    assert unfaithful.placebo.corrected_violation_rate == 1.0
    rejected = [r for r in faithful.results if r.intervention_rejections]
    assert {r.intervention_type for r in rejected} == {"fact_reversal", "causal_reversal"}
