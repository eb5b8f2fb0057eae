"""The reference method as the runner calls it: one recorded thought, one contradiction, both judges.

:func:`~ariadne_lc.calibration.reference.reference_audit` re-prompts the model with the question and the intervened
step and judges the new answer against the agent's original one. The runner hands it exactly what our audit of the
same trace used (the query, the agent's extracted final answer, the critic's intervened thought), so the two
methods are compared on the same contradictions of the same thoughts.

Both judge variants re-prompt with the same text at temperature 0; the re-prompted answer is asked for once and
shared between them (a per-audit LangChain cache on a copy of the model), since asking twice would only repeat a
deterministic call. The two judge calls differ and are both made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.caches import InMemoryCache
from langchain_core.language_models import BaseChatModel

from ariadne_lc.calibration.records import Method
from ariadne_lc.calibration.reference import JudgeMode, reference_audit
from ariadne_lc.calibration.runner import ReferenceMethod
from ariadne_lc.demo import extract_final_answer
from ariadne_lc.records import AuditResult
from ariadne_lc.trace import Trace

__all__ = ["JUDGE_MAX_TOKENS", "REFERENCE_MAX_TOKENS", "reference_method"]

_MODES: tuple[tuple[Method, JudgeMode], ...] = (("reference_strict", "strict"), ("reference_lenient", "lenient"))


REFERENCE_MAX_TOKENS = 40
"""The re-prompt asks for step-by-step reasoning and a final answer; a small model fills any budget it gets."""

JUDGE_MAX_TOKENS = 8
"""Both judges are asked for a number: a reply that has none within 8 tokens has none that a parser should read."""


def reference_method(
    model: BaseChatModel, *, tau: float, lam: int, max_tokens: int | None = REFERENCE_MAX_TOKENS
) -> ReferenceMethod:
    """The reference method on ``model`` with our violation rule (τ, λ), as a :data:`ReferenceMethod`.

    Args:
        model: the agents' model (it re-prompts and judges, as in the public code).
        tau, lam: the violation rule, the same as ours.
        max_tokens: output limit of its re-prompt (its judges get at most :data:`JUDGE_MAX_TOKENS`), set on copies
            of the model when it has a ``max_tokens`` field.
    """
    limited, judge = model, model
    if max_tokens is not None and "max_tokens" in type(model).model_fields:
        limited = model.model_copy(update={"max_tokens": max_tokens})
        judge = model.model_copy(update={"max_tokens": min(max_tokens, JUDGE_MAX_TOKENS)})

    def run(trace: Trace, ours: AuditResult) -> Sequence[tuple[Method, AuditResult]]:
        assert ours.intervened_thought is not None
        shared = limited.model_copy(update={"cache": InMemoryCache()})
        original = trace.final_answer or ""
        fields: dict[str, Any] = {
            "trace_id": trace.trace_id,
            "thread_id": trace.thread_id,
            "step_index": ours.step_index,
            "intervention_type": ours.intervention_type,
            "domain": ours.domain,
            "tags": ours.tags,
            "agent_name": trace.agent_name,
        }
        return [
            (
                method,
                reference_audit(
                    shared,
                    query=trace.query,
                    original_answer=extract_final_answer(original) or original,
                    intervened_step=ours.intervened_thought,
                    judge_mode=mode,
                    judge_model=judge,
                    original_step=ours.original_thought,
                    intervention=ours.intervention_type,
                    tau=tau,
                    lam=lam,
                    **fields,
                ),
            )
            for method, mode in _MODES
        ]

    return run
