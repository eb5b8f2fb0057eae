"""The pure parts of ``benchmarks/audit_cpu.py`` (the measure itself is a benchmark, not a test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "audit_cpu.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("audit_cpu_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_a_plan_key_names_its_unit_whatever_the_kind_and_variant(bench: ModuleType) -> None:
    assert bench.unit_of("t", "3:thought:thought->answer:decisive:2") == ("t", "3", "thought", "thought->answer")
    assert bench.unit_of("t", "3:output:call-1:observation->answer:observation_swap:0") == (
        "t", "3", "output:call-1", "observation->answer",
    )  # fmt: skip
    assert bench.unit_of("t", "3:output:#0:observation->answer:rerun:0")[2] == "output:#0"
    assert bench.unit_of("t", "1+2:thought:thought->answer:logic_flip:0")[1] == "1+2"


def test_the_median_and_the_spread_are_over_rounds_of_cpu_per_unit(bench: ModuleType) -> None:
    rounds = [{"cpu_s": 1.0, "units": 10}, {"cpu_s": 3.0, "units": 10}, {"cpu_s": 0.2, "units": 1}]
    assert bench.ms_per_unit(rounds) == pytest.approx((200.0, 0.5))


def test_every_unit_settings_pass_no_budget_and_the_others_keep_each_sides_default(bench: ModuleType) -> None:
    options = {s.name: s.options() for s in bench.SETTINGS}
    assert options["default plan"] == {"contradictions_per_step": 1}
    assert options["contradictions_per_step=3, every unit"] == {"contradictions_per_step": 3, "budget": None}


def test_the_table_gives_the_ratio_after_over_before(bench: ModuleType) -> None:
    lines = bench.table([("default plan", 48, 40.0, 30.0, 0.04)]).splitlines()
    assert lines[0].split()[-2:] == ["after/before", "spread"]
    assert lines[1].split()[-5:] == ["48", "40.00", "30.00", "0.75x", "4%"]
