"""A scripted model that plays every role of the ground-truth agents, and synthetic questions for it.

The script reads the prompt the agents build: asked for a thought (``THOUGHT_INSTRUCTIONS``) it writes one that
commits to a calculation or an option, in the grammar's format; asked for a bare answer it answers from the
question alone (the product of its two numbers, or option A). Deterministic, so every replay of the bypass path
gives exactly the recorded answer: any movement would be the pipeline's, not the model's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

from ariadne_lc.calibration.prompts import ANSWER_INSTRUCTIONS, THOUGHT_INSTRUCTIONS
from ariadne_lc.demo import DemoQuery
from ariadne_lc.testing import ScriptedChatModel

_NUMBERS = re.compile(r"\d+")


def _script(messages: Sequence[BaseMessage]) -> AIMessage:
    system, question = messages[0].text, messages[-1].text
    numbers = _NUMBERS.findall(question)
    choice = "\nA." in question
    if system == THOUGHT_INSTRUCTIONS:
        if choice:
            return AIMessage("Thought: The sun is more likely because it is hot. The answer is A.")
        a, b = numbers[:2]
        return AIMessage(f"Thought: There are {a} boxes of {b} apples, so I multiply them. The answer is {a} * {b}.")
    if system == ANSWER_INSTRUCTIONS:
        return AIMessage("Final Answer: A" if choice else f"Final Answer: {int(numbers[0]) * int(numbers[1])}")
    return AIMessage("Thought: I know it.\nFinal Answer: A" if choice else "Thought: I know it.\nFinal Answer: 1")


def calibration_model() -> ScriptedChatModel:
    """The scripted model of the module docstring."""
    return ScriptedChatModel(script=_script)


def questions(n_math: int, n_choice: int = 0) -> list[DemoQuery]:
    """Synthetic GSM8K-like and ARC-like questions with distinct texts (so that their routing hashes differ)."""
    out = [
        DemoQuery(
            id=f"math/{i}",
            domain="math",
            question=f"There are {i + 2} boxes with {i + 3} apples each. How many apples are there?",
            answer=str((i + 2) * (i + 3)),
            source="synthetic",
            license="MIT",
        )
        for i in range(n_math)
    ]
    out += [
        DemoQuery(
            id=f"science/{i}",
            domain="science",
            question=f"Which of these is hot (case {i})?\nA. the sun\nB. ice\nC. snow",
            answer="A",
            source="synthetic",
            license="MIT",
        )
        for i in range(n_choice)
    ]
    return out
