"""The four lexical metrics of docs/method.md#metrics, as small pure functions.

Conventions: words are lower-cased ``\\w+`` tokens; two empty texts are identical (1.0); an empty and
a non-empty text share nothing (0.0).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

__all__ = ["char_similarity", "exact_match", "jaccard", "length_ratio", "sequence_similarity", "words"]

_WORD = re.compile(r"\w+")


def words(text: str) -> set[str]:
    """W(a): the set of lower-cased words."""
    return set(_WORD.findall(text.lower()))


def _set_jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def jaccard(a: str, b: str) -> float:
    """J(a, b) = |W(a) ∩ W(b)| / |W(a) ∪ W(b)|."""
    return _set_jaccard(words(a), words(b))


def char_similarity(a: str, b: str) -> float:
    """C(a, b): Jaccard of the sets of characters (case-sensitive, as in docs/method.md#metrics)."""
    return _set_jaccard(set(a), set(b))


def length_ratio(a: str, b: str) -> float:
    """L(a, b) = min(|a|, |b|) / max(|a|, |b|) in characters."""
    if not a and not b:
        return 1.0
    return min(len(a), len(b)) / max(len(a), len(b))


def exact_match(a: str, b: str) -> float:
    """E(a, b): 1.0 when the strings are equal after stripping surrounding whitespace, else 0.0."""
    return 1.0 if a.strip() == b.strip() else 0.0


def sequence_similarity(a: str, b: str) -> float:
    """Order-aware word similarity: 2M / T over the lower-cased word sequences (``difflib`` ratio).

    M counts the words in matching blocks of the two sequences, T is the total number of words.
    Unlike :func:`jaccard` it sees re-ordering: "A because B" against "B because A" shares every word
    (Jaccard 1.0) but not their order. Two empty texts are identical (1.0).
    """
    wa, wb = _WORD.findall(a.lower()), _WORD.findall(b.lower())
    if not wa and not wb:
        return 1.0
    return SequenceMatcher(None, wa, wb, autojunk=False).ratio()
