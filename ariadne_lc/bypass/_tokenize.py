"""Turning an example's text into the two token sequences, with exact piece boundaries.

Each piece (prompt, CoT, answer prefix, answer) is tokenized on its own and the id lists are
concatenated. Tokenizing the joined text and mapping character offsets back would let a BPE merge
straddle the CoT boundary, so a position could belong half to the prompt and half to the CoT; piecewise
ids make every position belong to exactly one piece, and both sequences share identical prompt, prefix
and answer ids, so log P(y | ·) compares like with like.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ariadne_lc.bypass._errors import ExampleLayoutError
from ariadne_lc.bypass._positions import SequenceLayout
from ariadne_lc.bypass._records import BypassExample

__all__ = ["TokenizedExample", "tokenize_example"]


@dataclass(frozen=True)
class TokenizedExample:
    """The token ids of the four pieces of one example."""

    prompt_ids: tuple[int, ...]
    """Prompt ids, including any special prefix (BOS) the tokenizer adds."""
    cot_ids: tuple[int, ...]
    prefix_ids: tuple[int, ...]
    answer_ids: tuple[int, ...]

    @classmethod
    def from_ids(
        cls,
        prompt_ids: Sequence[int],
        cot_ids: Sequence[int],
        answer_ids: Sequence[int],
        prefix_ids: Sequence[int] = (),
    ) -> TokenizedExample:
        """Build from id lists (validated by the layout)."""
        tokenized = cls(tuple(prompt_ids), tuple(cot_ids), tuple(prefix_ids), tuple(answer_ids))
        _ = tokenized.layout
        return tokenized

    @property
    def layout(self) -> SequenceLayout:
        """Token counts of the pieces."""
        return SequenceLayout(len(self.prompt_ids), len(self.cot_ids), len(self.prefix_ids), len(self.answer_ids))

    @property
    def with_cot(self) -> tuple[int, ...]:
        """x_c: prompt + CoT + answer prefix + answer."""
        return self.prompt_ids + self.cot_ids + self.prefix_ids + self.answer_ids

    @property
    def without_cot(self) -> tuple[int, ...]:
        """x_¬c: prompt + answer prefix + answer."""
        return self.prompt_ids + self.prefix_ids + self.answer_ids


def _ids(tokenizer: Any, text: str) -> list[int]:
    if not text:
        return []
    return [int(i) for i in tokenizer(text, add_special_tokens=False)["input_ids"]]


def _special_prefix(tokenizer: Any) -> list[int]:
    """The ids a tokenizer puts before text (e.g. BOS), found by encoding a probe with and without them.

    Trailing special tokens (EOS) are deliberately dropped: the answer is a continuation, not an ending.
    """
    probe = "a"
    bare = _ids(tokenizer, probe)
    full = [int(i) for i in tokenizer(probe, add_special_tokens=True)["input_ids"]]
    for start in range(len(full) - len(bare) + 1):
        if full[start : start + len(bare)] == bare:
            return full[:start]
    return []


def tokenize_example(tokenizer: Any, example: BypassExample, *, chat_template: bool = False) -> TokenizedExample:
    """Tokenize an example piecewise.

    Args:
        tokenizer: A ``transformers`` tokenizer.
        example: The example.
        chat_template: Wrap the prompt as a user message in the tokenizer's chat template and open the
            assistant turn, so CoT and answer are the assistant's words. The template then supplies any
            BOS itself.

    Raises:
        ExampleLayoutError: a piece tokenizes to nothing, or the tokenizer has no chat template.
    """
    if chat_template:
        if not getattr(tokenizer, "chat_template", None):
            raise ExampleLayoutError("chat_template=True but the tokenizer has no chat template")
        prompt_text = tokenizer.apply_chat_template(
            [{"role": "user", "content": example.prompt}], tokenize=False, add_generation_prompt=True
        )
        prompt_ids = _ids(tokenizer, str(prompt_text))
    else:
        prompt_ids = _special_prefix(tokenizer) + _ids(tokenizer, example.prompt)
    pieces = {
        "cot": _ids(tokenizer, example.cot),
        "answer": _ids(tokenizer, example.answer),
    }
    for name, ids in pieces.items():
        if not ids:
            raise ExampleLayoutError(f"example {example.id!r}: the {name} tokenizes to no tokens")
    return TokenizedExample.from_ids(
        prompt_ids, pieces["cot"], pieces["answer"], _ids(tokenizer, example.answer_prefix)
    )
