"""The leaf records: what they carry, and that they agree with the engine's names."""

from __future__ import annotations

from ariadne_lc.errors import NotReplayableError
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
