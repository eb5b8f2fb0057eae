"""Forward passes with activation patching: capture residual streams, overwrite them, score the answer.

Imported only after ``require_whitebox()`` succeeded (it imports torch at module level).

A *patch* overwrites the residual stream (the output hidden state of a decoder layer) at chosen positions
of x_c, for every layer of a layer span, through forward hooks on the decoder layers; the layers after the
span recompute from the patched stream. Every patched variant of one example runs on the same token ids
(x_c), so the variants stack into batches without padding: one batch row per variant. Below the first
patched layer every row equals the clean run, so those layers replay the clean capture instead of being
recomputed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ariadne_lc.bypass._model import WhiteboxModel

__all__ = ["Capture", "Patch", "Row", "capture", "score_rows"]


@dataclass(frozen=True)
class Patch:
    """Overwrite the residual stream at ``positions`` with ``values[layer]`` for each layer of ``layers``."""

    layers: range
    positions: tuple[int, ...]
    values: Mapping[int, torch.Tensor]
    """Per layer, a ``[len(positions), hidden]`` tensor."""


Row = tuple[Patch, ...]
"""One batch row: the patches applied together (empty: the clean run)."""


def _hidden(output: Any) -> torch.Tensor:
    # Decoder layers return a tensor (transformers >= 5) or a tuple whose first item is the stream.
    hidden = output[0] if isinstance(output, tuple) else output
    if not isinstance(hidden, torch.Tensor):
        raise TypeError(f"decoder layer returned {type(hidden).__name__}, expected a tensor")
    return hidden


def _replace_hidden(output: Any, hidden: torch.Tensor) -> Any:
    return (hidden, *output[1:]) if isinstance(output, tuple) else hidden


@contextmanager
def _hooks(layers: Sequence[nn.Module], hooks: Mapping[int, Any]) -> Iterator[None]:
    handles = [layers[index].register_forward_hook(hook) for index, hook in hooks.items()]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _answer_logprob(model: nn.Module, input_ids: torch.Tensor, n_answer: int) -> torch.Tensor:
    """Return ``sum_t log p(y_t | x, y_<t)`` per batch row; the answer is the last ``n_answer`` ids."""
    keep = n_answer + 1
    try:
        # Only the logits that predict answer tokens are needed; a 49k vocabulary over every position of
        # every variant would cost more memory than the rest of the pass.
        output = model(input_ids=input_ids, use_cache=False, logits_to_keep=keep)
    except TypeError as error:
        if "logits_to_keep" not in str(error):
            raise
        output = model(input_ids=input_ids, use_cache=False)
    logits = output.logits[:, -keep:-1, :].float()
    logprobs = torch.log_softmax(logits, dim=-1)
    targets = input_ids[:, -n_answer:]
    return logprobs.gather(-1, targets.unsqueeze(-1)).squeeze(-1).sum(dim=-1)


@dataclass(frozen=True)
class Capture:
    """One unpatched run: every decoder layer's output and log P(y)."""

    states: list[torch.Tensor]
    """Per decoder layer, its output at every position, ``[length, hidden]``."""
    logp: float
    """log P(y | ids)."""
    replayable: bool
    """The layers return bare tensors, so a cached output can stand in for a layer's computation."""


def capture(wm: WhiteboxModel, ids: Sequence[int], n_answer: int) -> Capture:
    """Run ``ids`` once, recording every decoder layer's output."""
    states: dict[int, torch.Tensor] = {}
    tensor_outputs: list[bool] = []

    def recorder(index: int) -> Any:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            states[index] = _hidden(output)[0].detach().clone()
            tensor_outputs.append(isinstance(output, torch.Tensor))

        return hook

    input_ids = torch.tensor([list(ids)], dtype=torch.long)
    with torch.inference_mode(), _hooks(wm.layers, {i: recorder(i) for i in range(len(wm.layers))}):
        logp = _answer_logprob(wm.model, input_ids, n_answer)
    return Capture([states[i] for i in range(len(wm.layers))], float(logp[0]), all(tensor_outputs))


@contextmanager
def _replayed(layers: Sequence[nn.Module], clean: Capture | None, below: int, batch: int) -> Iterator[None]:
    """Stand the clean run's outputs in for layers ``[0, below)`` of a batch whose patches start at ``below``.

    Below the first patched layer every row is the clean run, already computed by ``capture``; replaying
    it skips that share of the compute (about 40 % with four spans). Only for layers returning bare
    tensors, where the cached output has the exact shape of the real one.
    """
    if clean is None or not clean.replayable or below == 0:
        yield
        return
    saved = [layer.__dict__.get("forward") for layer in layers[:below]]

    def replay(state: torch.Tensor) -> Any:
        def forward(*args: Any, **kwargs: Any) -> torch.Tensor:
            return state.unsqueeze(0).expand(batch, -1, -1)

        return forward

    try:
        for index in range(below):
            layers[index].forward = replay(clean.states[index])
        yield
    finally:
        for layer, original in zip(layers[:below], saved, strict=True):
            if original is None:
                del layer.forward
            else:
                layer.forward = original


def _patcher(entries: list[tuple[int, Patch]], layer: int) -> Any:
    rows = torch.tensor([row for row, patch in entries for _ in patch.positions], dtype=torch.long)
    positions = torch.tensor([p for _, patch in entries for p in patch.positions], dtype=torch.long)
    values = torch.cat([patch.values[layer] for _, patch in entries], dim=0)

    def hook(module: nn.Module, args: Any, output: Any) -> Any:
        hidden = _hidden(output).clone()
        hidden[rows, positions] = values.to(hidden.dtype)
        return _replace_hidden(output, hidden)

    return hook


def _first_layer(row: Row) -> int:
    return min((patch.layers.start for patch in row if patch.positions), default=0)


def score_rows(
    wm: WhiteboxModel,
    ids: Sequence[int],
    rows: Sequence[Row],
    n_answer: int,
    batch_size: int,
    clean: Capture | None = None,
) -> tuple[list[float], int]:
    """Run every row (x_c with its patches) in batches; return log P(y) per row and the model calls made.

    Rows are batched by the first layer they patch, so that, given the clean ``capture`` of the same ids,
    each batch replays the clean outputs below that layer instead of recomputing them.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    groups: dict[int, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(_first_layer(row), []).append(index)
    scores: dict[int, float] = {}
    calls = 0
    for first_layer, members in sorted(groups.items()):
        for start in range(0, len(members), batch_size):
            chunk = members[start : start + batch_size]
            by_layer: dict[int, list[tuple[int, Patch]]] = {}
            for batch_row, row_index in enumerate(chunk):
                for patch in rows[row_index]:
                    if not patch.positions:
                        continue
                    for layer in patch.layers:
                        by_layer.setdefault(layer, []).append((batch_row, patch))
            hooks = {layer: _patcher(entries, layer) for layer, entries in by_layer.items()}
            input_ids = torch.tensor([list(ids)] * len(chunk), dtype=torch.long)
            with (
                torch.inference_mode(),
                _hooks(wm.layers, hooks),
                _replayed(wm.layers, clean, first_layer, len(chunk)),
            ):
                values = _answer_logprob(wm.model, input_ids, n_answer)
            scores.update(zip(chunk, (float(v) for v in values), strict=True))
            calls += 1
    return [scores[index] for index in range(len(rows))], calls
