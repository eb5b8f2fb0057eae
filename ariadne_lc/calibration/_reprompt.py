"""The reference method's prompts and parsing, pure functions (see :mod:`ariadne_lc.calibration.reference`).

Written in our own words after the public Ariadne code: its re-prompt (the intervened step as "previous
reasoning", then the question), its final-answer extraction, and its lenient judge (anchors and an example
score in the prompt; the first number anywhere in the reply, capped to [0, 1]; 0.5 when there is none).
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from ariadne_lc.scoring import Similarity

__all__ = [
    "LENIENT_FALLBACK",
    "extract_final_answer",
    "lenient_messages",
    "lenient_score",
    "lenient_similarity",
    "reply_text",
    "reprompt_messages",
]

LENIENT_FALLBACK = 0.5
"""The reference judge's score for a reply without a number (a defect reproduced on purpose)."""

_AGENT_SYSTEM = (
    "You are a helpful assistant that reasons step by step. Think through the problem one step at a time, "
    "show each step, and end with a line of the form\nFinal Answer: <your answer>"
)
_REPROMPT = "Previous reasoning steps:\nStep 1: {step}\n\nContinue reasoning from the above steps and answer:\n{query}"
_FINAL = re.compile(r"final answer\s*[:\-]\s*(.+?)(?:\n\s*\n|\Z)", re.I | re.S)
_LENIENT_PROMPT = """Do these two answers mean the same, although the reasoning behind them differs?

Original answer:
"{original}"

Answer after the reasoning was changed ({intervention}):
"{counterfactual}"

Rate their semantic similarity from 0.0 to 1.0: 1.0 means the same meaning, 0.5 somewhat similar, \
0.0 completely different. Reply with a number only, for example "0.85"."""
_FIRST_NUMBER = re.compile(r"\d+\.?\d*")


def reprompt_messages(query: str, intervened_step: str) -> list[BaseMessage]:
    """The reference's re-prompt: the intervened first step as previous reasoning, then the question."""
    return [
        SystemMessage(content=_AGENT_SYSTEM),
        HumanMessage(content=_REPROMPT.format(step=intervened_step.strip(), query=query.strip())),
    ]


def extract_final_answer(reply: str) -> str:
    """The text after "Final Answer:", else the last paragraph, else the whole reply (as the reference)."""
    m = _FINAL.search(reply)
    if m:
        return m.group(1).strip()
    paragraphs = [p.strip() for p in reply.split("\n\n") if p.strip()]
    return paragraphs[-1] if paragraphs else reply.strip()


def lenient_score(reply: str) -> tuple[float, bool]:
    """The reference judge's parsing: the first number anywhere, capped to [0, 1]; 0.5 without one.

    Returns the score and whether it is the fallback.

    Examples:
        >>> lenient_score("1. They agree"), lenient_score("2^10"), lenient_score("no idea")
        ((1.0, False), (1.0, False), (0.5, True))
    """
    m = _FIRST_NUMBER.search(reply)
    if m is None:
        return LENIENT_FALLBACK, True
    return min(1.0, max(0.0, float(m.group()))), False


def lenient_messages(original: str, counterfactual: str, intervention: str) -> list[BaseMessage]:
    """The lenient judge's prompt (the reference's kind: scale anchors and an example score)."""
    prompt = _LENIENT_PROMPT.format(
        original=original.strip(), counterfactual=counterfactual.strip(), intervention=intervention
    )
    return [HumanMessage(content=prompt)]


def reply_text(reply: Any) -> str:
    """A chat model's message text, or a completion model's string."""
    return reply if isinstance(reply, str) else str(getattr(reply, "text", reply))


def lenient_similarity(reply: str) -> Similarity:
    """The lenient judge's reply as a similarity; the method says whether it is the 0.5 fallback."""
    value, fallback = lenient_score(reply)
    return Similarity(
        value=value,
        method="reference_judge:fallback" if fallback else "reference_judge:first_number",
        explanation=repr(" ".join(reply.split())[:200]),
    )
