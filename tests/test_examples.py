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


def test_the_dpo_example_runs_as_written_on_the_pairs_of_an_audit(tmp_path: Path) -> None:
    """docs/cli.md's recipe: ``ariadne-lc export``, then ``python examples/dpo_from_audits.py preferences.jsonl
    --steps 2``: TRL's DPO trainer takes the pairs and SmolLM2-135M trains two steps on CPU. About 50 to 70 s: it loads
    the model twice (DPO's reference is a frozen copy) and runs two real steps; a subprocess, so torch's memory goes
    with it."""
    import ast
    import os
    import subprocess

    from typer.testing import CliRunner

    from ariadne_lc import Auditor, SQLiteResultStore
    from ariadne_lc.cli import app
    from tests.subagent_plain import ask_researcher, main_model, run

    graph, store = run(main_model("ask_researcher", "researcher"), ask_researcher, "record",
                       [f"What is the price of the {item}?" for item in ("plum", "pear")])  # fmt: skip
    Auditor(graph, result_store=SQLiteResultStore(tmp_path / "results.db")).audit_batch(store.list_traces())
    out = CliRunner().invoke(app, ["export", str(tmp_path / "results.db"), "--output", str(tmp_path)])
    assert out.exit_code == 0 and "0 preference pair" not in out.output, out.output

    ran = subprocess.run(
        [sys.executable, str(EXAMPLES / "dpo_from_audits.py"), str(tmp_path / "preferences.jsonl"), "--steps", "2"],
        capture_output=True, text=True, timeout=600, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    metrics = ast.literal_eval(ran.stdout.strip().splitlines()[-1])
    assert metrics["step"] == 2 and 0.0 < metrics["loss"] < 10.0 and "rewards/margins" in metrics
