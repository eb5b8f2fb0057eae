"""Step ablation over a task suite (FaithCheck's method), against any LangChain chat model.

For each item the model answers once with the whole reference chain of thought (the baseline) and once
per step with that step removed. A step's causal contribution score (CCS) says how much its removal
changed the outcome; the reasoning redundancy ratio (RRR) is the share of steps whose CCS is below a
threshold: decorative steps.

Unlike the reference harness, correctness compares *extracted final answers* (final number, option
letter, else normalised text; see :mod:`ariadne_lc.scoring.answer`) with the ground truth, not whole
free-text outputs (which made accuracy almost always 0 there), and the intervals are filled.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel, ConfigDict

from ariadne_lc.ablation.suite import TaskItem
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.scoring.answer import extract_number, extract_option, normalize_answer
from ariadne_lc.scoring.lexical import jaccard
from ariadne_lc.stats import DEFAULT_RRR_THRESHOLD, wilson_interval

__all__ = [
    "AblationPlan",
    "AblationReport",
    "AblationRunner",
    "CcsMetric",
    "ItemResult",
    "StepResult",
    "answers_match",
    "estimate_ablation",
    "extract_answer",
    "format_prompt",
]

CHARS_PER_TOKEN = 4
"""Token estimate for dry runs and cost budgets (a common rule of thumb for English)."""

CcsMetric = Literal["accuracy_delta", "answer_delta", "token_delta"]


def format_prompt(item: TaskItem, skip: int | None = None) -> str:
    """The question, the chain of thought (without step ``skip``), and a request for the answer alone."""
    steps = [s.text for s in item.reference_cot if s.index != skip]
    lines = [f"Question: {item.prompt}", "", "Reasoning:"]
    lines += [f"Step {i + 1}: {text}" for i, text in enumerate(steps)] or ["(none)"]
    lines += ["", "Using the reasoning above, give only the final answer.", "Final answer:"]
    return "\n".join(lines)


def extract_answer(text: str) -> str:
    """The comparable form of an answer: a number, an option letter, or normalised text."""
    number = extract_number(text)
    if number is not None:
        return f"{number:g}"
    option = extract_option(text)
    if option is not None:
        return option
    return normalize_answer(text)


def answers_match(output: str, ground_truth: str) -> bool:
    """Whether a model output answers ``ground_truth`` (compared as extracted answers)."""
    gold = extract_answer(ground_truth)
    got = extract_answer(output)
    if gold == got:
        return True
    if extract_number(ground_truth) is None and extract_option(ground_truth) is None:
        return bool(gold) and f" {gold} " in f" {normalize_answer(output)} "
    return False


class StepResult(BaseModel):
    """The model's answer with one step removed, and how much that changed."""

    model_config = ConfigDict(frozen=True)

    step_index: int
    output: str | None
    answer: str | None
    correct: bool | None
    accuracy_delta: float | None
    answer_delta: float | None
    token_delta: float | None
    ccs: float | None
    """The chosen metric's value; ``None`` when the call failed."""
    error: str | None = None


class ItemResult(BaseModel):
    """One item: the baseline and every ablation."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    ground_truth: str
    baseline_output: str | None
    baseline_answer: str | None
    baseline_correct: bool | None
    steps: tuple[StepResult, ...]
    error: str | None = None

    def ranking(self) -> list[StepResult]:
        """Steps by decreasing CCS (failed ones last)."""
        return sorted(self.steps, key=lambda s: -1.0 if s.ccs is None else s.ccs, reverse=True)


class AblationPlan(BaseModel):
    """What a run will cost before it spends anything."""

    model_config = ConfigDict(frozen=True)

    items: int
    steps: int
    model_calls: int
    prompt_tokens: int
    max_output_tokens: int
    estimated_cost: float | None


class AblationReport(BaseModel):
    """Per-item CCS and the aggregate RRR, with intervals."""

    model_config = ConfigDict(frozen=True)

    metric: CcsMetric
    threshold: float
    items: tuple[ItemResult, ...]
    model_calls: int
    partial: bool
    """True when a budget stopped the run before every item was done."""
    stopped_reason: str | None = None

    @property
    def scored_steps(self) -> list[StepResult]:
        return [s for item in self.items for s in item.steps if s.ccs is not None]

    @property
    def rrr(self) -> float | None:
        steps = self.scored_steps
        return sum(s.ccs is not None and s.ccs < self.threshold for s in steps) / len(steps) if steps else None

    @property
    def rrr_ci(self) -> tuple[float, float] | None:
        steps = self.scored_steps
        return wilson_interval(sum(s.ccs is not None and s.ccs < self.threshold for s in steps), len(steps))

    @property
    def baseline_accuracy(self) -> float | None:
        judged = [i.baseline_correct for i in self.items if i.baseline_correct is not None]
        return sum(judged) / len(judged) if judged else None

    @property
    def baseline_accuracy_ci(self) -> tuple[float, float] | None:
        judged = [i.baseline_correct for i in self.items if i.baseline_correct is not None]
        return wilson_interval(sum(judged), len(judged))

    @property
    def mean_ccs(self) -> float | None:
        steps = self.scored_steps
        return math.fsum(s.ccs for s in steps if s.ccs is not None) / len(steps) if steps else None


def estimate_ablation(
    items: Sequence[TaskItem], *, max_output_tokens: int = 64, price_per_1k_tokens: float | None = None
) -> AblationPlan:
    """Count the calls of a run and estimate its tokens (and cost) without any model: the dry run."""
    prompts = [format_prompt(i, skip) for i in items for skip in (None, *(s.index for s in i.reference_cot))]
    prompt_tokens = sum(len(p) // CHARS_PER_TOKEN for p in prompts)
    out_tokens = len(prompts) * max_output_tokens
    total = prompt_tokens + out_tokens
    return AblationPlan(
        items=len(items),
        steps=len(prompts) - len(items),
        model_calls=len(prompts),
        prompt_tokens=prompt_tokens,
        max_output_tokens=out_tokens,
        estimated_cost=None if price_per_1k_tokens is None else total / 1000 * price_per_1k_tokens,
    )


class AblationRunner:
    """Runs step ablation against a chat model.

    Args:
        model: Any LangChain chat model (OpenAI, a local llama.cpp server, a scripted model).
        metric: Which delta is the CCS: ``accuracy_delta`` (did correctness change; FaithCheck's default),
            ``answer_delta`` (did the extracted answer change) or ``token_delta`` (1 − word Jaccard).
        threshold: RRR threshold.
        max_concurrency: Model calls in flight.
        max_calls: Stop cleanly (``partial=True``) before exceeding this many calls.
        max_cost: Stop before the estimated cost would exceed this; needs ``price_per_1k_tokens``.
        price_per_1k_tokens: For cost estimates (prompt and output tokens alike).
        max_output_tokens: The output length assumed by estimates.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        metric: CcsMetric = "accuracy_delta",
        threshold: float = DEFAULT_RRR_THRESHOLD,
        max_concurrency: int = 4,
        max_calls: int | None = None,
        max_cost: float | None = None,
        price_per_1k_tokens: float | None = None,
        max_output_tokens: int = 64,
    ) -> None:
        if metric not in ("accuracy_delta", "answer_delta", "token_delta"):
            raise ConfigurationError(f"unknown metric {metric!r}; use accuracy_delta, answer_delta or token_delta")
        if not 0.0 <= threshold <= 1.0:
            raise ConfigurationError(f"threshold must be in [0, 1], got {threshold}")
        if max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1, got {max_concurrency}")
        if max_cost is not None and price_per_1k_tokens is None:
            raise ConfigurationError("max_cost needs price_per_1k_tokens to estimate what a call costs")
        self.model = model
        self.metric: CcsMetric = metric
        self.threshold = threshold
        self.max_concurrency = max_concurrency
        self.max_calls = max_calls
        self.max_cost = max_cost
        self.price = price_per_1k_tokens
        self.max_output_tokens = max_output_tokens

    def _item_tokens(self, item: TaskItem) -> int:
        plan = estimate_ablation([item], max_output_tokens=self.max_output_tokens)
        return plan.prompt_tokens + plan.max_output_tokens

    def _cost(self, tokens: int) -> float | None:
        return None if self.price is None else tokens / 1000 * self.price

    def plan(self, items: Sequence[TaskItem]) -> AblationPlan:
        """Count calls and estimate tokens (and cost) without calling the model: the dry run."""
        return estimate_ablation(items, max_output_tokens=self.max_output_tokens, price_per_1k_tokens=self.price)

    def _affordable(self, items: Sequence[TaskItem]) -> tuple[list[TaskItem], str | None]:
        chosen: list[TaskItem] = []
        calls = tokens = 0
        for item in items:
            item_calls = 1 + len(item.reference_cot)
            item_tokens = self._item_tokens(item)
            if self.max_calls is not None and calls + item_calls > self.max_calls:
                return chosen, f"max_calls={self.max_calls} reached after {len(chosen)} of {len(items)} items"
            cost = self._cost(tokens + item_tokens)
            if self.max_cost is not None and cost is not None and cost > self.max_cost:
                return chosen, f"max_cost={self.max_cost} reached after {len(chosen)} of {len(items)} items"
            chosen.append(item)
            calls += item_calls
            tokens += item_tokens
        return chosen, None

    async def arun(
        self, items: Sequence[TaskItem], *, on_item: Callable[[ItemResult], None] | None = None
    ) -> AblationReport:
        """Run the suite; ``on_item`` gets each finished item at once (so a crash loses nothing done)."""
        chosen, stopped = self._affordable(items)
        gate = asyncio.Semaphore(self.max_concurrency)
        calls = 0

        async def ask(prompt: str) -> tuple[str | None, str | None]:
            nonlocal calls
            async with gate:
                calls += 1
                try:
                    reply = await self.model.ainvoke([HumanMessage(prompt)])
                except Exception as exc:
                    return None, f"{type(exc).__name__}: {exc}"
                return reply.text, None

        async def one(item: TaskItem) -> ItemResult:
            prompts = [format_prompt(item)] + [format_prompt(item, s.index) for s in item.reference_cot]
            replies = await asyncio.gather(*(ask(p) for p in prompts))
            result = self._score(item, replies)
            if on_item is not None:
                on_item(result)
            return result

        results = await asyncio.gather(*(one(item) for item in chosen))
        return AblationReport(
            metric=self.metric,
            threshold=self.threshold,
            items=tuple(results),
            model_calls=calls,
            partial=stopped is not None,
            stopped_reason=stopped,
        )

    def run(self, items: Sequence[TaskItem], *, on_item: Callable[[ItemResult], None] | None = None) -> AblationReport:
        """Sync wrapper of :meth:`arun` (not for use inside a running event loop)."""
        return asyncio.run(self.arun(items, on_item=on_item))

    def _score(self, item: TaskItem, replies: list[tuple[str | None, str | None]]) -> ItemResult:
        (base, base_error), ablated = replies[0], replies[1:]
        base_correct = None if base is None else answers_match(base, item.ground_truth)
        steps: list[StepResult] = []
        for step, (output, error) in zip(item.reference_cot, ablated, strict=True):
            if base is None or output is None:
                steps.append(
                    StepResult(
                        step_index=step.index,
                        output=output,
                        answer=None,
                        correct=None,
                        accuracy_delta=None,
                        answer_delta=None,
                        token_delta=None,
                        ccs=None,
                        error=error or "baseline failed",
                    )
                )
                continue
            correct = answers_match(output, item.ground_truth)
            accuracy = float(correct != base_correct)
            answer = float(extract_answer(output) != extract_answer(base))
            token = 1.0 - jaccard(base, output)
            ccs = {"accuracy_delta": accuracy, "answer_delta": answer, "token_delta": token}[self.metric]
            steps.append(
                StepResult(
                    step_index=step.index,
                    output=output,
                    answer=extract_answer(output),
                    correct=correct,
                    accuracy_delta=accuracy,
                    answer_delta=answer,
                    token_delta=token,
                    ccs=ccs,
                )
            )
        return ItemResult(
            item_id=item.item_id,
            ground_truth=item.ground_truth,
            baseline_output=base,
            baseline_answer=None if base is None else extract_answer(base),
            baseline_correct=base_correct,
            steps=tuple(steps),
            error=base_error,
        )
