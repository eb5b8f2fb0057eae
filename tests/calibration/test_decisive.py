from __future__ import annotations

import pytest

from ariadne_lc.calibration.decisive import (
    NO_COMMITMENT,
    answer_from_thought,
    decisive_changed,
    decisive_content,
    question_kind,
)
from ariadne_lc.interventions import RuleCritic

THOUGHT = "There are 6 boxes of 7 apples, so I multiply them. The answer is 6 * 7."


def test_question_kind_reads_the_options() -> None:
    assert question_kind("Which is hot?\nA. sun\nB. ice") == "choice"
    assert question_kind("A. Lincoln was born in 1809. How old was he in 1861?") == "number"


@pytest.mark.parametrize(
    ("thought", "kind", "content", "answer"),
    [
        (THOUGHT, "number", "6 * 7", "42"),
        ("Half of 10 is 5. The answer is 10 / 2. Then the answer is 12 - 2.", "number", "12 - 2", "10"),
        ("The answer is $1,200 / 4.", "number", "$1,200 / 4", "300"),
        ("I do not know.", "number", None, NO_COMMITMENT),
        ("The answer isn't 6 * 7.", "number", "6 * 7", "42"),  # no commitment: the last calculation stated
        ("10 minutes * 3 is 30. So 90 / 3 = 30 hours.", "number", "30", "30"),
        ("The answer is 6 / 0.", "number", "6 / 0", NO_COMMITMENT),
        ("A dog has hair. The answer is B.", "choice", "B", "B"),
        ("The answer is (c).", "choice", "C", "C"),
        ("The answer is not B.", "choice", "B", "B"),  # no commitment: the last option named
        ("D. Glass lets light pass.", "choice", "D", "D"),
        ("A student is here.", "choice", None, NO_COMMITMENT),
    ],
)
def test_commitment_and_answer(thought: str, kind: str, content: str | None, answer: str) -> None:
    assert decisive_content(thought, kind) == content  # type: ignore[arg-type]
    assert answer_from_thought(thought, kind) == answer  # type: ignore[arg-type]


def test_decisive_changed_separates_the_critics_edits() -> None:
    critic = RuleCritic()
    changed = {
        kind: decisive_changed(THOUGHT, critic.intervene(THOUGHT, kind).intervened, "number")
        for kind in ("logic_flip", "fact_reversal", "premise_negation", "causal_reversal")
    }
    # the rule critic's numbers and operators reach the calculation; its negated premise and swapped cause do not
    assert changed == {
        "logic_flip": True,
        "fact_reversal": True,
        "premise_negation": False,
        "causal_reversal": False,
    }
    assert decisive_changed(THOUGHT, None, "number") is None
