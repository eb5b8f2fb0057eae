"""The deterministic, offline rule critic: the default way to contradict a thought.

Every rule either really changes the thought or reports "not applicable"; none returns the step
unchanged (that would score as a violation of a step that was never contradicted). Rules are
English-only and word-based; an LLM critic handles what they cannot.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ariadne_lc.interventions._types import Intervention, InterventionType

__all__ = ["RuleCritic", "has_causal_language", "has_logic_words", "has_numeric_claim"]

_ANTONYMS: tuple[tuple[str, str], ...] = (
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("more", "less"),
    ("greater", "smaller"),
    ("larger", "smaller"),
    ("higher", "lower"),
    ("true", "false"),
    ("yes", "no"),
    ("positive", "negative"),
    ("always", "never"),
    ("before", "after"),
    ("above", "below"),
    ("maximum", "minimum"),
    ("most", "least"),
    ("add", "subtract"),
    ("adds", "subtracts"),
    ("added", "subtracted"),
    ("adding", "subtracting"),
    ("addition", "subtraction"),
    ("plus", "minus"),
    ("multiply", "divide"),
    ("multiplies", "divides"),
    ("multiplied", "divided"),
    ("multiplying", "dividing"),
    ("multiplication", "division"),
    ("correct", "incorrect"),
    ("possible", "impossible"),
    ("likely", "unlikely"),
    ("same", "different"),
    ("first", "last"),
    ("rise", "fall"),
    ("rises", "falls"),
    ("gain", "loss"),
    ("valid", "invalid"),
    ("include", "exclude"),
    ("includes", "excludes"),
    ("accept", "reject"),
    ("agree", "disagree"),
    ("hot", "cold"),
    ("warm", "cool"),
    ("win", "lose"),
    ("wins", "loses"),
    ("can", "cannot"),
    ("will", "won't"),
    ("is", "isn't"),
    ("are", "aren't"),
)
_FLIP: dict[str, str] = {}
for _a, _b in _ANTONYMS:
    _FLIP.setdefault(_a, _b)
    _FLIP.setdefault(_b, _a)
_WORD = re.compile(r"[A-Za-z']+")
_OPERATOR = re.compile(r"(?<=\s)([+\-*/×÷])(?=\s)")
_OPERATOR_FLIP = {"+": "-", "-": "+", "*": "/", "/": "*", "×": "÷", "÷": "×"}
# The copula/modal of a clause, negatable by inserting or removing "not".
_AUX = re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|does|do|did|has|have|had)( not)?\b", re.I)
_NEED = re.compile(r"\b(need|needs|have|has) to\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)")
_ACTION = re.compile(r"\s*(let me|let's|let us|i will|i'll|now,? i)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# Causal connectives: (pattern, whether the cause comes first in "A <conn> B").
_CAUSAL = re.compile(
    r"(,?\s+(?:so|therefore|thus|hence|which means|as a result|and so)\s+|"
    r"\s+(?:because|since|due to)\s+|"
    r"\s+(?:causes|caused|leads to|led to|results in|resulted in|implies)\s+)",
    re.I,
)


def match_case(word: str, like: str) -> str:
    """``word`` in the case of ``like`` (UPPER, Capitalised or lower)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_first(text: str) -> str:
    # Keep acronyms and names ("I", "NASA", "Paris") as they are.
    first = text.split(" ", 1)[0]
    if first == "I" or (len(first) > 1 and (first.isupper() or first[1:].lower() != first[1:])):
        return text
    return text[:1].lower() + text[1:]


def _logic_flip(thought: str) -> tuple[str, str] | None:
    changed = False

    def swap(m: re.Match[str]) -> str:
        nonlocal changed
        word = m.group(0)
        flipped = _FLIP.get(word.lower())
        if flipped is None:
            return word
        changed = True
        return match_case(flipped, word)

    text = _WORD.sub(swap, thought)
    text2 = _OPERATOR.sub(lambda m: _OPERATOR_FLIP[m.group(1)], text)
    if text2 != text:
        changed = True
    return (text2, "rule:antonym") if changed and text2 != thought else None


def _other_number(raw: str) -> str:
    if "." in raw:
        value = float(raw)
        return f"{value * 2 + 1:g}"
    n = int(raw)
    return str(n + 1 + n // 2)


def _fact_reversal(thought: str) -> tuple[str, str] | None:
    if _NUMBER.search(thought):
        return _NUMBER.sub(lambda m: _other_number(m.group(1)), thought), "rule:numbers"
    # Without numbers, reverse the *last* claim (its copula): premise_negation negates the first one.
    # When they are the same clause, the edit would duplicate premise_negation: not applicable.
    claims = list(_AUX.finditer(thought))
    if not claims:
        return None
    reversed_ = _toggle_aux(thought, claims[-1])
    premise = _premise_negation(thought)
    if premise is not None and premise[0] == reversed_:
        return None
    return reversed_, "rule:copula"


def _toggle_aux(text: str, m: re.Match[str]) -> str:
    aux, negated = m.group(1), m.group(2)
    replacement = aux if negated else f"{aux} not"
    return text[: m.start()] + replacement + text[m.end() :]


def _premise_negation(thought: str) -> tuple[str, str] | None:
    sentences = _SENTENCE.split(thought.strip(), maxsplit=1)
    first, rest = sentences[0], sentences[1:]
    clause_end = len(first)
    conn = _CAUSAL.search(first)
    if conn is not None:
        clause_end = conn.start()
    need = _NEED.search(first, 0, clause_end)
    aux = _AUX.search(first, 0, clause_end)
    if need is not None and (aux is None or need.start() <= aux.start()):
        verb = need.group(1).lower()
        do = "does" if verb in ("needs", "has") else "do"
        base = "need" if verb.startswith("need") else "have"
        negated = first[: need.start()] + f"{do} not {base} to" + first[need.end() :]
        method = "rule:modal"
    elif aux is not None:
        negated = _toggle_aux(first, aux)
        method = "rule:copula"
    elif _ACTION.match(first):
        return None  # "Let me search ..." announces an action; it states no premise
    else:
        negated = "It is not true that " + _lower_first(first)
        method = "rule:prefix"
    return " ".join([negated, *rest]), method


def _causal_reversal(thought: str) -> tuple[str, str] | None:
    sentences = _SENTENCE.split(thought.strip())
    for i, sentence in enumerate(sentences):
        m = _CAUSAL.search(sentence)
        if m is None:
            continue
        left = sentence[: m.start()].strip().rstrip(",")
        right = sentence[m.end() :].strip()
        end = ""
        if right and right[-1] in ".!?":
            right, end = right[:-1], right[-1]
        if not left or not right:
            continue
        connective = m.group(0).strip().lstrip(",").strip()
        lead = ", " if m.group(0).startswith(",") else " "
        swapped = f"{_sentence_case(right)}{lead}{connective} {_lower_first(left)}{end}"
        return " ".join([*sentences[:i], swapped, *sentences[i + 1 :]]), "rule:swap"
    return None


def has_causal_language(thought: str) -> bool:
    """Whether the thought links a cause and an effect (because, so, therefore, leads to, ...)."""
    return _CAUSAL.search(thought) is not None


def has_numeric_claim(thought: str) -> bool:
    """Whether the thought states a number (the fact a ``fact_reversal`` changes)."""
    return _NUMBER.search(thought) is not None


# Copulas and modals are flippable too ("is" -> "isn't"), but nearly every sentence has one: they
# say nothing about whether a step *reasons* with directions or operators.
_AUXILIARIES = frozenset({"is", "isn't", "are", "aren't", "can", "cannot", "will", "won't"})


def has_logic_words(thought: str) -> bool:
    """Whether the thought has a direction or operator ``logic_flip`` can flip (more/less, multiply/divide, +/-).

    Copulas and modals do not count: nearly every sentence has one.
    """
    flippable = (w.lower() for w in _WORD.findall(thought))
    return any(w in _FLIP and w not in _AUXILIARIES for w in flippable) or _OPERATOR.search(thought) is not None


_RULES: dict[str, Callable[[str], tuple[str, str] | None]] = {
    InterventionType.LOGIC_FLIP: _logic_flip,
    InterventionType.FACT_REVERSAL: _fact_reversal,
    InterventionType.PREMISE_NEGATION: _premise_negation,
    InterventionType.CAUSAL_REVERSAL: _causal_reversal,
}


class RuleCritic:
    """Contradicts thoughts with word rules: antonym swaps, changed numbers, negation, swapped causes.

    Deterministic and offline, so audits are reproducible and cost nothing. Rules per type:

    - ``logic_flip``: swap every antonym from a fixed list (multiply/divide, more/less, true/false,
      is/isn't, ...) and arithmetic operators between spaces.
    - ``fact_reversal``: change every number to a different one; without numbers, negate the last
      claim's copula ("is" -> "is not"), unless that is the very edit premise negation makes.
    - ``premise_negation``: negate the first clause (its copula or modal, "need to" -> "do not
      need to", or prefix "It is not true that").
    - ``causal_reversal``: swap the two sides of the first causal connective (because, so,
      therefore, leads to, ...).

    Examples:
        >>> RuleCritic().intervene("Prices rise, so demand falls.", "causal_reversal").intervened
        'Demand falls, so prices rise.'
    """

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        rule = _RULES.get(intervention_type)
        if rule is None:
            return Intervention.not_applicable(
                intervention_type, thought, f"the rule critic has no rule for {intervention_type!r}"
            )
        if not thought.strip():
            return Intervention.not_applicable(intervention_type, thought, "empty thought")
        out = rule(thought)
        if out is None or out[0].strip() == thought.strip():
            return Intervention.not_applicable(intervention_type, thought, f"no {intervention_type} rule matched")
        text, method = out
        return Intervention(type=intervention_type, original=thought, intervened=text, applicable=True, method=method)
