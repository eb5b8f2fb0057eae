"""The error hierarchy, and mapping a result's ``error_type`` back to its class."""

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
