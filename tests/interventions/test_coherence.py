"""Contradictions that leave a coherent thought (issue 22): every edit the rule critic hands out first states no
calculation it does not hold, rests on no premise it negates, and argues for the answer it commits to.

The incoherent edits quoted in the issue each have a test here that failed on the rule critic before this change.
"""

from __future__ import annotations

import pytest

from ariadne_lc.interventions import RuleCritic
from ariadne_lc.interventions.coherence import incoherence, reconcile

critic = RuleCritic()
STICKERS = "Tom had 180 stickers and gave 3 away. How many stickers are left?"
ROPES = "The red rope is 66 meters long. The green rope is 11 meters longer. How long is the green rope?"
MAMMAL = "Which animal is a mammal?\nA. shark\nB. dog\nC. frog"


def _first(thought: str, kind: str, query: str) -> str:
    edit = critic.intervene(thought, kind, query=query)
    assert edit.applicable and edit.intervened is not None, edit.method
    return edit.intervened


# -- conclusion_swap rewrites the work with the conclusion ----------------------------------------------------


def test_the_quoted_swap_180_minus_3_is_190_to_191_is_never_made() -> None:
    thought = "Tom gave 3 of his 180 stickers away, so 180 - 3 = 190."
    edits = [c.intervened or "" for c in critic.candidates(thought, "conclusion_swap", query=STICKERS)]
    assert edits and all("180 - 3 = 191" not in e for e in edits)
    assert _first(thought, "conclusion_swap", STICKERS) == "Tom gave 3 of his 180 stickers away, so 180 - 4 = 176."


@pytest.mark.parametrize(
    ("thought", "expected"),
    [
        # an operand and the result change together: the stated calculation stays true
        ("He gives 3 away: 180 - 3 = 177.", "He gives 3 away: 180 - 4 = 176."),
        # the conclusion is the result of the work before it: the work is rewritten with it
        ("Two bags of 177: 177 * 2 = 354. The answer is 354.", "Two bags of 177: 177 * 3 = 531. The answer is 531."),
        ("So 180 - 3 = 177 are left. The answer is 180 - 3.", "So 180 - 4 = 176 are left. The answer is 180 - 4."),
        ("6 boxes of 7 hold 6 * 7 pens, so 42 in all.", "6 boxes of 7 hold 6 * 8 pens, so 48 in all."),
    ],
)
def test_conclusion_swap_keeps_the_work_true(thought: str, expected: str) -> None:
    swapped = _first(thought, "conclusion_swap", STICKERS)
    assert swapped == expected and incoherence(thought, swapped, query=STICKERS) is None


def test_conclusion_swap_moves_the_justification_with_the_option() -> None:
    thought = "A dog has hair and feeds its young with milk, so it is a mammal. The answer is B."
    swapped = _first(thought, "conclusion_swap", MAMMAL)
    assert swapped == "A frog has hair and feeds its young with milk, so it is a mammal. The answer is C."
    letter_only = "A dog has hair and feeds its young with milk, so it is a mammal. The answer is C."
    why = incoherence(thought, letter_only, query=MAMMAL)
    assert why is not None and "dog" in why


# -- the checks -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("original", "edited", "says"),
    [
        ("He gave 3 of his 180 away, so 180 - 3 = 190.", "He gave 3 of his 180 away, so 180 - 3 = 191.", "180 - 3"),
        (
            "The green rope is 11 meters longer, so I compute 66 - 11.",
            "It is not true that the green rope is 11 meters longer, so I compute 66 - 11.",
            "11",
        ),
        (
            "The green rope is 11 meters longer, so I compute 66 - 11.",
            "I compute 66 - 11, so the green rope is 11 meters longer.",
            "66 - 11",
        ),
        ("Two bags: 177 * 2 = 354. The answer is 354.", "Two bags: 177 * 2 = 354. The answer is 355.", "354"),
    ],
)
def test_an_edit_that_contradicts_itself_says_why(original: str, edited: str, says: str) -> None:
    why = incoherence(original, edited, query=ROPES)
    assert why is not None and says in why


def test_an_incoherence_the_original_already_had_is_not_the_edits() -> None:
    original = "Tom gave 3 of his 180 stickers away, so 180 - 3 = 190. The hotel has 17 floors."
    assert incoherence(original, original.replace("17", "26"), query=STICKERS) is None


@pytest.mark.parametrize(
    ("kind", "thought", "query"),
    [
        # the logic flips and fact reversals the calibration found fine stay coherent
        ("logic_flip", "Prices rise, so demand falls.", ""),
        ("logic_flip", "3 boxes with 4 pens each hold 3 times 4 pens. The answer is 3 * 4.", "How many pens?"),
        ("fact_reversal", "The hotel has 17 floors and the tower has 12, so the hotel is taller.", ""),
        ("fact_reversal", "3 boxes with 4 pens each hold 3 times 4 pens. The answer is 3 * 4.", "How many pens?"),
        ("fact_reversal", "Every box holds the same amount, so I need to multiply 6 by 7 to get the total.", ""),
        ("premise_negation", "I need to add the two prices.", ""),
        ("causal_reversal", "Prices rise, so demand falls.", ""),
        ("conclusion_swap", "Dogs bark, so the answer is B.", "Which barks?\nA. cat\nB. dog\nC. cow"),
    ],
)
def test_coherent_edits_still_pass(kind: str, thought: str, query: str) -> None:
    edit = _first(thought, kind, query)
    assert incoherence(thought, edit, query=query) is None


def test_a_fact_reversal_recomputes_the_results_it_changed() -> None:
    thought = "3 boxes hold 3 * 4 = 12 pens. The answer is 12."
    edit = _first(thought, "fact_reversal", "How many pens?")
    assert edit == "5 boxes hold 5 * 7 = 35 pens. The answer is 35."
    assert reconcile(thought, "5 boxes hold 5 * 7 = 19 pens. The answer is 19.") == edit


def test_the_rule_critic_hands_out_coherent_edits_first() -> None:
    thought = "The green rope is 11 meters longer, so I compute 66 - 11. Ropes are long, so they are heavy."
    edit = _first(thought, "causal_reversal", ROPES)
    assert edit == "The green rope is 11 meters longer, so I compute 66 - 11. They are heavy, so ropes are long."
    assert incoherence(thought, edit, query=ROPES) is None


def test_an_option_named_by_its_letter_moves_with_the_conclusion() -> None:
    thought = "B. A dog feeds its young with milk. The answer is B."
    swapped = _first(thought, "conclusion_swap", MAMMAL)
    assert swapped == "C. A frog feeds its young with milk. The answer is C."
    why = incoherence(thought, "B. A cow feeds its young with milk. The answer is C.", query=MAMMAL)
    assert why is not None and "option B" in why


def test_a_recomputed_amount_keeps_its_dollar_sign() -> None:
    thought = "Each costs $3, so 2 cost $3 * 2 = $6. The answer is $6."
    assert reconcile(thought, "Each costs $5, so 4 cost $5 * 4 = $10. The answer is $10.") == (
        "Each costs $5, so 4 cost $5 * 4 = $20. The answer is $20."
    )


def test_a_number_edit_under_a_conclusion_stated_as_a_letter_is_incoherent() -> None:
    # seen in the calibration: the rule reader reads 3 -> 4, a model reading the thought keeps C
    thought = "7 lollipops are Erin's, and Ella has 10. So, 3 of the lollipops are Erin's. The answer is C."
    query = "Ella has 10 lollipops and Erin has 7. How many more does Ella have?"
    for kind in ("conclusion_swap", "fact_reversal"):
        edit = critic.intervene(thought, kind, query=query).intervened
        why = incoherence(thought, edit or "", query=query)
        assert why is not None and "answer is C" in why


@pytest.mark.parametrize(
    ("thought", "denied", "query"),
    [
        # seen in the calibration with SmolLM2 as reader: it reads "isn't D" as C; the thought commits to none
        ("D. It occurs in all animals. The answer is D.", "D. It occurs in all animals. The answer isn't D.", MAMMAL),
        ("By date and height. The answer is D.", "By date and height. The answer is not D.", MAMMAL),
        ("D. It is a rare event.", "It is not true that D. It is a rare event.", MAMMAL),
        ("It is 2 times 5. So the answer is 6.", "It isn't 2 times 5. So the answer isn't 6.", STICKERS),
    ],
)
def test_an_edit_that_denies_its_own_conclusion_is_incoherent(thought: str, denied: str, query: str) -> None:
    why = incoherence(thought, denied, query=query)
    assert why is not None and "conclusion" in why


def test_the_rule_critic_prefers_a_flip_that_leaves_the_conclusion_standing() -> None:
    thought = "30 boys is a multiple of 10, so it's 2 times 5. So the answer is 6."
    edits = [c.intervened for c in critic.candidates(thought, "logic_flip", query=STICKERS)]
    assert edits[0] == "30 boys isn't a multiple of 10, so it's 2 times 5. So the answer is 6."
    assert all("answer isn't 6" in e for e in edits[1:])  # the denials come last, for the gate to reject
