"""FaithCheck task suites: JSONL files of prompts with a reference chain of thought.

One item a line, as FaithCheck defines it::

    {"item_id": "math-001", "prompt": "...", "reference_cot": [{"index": 0, "text": "..."}, ...],
     "ground_truth": "18"}

``reference_cot`` may also be a list of strings. Blank lines and lines starting with ``#`` are skipped.
A malformed line raises :class:`~ariadne_lc.errors.SuiteFormatError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ariadne_lc.errors import SuiteFormatError

__all__ = ["CotStep", "TaskItem", "iter_suite", "load_suite"]


class CotStep(BaseModel):
    """One step of a reference chain of thought."""

    model_config = ConfigDict(frozen=True)

    index: int
    text: str


class TaskItem(BaseModel):
    """One evaluation item of a suite."""

    model_config = ConfigDict(frozen=True, extra="allow")

    item_id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    reference_cot: tuple[CotStep, ...]
    ground_truth: str
    tags: tuple[str, ...] = ()

    @field_validator("reference_cot", mode="before")
    @classmethod
    def _steps(cls, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [{"index": i, "text": t} for i, t in enumerate(value)]
        return value

    @field_validator("reference_cot")
    @classmethod
    def _ordered(cls, steps: tuple[CotStep, ...]) -> tuple[CotStep, ...]:
        if not steps:
            raise ValueError("reference_cot must have at least one step")
        return tuple(sorted(steps, key=lambda s: s.index))

    @field_validator("ground_truth", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value


def iter_suite(path: str | Path) -> Iterator[TaskItem]:
    """Items of a suite, validated one line at a time."""
    file = Path(path)
    if not file.is_file():
        raise SuiteFormatError(f"{file}: no such task-suite file")
    seen: set[str] = set()
    with file.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                item = TaskItem.model_validate(json.loads(line))
            except json.JSONDecodeError as exc:
                raise SuiteFormatError(f"{file}:{number}: not valid JSON ({exc.msg})") from None
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                raise SuiteFormatError(f"{file}:{number}: {problems}") from None
            if item.item_id in seen:
                raise SuiteFormatError(f"{file}:{number}: duplicate item_id {item.item_id!r}")
            seen.add(item.item_id)
            yield item


def load_suite(path: str | Path) -> list[TaskItem]:
    """All items of a suite (raises on the first malformed line)."""
    items = list(iter_suite(path))
    if not items:
        raise SuiteFormatError(f"{path}: the suite has no items")
    return items
