"""The HTML audit report: one self-contained page that answers one question per link first.

Read top to bottom, the page is what an engineer opening it after a week away wants in that order:

1. coverage (how much of the agent's loop the numbers speak for);
2. one row per link: the verdict word (:mod:`ariadne_lc.report._verdict`, its rule printed under the table), the
   violation rate with its Wilson interval, N, the link's coverage and its controls ("held k/n"); under it, where the
   action or answer went after each edit, as stacked bars (so a 0% rate still shows what happened);
3. one example audit per link (:mod:`ariadne_lc.report._examples`): the edit as a word diff, the action or answer
   before and after, and whether it tracked;
4. the details, collapsed: per link its tables and charts (never pooled across links), then the main link's
   calibration, placebo comparison and steps.

Inline CSS and SVG only: nothing is loaded from anywhere, no script runs.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime

from ariadne_lc.coverage import coverage_line, why_no_verdict
from ariadne_lc.errors import MissingExtraError
from ariadne_lc.records import AuditReport
from ariadne_lc.report._corrected import CORRECTED_HEADER, corrected_line, corrected_rows
from ariadne_lc.report._decisive import gate_line
from ariadne_lc.report._html_parts import example_context, link_details_context, outcome_context, verdict_rows
from ariadne_lc.report._plots import step_bars
from ariadne_lc.report._sentences import counts_line, placebo_line, steps
from ariadne_lc.report._verdict import agent_header, agent_rows, ci_label, link_answers, verdict_rule

__all__ = ["audit_html"]

_STYLE = """
body { font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222;
  line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2rem; font-size: 1.25rem; }
h3 { font-size: 1.05rem; margin: 0 0 .4rem; } .sub, .note { color: #666; } .sub { margin-top: 0; }
.coverage { font-size: 1.05rem; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; font-size: .9rem; }
th, td { border-bottom: 1px solid #eee; padding: .35rem .5rem; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
table.verdicts { font-size: 1rem; } table.verdicts td { padding: .55rem .5rem; }
table.verdicts td.link, table.verdicts td.ci, table.verdicts td.coverage { white-space: nowrap; }
table.verdicts td.controls, table.verdicts th.controls { text-align: left; font-size: .9rem; }
table.verdicts td.verdict-cell, table.verdicts th.verdict-cell { text-align: left; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .4rem; }
.verdict { font-weight: 700; padding: .1rem .5rem; border-radius: 4px; white-space: nowrap; }
.verdict.flagged { background: #fde0dd; color: #a50f15; } .verdict.faithful { background: #e5f5e0; color: #006d2c; }
.verdict.no-verdict { background: #eee; color: #555; }
.why { display: block; color: #777; font-size: .8rem; font-weight: 400; } .caveat { color: #a65c00; }
.example { border: 1px solid #ddd; border-left-width: 5px; border-radius: 6px; padding: .8rem 1rem; margin: .8rem 0; }
.example table th { width: 11rem; text-align: left; color: #555; font-weight: 600; }
.example table td { text-align: left; } .query { color: #555; margin: 0 0 .3rem; }
del { background: #fdd; color: #a50f15; } ins { background: #d9f2d9; color: #006d2c; text-decoration: none; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .88rem; }
.outcome { font-weight: 700; } .outcome.stayed { color: #a50f15; } .outcome.tracked { color: #006d2c; }
table.detail td { white-space: nowrap; }
table.keys-2 td:nth-child(2), table.keys-2 th:nth-child(2) { text-align: left; }
table.agents td:nth-child(-n+3), table.agents th:nth-child(-n+3) { text-align: left; }
details { margin: .5rem 0; border: 1px solid #eee; border-radius: 6px; padding: .3rem .8rem; }
summary { cursor: pointer; font-weight: 600; padding: .3rem 0; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; } .plots figure { margin: 0; }
svg { max-width: 100%; height: auto; }
"""

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title><style>{{ style }}</style></head><body>
<h1>{{ title }}</h1>
<p class="sub">{{ subtitle }}{% if subtitle %} · {% endif %}ariadne-lc {{ version }}, {{ created }}</p>
<p class="coverage"><b>{{ coverage }}</b></p>
{% for link, reasons in why %}<p class="why"><b>{{ link }}, why no verdict:</b>
{% for reason, n, fix in reasons %}{{ reason }} ({{ n }}){% if fix %}: {{ fix }}{% endif %}
{%- if not loop.last %}; {% endif %}{% endfor %}</p>
{% endfor %}

<h2>Does the agent's reasoning drive what it does? One answer per link</h2>
{% if rows %}<table class="verdicts" id="verdicts">
<tr><th>link</th><th class="verdict-cell">verdict</th><th>violation rate</th><th>{{ ci_label }}</th><th>N scored</th>
<th>coverage</th>{% if calibrated %}<th>calibrated</th>{% endif %}<th class="controls">controls</th></tr>
{% for r in rows %}<tr data-link="{{ r.link }}">
<td class="link" title="{{ r.question }}"><span class="swatch" style="background: {{ r.colour }}"></span>
{{- r.link }}</td>
<td class="verdict-cell"><span class="verdict {{ r.cls }}">{{ r.verdict }}</span>
<span class="why">{{ r.why }}</span></td>
<td class="rate">{{ r.rate }}</td><td class="ci">{{ r.ci }}</td><td class="scored">{{ r.scored }}</td>
<td class="coverage">{{ r.coverage }}</td>{% if calibrated %}<td class="corrected">{{ r.corrected }}</td>{% endif %}
<td class="controls">{{ r.controls }}{% if r.caveat %}<span class="why caveat">{{ r.caveat }}</span>{% endif %}</td>
</tr>{% endfor %}
</table>
<p class="note">Violation rate: the share of scored edits (contradictions of the thought, swaps of a tool output) whose
action or answer stayed as it was. Coverage: the link's units (thought steps, tool outputs) with a verdict. Controls
change nothing that matters, so the action or answer should hold under them. Verdict: {{ rule }}</p>
{% if agent_rows %}<h2>Per agent: each agent's own rate on each link</h2>
<table class="agents" id="agents"><tr>{% for h in agent_header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in agent_rows %}<tr data-agent="{{ row[0] }}" data-link="{{ row[1] }}">
{%- for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}
{% if outcome_svg %}<figure class="outcomes">{{ outcome_svg | safe }}</figure>
{% else %}<p class="chart-note">{{ outcome_none }}</p>{% endif %}
{% else %}<p>No link was audited.</p>{% endif %}

<h2>One example audit per link</h2>
{% for e in examples %}<section class="example" data-link="{{ e.link }}" style="border-left-color: {{ e.colour }}">
<h3><span class="swatch" style="background: {{ e.colour }}"></span>{{ e.link }}{% if e.heading %}
<span class="note"> · {{ e.heading }}</span>{% endif %}</h3>
{% if e.none %}<p>{{ e.none }}</p>{% else %}<p class="query">Query: {{ e.query }}</p>
<table data-link="{{ e.link }}">
<tr><th>{{ e.edited }}, edited</th><td class="edit">{{ e.edit | safe }}</td></tr>
{% if e.implied %}<tr><th>the edit now implies</th><td><span class="mono">{{ e.implied }}</span></td></tr>{% endif %}
<tr><th>{{ e.label }} before</th><td class="mono before">{{ e.before }}</td></tr>
<tr><th>{{ e.label }} after the edit</th><td class="mono after">{{ e.after | safe }}{% if e.unchanged %}
<span class="note">(unchanged)</span>{% endif %}</td></tr>
<tr><th>tracked?</th><td><span class="outcome {{ e.outcome }}">{{ e.outcome }}</span> {{ e.sentence }}
<span class="note">(φ {{ e.phi }}, S {{ e.similarity }})</span></td></tr>
</table>{% endif %}
</section>{% endfor %}

<h2>Details</h2>
{% if gate_used %}<p class="note">{{ gate_line }}</p>{% endif %}
{% for d in details %}<details class="link-details" data-link="{{ d.link }}">
<summary><span class="swatch" style="background: {{ d.colour }}"></span>{{ d.link }}: per intervention, per domain,
the gate, controls, φ</summary>
{% for t in d.tables %}<h3>{{ t.title }}</h3>{% if t.note %}<p class="note">{{ t.note }}</p>{% endif %}
<table class="detail keys-{{ t.keys }}" data-link="{{ d.link }}">
<tr>{% for h in t.header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in t.rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endfor %}
<div class="plots">{% for svg, sentence in d.charts %}{% if svg %}<figure>{{ svg | safe }}</figure>
{% else %}<p class="chart-note">{{ sentence }}</p>{% endif %}{% endfor %}</div>
{% if d.violations %}<h3>Violations (first {{ d.violations | length }})</h3><ul>
{% for v in d.violations %}<li><b>{{ v.heading }}</b>: {{ v.query }}<br>edited: <code>{{ v.thought }}</code><br>
{{ v.label }}: <code>{{ v.before }}</code> → <code>{{ v.after }}</code></li>{% endfor %}</ul>{% endif %}
</details>{% endfor %}
<details class="main-link" data-link="{{ main_link }}">
<summary>{{ main_link }} (the report's main link: thought->answer when it has a verdict, else the first link that
has one; the calibration, placebo and step breakdowns are about it): calibration, placebo, steps, what is not in the
rates</summary>
{% if corrected_rows %}<h3>Raw and calibrated violation rates</h3><p>{{ corrected_line }}</p>
<table data-link="{{ main_link }}"><tr>{% for h in corrected_header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in corrected_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% else %}<p>{{ corrected_line }}</p>{% endif %}
<p>{{ placebo_line }}</p>
<p>{{ counts_line }}</p>
{% if step_svg %}<div class="plots"><figure>{{ step_svg | safe }}</figure></div>{% endif %}
</details>
<p class="note">φ = 1 − S(a, a*): 1 when the action or answer moved, 0 when it stayed. A violation: S &gt; τ and both
answers longer than λ characters. Every rate is about one link; no number on this page pools links.</p>
</body></html>
"""


def audit_html(report: AuditReport, *, title: str = "Causal faithfulness audit", subtitle: str = "") -> str:
    """A single self-contained HTML page (inline CSS and SVG; nothing loaded from anywhere)."""
    try:
        import jinja2
    except ImportError as exc:
        raise MissingExtraError("the HTML report", "report") from exc
    from ariadne_lc._version import __version__

    answers = link_answers(report)
    outcome_svg, outcome_none = outcome_context(answers)
    step_values = steps(report)
    step_title = f"{report.main_link}: causal contribution by step"
    coverage = coverage_line(report.coverage).capitalize() + "." if report.coverage is not None else ""
    env = jinja2.Environment(autoescape=True)
    return env.from_string(_PAGE).render(
        style=_STYLE,
        title=title,
        subtitle=subtitle,
        version=html.escape(__version__),
        created=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        coverage=coverage,
        why=list(why_no_verdict(report.results).items()),
        rows=verdict_rows(answers),
        agent_rows=agent_rows(report),
        agent_header=agent_header(report.confidence),
        calibrated=report.corrected is not None,
        rule=verdict_rule(report.confidence),
        ci_label=ci_label(report.confidence),
        outcome_svg=outcome_svg,
        outcome_none=outcome_none,
        examples=example_context(report, answers),
        details=link_details_context(report),
        main_link=report.main_link,
        gate_used=any(r.decisiveness is not None for r in report.results),
        gate_line=gate_line(report),
        corrected_header=CORRECTED_HEADER,
        corrected_rows=corrected_rows(report),
        corrected_line=corrected_line(report),
        placebo_line=placebo_line(report),
        counts_line=counts_line(report.overall),
        step_svg=step_bars(step_values, title=step_title, link=report.main_link) if step_values else "",
    )
