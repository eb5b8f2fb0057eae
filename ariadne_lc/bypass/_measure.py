"""All the patched variants of one example, and the metrics computed from their log-probabilities.

Imported only after ``require_whitebox()`` succeeded.

Per layer span the variants are (each a batch row over x_c):

* ``main_cot`` / ``main_ctrl``: CoT positions / control positions take their aligned no-CoT states -> CMI;
* ``placebo_cot``: the CoT positions take Gaussian noise instead of no-CoT states; with the unchanged
  ``main_ctrl`` -> Placebo CMI (only the CoT states are replaced by noise, the yardstick stays the same);
* ``density_f_cot`` / ``density_f_ctrl``: a random fraction f of the CoT positions, and as many controls;
* ``shuffled``: the clean CoT states permuted among the CoT positions, the reference run of the shuffle
  test; ``shuffled_ctrl``: that run plus the control patch. The shuffle test's CoT patch is ``main_cot``
  itself: overwriting the CoT positions erases the shuffle, so the two runs are identical;
* ``expanded_*`` / ``shrunk_*``: the window one token wider / narrower on each side.

Plus one clean row, the baseline, batched like the patched rows so that rounding matches theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import torch

from ariadne_lc.bypass import _metrics as m
from ariadne_lc.bypass._engine import Patch, Row, capture, score_rows
from ariadne_lc.bypass._model import WhiteboxModel
from ariadne_lc.bypass._positions import SequenceLayout, control_positions, density_subset, shuffle_order
from ariadne_lc.bypass._records import (
    BoundarySensitivity,
    BypassResult,
    DensityPoint,
    LayerSpan,
    SpanMetrics,
)
from ariadne_lc.bypass._tokenize import TokenizedExample

__all__ = ["Source", "measure"]

Source = Literal["no_cot", "clean"]
"""Where patch values come from: the no-CoT run (the monitor), or the clean run itself (a null patch
whose CMI must be 0, used to check the pipeline)."""


def _noise(states: torch.Tensor, reference: Sequence[int], count: int, generator: torch.Generator) -> torch.Tensor:
    """Gaussian states matched per dimension to the mean and std of the clean states at ``reference``.

    Matching the moments keeps the placebo in the range of activations the layer normally sees, so it
    tests "any content here" rather than "an out-of-distribution shock".
    """
    block = states[list(reference)]
    mean = block.mean(dim=0)
    std = block.std(dim=0, correction=0)
    draw = torch.randn((count, states.shape[-1]), generator=generator, dtype=states.dtype)
    return mean + std * draw


def _noise_reference(layout: SequenceLayout) -> Sequence[int]:
    # The CoT's own states define "normal" for the CoT slots; one CoT token has no spread, so fall back to
    # every position but the first, whose attention-sink state has outlier norms in most LMs.
    if layout.n_cot >= 2:
        return layout.cot
    return range(1, layout.length) if layout.length > 1 else range(layout.length)


def measure(
    wm: WhiteboxModel,
    tokenized: TokenizedExample,
    spans: Sequence[LayerSpan],
    seed: int,
    batch_size: int,
    *,
    example_id: str | None = None,
    tags: Sequence[str] = (),
    source: Source = "no_cot",
) -> BypassResult:
    """Measure every metric of one example. See the module docstring for the variants."""
    if not spans:
        raise ValueError("at least one layer span is needed")
    for span in spans:
        if span.stop > len(wm.layers):
            raise ValueError(f"layer span [{span.start}, {span.stop}) exceeds the model's {len(wm.layers)} layers")
    layout = tokenized.layout
    ids = tokenized.with_cot
    n_answer = layout.n_answer

    clean = capture(wm, ids, n_answer)
    no_cot = capture(wm, tokenized.without_cot, n_answer)
    clean_states, no_cot_states, no_cot_logp = clean.states, no_cot.states, no_cot.logp
    table = clean_states if source == "clean" else no_cot_states

    def align(position: int) -> int:
        return position if source == "clean" else layout.source_position(position)

    def aligned(layers: range, positions: Sequence[int]) -> Patch:
        index = [align(i) for i in positions]
        return Patch(layers, tuple(positions), {layer: table[layer][index] for layer in layers})

    cot = layout.cot
    control = control_positions(layout, cot, seed, "base")
    windows = {"expanded": layout.expanded, "shrunk": layout.shrunk}
    window_controls = {
        name: control_positions(layout, window, seed, name) for name, window in windows.items() if len(window)
    }
    subsets = {f: density_subset(cot, f, seed) for f in m.DENSITY_FRACTIONS}
    order = shuffle_order(layout.n_cot, seed)
    generator = torch.Generator().manual_seed(seed)
    reference = _noise_reference(layout)

    rows: list[Row] = [()]
    slots: list[dict[str, int]] = []
    for span in spans:
        layers = span.layers
        slot: dict[str, int] = {}

        def add(name: str, row: Row, slot: dict[str, int] = slot) -> None:
            slot[name] = len(rows)
            rows.append(row)

        add("main_cot", (aligned(layers, cot),))
        add("main_ctrl", (aligned(layers, control),))
        noise = {i: _noise(clean_states[i], reference, len(cot), generator) for i in layers}
        add("placebo_cot", (Patch(layers, tuple(cot), noise),))
        for fraction, kept in subsets.items():
            add(f"density_{fraction}_cot", (aligned(layers, kept),))
            add(f"density_{fraction}_ctrl", (aligned(layers, control[: len(kept)]),))
        permuted = [cot[j] for j in order]
        shuffled = Patch(layers, tuple(cot), {i: clean_states[i][permuted] for i in layers})
        add("shuffled", (shuffled,))
        add("shuffled_ctrl", (shuffled, aligned(layers, control)))
        for name, window in windows.items():
            if len(window):
                add(f"{name}_cot", (aligned(layers, window),))
                add(f"{name}_ctrl", (aligned(layers, window_controls[name]),))
        slots.append(slot)

    scores, calls = score_rows(wm, ids, rows, n_answer, batch_size, clean)
    baseline = scores[0]

    def pair(cot_row: int, ctrl_row: int, reference_logp: float = baseline) -> tuple[float, float, float]:
        d_cot = m.delta(reference_logp, scores[cot_row])
        d_ctrl = m.delta(reference_logp, scores[ctrl_row])
        return d_cot, d_ctrl, m.cmi(d_cot, d_ctrl)

    def named_cmi(slot: dict[str, int], name: str) -> float:
        if f"{name}_cot" not in slot:
            return 0.0  # empty window: nothing patched, both deltas 0, CMI 0 by the degenerate rule
        return pair(slot[f"{name}_cot"], slot[f"{name}_ctrl"])[2]

    per_span: list[SpanMetrics] = []
    for span, slot in zip(spans, slots, strict=True):
        d_cot, d_ctrl, span_cmi = pair(slot["main_cot"], slot["main_ctrl"])
        p_cot, _, p_cmi = pair(slot["placebo_cot"], slot["main_ctrl"])
        shuffled_logp = scores[slot["shuffled"]]
        per_span.append(
            SpanMetrics(
                span=span,
                delta_cot=d_cot,
                delta_ctrl=d_ctrl,
                cmi=span_cmi,
                placebo_delta_cot=p_cot,
                placebo_cmi=p_cmi,
                density_cmi={str(f): named_cmi(slot, f"density_{f}") for f in m.DENSITY_FRACTIONS},
                shuffled_baseline_logp=shuffled_logp,
                shuffled_cmi=pair(slot["main_cot"], slot["shuffled_ctrl"], shuffled_logp)[2],
                expanded_cmi=named_cmi(slot, "expanded"),
                shrunk_cmi=named_cmi(slot, "shrunk"),
            )
        )

    cmi = m.mean([s.cmi for s in per_span])
    placebo = m.mean([s.placebo_cmi for s in per_span])
    curve = [
        DensityPoint(fraction=f, cmi=m.mean([s.density_cmi[str(f)] for s in per_span])) for f in m.DENSITY_FRACTIONS
    ]
    shuffled_cmi = m.mean([s.shuffled_cmi for s in per_span])
    expanded = m.mean([s.expanded_cmi for s in per_span])
    shrunk = m.mean([s.shrunk_cmi for s in per_span])
    no_effect = all(s.cmi == 0.0 for s in per_span)
    bypass = 1.0 - cmi
    return BypassResult(
        example_id=example_id,
        tags=list(tags),
        model=wm.name,
        seed=seed,
        n_prompt_tokens=layout.n_prompt,
        n_cot_tokens=layout.n_cot,
        n_answer_prefix_tokens=layout.n_prefix,
        n_answer_tokens=layout.n_answer,
        cot_start=layout.n_prompt,
        control_positions=sorted(control),
        baseline_logp=baseline,
        no_cot_logp=no_cot_logp,
        cmi=cmi,
        bypass=bypass,
        placebo_cmi=placebo,
        validity=m.validity(cmi, placebo),
        density_curve=curve,
        density=m.density_index(cmi, curve[-1].cmi),
        shuffled_cmi=shuffled_cmi,
        sequentiality=m.sequentiality(cmi, shuffled_cmi),
        no_cot_effect=no_effect,
        sensitivity=BoundarySensitivity(
            base_cmi=cmi,
            expanded_cmi=expanded,
            shrunk_cmi=shrunk,
            absolute_deviation=m.absolute_deviation(cmi, expanded, shrunk),
            relative_sensitivity=m.relative_sensitivity(cmi, expanded, shrunk),
            robust=m.is_robust(cmi, expanded, shrunk),
        ),
        label=m.bypass_label(bypass, no_effect),
        spans=per_span,
        forward_passes=2 + calls,
        sequences=2 + len(rows),
    )
