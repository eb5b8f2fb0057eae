"""The records of a calibration run: one :class:`CalibrationAudit` per audit of a ground-truth agent.

A calibration audits agents whose dependence on the audited thought is known by construction (see
:mod:`ariadne_lc.calibration`), so every audit carries its truth. These records are pure data: the runner
writes one as soon as its audit finishes (so an interrupted run resumes), and the analysis reads them back.
This module imports nothing from the engine, so that reports can read calibrations cheaply.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from ariadne_lc.records import AuditResult

__all__ = ["AgentKind", "CalibrationAudit", "CalibrationConfig", "Method", "Split", "Truth"]

AgentKind = Literal["coupled", "bypass", "mixture", "natural", "coupled_llm", "coupled_tool"]
"""coupled: the answer is a function of the thought (truth faithful); bypass: the answering call never sees
the thought (truth unfaithful); mixture: a hash of the query routes a fraction p down the bypass path;
natural: the demo ReAct agent, truth unknown; coupled_llm: a model answers from the thought alone (faithful);
coupled_tool: the thought's own tool call carries its decision to the answer (faithful)."""
Truth = Literal["faithful", "unfaithful"]
Method = Literal["ariadne", "ariadne_ungated", "ariadne_rederive", "reference_strict", "reference_lenient"]
"""ariadne: our graph replay with the decisiveness gate; ariadne_ungated: the same without the gate (every edit
replayed), on the same traces; ariadne_rederive: with the gate, the step's tool calls re-derived from the
intervened thought; reference_*: the public Ariadne code's re-prompt baseline, judged with our strict judge or
with its lenient parsing and 0.5 fallback."""
Split = Literal["calibrate", "validate"]


class CalibrationConfig(BaseModel):
    """What a calibration is valid for: a report refuses a calibration made with another configuration."""

    model_config = ConfigDict(frozen=True)

    model: str
    """The model the agents (and the LLM critic/judge, if any) ran on."""
    critic: str
    """``rule`` or ``llm``."""
    scorer: str
    """``answer``, ``judge`` or ``embedding``."""
    tau: float
    lam: int
    decisive: bool = False
    """Whether the decisiveness gate was on (calibrations made before it existed had none)."""
    reader: str | None = None
    """The gate's reader (``rule``, ``model:<name>``); ``None`` without the gate."""

    def describe(self) -> str:
        """The configuration in words, for reports and error messages."""
        gate = f"gate=on (reader {self.reader})" if self.decisive else "gate=off"
        return (
            f"model={self.model}, critic={self.critic}, scorer={self.scorer}, tau={self.tau:g}, lambda={self.lam}, "
            f"{gate}"
        )

    def ungated(self) -> CalibrationConfig:
        """The same configuration without the gate (what the ``ariadne_ungated`` method measured)."""
        return self.model_copy(update={"decisive": False, "reader": None})

    def differences(self, other: CalibrationConfig) -> list[str]:
        """The fields in which ``other`` differs from this configuration, as ``name: ours != theirs``."""
        return [
            f"{name}: {getattr(self, name)!r} != {getattr(other, name)!r}"
            for name in type(self).model_fields
            if getattr(self, name) != getattr(other, name)
        ]


class CalibrationAudit(BaseModel):
    """One audit of a ground-truth agent, with the truth known for it."""

    model_config = ConfigDict(frozen=True)

    agent: AgentKind
    p: float | None = None
    """The routing rate of a mixture agent (``None`` for the others)."""
    truth: Truth | None = None
    """Known per query by construction (the path the query took); ``None`` for the natural agent."""
    split: Split
    query_id: str
    domain: str
    method: Method = "ariadne"
    decisive_changed: bool | None = None
    """Whether the intervention changed the decisive content the coupled path reads (the expression, the
    option); ``None`` where there is none. A false alarm with ``False`` here is the critic's, not the replay's."""
    result: AuditResult
