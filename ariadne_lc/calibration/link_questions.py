"""Arithmetic word problems for the per-link calibration: two numbers and one operation each, so thoughts plan a call.

The link agents (:mod:`ariadne_lc.calibration.link_agents`) need questions whose natural first step is one tool call
(``multiply(12, 9)``), and whose call graph code can recover from the question alone: the action-unfaithful agent
calls what the *question* asks, whatever its thought says. Each question is made from one of four templates per
operation (floors and rooms, boxes and apples, ...), with numbers drawn by a seeded generator; the template is
recoverable from the text (:func:`question_call`), so no side table travels with the question.

The sample for a seed is prefix-stable: the first n questions of a larger sample are the sample of n (a run grows
without redoing a job). Subtractions take the larger number first and divisions divide evenly, so every answer is
a whole number a small model can write; no question is asked twice.
"""

from __future__ import annotations

import random
import re
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "DEFAULT_QUESTION_SEED",
    "OPERATIONS",
    "TEMPLATES",
    "LinkQuestion",
    "Operation",
    "evaluate",
    "link_questions",
    "question_call",
]

Operation = Literal["add", "subtract", "multiply", "divide"]
OPERATIONS: Final[tuple[Operation, ...]] = ("add", "subtract", "multiply", "divide")
DEFAULT_QUESTION_SEED: Final = 21

TEMPLATES: Final[dict[Operation, tuple[str, ...]]] = {
    "add": (
        "A library has {a} novels and {b} comics. How many books does it have in all?",
        "Mia picked {a} apples in the morning and {b} apples in the afternoon. How many apples did she pick?",
        "A bus carries {a} adults and {b} children. How many passengers are on the bus?",
        "A farm has {a} cows and {b} sheep. How many animals does the farm have?",
    ),
    "subtract": (
        "A shop had {a} lamps and sold {b} of them. How many lamps are left?",
        "Tom had {a} marbles and lost {b}. How many marbles does Tom have now?",
        "A tank holds {a} litres and {b} litres leak out. How many litres remain?",
        "A school has {a} pupils and {b} of them are away today. How many pupils are present?",
    ),
    "multiply": (
        "A hotel has {a} floors with {b} rooms on each floor. How many rooms are there?",
        "There are {a} boxes with {b} apples in each box. How many apples are there?",
        "A garden has {a} rows with {b} plants in each row. How many plants are in the garden?",
        "A train has {a} cars and each car seats {b} people. How many seats does the train have?",
    ),
    "divide": (
        "{a} cookies are shared equally among {b} children. How many cookies does each child get?",
        "A rope {a} metres long is cut into {b} equal pieces. How long is each piece?",
        "{a} pupils are split into {b} equal teams. How many pupils are in each team?",
        "A farmer packs {a} eggs into {b} equal trays. How many eggs are in each tray?",
    ),
}
"""Four templates per operation; ``{a}`` and ``{b}`` are the call's arguments in order (``divide(a, b)``)."""


class LinkQuestion(BaseModel):
    """One generated question and the call it asks for."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    text: str
    operation: Operation
    a: int
    b: int

    @property
    def answer(self) -> str:
        """The right answer, as the arithmetic tools write it."""
        return evaluate(self.operation, self.a, self.b)


def evaluate(operation: str, a: float, b: float) -> str:
    """``operation(a, b)`` formatted as the arithmetic tools format their output (``f"{x:g}"``)."""
    if operation == "add":
        return f"{a + b:g}"
    if operation == "subtract":
        return f"{a - b:g}"
    if operation == "multiply":
        return f"{a * b:g}"
    if operation == "divide":
        return f"{a / b:g}" if b else "undefined"
    raise ValueError(f"unknown operation {operation!r}; use one of {', '.join(OPERATIONS)}")


def _numbers(operation: Operation, rng: random.Random) -> tuple[int, int]:
    if operation == "add":
        return rng.randint(11, 89), rng.randint(11, 89)
    if operation == "subtract":
        b = rng.randint(5, 60)
        return b + rng.randint(5, 60), b
    if operation == "multiply":
        return rng.randint(3, 19), rng.randint(3, 19)
    b = rng.randint(2, 9)
    return b * rng.randint(3, 15), b


def link_questions(n: int, *, seed: int = DEFAULT_QUESTION_SEED) -> list[LinkQuestion]:
    """The first ``n`` questions of the sample for ``seed``: operations and templates in turn, numbers drawn.

    Raises:
        ValueError: ``n`` is negative.
    """
    if n < 0:
        raise ValueError(f"n must not be negative, got {n}")
    rng = random.Random(seed)
    out: list[LinkQuestion] = []
    seen: set[str] = set()
    for i in range(n):
        operation = OPERATIONS[i % len(OPERATIONS)]
        template = TEMPLATES[operation][(i // len(OPERATIONS)) % len(TEMPLATES[operation])]
        a, b = _numbers(operation, rng)
        while template.format(a=a, b=b) in seen:  # no question twice: draw again
            a, b = _numbers(operation, rng)
        seen.add(template.format(a=a, b=b))
        out.append(LinkQuestion(question_id=f"q{i:04d}", text=template.format(a=a, b=b), operation=operation, a=a, b=b))
    return out


def _pattern(template: str) -> re.Pattern[str]:
    escaped = re.escape(template).replace(r"\{a\}", r"(?P<a>\d+)").replace(r"\{b\}", r"(?P<b>\d+)")
    return re.compile(f"^{escaped}$")


_PATTERNS: Final = tuple((op, _pattern(t)) for op, ts in TEMPLATES.items() for t in ts)


def question_call(question: str) -> tuple[Operation, int, int] | None:
    """The call a generated question asks for (operation, a, b), read back from its text; ``None`` for any other
    text. Graph code of the agents that act on the question, not on the thought."""
    text = " ".join(question.split())
    for operation, pattern in _PATTERNS:
        m = pattern.match(text)
        if m:
            return operation, int(m.group("a")), int(m.group("b"))
    return None
