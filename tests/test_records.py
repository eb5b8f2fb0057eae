"""The leaf records: what they carry, and that they agree with the engine's names."""

from __future__ import annotations

import pytest

from ariadne_lc.errors import (
    AriadneError,
    CriticError,
    NotReplayableError,
    ReplayDidNotFinishError,
    ReplayError,
    error_class,
)
from ariadne_lc.interventions import ControlType
from ariadne_lc.records import PLACEBO, AuditResult
from ariadne_lc.trace import Trace


def test_placebo_is_the_paraphrase_control() -> None:
    assert PLACEBO == ControlType.PARAPHRASE


def test_unauditable_carries_the_error_type() -> None:
    trace = Trace(trace_id="t", tags=("domain:math",), final_answer="42")
    from_exc = AuditResult.unauditable(trace, NotReplayableError("pruned"))
    assert from_exc.error == "NotReplayableError: pruned" and from_exc.error_type == "NotReplayableError"
    assert from_exc.status == "failed" and from_exc.domain == "math" and from_exc.step_index == -1
    from_text = AuditResult.unauditable(trace, "gave up after 3 attempts", error_type="TimeoutError")
    assert (from_text.error, from_text.error_type) == ("gave up after 3 attempts", "TimeoutError")
    assert AuditResult.model_validate_json(from_exc.model_dump_json()) == from_exc


@pytest.mark.parametrize(
    ("name", "expected", "is_replay_error"),
    [
        ("ReplayError", ReplayError, True),
        ("ReplayDidNotFinishError", ReplayDidNotFinishError, True),
        ("NotReplayableError", NotReplayableError, True),
        ("CriticError", CriticError, False),
        ("AriadneError", AriadneError, False),
        ("TimeoutError", TimeoutError, False),
    ],
)
def test_error_class_maps_a_name_back(name: str, expected: type[BaseException], is_replay_error: bool) -> None:
    cls = error_class(name)
    assert cls is expected
    assert issubclass(cls, ReplayError) is is_replay_error


def test_error_class_of_an_unknown_or_missing_name() -> None:
    assert error_class("NoSuchError") is None
    assert error_class("len") is None  # a builtin, but not an exception
    assert error_class(None) is None and error_class("") is None


def test_error_class_finds_errors_of_optional_parts() -> None:
    from ariadne_lc.export.writeback import WriteBackError

    assert error_class("WriteBackError") is WriteBackError
