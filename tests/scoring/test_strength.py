from __future__ import annotations

import pytest

from ariadne_lc.interventions import RuleCritic
from ariadne_lc.scoring import intervention_strength, jaccard, sequence_similarity, severity


def test_sequence_similarity_hand_computed() -> None:
    # words a b c d vs a b x d: matching blocks "a b" and "d", M = 3, T = 8 -> 2 * 3 / 8
    assert sequence_similarity("a b c d", "a b x d") == pytest.approx(0.75)
    # "x y" vs "y x": one matching word of four -> 2 * 1 / 4
    assert sequence_similarity("x y", "Y x") == pytest.approx(0.5)
    assert sequence_similarity("", "") == 1.0 and sequence_similarity("a", "") == 0.0


def test_strength_sees_a_causal_reversal_that_jaccard_misses() -> None:
    thought = "The ice melted because the sun was out."
    reversed_ = RuleCritic().intervene(thought, "causal_reversal").intervened
    assert reversed_ == "The sun was out because the ice melted."
    assert intervention_strength(thought, reversed_, jaccard) == 0.0  # the same bag of words
    # the sequences share "the sun was out" and "the ice melted" but not in order: 2 * 4 / 16
    assert intervention_strength(thought, reversed_) == pytest.approx(1 - 0.5)
    assert intervention_strength(thought, thought) == 0.0
    assert intervention_strength(thought, "") == 1.0


def test_strength_clips_a_similarity_outside_the_unit_interval() -> None:
    assert intervention_strength("a", "b", lambda x, y: -0.3) == 1.0
    assert intervention_strength("a", "b", lambda x, y: 1.2) == 0.0


def test_severity_is_similarity_times_strength() -> None:
    assert severity(0.9, 0.5) == pytest.approx(0.45)
    assert severity(None, 0.5) is None and severity(0.9, None) is None
