"""The per-link calibration's numbers: FA and M per link with Wilson intervals, per type, controls, cost.

- **FA** (false alarm) of a link: the share of the scored contradictions on its *faithful* agent that are
  violations. **M** (miss): the share of the scored contradictions on its *unfaithful* agent that are not.
  ``1 - FA - M`` is how much the audit tells the two apart (0: nothing; the correction of an observed rate is
  refused when it is not positive, docs/validity.md).
- Only scored contradictions count. What the gate rejected (``not_decisive``), what committed to nothing
  (``no_commitment``), and what failed or was inconclusive are counted beside, never folded into a rate.
- Tracking of the scored contradictions: the action or answer went where the edit implies (``tracks``), elsewhere,
  or ``stayed``.
- Controls (``rerun``, ``paraphrase``) per agent: how often the action or answer *held* (a control's
  ``violation``), the replay baseline and the placebo.

:func:`summarize` is pure (jobs and sessions in, a dict out); :func:`write_summary` writes ``summary.json`` and
``summary.md`` into the run folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from ariadne_lc.calibration.link_runner import LinkJob, LinkRunConfig, LinkSession
from ariadne_lc.records import AuditResult
from ariadne_lc.stats import wilson_interval

__all__ = ["SUMMARY_JSON", "SUMMARY_MD", "rate", "render_markdown", "summarize", "write_summary"]

SUMMARY_JSON: Final = "summary.json"
SUMMARY_MD: Final = "summary.md"


def rate(k: int, n: int) -> dict[str, Any]:
    """``k`` of ``n`` as a rate with its 95% Wilson interval (``None`` rate and interval without trials)."""
    ci = wilson_interval(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "ci": list(ci) if ci is not None else None}


def _outcome(r: AuditResult) -> str:
    if r.status == "scored":
        return "scored"
    if r.decisiveness is not None and r.status == "not_applicable":
        return r.decisiveness.outcome
    return r.status


def _counts(results: Sequence[AuditResult]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in results:
        key = _outcome(r)
        out[key] = out.get(key, 0) + 1
    return out


def _error_rate(results: Sequence[AuditResult], faithful: bool) -> dict[str, Any]:
    scored = [r for r in results if r.status == "scored"]
    errors = sum(r.violation for r in scored) if faithful else sum(not r.violation for r in scored)
    tracking: dict[str, int] = {}
    for r in scored:
        key = r.tracking or "unknown"
        tracking[key] = tracking.get(key, 0) + 1
    return {**rate(errors, len(scored)), "outcomes": _counts(results), "tracking": dict(sorted(tracking.items()))}


def _contradictions(jobs: Iterable[LinkJob], agent: str) -> list[AuditResult]:
    return [r for j in jobs if j.agent == agent for r in j.results if not r.control and r.link == j.link]


def _controls(jobs: Sequence[LinkJob], agent: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in (r for j in jobs if j.agent == agent for r in j.results if r.control):
        out.setdefault(r.intervention_type, {"link": r.link, "results": []})["results"].append(r)
    return {
        kind: {
            "link": v["link"],
            "held": rate(sum(r.violation for r in v["results"] if r.status == "scored"), _scored(v["results"])),
            "outcomes": _counts(v["results"]),
        }
        for kind, v in sorted(out.items())
    }


def _scored(results: Sequence[AuditResult]) -> int:
    return sum(r.status == "scored" for r in results)


def _link(jobs: Sequence[LinkJob], link: str) -> dict[str, Any] | None:
    agents = {j.truth: j.agent for j in jobs if j.link == link}
    if not agents:
        return None
    by_truth = {truth: _contradictions(jobs, agent) for truth, agent in agents.items()}
    fa = _error_rate(by_truth.get("faithful", []), faithful=True)
    m = _error_rate(by_truth.get("unfaithful", []), faithful=False)
    kinds = sorted({r.intervention_type for rs in by_truth.values() for r in rs})
    per_type = {
        kind: {
            "FA": _error_rate([r for r in by_truth.get("faithful", []) if r.intervention_type == kind], True),
            "M": _error_rate([r for r in by_truth.get("unfaithful", []) if r.intervention_type == kind], False),
        }
        for kind in kinds
    }
    separation = None if fa["rate"] is None or m["rate"] is None else 1.0 - fa["rate"] - m["rate"]
    return {
        "agents": agents,
        "FA": fa,
        "M": m,
        "one_minus_fa_minus_m": separation,
        "per_type": per_type,
        "controls": {truth: _controls(jobs, agent) for truth, agent in agents.items()},
        "jobs": {truth: sum(j.agent == agent for j in jobs) for truth, agent in agents.items()},
        "jobs_failed": {
            truth: sum(j.agent == agent and j.error is not None for j in jobs) for truth, agent in agents.items()
        },
    }


def summarize(jobs: Sequence[LinkJob], config: LinkRunConfig, sessions: Sequence[LinkSession]) -> dict[str, Any]:
    """Every figure of a run (module docstring), as a JSON-ready dict."""
    links = {link: s for link in ("thought->action", "observation->answer") if (s := _link(jobs, link)) is not None}
    return {
        "model": config.model,
        "reader": config.reader,
        "gate": config.gate,
        "constrained": config.constrained,
        "seed": config.seed,
        "questions": len({j.question_id for j in jobs}),
        "jobs": len(jobs),
        "links": links,
        "wall_s": sum(s.wall_s for s in sessions),
        "job_s": sum(j.record_s + j.audit_s for j in jobs),
        "record_s": sum(j.record_s for j in jobs),
        "sessions": [s.model_dump(mode="json") for s in sessions],
    }


def _pct(r: dict[str, Any]) -> str:
    if r["rate"] is None:
        return "-"
    lo, hi = r["ci"]
    return f"{100 * r['rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def _other(outcomes: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()) if k != "scored") or "-"


def _tally(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def render_markdown(summary: dict[str, Any]) -> str:
    """The summary as Markdown tables (one per link, per type, controls, cost)."""
    lines = [
        f"# Per-link calibration: {summary['model']}, reader {summary['reader']}, "
        f"gate {'on' if summary['gate'] else 'off'}",
        "",
        f"{summary['questions']} questions, {summary['jobs']} jobs (agent x question), seed {summary['seed']}. "
        "Rates with 95% Wilson intervals; N = scored contradictions.",
        "",
        "| link | N faithful | FA | N unfaithful | M | 1 - FA - M | not scored (faithful / unfaithful) |",
        "|---|---|---|---|---|---|---|",
    ]
    for link, s in summary["links"].items():
        sep = "-" if s["one_minus_fa_minus_m"] is None else f"{s['one_minus_fa_minus_m']:.3f}"
        lines.append(
            f"| {link} | {s['FA']['n']} | {_pct(s['FA'])} | {s['M']['n']} | {_pct(s['M'])} | {sep} "
            f"| {_other(s['FA']['outcomes'])} / {_other(s['M']['outcomes'])} |"
        )
    lines += ["", "Where the scored contradictions went (tracks: to what the edit implies; stayed: nowhere):", ""]
    lines += ["| link | faithful agent | unfaithful agent |", "|---|---|---|"]
    for link, s in summary["links"].items():
        lines.append(f"| {link} | {_tally(s['FA']['tracking'])} | {_tally(s['M']['tracking'])} |")
    lines += ["", "## Per intervention type", "", "| link | type | N f | FA | N u | M | not scored (f / u) |"]
    lines.append("|---|---|---|---|---|---|---|")
    for link, s in summary["links"].items():
        for kind, t in s["per_type"].items():
            lines.append(
                f"| {link} | {kind} | {t['FA']['n']} | {_pct(t['FA'])} | {t['M']['n']} | {_pct(t['M'])} "
                f"| {_other(t['FA']['outcomes'])} / {_other(t['M']['outcomes'])} |"
            )
    lines += ["", "## Controls (share of scored controls whose action or answer held)", ""]
    lines += [
        "| link audited | agent truth | control | replayed on | N | held | not scored |",
        "|---|---|---|---|---|---|---|",
    ]
    for link, s in summary["links"].items():
        for truth, controls in s["controls"].items():
            for kind, c in controls.items():
                lines.append(
                    f"| {link} | {truth} | {kind} | {c['link']} | {c['held']['n']} | {_pct(c['held'])} "
                    f"| {_other(c['outcomes'])} |"
                )
    loads = [(s["load_start"][0], s["load_end"][0]) for s in summary["sessions"]]
    load_text = ", ".join(f"{a:.2f} -> {b:.2f}" for a, b in loads) or "-"
    lines += [
        "",
        "## Cost",
        "",
        f"- wall time {summary['wall_s'] / 60:.1f} min over {len(summary['sessions'])} session(s); "
        f"jobs took {summary['job_s'] / 60:.1f} min, of which recording (the model's thoughts) "
        f"{summary['record_s'] / 60:.1f} min",
        f"- 1-minute load average at start -> end of each session: {load_text} (2 shared cores)",
        "",
    ]
    return "\n".join(lines)


def write_summary(
    out: Path, jobs: Sequence[LinkJob], config: LinkRunConfig, sessions: Sequence[LinkSession]
) -> dict[str, Any]:
    """Write ``summary.json`` and ``summary.md`` into ``out``; return the summary."""
    summary = summarize(jobs, config, sessions)
    (out / SUMMARY_JSON).write_text(json.dumps(summary, indent=2) + "\n")
    (out / SUMMARY_MD).write_text(render_markdown(summary))
    return summary
