"""The controls' rewrites: a meaning-preserving paraphrase (placebo) and neutral filler.

The other controls need no rewrite: ``rerun`` replays the thought as it was, ``ablation`` replays it
as empty text, ``early_answer`` keeps it and cuts the run after it (see :mod:`ariadne_lc.replay`).
"""

from __future__ import annotations

import re

from ariadne_lc.interventions._types import ControlType, Intervention
from ariadne_lc.interventions.rules import match_case

__all__ = ["PARAPHRASE_SYNONYMS", "RuleParaphraser", "filler_text"]

# Synonyms of words that carry no step of the reasoning. Deliberately excluded: numbers, operators,
# negations, causal connectives ("so", "because", ...), modals and "need to", quantifiers that
# change scope, and every word a contradiction rule flips (tests check the lists are disjoint), so
# that a paraphrase can never contradict, weaken or re-order what the step claims.
_PAIRS: tuple[tuple[str, str], ...] = (
    ("every", "each"),
    ("holds", "contains"),
    ("hold", "contain"),
    ("held", "contained"),
    ("amount", "quantity"),
    ("amounts", "quantities"),
    ("get", "obtain"),
    ("gets", "obtains"),
    ("compute", "calculate"),
    ("computes", "calculates"),
    ("computed", "calculated"),
    ("computing", "calculating"),
    ("check", "verify"),
    ("checks", "verifies"),
    ("big", "large"),
    ("start", "begin"),
    ("starts", "begins"),
    ("help", "assist"),
    ("helps", "assists"),
    ("buy", "purchase"),
    ("bought", "purchased"),
    ("shows", "indicates"),
    ("maybe", "perhaps"),
    ("think", "believe"),
    # everyday words of agents' thoughts (seen in the local model's ReAct traces)
    ("find", "determine"),
    ("finds", "determines"),
    ("value", "worth"),
    ("commonly", "frequently"),
    ("states", "says"),
    ("created", "made"),
    ("source", "origin"),
    ("basic", "fundamental"),
    ("know", "recall"),
    ("question", "query"),
    ("items", "things"),
    ("children", "kids"),
    ("obviously", "clearly"),
    ("question", "query"),
    ("again", "anew"),
)
PARAPHRASE_SYNONYMS: dict[str, str] = {}
"""Word -> synonym used by :class:`RuleParaphraser` (both directions of each pair, except phrases)."""
for _a, _b in _PAIRS:
    PARAPHRASE_SYNONYMS.setdefault(_a, _b)
    if " " not in _b:
        PARAPHRASE_SYNONYMS.setdefault(_b, _a)

_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
# A verb followed by one of these is part of a phrasal verb ("made up of", "get rid of", "check out"), whose
# meaning is not the verb's: its synonym would change or break the phrase ("created up of").
_PARTICLE = re.compile(r"\s+(?:up|out|off|over|rid|into|along|away|back|down|of|from|on|in)\b", re.I)


class RuleParaphraser:
    """The offline placebo: swaps non-load-bearing words for synonyms, leaving the claim intact.

    Only words in :data:`PARAPHRASE_SYNONYMS` change; numbers, operators, negations, connectives and
    every word the contradiction rules touch stay exactly as they were, so the step still says the
    same thing (and an agent that reads its plan back finds the same plan). When no listed word
    occurs the paraphrase is ``not_applicable``: an unchanged step is no placebo.

    Examples:
        >>> RuleParaphraser().intervene("Every box holds 7, so I need to multiply.", "paraphrase").intervened
        'Each box contains 7, so I need to multiply.'
    """

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        if intervention_type != ControlType.PARAPHRASE:
            return Intervention.not_applicable(
                intervention_type, thought, f"the rule paraphraser only makes {ControlType.PARAPHRASE!s}"
            )
        if not thought.strip():
            return Intervention.not_applicable(intervention_type, thought, "empty thought")

        def swap(m: re.Match[str]) -> str:
            word = m.group(0)
            synonym = PARAPHRASE_SYNONYMS.get(word.lower())
            if synonym is None or _PARTICLE.match(thought, m.end()):
                return word
            return match_case(synonym, word)

        text = _WORD.sub(swap, thought)
        if text == thought:
            return Intervention.not_applicable(intervention_type, thought, "no paraphrasable word")
        return Intervention(
            type=intervention_type, original=thought, intervened=text, applicable=True, method="rule:synonym"
        )


def filler_text(thought: str) -> str:
    """Neutral filler (``"... ... ..."``) with exactly as many characters as ``thought``.

    Dots say nothing, so the step keeps its length (and position) but loses its content: the
    "filler tokens" control of early-answering studies.
    """
    n = len(thought)
    text = ("... " * (n // 4 + 1))[:n]
    return text[:-1] + "." if text.endswith(" ") else text
