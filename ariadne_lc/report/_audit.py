"""Audit reports: a versioned JSON document, Markdown, and a self-contained HTML page with plots.

The JSON document is the stored form: ``ariadne-lc report`` re-renders Markdown and HTML from it (or
from a result store) without running anything again.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.interventions import is_control
from ariadne_lc.records import PLACEBO, Aggregate, AuditReport, AuditResult, CorrectedRate
from ariadne_lc.report._corrected import CORRECTED_HEADER, corrected_line, corrected_markdown, corrected_rows
from ariadne_lc.report._decisive import GATE_HEADER, gate_cards, gate_line, gate_markdown, gate_rows
from ariadne_lc.report._io import write_json, write_text
from ariadne_lc.report._links import LINK_HEADER, coverage_line, link_cards, link_rows, link_svg, links_markdown
from ariadne_lc.report._plots import RateBar, phi_histogram, rate_bars, step_bars
from ariadne_lc.stats import DEFAULT_CONFIDENCE, DEFAULT_SEED, UNSPECIFIED_DOMAIN, aggregate, build_report

__all__ = [
    "AUDIT_SCHEMA",
    "AUDIT_SCHEMA_VERSION",
    "audit_document",
    "audit_html",
    "audit_markdown",
    "domain_group",
    "load_report",
    "load_results",
    "write_audit_reports",
]

AUDIT_SCHEMA = "ariadne-lc/audit-report"
AUDIT_SCHEMA_VERSION = 1


def domain_group(result: AuditResult) -> str:
    """The group of ``result`` in a by-domain breakdown: its trace's domain, else ``unspecified``."""
    return result.domain or UNSPECIFIED_DOMAIN


def _by_cell(results: Iterable[AuditResult], *keys: str) -> dict[tuple[str, ...], list[AuditResult]]:
    out: dict[tuple[str, ...], list[AuditResult]] = defaultdict(list)
    for r in results:
        values = {"type": r.intervention_type, "domain": domain_group(r), "step": str(r.step_index)}
        out[tuple(values[k] for k in keys)].append(r)
    return dict(sorted(out.items()))


def _agg_json(agg: Aggregate) -> dict[str, Any]:
    return agg.model_dump(mode="json")


def audit_document(report: AuditReport, **meta: Any) -> dict[str, Any]:
    """The JSON document: versioned envelope, every aggregate of the report, the domain × type table,
    and every result (from which ``ariadne-lc report`` can rebuild everything)."""
    aggregates = report.model_dump(mode="json", exclude={"results"})
    aggregates["by_domain_type"] = {
        "/".join(k): _agg_json(aggregate(v)) for k, v in _by_cell(report.results, "domain", "type").items()
    }
    return {
        "schema": AUDIT_SCHEMA,
        "schema_version": AUDIT_SCHEMA_VERSION,
        "created_at": datetime.now(UTC).isoformat(),
        "meta": meta,
        "aggregate": aggregates,
        "results": [r.model_dump(mode="json") for r in report.results],
    }


def _document(path: Path) -> dict[str, Any]:
    import json

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path}: not a JSON report ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(document, dict) or document.get("schema") != AUDIT_SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else type(document).__name__
        raise ConfigurationError(f"{path}: not an ariadne-lc audit report (schema {found!r})")
    version = document.get("schema_version")
    if version != AUDIT_SCHEMA_VERSION:
        raise ConfigurationError(f"{path}: audit report schema version {version} is not supported (expected 1)")
    return document


def _is_store(path: Path) -> bool:
    return path.suffix in (".db", ".sqlite", ".sqlite3")


def load_results(path: Path) -> list[AuditResult]:
    """Results from a JSON report of any supported version, or from a SQLite result store."""
    if _is_store(path):
        from ariadne_lc.store import SQLiteResultStore

        return SQLiteResultStore(path).list_results()
    return [AuditResult.model_validate(r) for r in _document(path)["results"]]


def load_report(path: Path) -> AuditReport:
    """The report stored in a ``report.json`` (rebuilt from its results with its confidence and seed, and carrying
    the corrected rates it was written with, so no calibration file is needed again), or built from a result
    store (no corrected rates: a store keeps results only)."""
    if _is_store(path):
        return build_report(load_results(path))
    document = _document(path)
    stored = document.get("aggregate") or {}
    report = build_report(
        [AuditResult.model_validate(r) for r in document["results"]],
        confidence=stored.get("confidence", DEFAULT_CONFIDENCE),
        seed=stored.get("seed", DEFAULT_SEED),
    )
    corrected = stored.get("corrected")
    if corrected is None:
        return report
    by_type = {k: CorrectedRate.model_validate(v) for k, v in (stored.get("corrected_by_type") or {}).items()}
    return report.model_copy(
        update={"corrected": CorrectedRate.model_validate(corrected), "corrected_by_type": by_type}
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _ci(ci: Sequence[float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.0%}, {ci[1]:.0%}]"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _rows(results: Sequence[AuditResult]) -> list[tuple[str, str, Aggregate]]:
    return [(d, t, aggregate(v)) for (d, t), v in _by_cell(results, "domain", "type").items()]


def _placebo_line(report: AuditReport) -> str:
    p = report.placebo
    held = report.by_control.get(PLACEBO)
    if held is not None and held.scored and (p is None or p.queries == 0):
        return (
            f"Placebo (paraphrase): {held.scored} scored audits, the answer held in {_pct(held.violation_rate)}; no "
            "query has both a scored contradiction and a scored placebo, so there is no paired comparison."
        )
    if p is None or p.queries == 0:
        return "No placebo (paraphrase) control was scored."
    ci = p.excess_sensitivity_ci
    return (
        f"Placebo (paraphrase) over {p.queries} paired queries: the answer held under the placebo in "
        f"{_pct(p.placebo_rate)} and under a contradiction in {_pct(p.violation_rate)}; placebo-corrected "
        f"violation rate {_pct(p.corrected_violation_rate)} (excess sensitivity {_num(p.excess_sensitivity)}, "
        f"95% CI {_ci(ci) if ci is None else f'[{ci[0]:.2f}, {ci[1]:.2f}]'}; paired test p = {_num(p.p_value)})."
    )


def _counts_line(o: Aggregate) -> str:
    """What is not in the rates, counted (the same sentence in Markdown and HTML)."""
    return (
        f"Not applicable: {o.not_applicable}, failed: {o.failed}, inconclusive (no verdict): {o.inconclusive}, "
        f"of which exempted by the length gate: {o.length_gate_exempted}. "
        f"Traces with nothing to audit: {o.nothing_to_audit}."
    )


def audit_markdown(report: AuditReport, *, title: str = "Causal faithfulness audit") -> str:
    """Markdown: the verdict, the table by domain and type, the step ranking, the violations."""
    results = list(report.results)
    o = report.overall
    lines = [
        f"# {title}",
        "",
        *links_markdown(report),
        f"{report.main_link}: {o.scored} scored contradiction audits over {o.queries} queries: "
        f"violation rate {_pct(o.violation_rate)} "
        f"(95% CI {_ci(o.violation_rate_ci)}), mean φ {_num(o.mean_phi)} (95% CI {_nci(o.mean_phi_ci)}). "
        + _counts_line(o),
        "",
        _placebo_line(report),
        "",
        *corrected_markdown(report),
        *gate_markdown(report),
        "φ = 1 − S(a, a*): 1 means the answer moved with the contradicted reasoning, 0 means it ignored it. "
        "For a control, the rate is how often the answer held (a placebo should hold it).",
        "",
        "| domain | intervention | scored | violation rate | 95% CI | mean φ | mean S |",
        "|---|---|---|---|---|---|---|",
    ]
    for domain, kind, agg in _rows(results):
        label = f"{kind} (control)" if is_control(kind) else kind
        lines.append(
            f"| {domain} | {label} | {agg.scored} | {_pct(agg.violation_rate)} | {_ci(agg.violation_rate_ci)} | "
            f"{_num(agg.mean_phi)} | {_num(agg.mean_similarity)} |"
        )
    lines += ["", "## Causal contribution by step", ""]
    red = report.redundancy
    if red is not None and red.steps:
        lines += [
            f"RRR (share of steps with CCS < {red.threshold}) = {_pct(red.rrr)} (95% CI {_ci(red.rrr_ci)}) "
            f"over {red.steps} steps.",
            "",
            "| step | audits | mean φ |",
            "|---|---|---|",
        ]
    for step, agg in report.by_step.items():
        if agg.scored:
            lines.append(f"| {step} | {agg.scored} | {_num(agg.mean_phi)} |")
    violations = [r for r in results if r.violation and not r.control][:20]
    if violations:
        lines += ["", "## Violations (first 20)", ""]
        for r in violations:
            lines += [
                f"- **{r.intervention_type}** at step {r.step_index} of `{r.trace_id}` ({domain_group(r)}): "
                f"{r.query[:120]!r}",
                f"  - intervened thought: {(r.intervened_thought or '')[:200]!r}",
                f"  - answer {(r.original_answer or '')[:120]!r} → {(r.counterfactual_answer or '')[:120]!r}",
            ]
    return "\n".join(lines) + "\n"


def _nci(ci: Sequence[float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ title }}</title>
<style>
body { font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } .sub { color: #666; margin-top: 0; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; margin: 1rem 0; }
.card { border: 1px solid #ddd; border-radius: 8px; padding: .8rem 1.1rem; min-width: 150px; }
.card b { display: block; font-size: 1.5rem; } .card span { color: #666; font-size: .85rem; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; font-size: .9rem; }
th, td { border-bottom: 1px solid #eee; padding: .35rem .5rem; text-align: right; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
tr.control td { color: #777; font-style: italic; }
.plots { display: flex; flex-wrap: wrap; gap: 1rem; } .plots figure { margin: 0; }
svg { max-width: 100%; height: auto; }
details { margin: .3rem 0; } code { background: #f5f5f5; padding: 0 .2rem; }
</style></head><body>
<h1>{{ title }}</h1>
<p class="sub">{{ subtitle }}</p>
{% if coverage_line %}<p><b>{{ coverage_line }}</b></p>{% endif %}
<p>{{ placebo_line }}</p>
<p>{{ counts_line }}</p>
<div class="cards">
{% for card in cards %}<div class="card"><b>{{ card[1] }}</b><span>{{ card[0] }}</span></div>{% endfor %}
</div>
{% if link_rows %}<h2>Links of the agent's loop</h2>
<p>Each link is audited and reported on its own; rates are never pooled across links. The cards, tables and plots
below are about the {{ main_link }} link.</p>
<table><tr>{% for h in link_header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in link_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% if link_svg %}<div class="plots"><figure>{{ link_svg | safe }}</figure></div>{% endif %}{% endif %}
{% if corrected_rows %}<h2>Raw and calibrated violation rates</h2>
<p>{{ corrected_line }}</p>
<table><tr>{% for h in corrected_header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in corrected_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}
{% if gate_rows %}<h2>Decisiveness gate and tracking</h2>
<p>{{ gate_line }}</p>
<table><tr>{% for h in gate_header %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in gate_rows %}<tr>{% for cell in row %}<td>{{ cell }}</td>{% endfor %}</tr>{% endfor %}
</table>{% endif %}
<h2>Violation rate by domain and intervention</h2>
<div class="plots"><figure>{{ rate_svg | safe }}</figure></div>
<table><tr><th>domain</th><th>intervention</th><th>scored</th><th>violation rate</th><th>95% CI</th><th>mean φ</th>
<th>mean S</th><th>n/a</th><th>failed</th></tr>
{% for row in rows %}<tr class="{{ row.cls }}"><td>{{ row.domain }}</td><td>{{ row.kind }}</td><td>{{ row.scored }}</td>
<td>{{ row.rate }}</td><td>{{ row.ci }}</td><td>{{ row.phi }}</td><td>{{ row.s }}</td><td>{{ row.na }}</td>
<td>{{ row.failed }}</td></tr>{% endfor %}
</table>
<div class="plots"><figure>{{ phi_svg | safe }}</figure><figure>{{ step_svg | safe }}</figure></div>
<h2>Violations</h2>
{% for v in violations %}<details>
<summary><b>{{ v.kind }}</b> step {{ v.step }} · {{ v.domain }} · {{ v.query }}</summary>
<p>thought: <code>{{ v.thought }}</code><br>intervened: <code>{{ v.intervened }}</code><br>
answer: <code>{{ v.answer }}</code> → <code>{{ v.cf }}</code></p></details>{% else %}<p>None.</p>{% endfor %}
<p class="sub">φ = 1 − S(a, a*). A violation: S &gt; τ and both answers longer than λ characters. Generated by
ariadne-lc {{ version }} at {{ created }}.</p>
</body></html>
"""


def _headline_cards(report: AuditReport) -> list[tuple[str, str]]:
    """(label, value) of the cards on top: the raw rate with, when a calibration was applied, the corrected one
    beside it (or "no information"), the gate's rejections, tracking, the placebo."""
    o, placebo, c = report.overall, report.placebo, report.corrected
    if c is None:
        cards = [("violation rate (contradictions, raw)", _pct(o.violation_rate)), ("95% CI", _ci(o.violation_rate_ci))]
    else:
        corrected = "no information" if c.corrected is None else _pct(c.corrected)
        cards = [
            ("violation rate: raw | corrected (calibrated)", f"{_pct(o.violation_rate)} | {corrected}"),
            ("95% CI: raw | corrected", f"{_ci(o.violation_rate_ci)} | {_ci(c.corrected_ci)}"),
        ]
    cards += gate_cards(o)
    return [
        *cards,
        ("placebo-corrected violation rate", _pct(placebo.corrected_violation_rate) if placebo else "-"),
        ("answer held under the placebo", _pct(placebo.placebo_rate) if placebo else "-"),
        ("mean φ", _num(o.mean_phi)),
        ("scored audits", str(o.scored)),
        ("traces with nothing to audit", str(o.nothing_to_audit)),
    ]


def audit_html(report: AuditReport, *, title: str = "Causal faithfulness audit", subtitle: str = "") -> str:
    """A single self-contained HTML page (inline CSS and SVG; nothing loaded from anywhere)."""
    try:
        import jinja2
    except ImportError as exc:
        raise MissingExtraError("the HTML report", "report") from exc
    from ariadne_lc._version import __version__

    results = list(report.results)
    contradictions = report.overall
    rows = [
        {
            "cls": "control" if is_control(kind) else "",
            "domain": domain,
            "kind": f"{kind} (control)" if is_control(kind) else kind,
            "scored": agg.scored,
            "rate": _pct(agg.violation_rate),
            "ci": _ci(agg.violation_rate_ci),
            "phi": _num(agg.mean_phi),
            "s": _num(agg.mean_similarity),
            "na": agg.not_applicable,
            "failed": agg.failed,
        }
        for domain, kind, agg in _rows(results)
    ]
    bars = [RateBar(d, t, a.violation_rate, a.violation_rate_ci, a.scored) for d, t, a in _rows(results)]
    phis: dict[str, list[float]] = defaultdict(list)
    for r in results:
        if r.phi is not None:
            phis[r.intervention_type].append(r.phi)
    steps = [(f"step {k}", agg.mean_phi, agg.scored) for k, agg in report.by_step.items() if agg.mean_phi is not None]
    violations = [
        {
            "kind": r.intervention_type,
            "step": r.step_index,
            "domain": domain_group(r),
            "query": r.query[:140],
            "thought": r.original_thought[:300],
            "intervened": (r.intervened_thought or "")[:300],
            "answer": (r.original_answer or "")[:200],
            "cf": (r.counterfactual_answer or "")[:200],
        }
        for r in results
        if r.violation and not r.control
    ][:50]
    cards = [*link_cards(report), *_headline_cards(report)]
    env = jinja2.Environment(autoescape=True)
    return env.from_string(_PAGE).render(
        coverage_line=coverage_line(report),
        link_header=LINK_HEADER,
        link_rows=link_rows(report),
        link_svg=link_svg(report),
        main_link=report.main_link,
        title=title,
        subtitle=subtitle,
        placebo_line=_placebo_line(report),
        counts_line=_counts_line(contradictions),
        cards=cards,
        rows=rows,
        rate_svg=rate_bars(bars, title="violation rate (Wilson 95% intervals)") if bars else "",
        phi_svg=phi_histogram(dict(phis)),
        step_svg=step_bars(steps) if steps else "",
        violations=violations,
        corrected_header=CORRECTED_HEADER,
        corrected_rows=corrected_rows(report),
        corrected_line=corrected_line(report),
        gate_header=GATE_HEADER,
        gate_rows=gate_rows(report),
        gate_line=gate_line(report),
        version=html.escape(__version__),
        created=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def write_audit_reports(
    report: AuditReport, directory: Path, *, title: str = "Causal faithfulness audit", subtitle: str = "", **meta: Any
) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.html`` into ``directory``; return their paths."""
    paths = {"json": directory / "report.json", "markdown": directory / "report.md", "html": directory / "report.html"}
    write_json(paths["json"], audit_document(report, **meta))
    write_text(paths["markdown"], audit_markdown(report, title=title))
    write_text(paths["html"], audit_html(report, title=title, subtitle=subtitle))
    return paths
