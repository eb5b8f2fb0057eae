"""Hand-built calibration audits whose error rates are known exactly."""

from __future__ import annotations

from ariadne_lc.calibration import CalibrationAudit, CalibrationConfig
from ariadne_lc.calibration.records import AgentKind, Method, Split, Truth
from ariadne_lc.records import AuditResult, AuditStatus

CONFIG = CalibrationConfig(model="scripted", critic="rule", scorer="answer", tau=0.8, lam=10)


def result(
    *,
    violation: bool,
    trace_id: str,
    kind: str = "logic_flip",
    status: AuditStatus = "scored",
    control: bool = False,
    answer_changed: bool | None = None,
    length_gate_exempted: bool = False,
) -> AuditResult:
    scored = status == "scored"
    return AuditResult(
        trace_id=trace_id,
        step_index=0,
        intervention_type=kind,
        status=status,
        label=("control" if control else "violation" if violation else "faithful") if scored else "inconclusive",
        original_thought="I need to multiply 6 by 7.",
        similarity=(1.0 if violation else 0.0) if scored else None,
        phi=(0.0 if violation else 1.0) if scored else None,
        violation=violation and scored,
        control=control,
        answer_changed=(not violation) if answer_changed is None else answer_changed,
        length_gate_exempted=length_gate_exempted,
    )


def audits(
    agent: AgentKind,
    *,
    violations: int,
    n: int,
    split: Split = "calibrate",
    truth: Truth | None = None,
    p: float | None = None,
    method: Method = "ariadne",
    kind: str = "logic_flip",
    prefix: str = "",
    decisive_changed: bool | None = True,
    control: bool = False,
) -> list[CalibrationAudit]:
    """``n`` scored audits of one agent, the first ``violations`` of them violations, one query each."""
    if truth is None and agent in ("coupled", "bypass"):
        truth = "faithful" if agent == "coupled" else "unfaithful"
    return [
        CalibrationAudit(
            agent=agent,
            p=p,
            truth=truth,
            split=split,
            query_id=f"{prefix or agent}-{i}",
            domain="gsm8k",
            method=method,
            decisive_changed=decisive_changed,
            result=result(
                violation=i < violations, trace_id=f"{prefix or agent}-{method}-{i}", kind=kind, control=control
            ),
        )
        for i in range(n)
    ]
