"""The decisiveness gate: a contradiction counts only when it changes what the thought commits to.

A violation must mean "the thought now commits to something else, and the answer ignored it". An edit that leaves
the commitment where it was ("It is not true that 3 boxes hold 4. The answer is 3 * 4.") tests nothing: the answer
rightly stays, and calling that a violation is the critic's false alarm. So before a contradiction is replayed:

1. a reader (:mod:`ariadne_lc.interventions.implied`) reads the answer the original thought implies, given the
   query (cached: once per step). No answer: the audit is ``not_applicable`` (``no_commitment``);
2. it reads the answer the intervened thought implies, and the audit's own scorer compares the two: the edit is
   decisive when S <= τ (the same rule that calls the final answers different);
3. a rejected edit is sent back to the critic (``critic.revise``: the rule critic's next candidate, the LLM
   critic's rewrite with the reason as feedback), up to ``max_attempts`` edits in all; then ``not_applicable``
   (``not_decisive``). An edit that implies no answer at all is rejected too: it commits to nothing, not to
   something else.

Before it is read, an edit must leave a thought whose parts commit to one answer (:mod:`~ariadne_lc.interventions.\
coherence`): one that states a calculation it does not hold ("180 - 3 = 191"), rests a calculation on the premise it
negates, or concludes against its own work, is rejected unread as ``incoherent`` and revised the same way; when no
edit within the attempts was coherent, the audit is ``not_applicable`` with outcome ``incoherent`` (counted apart
from ``not_decisive``: the critic could not contradict the thought coherently).

The paraphrase placebo gets the opposite gate: a "paraphrase" that changes the implied answer is no placebo, and is
revised or dropped (``placebo_changed``). Other controls are not gated. Written once as a flow (:mod:`._twin`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from ariadne_lc._twin import Call, Flow
from ariadne_lc.interventions import ControlType, Critic, Intervention, is_control
from ariadne_lc.interventions.coherence import incoherence
from ariadne_lc.interventions.implied import AnswerReader, ImpliedAnswer, aread_with, thought_form
from ariadne_lc.records import Decisiveness, GateOutcome
from ariadne_lc.scoring import Similarity, SimilarityScorer, ascore_with

__all__ = ["DEFAULT_GATE_ATTEMPTS", "Gate", "gated"]

DEFAULT_GATE_ATTEMPTS = 4
"""Edits the gate reads per audit (the critic's first and up to three revisions) before giving up."""


def gated(kind: str) -> bool:
    """Whether the gate applies to ``kind``: every contradiction, and the paraphrase placebo."""
    return not is_control(kind) or kind == ControlType.PARAPHRASE


@dataclass(frozen=True, slots=True)
class Gate:
    """The gate's parts: who reads implied answers, who compares them, and how often a critic may try."""

    reader: AnswerReader
    scorer: SimilarityScorer
    tau: float
    max_attempts: int = DEFAULT_GATE_ATTEMPTS
    coherence: bool = True
    """Reject edits that contradict themselves; off for an ``observation_swap``, whose changed tool output is meant to
    disagree with the thought's own work (the question is whether the answer reads the tool)."""

    def check(
        self, critic: Critic, thought: str, kind: str, query: str, first: Intervention
    ) -> Flow[tuple[Intervention, Decisiveness | None]]:
        """The edit to replay (or a ``not_applicable`` one) and the gate's record; no record when the critic made
        no edit to read."""
        if not first.applicable or first.intervened is None:
            return first, None
        original = yield self._read(query, thought)
        form = thought_form(query, thought)
        placebo = kind == ControlType.PARAPHRASE
        if original.answer is None:
            record = Decisiveness(outcome="no_commitment", reader=original.reader, form=form, attempts=0)
            reason = f"no_commitment: {original.reason or 'the thought implies no answer'}"
            return Intervention.not_applicable(kind, thought, reason, first.rejections), record
        current, rejected, tried = first, list[str](), list[str]()
        implied: ImpliedAnswer | None = None
        similarity: float | None = None
        incoherent = 0
        for attempt in range(1, self.max_attempts + 1):
            assert current.intervened is not None
            checked = self.coherence and not placebo
            contradiction = incoherence(thought, current.intervened, query=query) if checked else None
            if contradiction is not None:  # rejected unread: its parts commit to different answers
                incoherent += 1
                why: str | None = f"incoherent: {contradiction}"
            else:
                implied = yield self._read(query, current.intervened)
                similarity, why = yield from self._compare(original, implied, kind, query)
                accepted = why is None if not placebo else (similarity is not None and similarity > self.tau)
                if accepted:
                    outcome: GateOutcome = "placebo_kept" if placebo else "decisive"
                    record = self._record(outcome, original, implied, form, similarity, attempt, rejected, incoherent)
                    return current.model_copy(update={"rejections": (*current.rejections, *rejected)}), record
                if placebo:
                    why = f"the paraphrase changed the implied answer to {implied.answer!r}"
            rejected.append(f"{why}: {_snippet(current.intervened)}")
            tried.append(current.intervened)
            if attempt == self.max_attempts:
                break
            revised = yield from self._revise(critic, thought, kind, query, tried, why or "")
            if revised is None or not revised.applicable or revised.intervened is None:
                break
            current = revised
        outcome = "placebo_changed" if placebo else "incoherent" if incoherent == len(rejected) else "not_decisive"
        record = self._record(outcome, original, implied, form, similarity, len(rejected), rejected, incoherent)
        summary = f"{outcome}: {len(rejected)} edit(s) left the implied answer {original.answer!r} in place"
        if outcome == "incoherent":
            first_why = rejected[0].removeprefix("incoherent: ")
            summary = f"incoherent: {len(rejected)} edit(s) contradicted themselves ({first_why})"
        if placebo:
            summary = f"{outcome}: {len(rejected)} paraphrase(s) changed the implied answer {original.answer!r}"
        return Intervention.not_applicable(kind, thought, summary, (*first.rejections, *rejected)), record

    def _read(self, query: str, thought: str) -> Call[ImpliedAnswer]:
        reader = self.reader
        return Call(lambda: reader.read(query, thought), lambda: aread_with(reader, query, thought))

    def _compare(
        self, original: ImpliedAnswer, implied: ImpliedAnswer, kind: str, query: str
    ) -> Flow[tuple[float | None, str | None]]:
        """S between the implied answers and, when the edit is not decisive, why."""
        if implied.answer is None:
            return None, f"the edit implies no answer ({implied.reason or 'none read'})"
        a, b, scorer = cast(str, original.answer), implied.answer, self.scorer
        similarity: Similarity = yield Call(
            lambda: scorer.score(a, b, intervention=kind, query=query),
            lambda: ascore_with(scorer, a, b, intervention=kind, query=query),
        )
        if similarity.value is None:
            return None, f"the scorer could not compare the implied answers ({similarity.method})"
        if similarity.value > self.tau:
            return similarity.value, f"the edit still implies {b!r} (S = {similarity.value:.2f} > tau)"
        return similarity.value, None

    @staticmethod
    def _revise(
        critic: Critic, thought: str, kind: str, query: str, rejected: Sequence[str], feedback: str
    ) -> Flow[Intervention | None]:
        revise = getattr(critic, "revise", None)
        if revise is None:
            return None  # a critic without revisions gets one attempt
        texts = tuple(rejected)
        arevise = getattr(critic, "arevise", None)

        async def call_async() -> Intervention:
            if arevise is not None:
                return cast(Intervention, await arevise(thought, kind, query=query, rejected=texts, feedback=feedback))
            return cast(Intervention, revise(thought, kind, query=query, rejected=texts, feedback=feedback))

        revised: Intervention = yield Call(
            lambda: cast(Intervention, revise(thought, kind, query=query, rejected=texts, feedback=feedback)),
            call_async,
        )
        return revised

    @staticmethod
    def _record(
        outcome: GateOutcome,
        original: ImpliedAnswer,
        implied: ImpliedAnswer | None,
        form: str,
        similarity: float | None,
        attempts: int,
        rejected: Sequence[str],
        incoherent: int,
    ) -> Decisiveness:
        return Decisiveness(
            outcome=outcome,
            reader=original.reader,
            form=form,
            original_implied=original.answer,
            intervened_implied=None if implied is None else implied.answer,
            similarity=similarity,
            attempts=attempts,
            rejected=tuple(rejected),
            incoherent=incoherent,
        )


def _snippet(text: str | None, limit: int = 80) -> str:
    flat = " ".join((text or "").split())
    return repr(flat[:limit]) + ("..." if len(flat) > limit else "")
