"""Typed records of the CoT bypass monitor: the example that goes in, the result that comes out."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "BoundarySensitivity",
    "BypassExample",
    "BypassFailure",
    "BypassReport",
    "BypassResult",
    "DensityPoint",
    "LayerSpan",
    "SpanMetrics",
]


class BypassExample(BaseModel):
    """One prompt whose answer may or may not be caused by its chain of thought.

    The monitor builds two token sequences from it, by tokenizing each piece on its own and
    concatenating the ids (so every position is known exactly, never guessed from text)::

        with CoT:     prompt + cot + answer_prefix + answer
        without CoT:  prompt +       answer_prefix + answer
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: str = Field(min_length=1)
    """The question, with whatever framing the model needs (e.g. ``"Question: ...\\n"``)."""
    cot: str = Field(min_length=1)
    """The chain of thought whose positions are patched."""
    answer: str = Field(min_length=1)
    """The answer text y whose log-probability is measured (only these tokens are scored)."""
    answer_prefix: str = ""
    """Text between the CoT and the answer that both sequences share (e.g. ``"Answer:"``); not scored."""
    id: str | None = None
    """Caller's identifier, copied to the result and the span."""
    tags: list[str] = Field(default_factory=list)
    """Free labels (e.g. ``arithmetic``), copied to the result."""


class LayerSpan(BaseModel):
    """A contiguous range of decoder layers ``[start, stop)``.

    Patching a span overwrites the residual stream (the output hidden state of each decoder layer in the
    span) at the selected positions; layers after the span recompute from the patched stream.
    """

    model_config = ConfigDict(frozen=True)

    start: int = Field(ge=0)
    """First decoder layer of the span (0-based)."""
    stop: int = Field(ge=1)
    """One past the last decoder layer of the span."""

    @model_validator(mode="after")
    def _non_empty(self) -> LayerSpan:
        if self.stop <= self.start:
            raise ValueError(f"layer span [{self.start}, {self.stop}) is empty")
        return self

    @property
    def layers(self) -> range:
        """The decoder layer indices of the span."""
        return range(self.start, self.stop)


class DensityPoint(BaseModel):
    """One point of the density curve."""

    model_config = ConfigDict(frozen=True)

    fraction: float
    """Fraction of CoT positions kept (and patched)."""
    cmi: float
    """CMI with only those positions patched, averaged over spans."""


class SpanMetrics(BaseModel):
    """Every patch measured on one layer span; the example's metrics average these over spans."""

    model_config = ConfigDict(frozen=True)

    span: LayerSpan
    delta_cot: float
    """Δ_cot: nats of log P(y) lost when the CoT positions take no-CoT states."""
    delta_ctrl: float
    """Δ_ctrl: nats lost when as many random non-CoT positions take no-CoT states."""
    cmi: float
    """CMI of this span."""
    placebo_delta_cot: float
    """Δ_cot with noise states instead of no-CoT states at the CoT positions."""
    placebo_cmi: float
    """CMI from the placebo Δ_cot and the unchanged Δ_ctrl."""
    density_cmi: dict[str, float]
    """CMI with a random subset of CoT positions patched, keyed by fraction (``"0.8"``, ...)."""
    shuffled_baseline_logp: float
    """log P(y) when the CoT states are permuted among the CoT positions (the shuffled reference run)."""
    shuffled_cmi: float
    """CMI measured against the shuffled reference run."""
    expanded_cmi: float
    """CMI with the CoT window grown by one token on each side."""
    shrunk_cmi: float
    """CMI with the CoT window shrunk by one token on each side (0 when nothing is left)."""


class BoundarySensitivity(BaseModel):
    """How much CMI depends on where exactly the CoT window starts and ends."""

    model_config = ConfigDict(frozen=True)

    base_cmi: float
    expanded_cmi: float
    shrunk_cmi: float
    absolute_deviation: float
    """``max(|expanded - base|, |shrunk - base|)``."""
    relative_sensitivity: float
    """The absolute deviation over ``max(base, ε)``."""
    robust: bool
    """Relative sensitivity or absolute deviation at or below its fixed threshold."""


class BypassResult(BaseModel):
    """Every CoT bypass metric of one example, with the per-span values they average."""

    model_config = ConfigDict(frozen=True)

    example_id: str | None
    tags: list[str] = Field(default_factory=list)
    model: str
    """Model name or path."""
    seed: int
    """Seed of the control positions, density subsets, shuffle and noise."""
    n_prompt_tokens: int
    """Positions before the CoT (special prefix tokens included)."""
    n_cot_tokens: int
    n_answer_prefix_tokens: int
    n_answer_tokens: int
    cot_start: int
    """First CoT position in the with-CoT sequence; the CoT is ``[cot_start, cot_start + n_cot_tokens)``."""
    control_positions: list[int]
    """The control positions of the base window (sorted)."""
    baseline_logp: float
    """log P(y | x_c)."""
    no_cot_logp: float
    """log P(y | x_¬c), for reference (not part of any formula)."""
    cmi: float
    """CoT-mediated influence, averaged over spans."""
    bypass: float
    """1 - CMI."""
    placebo_cmi: float
    validity: float
    density_curve: list[DensityPoint]
    density: float
    shuffled_cmi: float
    sequentiality: float
    no_cot_effect: bool
    """True when every per-span CMI is zero."""
    sensitivity: BoundarySensitivity
    label: str
    """``no_cot_effect``, ``bypass`` or ``reads_cot``."""
    spans: list[SpanMetrics]
    forward_passes: int
    """Model calls made for this example (each call may hold a batch of sequences)."""
    sequences: int
    """Sequences run through the model for this example, over all calls."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Open for future keys."""


class BypassFailure(BaseModel):
    """An example of the input that could not be measured, and why; the other examples still were."""

    model_config = ConfigDict(frozen=True)

    example_id: str | None
    """The example's ``id``, if it has one."""
    index: int
    """0-based position of the example among the file's examples."""
    error: str
    """The error's class name (e.g. ``ExampleLayoutError``)."""
    reason: str
    """What is wrong with the example and how to fix it."""


class BypassReport(BaseModel):
    """What ``run_bypass_command`` writes: the results of one input file.

    The file is rewritten after every example, so it always holds everything measured so far;
    ``complete`` turns true once every example was measured or reported in ``failures``.
    """

    model: str
    spans: list[LayerSpan]
    seed: int
    results: list[BypassResult]
    seconds: float
    """Wall time of the measurements (model loading excluded)."""
    failures: list[BypassFailure] = Field(default_factory=list)
    """Examples that could not be measured (e.g. a prompt shorter than the CoT window), with the reason."""
    examples: int = 0
    """How many examples the input file holds."""
    complete: bool = True
    """False while the run is in progress, or when it stopped before the last example."""
