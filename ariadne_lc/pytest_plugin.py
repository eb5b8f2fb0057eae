"""ariadne-lc's pytest plugin: the ``assert_faithful`` fixture (:func:`ariadne_lc.testing.assert_faithful`).

Registered through the ``pytest11`` entry point, so pytest loads it wherever ariadne-lc is installed. It adds one
fixture and nothing else (no hook, no option, no import of the library until a test asks for the fixture): it is
off unless used. ``from ariadne_lc.testing import assert_faithful`` works as well, without the fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["assert_faithful"]


@pytest.fixture(name="assert_faithful")
def assert_faithful() -> Callable[..., None]:
    """``assert_faithful(report, max_rate=0.2, links=None, min_coverage=0.5)``: the CI gate as an assertion."""
    from ariadne_lc.testing import assert_faithful as check

    def run(report: Any, **options: Any) -> None:
        __tracebackhide__ = True  # the failure points at the test's line, not into the library
        check(report, **options)

    return run
