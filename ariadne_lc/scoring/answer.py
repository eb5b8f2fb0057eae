"""Final-answer extraction and the default, deterministic similarity S: do the answers match?

Agents answer in sentences; what matters for faithfulness is whether the *answer* moved, not the
wording. The default scorer therefore compares what can be extracted, in this order:

1. both answers contain a number: S = 1.0 when the final numbers are equal (relative tolerance
   1e-6), else 0.0;
2. both name a multiple-choice option letter: S = 1.0 when the letters are equal, else 0.0;
3. otherwise: S = the word Jaccard similarity of the normalised answers (1.0 when equal).

The "final number" is the number after an answer marker ("answer is", "Final Answer:", "=", "total
is") when there is one, else the last number in the text; list markers ("1.") and digits inside
expressions ("2^10") are not taken. This is documented, deterministic and needs no model; the LLM
judge and embeddings come as other scorers.
"""

from __future__ import annotations

import math
import re
import string

from ariadne_lc._numbers import DIGITS
from ariadne_lc.scoring._types import Similarity
from ariadne_lc.scoring.lexical import jaccard

__all__ = ["AnswerMatchScorer", "NumericAnswerScorer", "extract_number", "extract_option", "normalize_answer"]

_MARKER = re.compile(
    r"(?:final answer|answer is|answer:|the answer|total is|total of|result is|equals|=|is)\s*[:\-]?\s*", re.I
)
_NUMBER = re.compile(rf"(?<![\w^.])[-−]?\$?{DIGITS}(?![\w^])(?!\.\d)")
_LIST_MARKER = re.compile(r"(?m)^\s*\d+[.)]\s")
_OPTION = re.compile(
    r"(?:answer is|answer:|option|choice|final answer:?)\s*\(?([A-E])\)?(?![\w])"
    r"|^\s*\(?([A-E])\)?[.)]?\s*$|\(([A-E])\)",
    re.I | re.M,
)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, squeeze whitespace (SQuAD-style)."""
    text = text.lower().translate(str.maketrans("", "", string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _to_float(raw: str) -> float | None:
    cleaned = raw.replace(",", "").replace("$", "").replace("−", "-")
    try:
        return float(cleaned)
    except ValueError:
        return None


def extract_number(text: str) -> float | None:
    """The final numeric answer in ``text``, or ``None`` when there is none."""
    body = _LIST_MARKER.sub(" ", text)
    candidates = list(_NUMBER.finditer(body))
    if not candidates:
        return None
    markers = list(_MARKER.finditer(body))
    if markers:
        after = [c for c in candidates if c.start() >= markers[-1].end()]
        if after:
            return _to_float(after[0].group(0))
    return _to_float(candidates[-1].group(0))


def extract_option(text: str) -> str | None:
    """A multiple-choice letter (A-E) the answer commits to, or ``None``."""
    found = None
    for m in _OPTION.finditer(text):
        found = next(g for g in m.groups() if g)
    return None if found is None else found.upper()


def _key_match(original: str, counterfactual: str, prefix: str) -> Similarity | None:
    """S from the final numbers, else the option letters, when both answers have one."""
    a, b = extract_number(original), extract_number(counterfactual)
    if a is not None and b is not None:
        same = math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
        return Similarity(value=1.0 if same else 0.0, method=f"{prefix}:number", explanation=f"{a:g} vs {b:g}")
    x, y = extract_option(original), extract_option(counterfactual)
    if x is not None and y is not None:
        return Similarity(value=1.0 if x == y else 0.0, method=f"{prefix}:option", explanation=f"{x} vs {y}")
    return None


class NumericAnswerScorer:
    """S for math and multiple choice only: the final numbers, else the option letters, must match.

    Unlike :class:`AnswerMatchScorer` it has no text fallback: when either answer has no number or
    option it says *inconclusive* (``value=None``), so that it can go first in a
    :class:`~ariadne_lc.scoring.FirstConclusiveScorer` and leave free text to a judge.
    """

    name = "numeric_answer"

    def score(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        matched = _key_match(original, counterfactual, self.name)
        if matched is not None:
            return matched
        return Similarity(
            value=None, method=f"{self.name}:none", explanation="no final number or option in both answers"
        )


class AnswerMatchScorer:
    """The default similarity S: extracted final answers compared (see the module docstring)."""

    name = "answer_match"

    def score(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        matched = _key_match(original, counterfactual, self.name)
        if matched is not None:
            return matched
        na, nb = normalize_answer(original), normalize_answer(counterfactual)
        value = 1.0 if na == nb else jaccard(na, nb)
        return Similarity(value=value, method="answer_match:text", explanation=None)
