"""The committed plan corpus (docs/calibration/plan-edits): the edits the critic makes now are the committed ones, and a
person read each of them as a coherent alternative plan."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parents[2] / "docs" / "calibration" / "plan-edits"


def _script() -> ModuleType:
    path = HERE.parents[1] / "scripts" / "plan_edits.py"
    spec = importlib.util.spec_from_file_location("plan_edits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["plan_edits"] = module
    spec.loader.exec_module(module)
    return module


def _lines(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (HERE / name).read_text().splitlines() if line.strip()]


def test_the_committed_edits_are_the_ones_the_critic_makes_now() -> None:
    script = _script()
    assert [script.edits_of(p) for p in script.plans()] == _lines("edits.jsonl")


def test_every_edit_was_read_and_none_is_garbled() -> None:
    review = {(r["id"], r["text"]): r["verdict"] for r in _lines("review.jsonl")}
    made = [(m["id"], e["text"]) for m in _lines("edits.jsonl") for e in m["edits"]]  # type: ignore[attr-defined]
    assert len(made) >= 150 and all(str(review.get(key, "unreviewed")).startswith("coherent") for key in made)


def test_the_corpus_holds_fifty_plans_of_every_pattern() -> None:
    plans = _lines("plans.jsonl")
    assert len(plans) >= 50
    assert {p["harness"] for p in plans} == {"create_agent", "deep_agent", "subagent"}
    assert sum(str(p["source"]).startswith("qwen") for p in plans) >= 5
