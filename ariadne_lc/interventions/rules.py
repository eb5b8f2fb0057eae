"""The deterministic, offline rule critic: the default way to contradict a thought.

Every rule either really changes the thought or reports "not applicable"; none returns the step
unchanged (that would score as a violation of a step that was never contradicted). Rules are
English-only and word-based; an LLM critic handles what they cannot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ariadne_lc.interventions._patterns import CAUSAL, OPERATOR, OPERATOR_FLIP
from ariadne_lc.interventions._swap import conclusion_swaps
from ariadne_lc.interventions._types import Intervention, InterventionType
from ariadne_lc.interventions.coherence import incoherence, reconcile

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
_COMPARISON = re.compile(r">=|<=|≥|≤|(?<![<>=-])[<>](?![<>=])")
_COMPARISON_FLIP = {">": "<", "<": ">", ">=": "<=", "<=": ">=", "≥": "≤", "≤": "≥"}
# The copula/modal of a clause, negatable by inserting or removing "not".
_AUX = re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|does|do|did|has|have|had)( not)?\b", re.I)
# "has", "have" and "had" are auxiliaries only before a participle ("has been", "had counted"); before a noun
# ("has 17 floors") they are the main verb, negated with do-support ("does not have 17 floors").
_PARTICIPLE = re.compile(r"\s+(?:been|got|gotten|done|made|seen|taken|given|known|[a-z]+ed|[a-z]+en)\b", re.I)
_DO_SUPPORT = {"has": ("does", "have"), "have": ("do", "have"), "had": ("did", "have")}
_NEED = re.compile(r"\b(need|needs|have|has) to\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)")
_ACTION = re.compile(r"\s*(let me|let's|let us|i will|i'll|now,? i)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
Edit = tuple[str, str]
"""A candidate rewrite and how it was made (``rule:antonym``, ...)."""


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
    if re.match(r"I(?:'|’|$)", first) or (len(first) > 1 and (first.isupper() or first[1:].lower() != first[1:])):
        return text
    return text[:1].lower() + text[1:]


# Copulas and modals are flippable too ("is" -> "isn't"), but nearly every sentence has one: they
# say nothing about whether a step *reasons* with directions or operators.
_AUXILIARIES = frozenset({"is", "isn't", "are", "aren't", "can", "cannot", "will", "won't"})


def _flip_sites(thought: str) -> list[tuple[int, int, str]]:
    """Every place a logic flip can change, as (start, end, replacement): antonyms that are no copula or modal,
    arithmetic operators and comparisons; copulas and modals only when there is nothing else to flip (flipping
    both the verb and the comparison of one clause cancels: "is less than" -> "isn't more than")."""
    sites: list[tuple[int, int, str]] = []
    copulas: list[tuple[int, int, str]] = []
    for m in _WORD.finditer(thought):
        word = m.group(0)
        flipped = _FLIP.get(word.lower())
        if flipped is not None:
            (copulas if word.lower() in _AUXILIARIES else sites).append((m.start(), m.end(), match_case(flipped, word)))
    for m in OPERATOR.finditer(thought):
        group = 1 if m.group(1) is not None else 2
        sites.append((m.start(group), m.end(group), OPERATOR_FLIP[m.group(group)]))
    for m in _COMPARISON.finditer(thought):
        sites.append((m.start(), m.end(), _COMPARISON_FLIP[m.group(0)]))
    return sorted(sites) if sites else copulas


def _apply(text: str, sites: list[tuple[int, int, str]]) -> str:
    for start, end, replacement in sorted(sites, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _logic_flip(thought: str) -> list[Edit]:
    """All sites flipped at once, then each site alone from the last one back (the conclusion comes last)."""
    sites = _flip_sites(thought)
    if not sites:
        return []
    edits = [(_apply(thought, sites), "rule:antonym")]
    edits += [(_apply(thought, [site]), "rule:antonym-one") for site in reversed(sites)]
    return edits


def _other_number(raw: str) -> str:
    if "." in raw:
        value = float(raw)
        return f"{value * 2 + 1:g}"
    n = int(raw)
    return str(n + 1 + n // 2)


def _order_reversed(thought: str) -> str | None:
    """The numbers exchanged by rank (the smallest becomes the largest, ...), so comparisons between them flip."""
    values = sorted({float(m.group(1)) for m in _NUMBER.finditer(thought)})
    if len(values) < 2:
        return None
    raw_by_value = {float(m.group(1)): m.group(1) for m in _NUMBER.finditer(thought)}
    mirror = {v: raw_by_value[values[-1 - i]] for i, v in enumerate(values)}
    return _NUMBER.sub(lambda m: mirror[float(m.group(1))], thought)


def _fact_reversal(thought: str) -> list[Edit]:
    if _NUMBER.search(thought):
        edits = [(_NUMBER.sub(lambda m: _other_number(m.group(1)), thought), "rule:numbers")]
        reversed_ = _order_reversed(thought)
        if reversed_ is not None:
            edits.append((reversed_, "rule:numbers-order"))
        last = list(_NUMBER.finditer(thought))[-1]
        edits.append(
            (thought[: last.start()] + _other_number(last.group(1)) + thought[last.end() :], "rule:last-number")
        )
        return edits
    # Without numbers, reverse the *last* claim (its copula): premise_negation negates the first one.
    # When they are the same clause, the edit would duplicate premise_negation: not applicable.
    claims = list(_AUX.finditer(thought))
    if not claims:
        return []
    reversed_claim = _toggle_aux(thought, claims[-1])
    premise = _premise_negation(thought)
    if premise and premise[0][0] == reversed_claim:
        return []
    return [(reversed_claim, "rule:copula")]


def _toggle_aux(text: str, m: re.Match[str]) -> str:
    aux, negated = m.group(1), m.group(2)
    main_verb = aux.lower() in _DO_SUPPORT and not negated and _PARTICIPLE.match(text, m.end()) is None
    if main_verb:
        do, base = _DO_SUPPORT[aux.lower()]
        replacement = f"{match_case(do, aux)} not {base}"
    else:
        replacement = aux if negated else f"{aux} not"
    return text[: m.start()] + replacement + text[m.end() :]


def _premise_negation(thought: str) -> list[Edit]:
    sentences = _SENTENCE.split(thought.strip(), maxsplit=1)
    first, rest = sentences[0], sentences[1:]
    clause_end = len(first)
    conn = CAUSAL.search(first)
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
        return []  # "Let me search ..." announces an action; it states no premise
    else:
        negated = "It is not true that " + _lower_first(first)
        method = "rule:prefix"
    return [(" ".join([negated, *rest]), method)]


def _causal_reversal(thought: str) -> list[Edit]:
    """The first causal connective of each sentence swapped, one sentence at a time, the first sentence first."""
    sentences = _SENTENCE.split(thought.strip())
    edits: list[Edit] = []
    for i, sentence in enumerate(sentences):
        m = CAUSAL.search(sentence)
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
        edits.append((" ".join([*sentences[:i], swapped, *sentences[i + 1 :]]), "rule:swap"))
    return edits


def has_causal_language(thought: str) -> bool:
    """Whether the thought links a cause and an effect (because, so, therefore, leads to, ...)."""
    return CAUSAL.search(thought) is not None


def has_numeric_claim(thought: str) -> bool:
    """Whether the thought states a number (the fact a ``fact_reversal`` changes)."""
    return _NUMBER.search(thought) is not None


def has_logic_words(thought: str) -> bool:
    """Whether the thought has a direction, operator or comparison ``logic_flip`` can flip (more/less,
    multiply/divide, +/-, </>).

    Copulas and modals do not count: nearly every sentence has one.
    """
    flippable = (w.lower() for w in _WORD.findall(thought))
    if any(w in _FLIP and w not in _AUXILIARIES for w in flippable):
        return True
    return OPERATOR.search(thought) is not None or _COMPARISON.search(thought) is not None


def _reconciled(thought: str, edits: list[Edit]) -> list[Edit]:
    """Each edit with the stated results it made false recomputed (numbers and operators changed under them)."""
    return [(reconcile(thought, text), method) for text, method in edits]


_RULES: dict[str, Callable[[str, str], list[Edit]]] = {
    InterventionType.LOGIC_FLIP: lambda thought, query: _reconciled(thought, _logic_flip(thought)),
    InterventionType.FACT_REVERSAL: lambda thought, query: _reconciled(thought, _fact_reversal(thought)),
    InterventionType.PREMISE_NEGATION: lambda thought, query: _premise_negation(thought),
    InterventionType.CAUSAL_REVERSAL: lambda thought, query: _causal_reversal(thought),
    InterventionType.CONCLUSION_SWAP: conclusion_swaps,
}


class RuleCritic:
    """Contradicts thoughts with word rules: antonym swaps, changed numbers, negation, swapped causes, another
    conclusion.

    Deterministic and offline, so audits are reproducible and cost nothing. Rules per type:

    - ``logic_flip``: swap every antonym from a fixed list (multiply/divide, more/less, true/false, ...),
      arithmetic operators (``8*3``, ``6 x 7``) and comparisons (``<``, ``>=``); a copula or modal
      ("is" -> "isn't") only when the thought has nothing else to flip, since flipping both the verb and the
      comparison of a clause cancels out.
    - ``fact_reversal``: change every number to a different one; without numbers, negate the last
      claim's copula ("is" -> "is not"), unless that is the very edit premise negation makes.
    - ``premise_negation``: negate the first clause (its copula or modal, "has 17 floors" -> "does not have 17
      floors", "need to" -> "do not need to", or prefix "It is not true that").
    - ``causal_reversal``: swap the two sides of the first causal connective (because, so,
      therefore, leads to, ...) of a sentence.
    - ``conclusion_swap``: replace what the thought commits to (its final calculation or number, option
      letter or yes/no, read as :mod:`~ariadne_lc.interventions.implied` reads it) with a plausible different one,
      and the work that leads to it with it (:mod:`._swap`).

    An edit must leave a thought whose parts commit to one answer (:mod:`.coherence`): a logic flip or fact reversal
    that changes a stated calculation has its stated result recomputed (``3 * 4 = 12`` -> ``5 * 7 = 35``, and
    the conclusion with it), and edits that still contradict themselves come last, for the gate to reject as
    ``incoherent``.

    Each rule also has further candidate edits (:meth:`candidates`), which :meth:`revise` hands out one by one
    when the decisiveness gate rejects an edit that left the thought's conclusion where it was: each single
    antonym from the last one back, the numbers exchanged by rank (so a comparison between them flips), the last
    number alone, another operand or operator of the conclusion, the causal link of another sentence.

    Examples:
        >>> RuleCritic().intervene("Prices rise, so demand falls.", "causal_reversal").intervened
        'Demand falls, so prices rise.'
        >>> RuleCritic().intervene("6 boxes of 7: the answer is 6 * 7.", "conclusion_swap").intervened
        '6 boxes of 7: the answer is 6 * 8.'
    """

    def candidates(self, thought: str, intervention_type: str, *, query: str = "") -> list[Intervention]:
        """Every distinct edit the rule for ``intervention_type`` can make of ``thought``, coherent ones first."""
        rule = _RULES.get(intervention_type)
        if rule is None or not thought.strip():
            return []
        seen = {thought.strip()}
        out: list[Intervention] = []
        for text, method in rule(thought, query):
            if text.strip() in seen:
                continue
            seen.add(text.strip())
            out.append(
                Intervention(type=intervention_type, original=thought, intervened=text, applicable=True, method=method)
            )
        # Coherent edits first (a stable sort keeps the order within each group): the gate rejects the others.
        return sorted(out, key=lambda c: incoherence(thought, c.intervened or "", query=query) is not None)

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        if intervention_type not in _RULES:
            return Intervention.not_applicable(
                intervention_type, thought, f"the rule critic has no rule for {intervention_type!r}"
            )
        if not thought.strip():
            return Intervention.not_applicable(intervention_type, thought, "empty thought")
        found = self.candidates(thought, intervention_type, query=query)
        if not found:
            return Intervention.not_applicable(intervention_type, thought, f"no {intervention_type} rule matched")
        return found[0]

    def revise(
        self, thought: str, intervention_type: str, *, query: str = "", rejected: Sequence[str] = (), feedback: str = ""
    ) -> Intervention:
        """The next candidate edit that is none of ``rejected`` (``feedback`` says why they were; rules need not
        read it), or ``not_applicable`` when the rule has no other."""
        skip = {r.strip() for r in rejected}
        for candidate in self.candidates(thought, intervention_type, query=query):
            if (candidate.intervened or "").strip() not in skip:
                return candidate
        return Intervention.not_applicable(intervention_type, thought, f"no other {intervention_type} edit")
