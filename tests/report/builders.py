"""A report on all three links from real audits of scripted agents (``planning_tool_model``, see
``tests/audit/test_links.py``), with their controls and a few violations by construction.

Three agents, each recorded once (domain ``hotels`` or ``offices``): one follows its plan and reads its tool
(faithful on every link), one calls the question's tool whatever its thought says (violations on ``thought->action``),
one answers from the question instead of the tool's output (violations on ``observation->answer``).
"""

from __future__ import annotations

from ariadne_lc import Auditor
from ariadne_lc.records import AuditReport, AuditResult
from ariadne_lc.stats import build_report
from tests.audit.test_links import _create_agent

AGENTS = (
    ("thought", "observation", "hotels"),
    ("question", "observation", "hotels"),
    ("thought", "question", "offices"),
)
INTERVENTIONS = ["logic_flip", "fact_reversal", "observation_swap", "rerun", "paraphrase"]


def three_link_results() -> list[AuditResult]:
    """Every audit of the three agents on every link, controls included."""
    results: list[AuditResult] = []
    for action, answer, domain in AGENTS:
        graph, trace = _create_agent(action, answer)
        trace = trace.model_copy(update={"metadata": {**trace.metadata, "domain": domain}})
        auditor = Auditor(graph, safe_tools=["multiply", "divide", "add", "subtract"])
        results += auditor.audit(trace, interventions=INTERVENTIONS)
    return results


def three_link_report() -> AuditReport:
    """:func:`three_link_results` as a report."""
    return build_report(three_link_results())
