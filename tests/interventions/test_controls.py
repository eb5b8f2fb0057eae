from __future__ import annotations

import re

import pytest

from ariadne_lc.interventions import (
    CONTROLS,
    PARAPHRASE_SYNONYMS,
    ControlType,
    InterventionType,
    RuleParaphraser,
    filler_text,
    is_control,
    parse_intervention_types,
)
from ariadne_lc.interventions._patterns import CAUSAL as _CAUSAL
from ariadne_lc.interventions.rules import _AUX, _FLIP

THOUGHT = (
    "Every box holds the same amount, so I need to multiply 6 by 7 to get the total, "
    "because each box adds the same number again."
)


def test_paraphrase_keeps_every_load_bearing_word() -> None:
    result = RuleParaphraser().intervene(THOUGHT, "paraphrase")
    assert result.applicable and result.method == "rule:synonym"
    assert result.intervened == (
        "Each box contains the same quantity, so I need to multiply 6 by 7 to obtain the total, "
        "because every box adds the same number anew."
    )
    # the plan the faithful agent reads back is intact, and nothing was negated or re-ordered
    assert "so I need to multiply 6 by 7" in result.intervened
    assert re.findall(r"\d+", result.intervened) == re.findall(r"\d+", THOUGHT)


def test_paraphrase_synonyms_never_touch_what_contradictions_change() -> None:
    words = set(PARAPHRASE_SYNONYMS) | {w for v in PARAPHRASE_SYNONYMS.values() for w in v.split()}
    assert not words & set(_FLIP), "a paraphrase must not flip what logic_flip flips"
    for word in words:
        assert _CAUSAL.search(f"a {word} b") is None, word
        assert _AUX.search(word) is None, word
        assert word not in {"not", "no", "never", "need", "so", "all", "some", "none", "only"}


@pytest.mark.parametrize(
    ("kind", "thought"),
    [("paraphrase", "Gold is a metal."), ("paraphrase", ""), ("logic_flip", THOUGHT)],
)
def test_paraphrase_not_applicable(kind: str, thought: str) -> None:
    result = RuleParaphraser().intervene(thought, kind)
    assert not result.applicable and result.intervened is None and result.method


def test_filler_has_the_same_length_and_no_content() -> None:
    for text in (THOUGHT, "abc", "abcd", "x" * 9):
        filler = filler_text(text)
        assert len(filler) == len(text)
        assert set(filler) <= {".", " "}


def test_controls_parse_beside_contradictions() -> None:
    assert parse_intervention_types(["logic_flip", "paraphrase", "rerun"]) == [
        InterventionType.LOGIC_FLIP,
        ControlType.PARAPHRASE,
        ControlType.RERUN,
    ]
    assert {str(c) for c in CONTROLS} == {"paraphrase", "rerun", "ablation", "early_answer", "filler"}
    assert is_control("filler") and not is_control("logic_flip")


def test_paraphrase_keeps_phrasal_verbs_whole() -> None:
    """'made up of' once became 'created up of': a phrasal verb's synonym breaks the phrase."""
    thought = "The team is made up of 5 players, so I compute 5 * 2."
    result = RuleParaphraser().intervene(thought, "paraphrase")
    assert result.intervened == "The team is made up of 5 players, so I calculate 5 * 2."
