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


def test_a_model_inputs_messages_read_back_as_records_whatever_their_ids_hold() -> None:
    from ariadne_lc.trace import MessageDigest, ModelInput

    recorded = ModelInput(messages=("system::d0", "human:run-1:abc:d1", "ai:lc_run--7f:d2", "tool::"))
    digests = recorded.digests()
    assert digests == (
        MessageDigest("system", "", "d0"),
        MessageDigest("human", "run-1:abc", "d1"),  # an id may hold colons: the digest is what follows the last one
        MessageDigest("ai", "lc_run--7f", "d2"),
        MessageDigest("tool", "", ""),
    )
    assert tuple(str(d) for d in digests) == recorded.messages  # the stored form, unchanged
