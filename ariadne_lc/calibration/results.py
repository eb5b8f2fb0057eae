"""The result of a calibration: the pipeline's measured error rates, replay noise and mixture validation.

A :class:`Calibration` is pure data and *is* the ``calibration.json`` file (a versioned envelope:
``schema`` and ``schema_version``); :meth:`Calibration.from_document` reads one back and refuses other
schemas and versions with a named error. It is computed by :func:`ariadne_lc.calibration.analyze` and
applied to audit reports by :func:`ariadne_lc.calibration.apply_calibration`.

One :class:`MethodCalibration` per audit method: ``ariadne`` (our graph replay) and the reference
re-prompt baseline with the strict or the lenient judge, so the methods are compared on the same agents,
queries and model.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ariadne_lc.calibration.records import CalibrationConfig
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import CorrectedRate, Rate

__all__ = [
    "ALL_TYPES",
    "CALIBRATION_SCHEMA",
    "CALIBRATION_SCHEMA_VERSION",
    "Calibration",
    "ControlRates",
    "ErrorRates",
    "MethodCalibration",
    "ValidationPoint",
]

CALIBRATION_SCHEMA = "ariadne-lc/calibration"
CALIBRATION_SCHEMA_VERSION = 1
ALL_TYPES = "all"
"""The key of the rates pooled over every contradiction type."""


class ErrorRates(BaseModel):
    """The whole pipeline's error rates for one contradiction type (or all pooled), on the calibrate split.

    Rates of scored audits: ``false_alarm`` (a violation called on a coupled audit, truth faithful) and
    ``miss`` (no violation on a bypass audit, truth unfaithful). Rates of all audits, per agent kind
    (``coupled``, ``bypass``): not applicable (nothing to contradict), inconclusive (no similarity, too weak)
    and failed. The causes break the errors down (see :mod:`ariadne_lc.calibration.analysis`).
    """

    model_config = ConfigDict(frozen=True)

    intervention: str
    false_alarm: Rate
    miss: Rate
    not_applicable: dict[str, Rate] = Field(default_factory=dict)
    inconclusive: dict[str, Rate] = Field(default_factory=dict)
    failed: dict[str, Rate] = Field(default_factory=dict)
    false_alarm_causes: dict[str, int] = Field(default_factory=dict)
    """``decisive_unchanged`` (the contradiction left the content the answer reads unchanged: the critic's
    error), ``answer_unchanged`` (content changed, answer did not), ``scored_similar`` (answers differ but
    S > τ: the scorer's error), ``unknown`` (no decisive content recorded)."""
    miss_causes: dict[str, int] = Field(default_factory=dict)
    """``replay_moved`` (the bypass answer moved by itself: replay noise), ``length_gate`` (S > τ but an
    answer was not longer than λ), ``scored_different`` (answers equal but S ≤ τ: the scorer's error),
    ``unknown``."""
    not_decisive: dict[str, Rate] = Field(default_factory=dict)
    """Per agent kind: the share of contradiction audits the decisiveness gate rejected (no edit changed what the
    thought commits to; ``not_applicable``, never scored)."""
    no_commitment: dict[str, Rate] = Field(default_factory=dict)
    """Per agent kind: the share whose original thought commits to no answer the reader could take."""
    false_alarm_by_form: dict[str, Rate] = Field(default_factory=dict)
    """FA per form of the original thought (``calculation``, ``number``, ``option``, ...): a pooled FA does not
    carry over between agents that write their thoughts differently."""
    tracking: Rate | None = None
    """Over scored faithful audits with a tracking verdict: how often the answer moved *to* the answer the
    intervened thought implies (``tracks``)."""
    incoherent: dict[str, Rate] = Field(default_factory=dict)
    """Per agent kind: the share of contradiction audits the gate rejected because every edit tried contradicted
    itself (``not_applicable``, never scored; :mod:`ariadne_lc.interventions.coherence`)."""

    @property
    def informative(self) -> bool:
        """FA + M < 1: the pipeline separates the two kinds of agent (unknown rates count as not)."""
        fa, m = self.false_alarm.rate, self.miss.rate
        return fa is not None and m is not None and fa + m < 1.0


class ControlRates(BaseModel):
    """How often a control moved the answer, per agent kind: the ``rerun`` is the replay noise floor, the
    ``paraphrase`` placebo is shown beside it."""

    model_config = ConfigDict(frozen=True)

    control: str
    moved: dict[str, Rate]
    """Per agent kind: scored controls whose answer did not hold."""


class ValidationPoint(BaseModel):
    """One validate-split agent with a known unfaithful rate, corrected with the calibrate split's rates."""

    model_config = ConfigDict(frozen=True)

    agent: str
    """``coupled`` (p = 0), ``bypass`` (p = 1) or ``mixture``."""
    p: float
    """The routing rate by construction."""
    true_rate: float | None
    """The share of scored audits whose query actually took the bypass path (the finite-sample truth)."""
    observed: Rate
    """Raw violation rate over the contradictions."""
    corrected: CorrectedRate
    covers_p: bool | None
    """Whether the corrected interval contains p; ``None`` without an interval."""
    covers_true_rate: bool | None


class MethodCalibration(BaseModel):
    """Everything measured for one audit method."""

    model_config = ConfigDict(frozen=True)

    method: str
    errors: dict[str, ErrorRates]
    """Per contradiction type, and ``all`` pooled."""
    errors_by_domain: dict[str, ErrorRates] = Field(default_factory=dict)
    """All contradictions pooled, per question domain (the rates a user's own domain is closest to)."""
    controls: dict[str, ControlRates] = Field(default_factory=dict)
    validation: tuple[ValidationPoint, ...] = ()
    natural: CorrectedRate | None = None
    """The natural agent (truth unknown): its raw and corrected rates, reported beside the others."""
    audits: int = 0
    agents: dict[str, dict[str, ErrorRates]] = Field(default_factory=dict)
    """The further faithful agents (``coupled_llm``, ``coupled_tool``), per contradiction type and ``all``: their
    false-alarm rates, apart from the coupled/bypass pair that FA and M (and every correction) come from."""

    @property
    def overall(self) -> ErrorRates:
        return self.errors[ALL_TYPES]


def _now() -> datetime:
    return datetime.now(UTC)


class Calibration(BaseModel):
    """A calibration run's analysis; this record is the ``calibration.json`` document."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    schema_name: str = Field(default=CALIBRATION_SCHEMA, alias="schema")
    schema_version: int = CALIBRATION_SCHEMA_VERSION
    config: CalibrationConfig
    methods: dict[str, MethodCalibration]
    confidence: float
    seed: int
    n_resamples: int
    audits: int
    """CalibrationAudits analysed."""
    queries: dict[str, int] = Field(default_factory=dict)
    """Distinct queries per split."""
    created_at: datetime = Field(default_factory=_now)
    version: str = ""
    """ariadne-lc version that wrote it."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Open for the runner: N, seed, wall time, machine, model file."""

    def method(self, name: str) -> MethodCalibration:
        """The named method's rates; a :class:`~ariadne_lc.errors.ConfigurationError` naming the ones there."""
        try:
            return self.methods[name]
        except KeyError:
            raise ConfigurationError(
                f"the calibration has no audits of method {name!r}; it has {sorted(self.methods)}"
            ) from None

    def document(self) -> dict[str, Any]:
        """The JSON document (``schema`` first)."""
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_document(cls, document: Any, *, source: str = "calibration") -> Calibration:
        """Read a ``calibration.json`` document; other schemas, versions or malformed ones are refused."""
        if not isinstance(document, dict) or document.get("schema") != CALIBRATION_SCHEMA:
            found = document.get("schema") if isinstance(document, dict) else type(document).__name__
            raise ConfigurationError(f"{source}: not an ariadne-lc calibration (schema {found!r})")
        version = document.get("schema_version")
        if version != CALIBRATION_SCHEMA_VERSION:
            raise ConfigurationError(
                f"{source}: calibration schema version {version!r} is not supported "
                f"(expected {CALIBRATION_SCHEMA_VERSION}); run `ariadne-lc calibrate` again with this version"
            )
        try:
            return cls.model_validate(document)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
            raise ConfigurationError(f"{source}: malformed calibration ({problems})") from None
