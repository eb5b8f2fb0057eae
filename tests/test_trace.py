"""The trace record: its domain, its steps, its JSON form."""

from __future__ import annotations

import pytest

from ariadne_lc.errors import StepNotFoundError
from ariadne_lc.trace import Step, Trace


def test_domain_from_metadata_or_tag() -> None:
    assert Trace(trace_id="t", tags=("x", "domain:science")).domain == "science"
    assert Trace(trace_id="t", tags=("domain:science",), metadata={"domain": " math "}).domain == "math"
    assert Trace(trace_id="t", tags=("x", "domain: ")).domain is None
    assert Trace(trace_id="t", tags=("x",), metadata={"domain": 3}).domain is None


def test_domain_is_derived_not_stored() -> None:
    trace = Trace(trace_id="t", tags=("domain:science",))
    assert "domain" not in trace.model_dump()
    assert Trace.model_validate_json(trace.model_dump_json()).domain == "science"


def test_step_lookup_names_the_valid_range() -> None:
    trace = Trace(trace_id="t", steps=(Step(index=0, node="model", thought="x"),))
    assert trace.step(0).thought == "x"
    with pytest.raises(StepNotFoundError, match=r"valid: 0\.\.0"):
        trace.step(1)
