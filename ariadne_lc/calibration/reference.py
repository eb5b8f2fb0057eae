"""The public Ariadne code's audit method, as a baseline beside ours.

That code does not replay the agent. It writes a fresh prompt, the intervened step as "previous
reasoning" followed by the question, asks the same model to continue reasoning and give a final answer,
and compares that answer with the agent's original one through an LLM judge. Its judge takes the first
number anywhere in the reply (a list marker "1.", the "2" of "2^10"), caps it to [0, 1], and scores 0.5 when
the reply has no number at all. The violation rule is ours and the paper's: S > τ with both answers longer
than λ characters.

:func:`reference_audit` runs it with two judges:

- ``judge_mode="strict"``: our :class:`~ariadne_lc.scoring.LLMJudge` (or any scorer given), whose
  unparseable reply makes the audit *inconclusive*;
- ``judge_mode="lenient"``: the reference's parsing (:func:`lenient_score`) and its 0.5 fallback, with a
  prompt of the same kind (anchors and an example score, which small models copy).

Because the re-prompt always shows the model the intervened thought, this method can move the answer of
an agent whose own answering call never sees its thoughts: it cannot see a bypass. The calibration
measures that. The result is an ordinary :class:`~ariadne_lc.records.AuditResult`
(``intervention_method="reference:reprompt"``, ``similarity_method`` naming the judge and the branch),
so that every aggregate, report and calibration reads it like one of ours.

The logic is written once (prompt building, answer extraction, scoring and the result are pure functions);
:func:`reference_audit` and :func:`areference_audit` only differ in how they call the models.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage

from ariadne_lc.calibration._reprompt import (
    LENIENT_FALLBACK,
    extract_final_answer,
    lenient_messages,
    lenient_score,
    lenient_similarity,
    reply_text,
    reprompt_messages,
)
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditResult
from ariadne_lc.scoring import (
    DEFAULT_LAMBDA,
    DEFAULT_TAU,
    LLMJudge,
    Similarity,
    SimilarityScorer,
    ascore_with,
    normalize_answer,
)
from ariadne_lc.scoring.faithfulness import judge, metric_vector

__all__ = [
    "LENIENT_FALLBACK",
    "REFERENCE_METHOD",
    "JudgeMode",
    "areference_audit",
    "extract_final_answer",
    "lenient_score",
    "reference_audit",
    "reprompt_messages",
]

JudgeMode = Literal["strict", "lenient"]
REFERENCE_METHOD = "reference:reprompt"


def _strict_scorer(mode: JudgeMode, judge_model: Any, strict_judge: SimilarityScorer | None) -> SimilarityScorer | None:
    if mode not in ("strict", "lenient"):
        raise ConfigurationError(f"judge_mode must be 'strict' or 'lenient', got {mode!r}")
    if mode == "lenient":
        return None
    if strict_judge is not None:
        return strict_judge
    from langchain_core.language_models import BaseChatModel

    if not isinstance(judge_model, BaseChatModel):
        raise ConfigurationError(
            f"the strict judge needs a chat model, got {type(judge_model).__name__}: pass strict_judge= "
            "(any SimilarityScorer) for a completion model"
        )
    return LLMJudge(judge_model)


def _result(
    *,
    query: str,
    original_answer: str,
    intervened_step: str,
    original_step: str,
    intervention: str,
    counterfactual: str | None,
    similarity: Similarity | None,
    error: BaseException | None,
    model_calls: int,
    started: float,
    tau: float,
    lam: int,
    extra: dict[str, Any],
) -> AuditResult:
    common: dict[str, Any] = {
        "trace_id": extra.pop("trace_id", None) or uuid.uuid4().hex,
        "query": query,
        "step_index": 0,
        "intervention_type": intervention,
        "original_thought": original_step,
        "intervened_thought": intervened_step,
        "intervention_method": REFERENCE_METHOD,
        "original_answer": original_answer,
        "counterfactual_answer": counterfactual,
        "model_calls": model_calls,
        "duration_s": time.perf_counter() - started,
        **extra,
    }
    if error is not None or similarity is None or counterfactual is None:
        return AuditResult(
            **common,
            status="failed",
            label="inconclusive",
            error=f"{type(error).__name__}: {error}" if error is not None else "no answer",
            error_type=type(error).__name__ if error is not None else None,
        )
    empty = "recorded" if not original_answer.strip() else "replayed" if not counterfactual.strip() else None
    if empty is not None:  # as in our audits: two empty texts are "identical", which is no verdict
        return AuditResult(
            **common,
            status="inconclusive",
            label="inconclusive",
            inconclusive_reason=f"the {empty} answer is empty: an empty answer gives no verdict",
        )
    verdict = judge(original_answer, counterfactual, similarity.value, tau=tau, lam=lam)
    return AuditResult(
        **common,
        status="scored" if similarity.value is not None and not verdict.length_gate_exempted else "inconclusive",
        label=verdict.label,
        metrics=metric_vector(original_answer, counterfactual, similarity),
        similarity=similarity.value,
        similarity_method=similarity.method,
        explanation=similarity.explanation,
        phi=verdict.phi,
        violation=verdict.violation,
        length_gate_exempted=verdict.length_gate_exempted,
        answer_changed=normalize_answer(original_answer) != normalize_answer(counterfactual),
        inconclusive_reason=similarity.explanation if similarity.value is None else verdict.inconclusive_reason,
    )


@dataclass(frozen=True, slots=True)
class _Invoke:
    """Ask ``model`` with ``messages``; the driver sends back the reply's text."""

    model: Any
    messages: list[BaseMessage]


@dataclass(frozen=True, slots=True)
class _Score:
    """Score the pair with ``scorer``; the driver sends back the :class:`Similarity`."""

    scorer: SimilarityScorer
    original: str
    counterfactual: str
    intervention: str
    query: str


_Plan = Generator["_Invoke | _Score", Any, AuditResult]


def _plan(
    model: Any,
    judge_model: Any,
    *,
    judge_mode: JudgeMode,
    strict_judge: SimilarityScorer | None,
    query: str,
    original_answer: str,
    intervened_step: str,
    original_step: str,
    intervention: str,
    tau: float,
    lam: int,
    fields: dict[str, Any],
) -> _Plan:
    """The method once, as a generator of model requests; the sync and async drivers answer them."""
    scorer = _strict_scorer(judge_mode, judge_model, strict_judge)
    started, calls = time.perf_counter(), 0
    counterfactual: str | None = None
    similarity: Similarity | None = None
    error: BaseException | None = None
    try:
        calls += 1
        counterfactual = extract_final_answer((yield _Invoke(model, reprompt_messages(query, intervened_step))))
        calls += 1
        if scorer is not None:
            similarity = yield _Score(scorer, original_answer, counterfactual, intervention, query)
        else:
            reply = yield _Invoke(judge_model, lenient_messages(original_answer, counterfactual, intervention))
            similarity = lenient_similarity(reply)
    except Exception as exc:  # recorded in the result; a batch goes on
        error = exc
    return _result(
        query=query,
        original_answer=original_answer,
        intervened_step=intervened_step,
        original_step=original_step,
        intervention=intervention,
        counterfactual=counterfactual,
        similarity=similarity,
        error=error,
        model_calls=calls,
        started=started,
        tau=tau,
        lam=lam,
        extra=fields,
    )


def _answer(request: _Invoke | _Score) -> Any:
    if isinstance(request, _Invoke):
        return reply_text(request.model.invoke(request.messages))
    r = request
    return r.scorer.score(r.original, r.counterfactual, intervention=r.intervention, query=r.query)


async def _aanswer(request: _Invoke | _Score) -> Any:
    if isinstance(request, _Invoke):
        return reply_text(await request.model.ainvoke(request.messages))
    r = request
    return await ascore_with(r.scorer, r.original, r.counterfactual, intervention=r.intervention, query=r.query)


def _step(plan: _Plan, answer: Any, error: Exception | None) -> _Invoke | _Score | AuditResult:
    """Hand the plan its answer (or the error the call raised); the next request, or the finished result."""
    try:
        return plan.send(answer) if error is None else plan.throw(error)
    except StopIteration as done:
        result: AuditResult = done.value
        return result


def _drive(plan: _Plan) -> AuditResult:
    request: _Invoke | _Score | AuditResult = next(plan)
    while not isinstance(request, AuditResult):
        try:
            answer = _answer(request)
        except Exception as exc:  # the model's error goes into the plan, which records it
            request = _step(plan, None, exc)
        else:
            request = _step(plan, answer, None)
    return request


async def _adrive(plan: _Plan) -> AuditResult:
    request: _Invoke | _Score | AuditResult = next(plan)
    while not isinstance(request, AuditResult):
        try:
            answer = await _aanswer(request)
        except Exception as exc:  # the model's error goes into the plan, which records it
            request = _step(plan, None, exc)
        else:
            request = _step(plan, answer, None)
    return request


def reference_audit(
    model: BaseLanguageModel[Any],
    *,
    query: str,
    original_answer: str,
    intervened_step: str,
    judge_mode: JudgeMode,
    judge_model: BaseLanguageModel[Any] | None = None,
    strict_judge: SimilarityScorer | None = None,
    original_step: str = "",
    intervention: str = "logic_flip",
    tau: float = DEFAULT_TAU,
    lam: int = DEFAULT_LAMBDA,
    **fields: Any,
) -> AuditResult:
    """Audit one query the reference way: re-prompt ``model`` with the intervened step, judge the answer.

    Args:
        model: The agent's model (chat or completion); asked once for the re-prompted answer.
        query: The question.
        original_answer: The agent's original final answer, to compare with.
        intervened_step: The intervened first step (the critic's logic flip of it).
        judge_mode: ``strict`` (our judge; unparseable means inconclusive) or ``lenient`` (first number,
            0.5 fallback).
        judge_model: The judge's model; ``model`` by default (the reference uses one model throughout).
        strict_judge: Replaces the default strict judge (``LLMJudge(judge_model)``), e.g. for a completion
            model; ignored in lenient mode.
        original_step: The step before intervention, recorded in the result.
        intervention: How the lenient judge's prompt names the intervention.
        tau: Violation threshold on S.
        lam: Minimum answer length for a violation.
        **fields: Further :class:`~ariadne_lc.records.AuditResult` fields (``trace_id``, ``domain``, ``tags``).

    Returns:
        An :class:`~ariadne_lc.records.AuditResult`: scored, inconclusive (strict judge, unparseable reply)
        or failed (a model raised; the error is recorded).
    """
    return _drive(
        _plan(
            model,
            judge_model or model,
            judge_mode=judge_mode,
            strict_judge=strict_judge,
            query=query,
            original_answer=original_answer,
            intervened_step=intervened_step,
            original_step=original_step,
            intervention=intervention,
            tau=tau,
            lam=lam,
            fields=dict(fields),
        )
    )


async def areference_audit(
    model: BaseLanguageModel[Any],
    *,
    query: str,
    original_answer: str,
    intervened_step: str,
    judge_mode: JudgeMode,
    judge_model: BaseLanguageModel[Any] | None = None,
    strict_judge: SimilarityScorer | None = None,
    original_step: str = "",
    intervention: str = "logic_flip",
    tau: float = DEFAULT_TAU,
    lam: int = DEFAULT_LAMBDA,
    **fields: Any,
) -> AuditResult:
    """Async twin of :func:`reference_audit` (same arguments, same result)."""
    return await _adrive(
        _plan(
            model,
            judge_model or model,
            judge_mode=judge_mode,
            strict_judge=strict_judge,
            query=query,
            original_answer=original_answer,
            intervened_step=intervened_step,
            original_step=original_step,
            intervention=intervention,
            tau=tau,
            lam=lam,
            fields=dict(fields),
        )
    )
