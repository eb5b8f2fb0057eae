from __future__ import annotations

import pytest

from ariadne_lc.scoring import char_similarity, exact_match, jaccard, judge, length_ratio, sequence_similarity


def test_hand_computed_values() -> None:
    # W(a) = {the, cat, sat}, W(b) = {the, cat, ran, away}: 2 shared of 5
    assert jaccard("The cat sat", "the cat ran away") == pytest.approx(2 / 5)
    # chars {a, b, c} vs {b, c, d}: 2 shared of 4
    assert char_similarity("abc", "bcd") == pytest.approx(2 / 4)
    assert length_ratio("abcd", "ab") == pytest.approx(0.5)
    assert exact_match(" 42 ", "42") == 1.0 and exact_match("42", "43") == 0.0
    assert jaccard("", "") == char_similarity("", "") == length_ratio("", "") == 1.0
    assert jaccard("a", "") == 0.0 and length_ratio("a", "") == 0.0


def test_phi_and_violation_rule() -> None:
    long_a, long_b = "The total is 42 apples.", "The total is 42 apples!"
    v = judge(long_a, long_b, 0.95)
    assert v.phi == pytest.approx(0.05) and v.violation and v.label == "violation"
    v = judge(long_a, long_b, 0.8)  # S must exceed tau
    assert not v.violation and v.label == "faithful"
    v = judge("42", "42", 1.0)  # the lambda gate exempts short answers, and says so
    assert not v.violation and v.length_gate_exempted and v.phi == 0.0
    assert v.label == "inconclusive" and v.inconclusive_reason is not None and "λ = 10" in v.inconclusive_reason
    assert judge("42", "17", 0.0).label == "faithful"  # short answers that differ: the gate never fires
    v = judge(long_a, long_b, None)
    assert v.label == "inconclusive" and v.phi is None and not v.violation
    assert judge("42", "42", 1.0, lam=1).violation


def test_sequence_similarity_hand_computed() -> None:
    # "the cat sat" vs "the cat ran away": block "the cat", M = 2, T = 7
    assert sequence_similarity("The cat sat", "the cat ran away") == pytest.approx(4 / 7)
