"""The pure parts of ``benchmarks/replay_speed.py``: what "the same results" means, and the targets it checks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "replay_speed.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replay_speed_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_what_is_fresh_on_every_run_is_left_out_and_nothing_else(bench: ModuleType) -> None:
    dump = {
        "result_id": "r1", "trace_id": "t", "created_at": "now", "duration_s": 1.0, "replay_thread_id": "x",
        "phi": 0.5,
        "counterfactual_steps": [{"message_id": "m", "tool_calls": [{"id": "ariadne-rederived-0123456789ab"}]}],
    }  # fmt: skip
    assert bench._stable(dump) == {
        "counterfactual_steps": [{"tool_calls": [{"id": "ariadne-rederived-*"}]}],
        "phi": 0.5,
    }


def _side(digest: str, replay: float, audit: float) -> dict[str, Any]:
    return {
        "own_ms": 2.0, "replay_ms": replay, "audit_ms": audit, "model_calls": 10, "results": 4, "reruns": 4,
        "rerun_ms": 3.0, "floor_ms": 3.0, "over_floor": 0.9, "digest": digest, "dumps": [digest],
    }  # fmt: skip


def test_a_missed_target_and_a_changed_result_are_both_reported(bench: ModuleType) -> None:
    same = {"before": {4: [_side("a", 4.0, 6.0)]}, "after": {4: [_side("a", 1.8, 2.8)]}}
    assert bench.report([4], same) == []
    slow = {"before": {4: [_side("a", 4.0, 6.0)]}, "after": {4: [_side("b", 2.4, 3.2)]}}
    failed = bench.report([4], slow)
    assert any("replay 1.20x" in f for f in failed) and any("audit 1.60x" in f for f in failed)
    assert any("the results differ" in f and "('a', 'b')" in f for f in failed)
