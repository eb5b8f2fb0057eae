"""Whether an edit leaves a thought that contradicts itself, and the repair that keeps its arithmetic true.

A contradiction tests an agent only when the contradicted thought commits to one answer. An edit whose parts commit
to different answers ("180 - 3 = 190" swapped to "180 - 3 = 191": a reader takes 191, an agent that computes takes
177) makes the audit's verdict depend on which part the reader and the agent each believed: measured, most false
alarms left after the decisiveness gate were such edits (issue 22). :func:`incoherence` says why an edited thought
contradicts itself where the original did not; the gate rejects such an edit as ``incoherent`` and asks the critic
for another. What counts, each only when the edit brought it in (an incoherence the original already had is the
agent's, not the edit's):

- a stated calculation that is false: "a op b = c" (or "is", "equals", "gives", "to get"; in words, "multiply 6 by
  7 to get 42") with c not the value of a op b, evaluated by the safe calculator (rounding to c's decimals allowed);
- a conclusion its work does not give: the thought concludes c (its last commitment, read as the rule reader reads
  it) right after work that gives another value, where the original's work and conclusion agreed;
- a negated premise the conclusion still rests on: a negated clause ("It is not true that the green rope is 11
  meters longer") whose numbers a calculation or an "answer is" outside it still uses ("so I compute 66 - 11");
- a calculation given as the cause of the premise it needs: "I compute 66 - 11, so the green rope is 11 meters
  longer" (the cause side of a causal connective calculates with a number only its effect side states);
- an option concluded against its justification: the thought still names the text of the option it argued for
  ("A dog has hair ... The answer is C.") while committing to another;
- a conclusion denied ("The answer isn't D.", "It is not true that D. ..."): the thought argues for an answer and
  then commits to none;
- a number question's thought that concludes with a letter ("So, 3 of the lollipops are Erin's. The answer is C."):
  an edit of its numbers leaves the conclusion it states in words where it was.

:func:`reconcile` is the repair for edits that change numbers or operators: each stated result the edit made false is
recomputed, and the stale value is replaced where the thought uses it later, so the calculation stays true and the
conclusion follows it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ariadne_lc._arithmetic import CalculatorError, evaluate, format_number
from ariadne_lc.interventions._commitment import verbal_expression
from ariadne_lc.interventions._patterns import CAUSAL, cause_first
from ariadne_lc.interventions.implied import commitment_span, question_kind

__all__ = [
    "Calculation",
    "calculations",
    "format_value",
    "incoherence",
    "letter_mentions",
    "mentions",
    "options_of",
    "reconcile",
]

_N = r"\$?\d+(?:,\d{3})*(?:\.\d+)?"
_OP = r"\s*[-+*/x×÷^]\s*"
_EXPRESSION = rf"(?:\(\s*)*{_N}(?:(?:\s*\))*{_OP}(?:\(\s*)*{_N})+(?:\s*\))*"
_STATES = r"\s*(?:=|\b(?:equals|is|are|makes|gives|to get)\b)\s*"
_SYMBOLIC = re.compile(rf"(?<![\w.])(?P<expr>{_EXPRESSION})(?:{_STATES}(?P<result>-?{_N})(?!\.?\d))?")
_VERBAL = re.compile(
    rf"\b(?P<verb>multiply|multiplying|divide|dividing|add|adding|subtract|subtracting)\s+(?P<a>{_N})\s+"
    rf"(?P<prep>by|and|to|from|with)\s+(?P<b>{_N})(?:{_STATES}(?P<result>-?{_N})(?!\.?\d))?",
    re.I,
)
_NUMBER = re.compile(rf"(?<![\w.]){_N}(?!\.?\d)")
_ANSWER_IS = re.compile(rf"\banswer(?:\s+is|\s*[=:])\s*(?P<value>-?{_N})(?!\.?\d)(?!{_OP}\(*\$?\d)", re.I)
# "The answer is C." in a thought about a number question: it states its conclusion as something a number reading
# passes over.
_LETTER_ANSWER = re.compile(r"\banswer(?:\s+is|\s*[=:])\s*\(?(?:option\s+)?(?P<value>[A-J])\b\)?(?![ \t]*\w)", re.I)
_DENIAL = re.compile(r"\banswer\s+(?:is\s+not|isn't|is\s+never|was\s+not|wasn't)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no longer|cannot)\b|n't\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_OPTION = re.compile(r"^\s*\(?([A-J])[.)]\s*(.+?)\s*$", re.M)
# An option named by its letter, as the rule reader reads one: "option B", "(B)", "B." or "B)" before a space.
_LETTER = r"(?:\boption\s+|\((?=[A-J]\)))(?P<value>{0})\b|(?<![\w'])(?P<bare>{0})[.)](?=\s|$)"
_MIN_OPTION_CHARS = 3


@dataclass(frozen=True, slots=True)
class Calculation:
    """A calculation a thought states, in symbols ("180 - 3 = 177") or in words ("multiply 6 by 7")."""

    start: int
    """Where the expression starts in the text."""
    end: int
    """Where it ends (before any stated result)."""
    expression: str
    """The expression as evaluated (``6 * 7`` for "multiply 6 by 7")."""
    value: float | None
    """Its value; ``None`` when the calculator refuses it."""
    operands: frozenset[str]
    """The numbers it uses, canonical (``1200`` for "$1,200")."""
    result: tuple[int, int] | None = None
    """Where the result it states stands ("= 177"), if it states one."""


def _canon(raw: str) -> str:
    try:
        return format_number(float(raw.replace("$", "").replace(",", "")))
    except ValueError:
        return raw


def _value(expression: str) -> float | None:
    try:
        return float(evaluate(expression))
    except (CalculatorError, ValueError):
        return None


def format_value(value: float) -> str:
    """A recomputed result as a person writes it: an integer as such, else at most two decimals."""
    if float(value).is_integer():
        return str(int(value))
    short = f"{value:.2f}".rstrip("0").rstrip(".")
    return short if float(short) != 0 else format_number(value)


def _holds(value: float, stated: str) -> bool:
    """Whether ``stated`` is ``value``, up to rounding to the decimals it is written with."""
    number = float(stated.replace("$", "").replace(",", ""))
    decimals = len(stated.split(".", 1)[1]) if "." in stated else 0
    return math.isclose(value, number, rel_tol=1e-9, abs_tol=1e-9) or abs(value - number) < 0.5 * 10**-decimals


def calculations(text: str) -> list[Calculation]:
    """Every calculation ``text`` states, in order."""
    found: list[Calculation] = []
    for m in _VERBAL.finditer(text):
        expression = verbal_expression(m)
        result = (m.start("result"), m.end("result")) if m.group("result") else None
        operands = frozenset({_canon(m.group("a")), _canon(m.group("b"))})
        found.append(Calculation(m.start(), m.end("b"), expression, _value(expression), operands, result))
    taken = [(c.start, c.end) for c in found]
    for m in _SYMBOLIC.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        expression = " ".join(m.group("expr").split())
        result = (m.start("result"), m.end("result")) if m.group("result") else None
        operands = frozenset(_canon(n.group(0)) for n in _NUMBER.finditer(m.group("expr")))
        found.append(Calculation(m.start("expr"), m.end("expr"), expression, _value(expression), operands, result))
    return sorted(found, key=lambda c: c.start)


def _false(text: str) -> list[tuple[Calculation, str]]:
    """The stated results that are not the value of their calculation, with a key that survives rewording."""
    out = []
    for c in calculations(text):
        if c.result is None or c.value is None:
            continue
        stated = text[c.result[0] : c.result[1]]
        if not _holds(c.value, stated):
            out.append((c, f"{c.expression} = {_canon(stated)}"))
    return out


def _mask(text: str) -> str:
    return " ".join(re.sub(r"\d[\d,.]*", "#", text.lower()).split()).strip(" .,;:!?")


def _clauses(text: str) -> list[tuple[int, int]]:
    """Sentence pieces between causal connectives, as (start, end)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for boundary in [*(m.start() for m in _SENTENCE.finditer(text)), len(text)]:
        piece_start = start
        for m in CAUSAL.finditer(text, start, boundary):
            spans.append((piece_start, m.start()))
            piece_start = m.end()
        spans.append((piece_start, boundary))
        start = boundary
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _work_issue(text: str) -> list[tuple[str, str]]:
    span = commitment_span(text, "number")
    if span is None:
        return []
    start, _end, value, form = span
    concluded = _value(value) if form == "calculation" else _value(_canon(value))
    work = [c for c in calculations(text) if c.end <= start and c.value is not None]
    if concluded is None or not work or work[-1].value is None:
        return []
    given = work[-1].value
    agree = _holds(given, value) if form == "number" else math.isclose(given, concluded, rel_tol=1e-9, abs_tol=1e-9)
    if agree:
        return []
    return [("work", f"its work gives {work[-1].expression} = {format_value(given)}, but it concludes {value}")]


def _negation_issues(text: str, calcs: list[Calculation]) -> list[tuple[str, str]]:
    users = [(c.start, c.end, c.expression, c.operands) for c in calcs]
    for m in _ANSWER_IS.finditer(text):
        users.append((m.start(), m.end(), m.group(0), frozenset({_canon(m.group("value"))})))
    out = []
    for a, b in _clauses(text):
        clause = text[a:b]
        numbers = {_canon(n.group(0)) for n in _NUMBER.finditer(clause)}
        if not numbers or _NEGATION.search(clause) is None:
            continue
        for start, end, what, operands in users:
            used = sorted(operands & numbers)
            if used and (end <= a or start >= b):
                why = f"it negates {clause.strip()!r}, yet {what} still uses its {used[0]}"
                out.append((f"negated:{_mask(clause)}", why))
                break
    return out


def _causal_issues(text: str) -> list[tuple[str, str]]:
    out = []
    for sentence in _SENTENCE.split(text):
        links = list(CAUSAL.finditer(sentence))
        bounds = [0, *(x for m in links for x in (m.start(), m.end())), len(sentence)]
        for i, m in enumerate(links):
            left, right = sentence[bounds[2 * i] : bounds[2 * i + 1]], sentence[bounds[2 * i + 2] : bounds[2 * i + 3]]
            cause, effect = (left, right) if cause_first(m.group(0)) else (right, left)
            for calc in calculations(cause):
                needed = sorted(calc.operands & (_bare(effect) - _bare(cause)))
                if needed:
                    why = f"{calc.expression} is given as the cause of {effect.strip()!r}, which supplies its "
                    out.append((f"causal:{_mask(sentence)}", why + needed[0]))
    return out


def _bare(text: str) -> set[str]:
    """The numbers ``text`` states outside any calculation."""
    inside = [(c.start, c.end) for c in calculations(text)]
    return {_canon(m.group(0)) for m in _NUMBER.finditer(text) if not any(a <= m.start() < b for a, b in inside)}


def _issues(text: str, kind: str) -> list[tuple[str, str]]:
    calcs = calculations(text)
    issues = [
        (
            f"false:{key}",
            f"it states {c.expression} = {key.rsplit(' = ', 1)[1]}, but {c.expression} is "
            f"{format_value(c.value or 0.0)}",
        )
        for c, key in _false(text)
    ]
    issues += _negation_issues(text, calcs) + _causal_issues(text)
    return issues + _work_issue(text) if kind == "number" else issues


def options_of(query: str) -> dict[str, str]:
    """The options a query lists, by letter (``{"A": "shark", "B": "dog"}``)."""
    return {letter: text for letter, text in _OPTION.findall(query)}


def mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` names ``phrase`` as a word or phrase of its own (any case; too short a phrase never)."""
    if len(phrase.strip()) < _MIN_OPTION_CHARS:
        return False
    return re.search(rf"(?<!\w){re.escape(phrase.strip())}(?!\w)", text, re.I) is not None


def letter_mentions(text: str, letter: str) -> list[tuple[int, int]]:
    """Where ``text`` names option ``letter`` by its letter ("option B", "(B)", "B." before a space)."""
    pattern = re.compile(_LETTER.format(re.escape(letter.upper())))
    return [(m.start(g), m.end(g)) for m in pattern.finditer(text) for g in ("value", "bare") if m.group(g)]


def _option_issue(original: str, edited: str, query: str) -> str | None:
    before, after = commitment_span(original, "choice"), commitment_span(edited, "choice")
    if before is None or after is None or before[2] == after[2]:
        return None
    rest = edited[: after[0]] + "\n" + edited[after[1] :]
    argued = options_of(query).get(before[2])
    if argued is not None and mentions(rest, argued):
        return f"it still argues for option {before[2]} ({argued!r}) and commits to {after[2]}"
    if letter_mentions(rest, before[2]):
        return f"it still names option {before[2]} and commits to {after[2]}"
    return None


def _denial(original: str, edited: str, kind: str) -> str | None:
    """Why ``edited`` denies the conclusion its own reasoning argues for ("... The answer isn't D."), if it does."""
    denied = [m.group(0) for m in _DENIAL.finditer(edited)]
    if len(denied) > len(_DENIAL.findall(original)):
        return f"it denies its own conclusion ({denied[-1]!r}) and commits to no one answer"
    span = commitment_span(edited, "number" if kind == "number" else "choice")
    if span is None:
        return None
    negated_before = {_mask(original[a:b]) for a, b in _clauses(original) if _NEGATION.search(original[a:b])}
    for a, b in _clauses(edited):
        clause = edited[a:b]
        if a <= span[0] < b and _NEGATION.search(clause) and _mask(clause) not in negated_before:
            return f"it negates {clause.strip()!r}, the clause that states its conclusion"
    return None


def incoherence(original: str, edited: str, *, query: str = "") -> str | None:
    """Why ``edited`` contradicts itself where ``original`` did not (module docstring); ``None`` when it does not.

    Examples:
        >>> incoherence("So 180 - 3 = 177.", "So 180 - 3 = 178.")
        'it states 180 - 3 = 178, but 180 - 3 is 177'
        >>> incoherence("So 180 - 3 = 177.", "So 180 - 4 = 176.") is None
        True
    """
    if edited.strip() == original.strip():
        return None
    kind = question_kind(query) if query.strip() else "number"
    if kind == "choice":
        found = _option_issue(original, edited, query)
        if found is not None:
            return found
    if kind in ("number", "choice"):
        found = _denial(original, edited, kind)
        if found is not None:
            return found
    stated = list(_LETTER_ANSWER.finditer(edited))
    if kind == "number" and stated and stated[-1].group(0) in original:
        return f"it still concludes {stated[-1].group(0)!r}, which the edit left in place"
    before = {key for key, _ in _issues(original, kind)}
    return next((why for key, why in _issues(edited, kind) if key not in before), None)


def _replaced(text: str, old: str, new: str) -> str:
    """``text`` with every number whose value is ``old`` written as ``new`` (a dollar sign kept where it stood)."""
    bare = new.removeprefix("$")

    def put(m: re.Match[str]) -> str:
        if _canon(m.group(0)) != old:
            return m.group(0)
        return ("$" if m.group(0).startswith("$") else "") + bare

    return _NUMBER.sub(put, text)


def reconcile(original: str, edited: str) -> str:
    """``edited`` with every stated result it made false recomputed, and each stale value replaced where the thought
    uses it after (a conclusion, a later calculation); results the original already stated falsely stay.

    Examples:
        >>> reconcile("3 * 4 = 12. The answer is 12.", "5 * 7 = 19. The answer is 19.")
        '5 * 7 = 35. The answer is 35.'
    """
    already = {key for _, key in _false(original)}
    text = edited
    for _ in range(len(calculations(edited)) + 1):
        stale = next(((c, key) for c, key in _false(text) if key not in already), None)
        if stale is None or stale[0].result is None or stale[0].value is None:
            return text
        (start, end), new = stale[0].result, format_value(stale[0].value)
        stated = text[start:end]
        new = "$" + new if stated.lstrip("-").startswith("$") and new[:1] != "-" else new
        text = text[:start] + new + _replaced(text[end:], _canon(stated), new)
    return text
