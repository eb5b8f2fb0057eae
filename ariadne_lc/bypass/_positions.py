"""Where things are in the two token sequences, and which positions each patch touches.

Pure integer bookkeeping, free of torch, so that the property tests can hammer it cheaply.

Layout of the with-CoT sequence x_c and the no-CoT sequence x_¬c (``p`` prompt tokens, ``k`` CoT
tokens, ``s`` answer-prefix tokens, ``T`` answer tokens)::

    x_c   : [0 .. p)  prompt | [p .. p+k) CoT | [p+k .. p+k+s) prefix | [p+k+s .. p+k+s+T) answer
    x_¬c  : [0 .. p)  prompt |                  [p .. p+s) prefix     | [p+s .. p+s+T) answer

Alignment (which x_¬c state a patched x_c position receives), one map for every patch:

* prompt position ``i < p``        -> ``i`` (same token, same causal context);
* text after the CoT ``i >= p+k``  -> ``i - k`` (same token, seen without the CoT);
* CoT position ``p + j``           -> ``(p - k + j) mod p``: right-aligned to the end of the prompt, so the
  last CoT position gets the state of the last token before the answer text in x_¬c, the one before it
  the prompt token before that, and so on, wrapping round the prompt when the CoT is longer.

Why right-aligned to the prompt and not the first positions of the following text: those states belong
to the answer tokens themselves, so copying them into the CoT slots would hand the answer positions their
own targets through attention and understate Δ_cot. Prompt states carry nothing the model lacked without
the CoT, which is what "remove the CoT's content" should mean.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

from ariadne_lc.bypass._errors import ExampleLayoutError
from ariadne_lc.bypass._records import LayerSpan

__all__ = [
    "DEFAULT_N_SPANS",
    "SequenceLayout",
    "control_positions",
    "density_subset",
    "even_spans",
    "shuffle_order",
]

DEFAULT_N_SPANS: Final = 4
"""Evenly spaced layer spans covering all decoder layers, unless the caller says otherwise."""


@dataclass(frozen=True)
class SequenceLayout:
    """Token counts of the four pieces; every position the monitor uses derives from these."""

    n_prompt: int
    n_cot: int
    n_prefix: int
    n_answer: int

    def __post_init__(self) -> None:
        if self.n_prompt < 1:
            raise ExampleLayoutError("the prompt must be at least one token (the CoT alignment needs it)")
        if self.n_cot < 1:
            raise ExampleLayoutError("the CoT must be at least one token")
        if self.n_answer < 1:
            raise ExampleLayoutError("the answer must be at least one token")
        if self.n_prefix < 0:
            raise ExampleLayoutError("the answer prefix cannot have a negative length")

    @property
    def length(self) -> int:
        """Length of x_c."""
        return self.n_prompt + self.n_cot + self.n_prefix + self.n_answer

    @property
    def no_cot_length(self) -> int:
        """Length of x_¬c."""
        return self.n_prompt + self.n_prefix + self.n_answer

    @property
    def cot(self) -> range:
        """The CoT positions in x_c (the base window)."""
        return range(self.n_prompt, self.n_prompt + self.n_cot)

    @property
    def expanded(self) -> range:
        """The CoT window grown by one token on each side (always inside x_c: prompt and answer are non-empty)."""
        return range(self.n_prompt - 1, self.n_prompt + self.n_cot + 1)

    @property
    def shrunk(self) -> range:
        """The CoT window shrunk by one token on each side; empty when the CoT has one or two tokens."""
        start = self.n_prompt + 1
        return range(start, max(start, self.n_prompt + self.n_cot - 1))

    @property
    def answer_start(self) -> int:
        """Position of the first answer token in x_c."""
        return self.n_prompt + self.n_cot + self.n_prefix

    @property
    def no_cot_answer_start(self) -> int:
        """Position of the first answer token in x_¬c."""
        return self.n_prompt + self.n_prefix

    def source_position(self, position: int) -> int:
        """Return the x_¬c position whose state replaces x_c's state at ``position`` (see module doc)."""
        if not 0 <= position < self.length:
            raise IndexError(f"position {position} outside a sequence of {self.length} tokens")
        p, k = self.n_prompt, self.n_cot
        if position < p:
            return position
        if position >= p + k:
            return position - k
        return (p - k + (position - p)) % p


def _rng(seed: int, purpose: str) -> random.Random:
    # String seeds hash through SHA-512, so draws are stable across runs, platforms and Python versions.
    return random.Random(f"ariadne.bypass:{seed}:{purpose}")


def control_positions(layout: SequenceLayout, window: range, seed: int, purpose: str) -> tuple[int, ...]:
    """Draw the control positions of ``window``: random, outside it, as many as it has, in draw order.

    The order matters: the density curve takes the first ``m`` of them, which is itself a uniform
    random subset of size ``m``, so the controls of the subsets are nested in the full control.

    Raises:
        ExampleLayoutError: fewer positions lie outside the window than inside it.
    """
    inside = set(window)
    pool = [i for i in range(layout.length) if i not in inside]
    if len(pool) < len(window):
        raise ExampleLayoutError(
            f"the {purpose} CoT window has {len(window)} tokens but only {len(pool)} positions lie outside it; "
            "an equal-sized control needs at least as many (lengthen the prompt, e.g. with the chat "
            "template, or shorten the CoT)"
        )
    return tuple(_rng(seed, purpose).sample(pool, len(window)))


def density_subset(window: range, fraction: float, seed: int) -> tuple[int, ...]:
    """Keep a random ``fraction`` of the window's positions (rounded half up, at least one), sorted."""
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"density fraction must be in (0, 1], got {fraction}")
    size = max(1, int(fraction * len(window) + 0.5))
    return tuple(sorted(_rng(seed, f"density:{fraction}").sample(list(window), size)))


def shuffle_order(n: int, seed: int) -> tuple[int, ...]:
    """A random permutation of ``range(n)`` that moves at least one element whenever ``n >= 2``."""
    order = list(range(n))
    if n < 2:
        return tuple(order)
    rng = _rng(seed, "shuffle")
    while order == sorted(order):
        rng.shuffle(order)
    return tuple(order)


def even_spans(n_layers: int, n_spans: int = DEFAULT_N_SPANS) -> tuple[LayerSpan, ...]:
    """Split ``n_layers`` decoder layers into ``n_spans`` contiguous spans of near-equal size.

    Earlier spans take the remainder, so 30 layers in 4 spans are 8, 8, 7, 7.
    """
    if n_layers < 1:
        raise ValueError(f"a model needs at least one decoder layer, got {n_layers}")
    if not 1 <= n_spans <= n_layers:
        raise ValueError(f"n_spans must be between 1 and the number of layers ({n_layers}), got {n_spans}")
    base, extra = divmod(n_layers, n_spans)
    spans: list[LayerSpan] = []
    start = 0
    for index in range(n_spans):
        stop = start + base + (1 if index < extra else 0)
        spans.append(LayerSpan(start=start, stop=stop))
        start = stop
    return tuple(spans)
