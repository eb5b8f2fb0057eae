"""The word and number patterns the rule critic and the coherence check share (one definition each)."""

from __future__ import annotations

import re

__all__ = ["CAUSAL", "OPERATOR", "OPERATOR_FLIP", "cause_first"]

# An arithmetic operator between two operands ("8*3", "(2 + 3) x 4") or between spaces ("a - b"); a hyphen inside
# a word ("well-known") is neither.
OPERATOR = re.compile(r"(?:(?<=[\d)])\s*([+\-*/×÷x])\s*(?=[\d(]))|(?:(?<=\s)([+\-*/×÷])(?=\s))")
OPERATOR_FLIP = {"+": "-", "-": "+", "*": "/", "/": "*", "×": "÷", "÷": "×", "x": "/"}

# Causal connectives ("A so B", "A because B", "A leads to B").
CAUSAL = re.compile(
    r"(,?\s+(?:so|therefore|thus|hence|which means|as a result|and so)\s+|"
    r"\s+(?:because|since|due to)\s+|"
    r"\s+(?:causes|caused|leads to|led to|results in|resulted in|implies)\s+)",
    re.I,
)
_EFFECT_FIRST = re.compile(r"\s*(?:because|since|due to)\s*$", re.I)


def cause_first(connective: str) -> bool:
    """Whether the cause stands before ``connective`` ("A so B": A causes B) or after it ("A because B")."""
    return _EFFECT_FIRST.match(connective) is None
