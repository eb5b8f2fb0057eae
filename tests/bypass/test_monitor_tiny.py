"""The monitor on tiny random Llamas wired to have known answers.

* Patching with the clean run's own states changes nothing: CMI = 0 and the no-CoT-effect flag.
* A model whose later positions cannot attend to the CoT positions (a real 4D attention mask, passed
  into the model's own forward) bypasses the CoT by construction: Bypass = 1.
* A model whose first layer mixes nothing across positions gives every copy of a repeated token the same
  state there, so shuffling those states is the identity: Sequentiality = 0 while CMI > 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from ariadne_lc.bypass import (
    DENSITY_FRACTIONS,
    LABEL_NO_COT_EFFECT,
    BypassExample,
    BypassMonitor,
    ExampleLayoutError,
    LayerSpan,
    TokenizedExample,
    WhiteboxModel,
)
from ariadne_lc.bypass._engine import Patch, Row, capture, score_rows
from ariadne_lc.bypass._measure import measure
from tests.bypass.conftest import TINY_LAYERS

PROMPT = list(range(3, 17))  # 14 tokens
COT = list(range(20, 28))  # 8 tokens
PREFIX = [40, 41]
ANSWER = [30, 31, 32]

Factory = Callable[..., WhiteboxModel]


def _example(cot: list[int] = COT) -> TokenizedExample:
    return TokenizedExample.from_ids(PROMPT, cot, ANSWER, PREFIX)


def _block_attention_to_cot(model: torch.nn.Module, example: TokenizedExample) -> None:
    """Give the model a causal mask in which no position after the CoT can see a CoT position."""
    layout = example.layout
    cot = layout.cot

    def with_mask(module: torch.nn.Module, args: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        batch, length = kwargs["input_ids"].shape
        mask = torch.ones(length, length, dtype=torch.bool).tril()
        if length == layout.length:  # the x_c runs; x_¬c has no CoT to hide
            mask[cot.stop :, cot.start : cot.stop] = False
        kwargs["attention_mask"] = mask.expand(batch, 1, length, length)
        return args, kwargs

    # The base model takes a ready 4D mask as given, so this is the model's own attention, not a wrapper.
    model.model.register_forward_pre_hook(with_mask, with_kwargs=True)  # type: ignore[union-attr]


def test_patching_with_identical_states_gives_zero_cmi(tiny: Factory) -> None:
    wm = tiny()
    spans = [LayerSpan(start=0, stop=2), LayerSpan(start=2, stop=4)]
    result = measure(wm, _example(), spans, seed=0, batch_size=16, source="clean")
    assert result.cmi == 0.0
    assert all(span.cmi == 0.0 and span.delta_cot < 1e-5 and span.delta_ctrl < 1e-5 for span in result.spans)
    assert result.no_cot_effect
    assert result.label == LABEL_NO_COT_EFFECT
    assert result.bypass == 1.0


def test_unblocked_tiny_model_reads_its_cot(tiny: Factory) -> None:
    result = BypassMonitor(tiny(), spans=2).evaluate_ids(PROMPT, COT, ANSWER, PREFIX)
    assert result.cmi > 0.1
    assert not result.no_cot_effect
    assert max(span.delta_cot for span in result.spans) > 0.01


def test_answer_that_cannot_attend_to_the_cot_bypasses_it(tiny: Factory) -> None:
    wm = tiny()
    example = _example()
    _block_attention_to_cot(wm.model, example)
    result = BypassMonitor(wm, spans=TINY_LAYERS).evaluate_ids(PROMPT, COT, ANSWER, PREFIX)
    assert result.bypass == 1.0
    assert result.cmi == 0.0
    assert all(span.delta_cot < 1e-5 for span in result.spans)  # the CoT patch cannot reach the answer
    assert result.no_cot_effect


def test_shuffling_a_repeated_token_leaves_sequentiality_at_zero(tiny: Factory) -> None:
    wm = tiny()
    with torch.no_grad():
        wm.layers[0].self_attn.o_proj.weight.zero_()  # type: ignore[union-attr, operator]
    monitor = BypassMonitor(wm, spans=[(0, 1)])
    repeated = monitor.evaluate_ids(PROMPT, [21] * 8, ANSWER, PREFIX)
    assert repeated.cmi > 0.1  # the later layers do read the CoT positions
    (span,) = repeated.spans
    assert span.shuffled_baseline_logp == pytest.approx(repeated.baseline_logp, abs=1e-5)
    assert repeated.shuffled_cmi == pytest.approx(repeated.cmi, abs=1e-6)
    assert repeated.sequentiality == pytest.approx(0.0, abs=1e-6)
    # the same model with distinct CoT tokens: the shuffle really moves states
    distinct = monitor.evaluate_ids(PROMPT, COT, ANSWER, PREFIX)
    assert abs(distinct.spans[0].shuffled_baseline_logp - distinct.baseline_logp) > 1e-3


def test_every_metric_is_reported(tiny: Factory) -> None:
    result = BypassMonitor(tiny(), spans=2, seed=3).evaluate_ids(PROMPT, COT, ANSWER, PREFIX, example_id="e1")
    assert result.example_id == "e1" and result.seed == 3
    assert len(result.spans) == 2
    assert [p.fraction for p in result.density_curve] == list(DENSITY_FRACTIONS)
    assert result.bypass == pytest.approx(1 - result.cmi)
    assert result.cmi == pytest.approx(sum(s.cmi for s in result.spans) / 2)
    for value in (result.cmi, result.placebo_cmi, result.validity, result.density, result.sequentiality):
        assert 0.0 <= value <= 1.0
    assert result.sensitivity.base_cmi == result.cmi
    assert len(result.control_positions) == len(COT)
    assert not set(result.control_positions) & set(range(result.cot_start, result.cot_start + len(COT)))
    # 2 capture passes; 1 clean row + 15 variants per span, batched
    assert result.sequences == 2 + 1 + 15 * 2
    assert result.forward_passes == 2 + 2  # 31 rows in batches of 16


def test_results_are_seeded_and_batch_size_independent(tiny: Factory) -> None:
    wm = tiny()
    first = BypassMonitor(wm, spans=2, seed=5).evaluate_ids(PROMPT, COT, ANSWER, PREFIX)
    again = BypassMonitor(wm, spans=2, seed=5, batch_size=1).evaluate_ids(PROMPT, COT, ANSWER, PREFIX)
    assert again.forward_passes == 2 + 31
    assert again.control_positions == first.control_positions
    for a, b in zip(first.spans, again.spans, strict=True):
        assert a.delta_cot == pytest.approx(b.delta_cot, abs=1e-4)
        assert a.delta_ctrl == pytest.approx(b.delta_ctrl, abs=1e-4)
        assert a.placebo_delta_cot == pytest.approx(b.placebo_delta_cot, abs=1e-4)
    other = BypassMonitor(wm, spans=2, seed=6).evaluate_ids(PROMPT, COT, ANSWER, PREFIX)
    assert other.control_positions != first.control_positions


def test_too_few_positions_for_a_control_fails_loudly(tiny: Factory) -> None:
    monitor = BypassMonitor(tiny(), spans=1)
    with pytest.raises(ExampleLayoutError, match="control"):
        monitor.evaluate_ids([3, 4], list(range(20, 30)), [30])


def test_arguments_are_validated(tiny: Factory) -> None:
    wm = tiny()
    with pytest.raises(ValueError, match="batch_size"):
        BypassMonitor(wm, batch_size=0)
    with pytest.raises(ValueError, match="n_spans"):
        BypassMonitor(wm, spans=TINY_LAYERS + 1)
    with pytest.raises(ValueError, match="exceeds"):
        BypassMonitor(wm, spans=[(2, TINY_LAYERS + 1)])
    with pytest.raises(ExampleLayoutError, match="tokenizer"):
        BypassMonitor(wm).evaluate(BypassExample(prompt="q", cot="c", answer="a"))


def test_replaying_clean_layers_below_the_span_changes_nothing(tiny: Factory) -> None:
    wm = tiny()
    example = _example()
    layout = example.layout
    clean = capture(wm, example.with_cot, layout.n_answer)
    no_cot = capture(wm, example.without_cot, layout.n_answer)
    assert clean.replayable
    rows: list[Row] = [()]
    for start in range(TINY_LAYERS):
        layers = range(start, TINY_LAYERS)
        index = [layout.source_position(i) for i in layout.cot]
        rows.append((Patch(layers, tuple(layout.cot), {i: no_cot.states[i][index] for i in layers}),))
    replayed, replayed_calls = score_rows(wm, example.with_cot, rows, layout.n_answer, 16, clean)
    computed, computed_calls = score_rows(wm, example.with_cot, rows, layout.n_answer, 16)
    assert replayed == pytest.approx(computed, abs=1e-5)
    assert replayed[0] == pytest.approx(clean.logp, abs=1e-5)
    assert replayed_calls == computed_calls == TINY_LAYERS  # batched by first patched layer
    assert all("forward" not in layer.__dict__ for layer in wm.layers)  # the real forwards are back
