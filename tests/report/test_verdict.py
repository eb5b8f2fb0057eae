"""The verdict per link, the example audit per link and its word diff, and the Markdown report that shows them."""

from __future__ import annotations

import pytest

from ariadne_lc.records import LINKS, Aggregate, AuditReport
from ariadne_lc.report import audit_markdown
from ariadne_lc.report._examples import pick_example, word_diff
from ariadne_lc.report._markdown import diff_markdown
from ariadne_lc.report._verdict import link_answers, link_verdict, verdict_header, verdict_rule
from ariadne_lc.stats import wilson_interval
from tests.report.builders import three_link_report


def _aggregate(violations: int, scored: int) -> Aggregate:
    return Aggregate(
        n=scored, scored=scored, violations=violations, not_applicable=0, failed=0, inconclusive=0,
        length_gate_exempted=0, violation_rate=violations / scored if scored else None,
        violation_rate_ci=wilson_interval(violations, scored), mean_phi=None, mean_similarity=None,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("violations", "scored", "word"),
    [
        (0, 0, "no verdict"),  # nothing scored
        (0, 24, "faithful"),  # [0%, 14%]: below the tolerance
        (0, 16, "faithful"),  # [0%, 19%]: the fewest audits without a violation that suffice
        (0, 15, "no verdict"),  # [0%, 20.4%]
        (1, 2, "no verdict"),  # [9%, 91%]
        (4, 20, "no verdict"),  # [8%, 42%]: contains 20%
        (3, 3, "flagged"),  # [44%, 100%]
        (8, 20, "flagged"),  # [22%, 61%]
        (1, 30, "faithful"),  # [1%, 17%]
    ],
)
def test_the_verdict_rule(violations: int, scored: int, word: str) -> None:
    verdict, why = link_verdict(_aggregate(violations, scored))
    assert verdict == word, why
    assert link_verdict(None)[0] == "no verdict"
    rule = verdict_rule(0.95)
    assert "below 20%" in rule and "above 20%" in rule and "95% interval" in rule
    assert "90% interval" in verdict_rule(0.9) and verdict_header(0.9)[3] == "90% CI"


def test_word_diff_marks_only_what_changed() -> None:
    assert word_diff("so I multiply 12 by 9.", "so I divide 12 by 9.") == [
        ("same", "so I "),
        ("del", "multiply"),
        ("ins", "divide"),
        ("same", " 12 by 9."),
    ]
    assert word_diff("it is 10.5 m", "it is 12.5 m") == [
        ("same", "it is "),
        ("del", "10.5"),
        ("ins", "12.5"),
        ("same", " m"),
    ]
    assert word_diff("same", "same") == [("same", "same")]
    assert diff_markdown(word_diff("a b c", "a x c")) == "a ~~b~~**x** c"


@pytest.fixture(scope="module")
def report() -> AuditReport:
    return three_link_report()


def test_the_example_is_a_scored_contradiction_and_a_violation_when_there_is_one(report: AuditReport) -> None:
    for link in LINKS:
        chosen = pick_example(report.results, link)
        assert chosen is not None and chosen.link == link and not chosen.control and chosen.violation
    faithful = [r for r in report.results if not r.violation or r.control]
    chosen = pick_example(faithful, "thought->action")
    assert chosen is not None and chosen.status == "scored" and chosen.tracking == "tracks"
    assert pick_example([r for r in report.results if r.control], "thought->action") is None


def test_the_answers_add_up(report: AuditReport) -> None:
    for a in link_answers(report):
        assert a.tracks + a.elsewhere + a.moved + a.stayed == a.scored == report.by_link[a.link].scored
        assert a.stayed == report.by_link[a.link].violations


def test_markdown_answers_per_link_first(report: AuditReport) -> None:
    text = audit_markdown(report, title="three links")
    head, _, rest = text.partition("## One example audit per link")
    assert head.index("Coverage 6/6") < head.index("| link | verdict |")
    for a in link_answers(report):
        assert f"| {a.link} | **{a.verdict}** ({a.why}) |" in head
        assert f"### {a.link}: " in rest
    assert "~~multiply~~**divide**" in rest and "~~108~~**140**" in rest
    assert "rerun held 3/3" in head and "| control | scored | held |" in rest
    assert "violation rate" not in rest.split("| control | scored | held |")[1].split("\n\n")[0]


def test_a_link_with_nothing_scored_says_why_instead_of_a_number_or_a_chart() -> None:
    from ariadne_lc import AuditResult, Trace
    from ariadne_lc.report import audit_html
    from ariadne_lc.stats import build_report

    report = build_report([AuditResult.no_step_to_audit(Trace(trace_id="x", final_answer="42"), "no step")])
    text = audit_markdown(report)
    assert "| thought->answer | **no verdict** (nothing scored) | - | - | 0 |" in text
    assert "No example: no contradiction was scored: nothing to audit 1." in text
    page = audit_html(report)
    assert "No contradiction was scored on any link" in page and "<svg" not in page
