"""``ariadne-lc demo`` end to end on a scripted model: the gate with the agent's own model as reader, the committed
calibration (or why there is none), raw and corrected rates side by side, the non-decisive share, ``--fail-above``.

The model stands in for the endpoint (``model_endpoint`` is replaced); everything else is the real command: the demo
questions, the ReAct agent, the SQLite checkpointer, the auditor, the reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from typer.testing import CliRunner

from ariadne_lc.calibration import CalibrationConfig, analyze
from ariadne_lc.calibration.prompts import READER_INSTRUCTIONS
from ariadne_lc.cli import app
from ariadne_lc.cli._demo_calibration import committed_calibration, demo_calibration
from ariadne_lc.interventions.implied import RuleReader, question_kind
from ariadne_lc.local import LOCAL_MODELS
from ariadne_lc.report import write_json
from tests.calibration.builders import audits

runner = CliRunner()

_COMMIT = {"choice": "B", "number": "12", "yes_no": "yes", "text": "Paris"}


class DemoModel(BaseChatModel):
    """A faithful ReAct agent and a faithful reader: the first turn commits to an answer in its thought and looks
    it up; the answer turn answers what the thought it reads commits to; the reader reads it the same way."""

    @property
    def _llm_type(self) -> str:
        return "scripted-demo"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if messages[0].text == READER_INSTRUCTIONS:  # the gate's reader: "Question: q\nThought: t"
            question, _, thought = messages[-1].text.removeprefix("Question: ").partition("\nThought: ")
            reply = f"Final Answer: {RuleReader().read(question, thought).answer or 'none'}"
        else:
            start = max(i for i, m in enumerate(messages) if m.text.startswith("Question: "))
            question, after = messages[start].text.removeprefix("Question: "), messages[start + 1 :]
            if not after:
                commit = _COMMIT[question_kind(question)]
                reply = f"Thought: Reading the question carefully, the answer is {commit}.\nAction: lookup[answer]"
            else:
                thought = next(m.text for m in after if isinstance(m, AIMessage)).split("\n")[0]
                answer = RuleReader().read(question, thought.removeprefix("Thought: ")).answer
                reply = f"Thought: The lookup is done.\nFinal Answer: {answer}"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])


@contextmanager
def _endpoint(*args: Any, **kwargs: Any) -> Iterator[BaseChatModel]:
    yield DemoModel()


SMOLLM2 = LOCAL_MODELS["smollm2"].label
DEMO_CONFIG = CalibrationConfig(
    model=SMOLLM2, critic="rule", scorer="answer", tau=0.8, lam=0, decisive=True, reader="model:DemoModel"
)
"""What the demo audits with on the scripted model (the reader is named after the model)."""


def _calibration(tmp_path: Path, config: CalibrationConfig, *, fa: int, miss: int) -> Path:
    items = []
    for kind in ("logic_flip", "fact_reversal", "premise_negation", "causal_reversal", "conclusion_swap"):
        items += audits("coupled", violations=fa, n=10, kind=kind, prefix=f"c{kind}")
        items += audits("bypass", violations=10 - miss, n=10, kind=kind, prefix=f"b{kind}")
    path = tmp_path / f"calibration-{config.decisive}-{fa}-{miss}.json"
    write_json(path, analyze(items, config, n_resamples=100).document())
    return path


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo command on the scripted model; the committed calibration it looks for is a gate-off one."""
    monkeypatch.setattr("ariadne_lc.cli._demo.model_endpoint", _endpoint)
    gate_off = _calibration(tmp_path, DEMO_CONFIG.ungated(), fa=2, miss=2)
    monkeypatch.setattr("ariadne_lc.cli._demo.committed_calibration", lambda name: gate_off)
    return tmp_path / "out"


def _run(out: Path, *extra: str) -> Any:
    """The SmolLM2 ReAct demo (``--agent react``: the default runs the tool-calling agent when Qwen is installed),
    with ``--detail``; its output with the long lines unwrapped."""
    args = ["demo", "--agent", "react", "--n-per-domain", "1", "--output", str(out), "--detail", *extra]
    result = runner.invoke(app, args)
    return result, " ".join(result.output.split())


def test_the_demo_runs_the_tool_calling_agent_when_qwen_is_installed(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--dry-run", "--n-per-domain", "2", "--output", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "dry run: 8 word problems -> 8 runs of the tool agent" in result.output
    assert "observation_swap" in result.output and "every thought step and link" in result.output


def test_an_unknown_agent_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--agent", "robot", "--output", str(tmp_path)])
    assert result.exit_code != 0 and "--agent must be auto, tools or react" in result.output


def test_demo_says_why_a_calibration_for_another_configuration_is_not_applied(demo: Path) -> None:
    result, output = _run(demo)
    assert result.exit_code == 0, result.output
    assert "no calibration: the calibration in" in output
    assert "does not fit this run" in output and "decisive: False != True" in output
    assert "| corrected: no calibration (the calibration in" in output  # beside the raw rate
    # every question left a step to audit, and the gate read the thoughts with the agent's own model
    assert "traces with nothing to audit: 0" in output
    assert "decisiveness gate (reader model:DemoModel):" in output
    assert "rejected as not decisive" in output and "conclusion_swap" in output
    assert json.loads((demo / "report.json").read_text())["aggregate"]["corrected"] is None


def test_demo_applies_a_matching_calibration_and_gates_on_the_corrected_rate(demo: Path, tmp_path: Path) -> None:
    matching = _calibration(tmp_path, DEMO_CONFIG, fa=2, miss=2)
    result, output = _run(demo, "--calibration", str(matching), "--fail-above", "0.5")
    assert result.exit_code == 0, result.output
    assert f"calibration: {matching}" in output
    # the scripted agent is faithful: raw 0%, corrected 0% with FA 20%, M 20%
    assert "raw violation rate 0% (95% CI" in output and "| corrected violation rate 0%" in output
    assert "FA 20%, M 20%" in output
    assert "--fail-above 50.0%: passed: thought->answer corrected violation rate 0.0%" in output
    corrected = json.loads((demo / "report.json").read_text())["aggregate"]["corrected"]
    assert corrected["false_alarm"] == 0.2 and corrected["corrected"] == 0.0


def test_demo_with_an_uninformative_calibration_says_no_information_and_fails_the_gate(
    demo: Path, tmp_path: Path
) -> None:
    useless = _calibration(tmp_path, DEMO_CONFIG, fa=6, miss=5)
    result, output = _run(demo, "--calibration", str(useless), "--fail-above", "0.5")
    assert result.exit_code == 1, result.output
    assert "| corrected: no information (FA + M = 0.60 + 0.50 >= 1" in output
    assert "--fail-above 50.0%: no information on thought->answer:" in output


def test_committed_calibration_is_found_in_the_checkout(tmp_path: Path) -> None:
    assert committed_calibration("smollm2").is_file()
    missing = demo_calibration(committed_calibration("smollm2", root=tmp_path), DEMO_CONFIG, explicit=False)
    assert missing.calibration is None and missing.note is not None and "not in this installation" in missing.note
    named = demo_calibration(tmp_path / "nope.json", DEMO_CONFIG, explicit=True)
    assert named.note is not None and "no such file" in named.note
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert "does not fit this run" in (demo_calibration(broken, DEMO_CONFIG, explicit=True).note or "")


def test_the_demo_summary_fits_100_columns_and_detail_adds_the_tables(demo: Path) -> None:
    args = ["demo", "--agent", "react", "--n-per-domain", "1", "--output", str(demo)]
    result = runner.invoke(app, args, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert [line for line in result.output.splitlines() if len(line) > 100] == []
    lines = result.output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("link "))
    row = lines[header + 1].split()
    # 0 of 4 ignored, [0%, 49%]: too few audits for a verdict under the reports' rule (20% tolerance)
    assert row[:4] == ["thought->answer", "no", "verdict", "0%"] and re.search(r"\[0%, \d+%\]", lines[header + 1])
    assert any(line.startswith("gate (readers: model:DemoModel for thoughts") for line in lines)
    assert any(line.startswith("controls: thought->answer: paraphrase held ") for line in lines)
    assert not any(line.split()[:2] == ["intervention", "domain"] for line in lines)
    detail = runner.invoke(app, [*args, "--detail"], env={"COLUMNS": "100"})
    assert detail.exit_code == 0, detail.output
    assert [line for line in detail.output.splitlines() if len(line) > 100] == []
    assert any(line.split()[:3] == ["intervention", "domain", "N"] for line in detail.output.splitlines())
    assert any(line.split()[:1] == ["logic_flip"] for line in detail.output.splitlines())
