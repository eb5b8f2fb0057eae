from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.ablation import AblationRunner, answers_match, extract_answer, format_prompt, load_suite
from ariadne_lc.errors import ConfigurationError, SuiteFormatError
from ariadne_lc.testing import ScriptedChatModel

SUITE = Path(__file__).parents[2] / "examples" / "task_suites" / "math_reasoning.jsonl"


def last_number_model() -> ScriptedChatModel:
    """Answers with the last number of the reasoning it was given: only the final step matters."""

    def script(messages: list[BaseMessage]) -> AIMessage:
        reasoning = messages[-1].text.split("Reasoning:")[1].split("Using the reasoning")[0]
        numbers = re.findall(r"\d+(?:\.\d+)?", reasoning)
        return AIMessage(content=f"The answer is {numbers[-1]}." if numbers else "I don't know.")

    return ScriptedChatModel(script=script)


def test_load_suite_and_prompts() -> None:
    items = load_suite(SUITE)
    assert [i.item_id for i in items] == ["math-001", "math-002", "math-003"]
    assert items[0].reference_cot[3].text.startswith("She sells")
    prompt = format_prompt(items[0], skip=1)
    assert "Step 1: Janet starts with 16 eggs." in prompt and "She eats 3" not in prompt
    assert "Step 3: She sells" in prompt


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"item_id": "a", "prompt": "p", "ground_truth": "1"}', "reference_cot: Field required"),
        ('{"item_id": "a", "prompt": "p", "reference_cot": [], "ground_truth": "1"}', "at least one step"),
    ],
)
def test_malformed_lines_are_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"item_id": "ok", "prompt": "p", "reference_cot": ["s"], "ground_truth": 1}) + "\n" + line + "\n"
    )
    with pytest.raises(SuiteFormatError, match=re.escape(str(path)) + ":2"):
        load_suite(path)
    with pytest.raises(SuiteFormatError, match=re.escape(message.split("|")[-1])):
        load_suite(path)
    with pytest.raises(SuiteFormatError, match="no such task-suite file"):
        load_suite(tmp_path / "missing.jsonl")


def test_answer_extraction_compares_answers_not_outputs() -> None:
    assert answers_match("So she makes $18 every day.", "18")
    assert not answers_match("So she makes $17 every day.", "18")
    assert answers_match("The answer is (C).", "C")
    assert answers_match("I believe it is Paris, France.", "Paris")
    assert extract_answer("1. First\n2. The total is 42") == "42"


def test_ccs_and_rrr_on_a_model_that_reads_only_the_last_step() -> None:
    items = load_suite(SUITE)
    report = AblationRunner(last_number_model(), metric="answer_delta").run(items)
    assert report.model_calls == 3 + 4 + 3 + 4
    assert report.baseline_accuracy == 1.0
    for item in report.items:
        last = item.steps[-1]
        assert last.ccs == 1.0 and item.ranking()[0].step_index == last.step_index
        assert all(s.ccs == 0.0 for s in item.steps[:-1])
    assert report.rrr == pytest.approx(8 / 11)
    low, high = report.rrr_ci or (0, 0)
    assert low < 8 / 11 < high
    accuracy = AblationRunner(last_number_model()).run(items)  # accuracy_delta: right -> wrong when the last step goes
    assert [s.ccs for s in accuracy.items[0].steps] == [0.0, 0.0, 0.0, 1.0]


def test_dry_run_and_budgets() -> None:
    items = load_suite(SUITE)
    model = last_number_model()
    plan = AblationRunner(model, price_per_1k_tokens=0.01).plan(items)
    assert plan.model_calls == 14 and plan.prompt_tokens > 0 and plan.estimated_cost is not None
    assert model.calls == 0
    partial = AblationRunner(model, max_calls=9).run(items)
    assert partial.partial and partial.model_calls == 5 + 4 and len(partial.items) == 2
    assert partial.stopped_reason == "max_calls=9 reached after 2 of 3 items"
    with pytest.raises(ConfigurationError, match="price_per_1k_tokens"):
        AblationRunner(model, max_cost=1.0)


def test_failed_calls_are_recorded_not_scored() -> None:
    def script(messages: list[BaseMessage]) -> AIMessage:
        if "She bakes" not in messages[-1].text:
            raise ConnectionError("endpoint down")
        return AIMessage(content="The answer is 18.")

    report = AblationRunner(ScriptedChatModel(script=script)).run(load_suite(SUITE)[:1])
    (item,) = report.items
    failed = [s for s in item.steps if s.ccs is None]
    assert [s.step_index for s in failed] == [2] and "endpoint down" in (failed[0].error or "")
    assert report.rrr is not None  # the other three steps are still scored
