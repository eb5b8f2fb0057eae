"""The error hierarchy, and mapping a result's ``error_type`` back to its class."""

from __future__ import annotations

import re

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


def test_the_module_docstring_draws_every_error() -> None:
    import ariadne_lc.errors as errors

    drawn = errors.__doc__ or ""
    assert "\n    AriadneError\n" in drawn
    for name in errors.__all__:
        if name not in ("AriadneError", "error_class"):  # the root is drawn bare
            assert re.search(rf"── {name}\b", drawn), f"{name} is missing from the hierarchy in ariadne_lc/errors.py"


def test_the_named_not_found_and_not_finished_errors() -> None:
    from ariadne_lc.errors import JobNotFoundError, StoreError, TraceError, TraceNotFinishedError

    assert issubclass(JobNotFoundError, StoreError) and issubclass(TraceNotFinishedError, TraceError)
    assert error_class("JobNotFoundError") is JobNotFoundError
    assert error_class("TraceNotFinishedError") is TraceNotFinishedError
    missing = JobNotFoundError("no job 'x' in this store", job_id="x")
    assert str(missing) == "no job 'x' in this store" and missing.job_id == "x"  # not quoted like a KeyError
