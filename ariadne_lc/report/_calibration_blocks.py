"""What a calibration report says, built once as blocks (paragraphs and tables) for Markdown and HTML alike.

:func:`sections` gives the report's headed sections: the configuration and the definitions, the methods compared on
the held-out queries, the decisiveness gate off and on, then per method its error rates by type and domain, what the
gate did, its controls, its validation and the natural agent. :mod:`ariadne_lc.report._calibration` renders them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ariadne_lc.calibration.results import ALL_TYPES, Calibration, ErrorRates, MethodCalibration
from ariadne_lc.records import CorrectedRate, Rate

__all__ = ["Block", "Table", "method_title", "sections"]

_METHOD_NAMES = {
    "ariadne": "ariadne-lc (graph replay)",
    "ariadne_ungated": "ariadne-lc, decisiveness gate off",
    "ariadne_rederive": "ariadne-lc, tool calls re-derived from the edit",
    "reference_strict": "reference re-prompt, strict judge",
    "reference_lenient": "reference re-prompt, lenient judge (0.5 fallback)",
}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _ci(ci: Sequence[float] | None) -> str:
    return "-" if not ci else f"[{ci[0]:.1%}, {ci[1]:.1%}]"


def _rate(rate: Rate | None) -> str:
    return "-" if rate is None or rate.rate is None else f"{_pct(rate.rate)} {_ci(rate.ci)} ({rate.k}/{rate.n})"


def _corrected(c: CorrectedRate) -> str:
    if c.corrected is not None:
        return f"{_pct(c.corrected)} {_ci(c.corrected_ci)}"
    if c.false_alarm is None or c.miss is None:
        return "no number (error rates not measured)"
    if not c.informative:
        return f"no number (FA + M = {c.false_alarm + c.miss:.2f} ≥ 1: no information)"
    return f"no number ({c.reason})"


def _covers(value: bool | None) -> str:
    return "-" if value is None else "yes" if value else "NO"


def method_title(name: str) -> str:
    """The method's name as the report titles it (an unknown method keeps its own)."""
    return _METHOD_NAMES.get(name, name)


@dataclass(frozen=True, slots=True)
class Table:
    """A header and its rows, as plain text cells."""

    header: tuple[str, ...]
    rows: list[tuple[str, ...]]


Block = str | Table
"""A paragraph or a table: the report is built once as blocks, then rendered as Markdown or as HTML."""


def _method_blocks(m: MethodCalibration) -> list[Block]:
    errors = Table(
        (
            "intervention",
            "false alarm (coupled)",
            "miss (bypass)",
            "FA + M",
            "n/a coupled",
            "n/a bypass",
            "inconclusive coupled",
            "inconclusive bypass",
        ),
        [],
    )
    for kind, e in m.errors.items():
        fa, miss = e.false_alarm.rate, e.miss.rate
        total = (
            "-" if fa is None or miss is None else f"{fa + miss:.2f}" + ("" if fa + miss < 1 else " (no information)")
        )
        errors.rows.append(
            (
                kind,
                _rate(e.false_alarm),
                _rate(e.miss),
                total,
                _rate(e.not_applicable.get("coupled")),
                _rate(e.not_applicable.get("bypass")),
                _rate(e.inconclusive.get("coupled")),
                _rate(e.inconclusive.get("bypass")),
            )
        )
    blocks: list[Block] = [errors]
    if len(m.errors_by_domain) > 1:
        blocks.append(
            Table(
                ("domain (all contradictions)", "false alarm (coupled)", "miss (bypass)"),
                [(d, _rate(e.false_alarm), _rate(e.miss)) for d, e in m.errors_by_domain.items()],
            )
        )
    blocks += _gate_blocks(m)
    overall = m.errors.get(ALL_TYPES)
    if overall is not None:
        causes = ", ".join(f"{k}: {v}" for k, v in overall.false_alarm_causes.items()) or "none"
        misses = ", ".join(f"{k}: {v}" for k, v in overall.miss_causes.items()) or "none"
        blocks.append(f"False alarms by cause: {causes}. Misses by cause: {misses}.")
    if m.controls:
        blocks.append(
            Table(
                ("control", "answer moved: faithful agents", "answer moved: unfaithful agents"),
                [(n, _rate(c.moved.get("faithful")), _rate(c.moved.get("unfaithful"))) for n, c in m.controls.items()],
            )
        )
    if m.validation:
        blocks.append("Validation on held-out queries (corrected with the calibrate split's rates):")
        blocks.append(
            Table(
                (
                    "agent",
                    "p",
                    "realised bypass share",
                    "raw violation rate",
                    "corrected",
                    "covers p",
                    "covers realised",
                ),
                [
                    (
                        v.agent,
                        f"{v.p:g}",
                        _pct(v.true_rate),
                        _rate(v.observed),
                        _corrected(v.corrected),
                        _covers(v.covers_p),
                        _covers(v.covers_true_rate),
                    )
                    for v in m.validation
                ],
            )
        )
    if m.natural is not None:
        n = m.natural
        blocks.append(
            f"Natural agent (truth unknown): raw {_pct(n.observed)} {_ci(n.observed_ci)}, corrected {_corrected(n)} "
            "(this assumes its runs behave like a mixture of the two constructed kinds)."
        )
    return blocks


def _gate_blocks(m: MethodCalibration) -> list[Block]:
    """What the decisiveness gate did per type (rejections, tracking), FA by thought form, and the further faithful
    agents' FA; nothing for a method that ran without the gate and has no further agents."""
    blocks: list[Block] = []
    gated = any(
        e.tracking is not None
        or any(r.k for r in (*e.not_decisive.values(), *e.no_commitment.values(), *e.incoherent.values()))
        for e in m.errors.values()
    )
    if gated:  # a method without the gate recorded no decision: zeros there would read as "the gate let all pass"
        blocks.append(
            Table(
                (
                    "intervention",
                    "not decisive (coupled)",
                    "not decisive (bypass)",
                    "incoherent (coupled)",
                    "no commitment (coupled)",
                    "no commitment (bypass)",
                    "tracks (faithful, scored)",
                ),
                [
                    (
                        kind,
                        _rate(e.not_decisive.get("coupled")),
                        _rate(e.not_decisive.get("bypass")),
                        _rate(e.incoherent.get("coupled")),
                        _rate(e.no_commitment.get("coupled")),
                        _rate(e.no_commitment.get("bypass")),
                        _rate(e.tracking),
                    )
                    for kind, e in m.errors.items()
                ],
            )
        )
        blocks.append(
            "Not decisive: the gate rejected every edit the critic made (none changed the answer the thought implies); "
            "such audits are not applicable, never scored. Tracks: the coupled answer moved to the answer the "
            "contradicted thought implies."
        )
    forms = sorted({f for e in m.errors.values() for f in e.false_alarm_by_form})
    if forms:
        blocks.append("False alarm by how the original thought states its commitment (a pooled FA does not carry "
                      "over between agents that write their thoughts differently):")  # fmt: skip
        blocks.append(
            Table(
                ("intervention", *forms),
                [(kind, *(_rate(e.false_alarm_by_form.get(f)) for f in forms)) for kind, e in m.errors.items()],
            )
        )
    rows: list[tuple[str, ...]] = [
        (agent, kind, _rate(e.false_alarm), _rate(e.not_decisive.get(agent)), _rate(e.not_applicable.get(agent)))
        for agent, per_type in m.agents.items()
        for kind, e in per_type.items()
    ]
    if rows:
        blocks.append(
            "Further faithful agents (FA only; FA and M, and so every correction, come from the coupled/bypass pair): "
            "coupled_llm answers with a model call that sees only the thought; coupled_tool carries the thought's "
            "decision to the answer through its own tool call."
        )
        blocks.append(Table(("agent", "intervention", "false alarm", "not decisive", "not applicable"), rows))
    return blocks


def _gate_comparison(calibration: Calibration) -> list[Block]:
    """Gate off (``ariadne_ungated``) and gate on (``ariadne``) side by side per type, on the same traces."""
    on, off = calibration.methods.get("ariadne"), calibration.methods.get("ariadne_ungated")
    if on is None or off is None:
        return []
    kinds = [*on.errors, *(k for k in off.errors if k not in on.errors)]

    def total(e: ErrorRates | None) -> str:
        if e is None or e.false_alarm.rate is None or e.miss.rate is None:
            return "-"
        value = e.false_alarm.rate + e.miss.rate
        return f"{value:.2f}" + (" (no information)" if value >= 1 else "")

    rows: list[tuple[str, ...]] = []
    for kind in kinds:
        a, b = off.errors.get(kind), on.errors.get(kind)
        rows.append(
            (
                kind,
                _rate(None if a is None else a.false_alarm),
                _rate(None if b is None else b.false_alarm),
                _rate(None if a is None else a.miss),
                _rate(None if b is None else b.miss),
                total(a),
                total(b),
                _rate(None if b is None else b.not_decisive.get("coupled")),
            )
        )
    header = (
        "intervention",
        "FA gate off",
        "FA gate on",
        "M gate off",
        "M gate on",
        "FA + M off",
        "FA + M on",
        "rejected as not decisive (coupled)",
    )
    return [
        "The same agents' traces audited twice: every edit replayed (gate off) and only edits that change the answer "
        "the thought implies (gate on).",
        Table(header, rows),
    ]


def _comparison(calibration: Calibration) -> Table:
    ps = sorted({v.p for m in calibration.methods.values() for v in m.validation})
    table = Table(("method", "FA", "M", *(f"p = {p:g}" for p in ps)), [])
    for m in calibration.methods.values():
        cells = ["; ".join(_corrected(v.corrected) for v in m.validation if v.p == p) or "-" for p in ps]
        table.rows.append((method_title(m.method), _pct(m.overall.false_alarm.rate), _pct(m.overall.miss.rate), *cells))
    return table


def sections(calibration: Calibration) -> list[tuple[str, list[Block]]]:
    """The report as (heading, blocks) pairs, in order; the first has no heading."""
    queries = ", ".join(f"{k}: {v}" for k, v in calibration.queries.items())
    intro: list[Block] = [
        f"Configuration: {calibration.config.describe()}. {calibration.audits} audits; queries per split: "
        f"{queries or '-'}. Intervals at {calibration.confidence:.0%}: Wilson for rates, a seeded bootstrap over "
        f"queries of both samples for corrected rates (seed {calibration.seed}, {calibration.n_resamples} resamples).",
        "False alarm: a violation called on an agent whose answer depends on the thought. Miss: no violation on "
        "an agent whose answer never sees it. Corrected rate: (v − FA) / (1 − FA − M), clipped to [0, 1]; no "
        "number when FA + M ≥ 1.",
    ]
    return [
        ("", intro),
        ("Methods compared: corrected estimate on held-out queries at each true p", [_comparison(calibration)]),
        *([("Decisiveness gate off and on, per type", gate)] if (gate := _gate_comparison(calibration)) else []),
        *((method_title(m.method), _method_blocks(m)) for m in calibration.methods.values()),
    ]
