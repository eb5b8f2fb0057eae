"""Write-back of runs audited earlier: one score per link of each agent run, onto that run's own span.

The auditor's ``score_writers=`` write one score per audit as it finishes. A team that audited yesterday's traffic
(results in a result store, traces in a trace store) wants the backend to show, on each agent run, one line per
link: did this run follow its reasoning there, how far did the answers move, how sure is that, and what was changed.
:func:`link_scores` makes those lines and :func:`write_back` writes them with any :class:`ScoreWriter`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ariadne_lc import semconv as sc
from ariadne_lc.export.writeback._protocol import Score, ScoreTarget, ScoreWriter
from ariadne_lc.export.writeback._rationale import audit_rationale
from ariadne_lc.records import AuditResult
from ariadne_lc.stats import wilson_interval
from ariadne_lc.trace import SpanRef, recorded_trace_id

__all__ = ["LinkScore", "WriteBackSummary", "link_scores", "write_back"]

_logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LinkScore:
    """The score of one link of one agent run, and the span it goes on."""

    trace_id: str
    """The recorded trace (one agent run)."""
    link: str
    score: Score


@dataclass(frozen=True, slots=True)
class WriteBackSummary:
    """What :func:`write_back` did: scores written (per writer), failed, and runs skipped for want of a span."""

    written: int
    failed: int
    no_span: int
    """Runs whose trace recorded no agent span (or is not in ``spans``): nothing to write onto."""
    errors: tuple[str, ...] = ()
    """One line per failed write (writer and error)."""


def _contradictions(results: Iterable[AuditResult]) -> list[AuditResult]:
    return [r for r in results if not r.control and not r.nothing_to_audit]


def _link_score(link: str, audits: Sequence[AuditResult], quote: bool) -> Score:
    scored = [r for r in audits if r.status == "scored"]
    violations = [r for r in scored if r.violation]
    phis = [r.phi for r in scored if r.phi is not None]
    interval = wilson_interval(len(violations), len(scored))
    if not scored:
        label, head = "inconclusive", f"no verdict: none of {len(audits)} audit(s) was scored"
    else:
        label = "violation" if violations else "faithful"
        low, high = interval or (0.0, 1.0)
        head = (f"{label}: {len(violations)} of {len(scored)} contradiction(s) ignored (95% CI of the rate "
                f"[{low:.0%}, {high:.0%}])")  # fmt: skip
    # the audit that shows the link best: a violation first, then the one whose answer moved least
    worst = max(audits, key=lambda r: (r.status == "scored", r.violation, -(r.phi if r.phi is not None else 1.0)))
    metadata: dict[str, Any] = {
        "link": link,
        "audits": len(audits),
        "scored": len(scored),
        "violations": len(violations),
        "rate_ci": list(interval) if interval is not None else None,
        "result_ids": [r.result_id for r in audits],
    }
    if worst.audit_span is not None:  # the evidence of the worst audit, a click away
        metadata["audit_trace_id"], metadata["audit_span_id"] = worst.audit_span.trace_id, worst.audit_span.span_id
    return Score(
        name=sc.evaluation_name(link),
        value=sum(phis) / len(phis) if phis else None,
        label=label,
        explanation=f"{head}. Worst: {audit_rationale(worst, quote=quote)}",
        metadata=metadata,
        key=f"link/{link}",
    )


def link_scores(results: Iterable[AuditResult], *, quote: bool = False) -> list[LinkScore]:
    """One score per (agent run, link) among ``results``' contradictions (controls are not verdicts).

    Its value is the mean φ of the link's scored audits in that run (``None`` when none was scored); its label
    ``violation`` when any of them ignored its contradiction, ``faithful`` when none did, ``inconclusive`` when none
    was scored; its explanation the count with the Wilson interval of the run's rate and the worst audit in words
    (:func:`~ariadne_lc.export.writeback._rationale.audit_rationale`; thoughts and answers quoted only with
    ``quote``); its metadata the counts, the interval and the results' ids; its key ``link/<link>``.
    """
    grouped: dict[tuple[str, str], list[AuditResult]] = defaultdict(list)
    for r in _contradictions(results):
        grouped[(r.trace_id, r.link)].append(r)
    return [LinkScore(trace_id, link, _link_score(link, audits, quote)) for (trace_id, link), audits in grouped.items()]


def write_back(
    results: Iterable[AuditResult],
    spans: Mapping[str, SpanRef | None],
    writers: Sequence[ScoreWriter],
    *,
    quote: bool = False,
) -> WriteBackSummary:
    """Write :func:`link_scores` of ``results`` onto each run's span, with every writer; never raises on a write.

    Args:
        results: Stored results (``load_results(path)``, a result store's ``list_results()``).
        spans: Each recorded trace's agent span by trace id: ``{t.trace_id: t.span for t in store.list_traces()}``.
        writers: The backends' writers (:class:`~ariadne_lc.export.MLflowScoreWriter`,
            :class:`~ariadne_lc.export.PhoenixScoreWriter`, ...).
        quote: Quote thoughts and answers in the explanations (content: only where it may leave the process).
    """
    written = failed = 0
    missing: set[str] = set()
    errors: list[str] = []
    for item in link_scores(results, quote=quote):
        # a run split from a recorded trace at audit time (a supervisor's worker) is scored on that trace's span,
        # as the auditor's own write-back does
        ref = spans.get(item.trace_id) or spans.get(recorded_trace_id(item.trace_id))
        if ref is None:
            missing.add(item.trace_id)
            continue
        target = ScoreTarget.from_span_ref(ref)
        for writer in writers:
            try:
                writer.write(target, item.score)
                written += 1
            except Exception as exc:  # WriteBackError, or a writer's own bug: the other writes go on
                failed += 1
                errors.append(f"{type(writer).__name__} on {item.trace_id} {item.link}: {exc}")
                _logger.warning("ariadne: write-back with %s failed: %s", type(writer).__name__, exc)
    return WriteBackSummary(written, failed, len(missing), tuple(errors))
