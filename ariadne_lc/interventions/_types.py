"""What an intervention is: its kind (a contradiction or a control), and the typed outcome a critic returns."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ariadne_lc.errors import ConfigurationError

__all__ = [
    "CONTRADICTIONS",
    "CONTROLS",
    "OBSERVATIONS",
    "THOUGHT_CONTRADICTIONS",
    "ControlType",
    "Critic",
    "Intervention",
    "InterventionKind",
    "InterventionType",
    "ObservationType",
    "aintervene_with",
    "is_control",
    "parse_intervention_types",
]


class InterventionType(StrEnum):
    """The contradictions (docs/method.md#interventions)."""

    LOGIC_FLIP = "logic_flip"
    """Flip logical operators and directions (true/false, increase/decrease, multiply/divide)."""
    FACT_REVERSAL = "fact_reversal"
    """Reverse factual claims (numbers, is/is not)."""
    PREMISE_NEGATION = "premise_negation"
    """Negate the premise the step starts from."""
    CAUSAL_REVERSAL = "causal_reversal"
    """Swap cause and effect."""
    CONCLUSION_SWAP = "conclusion_swap"
    """Replace what the thought commits to (its final number or calculation, option, yes/no, named entity) with a
    plausible different one, leaving the rest."""
    PLAN_SWAP = "plan_swap"
    """Replace the action the thought plans: another of the agent's tools in place of the one it names, or another
    value for an argument it states (needs the agent's tools: :class:`~ariadne_lc.interventions.plans.PlanCritic`)."""


class ControlType(StrEnum):
    """Controls: replays reported beside the contradictions, to say what a contradiction's effect is worth.

    A contradiction that moves the answer only proves something if a change that should *not* matter
    leaves it alone (``paraphrase``, the placebo) and the replay itself is stable (``rerun``, the noise
    floor). ``ablation``, ``filler`` and ``early_answer`` are the content-free interventions of
    step-ablation harnesses (FaithCheck) and early answering: they remove what a step says instead of
    contradicting it.
    """

    PARAPHRASE = "paraphrase"
    """Placebo: the step's thought said differently, with the same meaning."""
    RERUN = "rerun"
    """Noise floor: the replay with the thought unchanged."""
    ABLATION = "ablation"
    """The step's thought removed (empty text); its tool calls and their outputs are kept."""
    EARLY_ANSWER = "early_answer"
    """The run cut right after the step's thought (its tool calls dropped) and the model asked to answer."""
    FILLER = "filler"
    """The step's thought replaced by neutral filler ("... ...") of the same length."""


class ObservationType(StrEnum):
    """Interventions on a step's tool output: the ``observation->answer`` link (docs/method.md#links)."""

    OBSERVATION_SWAP = "observation_swap"
    """The value in one tool output that an answer could depend on, replaced by a plausible other."""


CONTRADICTIONS: tuple[InterventionType, ...] = tuple(InterventionType)
"""All contradiction types, in the order of docs/method.md#interventions."""
THOUGHT_CONTRADICTIONS: tuple[InterventionType, ...] = tuple(t for t in InterventionType if t != "plan_swap")
"""The contradictions a critic makes from the thought alone (``plan_swap`` needs the agent's tools): the pool of the
``random`` selector."""

CONTROLS: tuple[ControlType, ...] = tuple(ControlType)
"""All control kinds."""

OBSERVATIONS: tuple[ObservationType, ...] = tuple(ObservationType)
"""All interventions on tool outputs."""

InterventionKind = InterventionType | ControlType | ObservationType
"""Anything the auditor can do to a step: a contradiction or a control."""


def is_control(kind: str) -> bool:
    """Whether ``kind`` names a control rather than a contradiction."""
    return kind in CONTROLS


class Intervention(BaseModel):
    """A critic's answer for one step and one type: the rewritten thought, or why there is none.

    ``applicable`` is false when the critic found nothing to contradict; such an intervention must
    not be replayed or scored, since an unchanged step would pass for a violation.
    """

    model_config = ConfigDict(frozen=True)

    type: str
    """The intervention type (an :class:`InterventionType` value, or a control's name)."""
    original: str
    """The step's thought as recorded."""
    intervened: str | None
    """The rewritten thought; ``None`` when not applicable."""
    applicable: bool
    """Whether a real change was made."""
    method: str
    """How it was made (e.g. ``rule:antonym``, ``llm``) or why not."""
    rejections: tuple[str, ...] = ()
    """Why earlier replies of a model critic were rejected (one entry per rejected reply)."""

    @classmethod
    def not_applicable(cls, type_: str, original: str, reason: str, rejections: tuple[str, ...] = ()) -> Intervention:
        """The typed "nothing to change" outcome."""
        return cls(
            type=type_, original=original, intervened=None, applicable=False, method=reason, rejections=rejections
        )


@runtime_checkable
class Critic(Protocol):
    """Makes the contradicted version s'_k of a step's thought.

    A critic may also define ``async def aintervene(...)`` with the same signature; the async
    auditor uses it when present.
    """

    def intervene(self, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
        """Rewrite ``thought`` according to ``intervention_type`` (the query is context only)."""


def _valid_names() -> str:
    return ", ".join([*CONTRADICTIONS, *OBSERVATIONS, *CONTROLS])


def parse_intervention_types(names: str | list[str] | tuple[str, ...]) -> list[InterventionKind]:
    """Validate intervention names (contradictions and controls), with a message that lists the valid ones."""
    items = [names] if isinstance(names, str) else list(names)
    if not items:
        raise ConfigurationError("no interventions given; choose from " + _valid_names())
    out: list[InterventionKind] = []
    for name in items:
        if name in CONTRADICTIONS:
            out.append(InterventionType(name))
        elif name in CONTROLS:
            out.append(ControlType(name))
        elif name in OBSERVATIONS:
            out.append(ObservationType(name))
        else:
            raise ConfigurationError(f"unknown intervention {name!r}; choose from " + _valid_names())
    return out


async def aintervene_with(critic: Critic, thought: str, intervention_type: str, *, query: str = "") -> Intervention:
    """``critic.aintervene`` when the critic has one, else its sync ``intervene``."""
    aintervene = getattr(critic, "aintervene", None)
    if aintervene is not None:
        return cast(Intervention, await aintervene(thought, intervention_type, query=query))
    return critic.intervene(thought, intervention_type, query=query)
