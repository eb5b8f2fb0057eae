from __future__ import annotations

import pytest

from ariadne_lc.scoring import AnswerMatchScorer, Similarity, extract_number, extract_option, normalize_answer


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("The total is 42.", 42.0),
        ("Final Answer: 1,234 apples", 1234.0),
        ("1. six boxes\n2. seven each\nSo the answer is 42", 42.0),
        ("It costs $18 in all", 18.0),
        ("2^10 is large", None),
        ("I computed 6 * 7 = 42, then I am done", 42.0),
        ("no numbers here", None),
        ("the answer is -3.5", -3.5),
    ],
)
def test_extract_number(text: str, number: float | None) -> None:
    assert extract_number(text) == number


@pytest.mark.parametrize(
    ("text", "option"),
    [("The answer is (B).", "B"), ("C", "C"), ("answer: d", "D"), ("I think so", None)],
)
def test_extract_option(text: str, option: str | None) -> None:
    assert extract_option(text) == option


def test_answer_match_scorer() -> None:
    s = AnswerMatchScorer()
    assert s.score("The total is 42.", "So 42 in all").value == 1.0
    assert s.score("The total is 42.", "The total is 43.").value == 0.0
    assert s.score("The answer is (B).", "I pick (B)").value == 1.0
    assert s.score("Paris", "paris.").value == 1.0
    text = s.score("the capital is paris", "the capital is lyon")
    assert text.method == "answer_match:text" and text.value == pytest.approx(2 / 4)
    assert normalize_answer("The  Answer, is: A!") == "answer is"


def test_similarity_is_bounded_and_may_be_inconclusive() -> None:
    assert Similarity(value=None, method="judge").value is None
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Similarity(value=1.5, method="x")
