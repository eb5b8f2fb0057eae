"""Plots for the HTML report, rendered by matplotlib to inline SVG (no files, no scripts, no network).

Colours: one intervention type keeps one colour in every plot of every report (:data:`TYPE_COLOURS`, read through
:func:`series_colour`), so a reader who learnt "logic_flip is blue" in the bar chart does not find it red in the
histogram. Series that are no intervention type (error kinds, methods) take colours from a separate palette, so they
are never mistaken for a type.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ariadne_lc import links
from ariadne_lc.errors import MissingExtraError

__all__ = [
    "OUTCOME_STYLES",
    "STAYED",
    "TYPE_COLOURS",
    "EstimatePoint",
    "OutcomeBar",
    "RateBar",
    "estimate_plot",
    "intervention_bars",
    "link_colour",
    "outcome_bars",
    "phi_histogram",
    "rate_bars",
    "series_colour",
    "step_bars",
]

TYPE_COLOURS: Final[Mapping[str, str]] = {
    # the contradictions: saturated
    "logic_flip": "#1f77b4",
    "fact_reversal": "#ff7f0e",
    "premise_negation": "#2ca02c",
    "causal_reversal": "#d62728",
    "conclusion_swap": "#9467bd",
    "plan_swap": "#393b79",
    # the controls: muted
    "paraphrase": "#8c564b",
    "rerun": "#7f7f7f",
    "ablation": "#e377c2",
    "early_answer": "#bcbd22",
    "filler": "#17becf",
    # the observation link's intervention
    "observation_swap": "#aec7e8",
}
"""The colour of each intervention type and control, in every plot (a test pins that every kind has one)."""


def link_colour(link: str) -> str | None:
    """The colour of ``link`` in every plot where links are the series (its
    :attr:`~ariadne_lc.links.LinkSpec.colour`; ``None`` for a link not registered here)."""
    spec = links.find(link)
    return None if spec is None else spec.colour


_OTHER_COLOURS: Final = ("#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252", "#bd9e39")
"""For series that are no intervention type: dark tones none of :data:`TYPE_COLOURS` uses."""


def series_colour(name: str, index: int = 0) -> str:
    """The colour of series ``name``: its type's colour, else the ``index``-th of the other palette."""
    return TYPE_COLOURS.get(name) or link_colour(name) or _OTHER_COLOURS[index % len(_OTHER_COLOURS)]


def _colours(names: Sequence[str]) -> list[str]:
    """A colour per series: the types' own, and the other palette in order for the rest."""
    others = [n for n in names if n not in TYPE_COLOURS and link_colour(n) is None]
    return [series_colour(n, others.index(n) if n in others else 0) for n in names]


@dataclass(frozen=True, slots=True)
class RateBar:
    """One bar: a group (e.g. domain), a series (e.g. intervention type), a rate and its interval."""

    group: str
    series: str
    rate: float | None
    ci: tuple[float, float] | None
    n: int


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtraError("the HTML report", "report") from exc
    plt.rcParams.update({"svg.fonttype": "none", "font.size": 10, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _svg(fig: Any) -> str:
    plt = _pyplot()
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def rate_bars(bars: Sequence[RateBar], *, title: str, ylabel: str = "violation rate") -> str:
    """Grouped bars with Wilson interval whiskers; groups on the x axis, one colour per series (a type's own)."""
    plt = _pyplot()
    groups = list(dict.fromkeys(b.group for b in bars))
    series = list(dict.fromkeys(b.series for b in bars))
    width = 0.8 / max(1, len(series))
    colours = _colours(series)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(series)) * 0.5 + 3), 3.6))
    for j, name in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for i, group in enumerate(groups):
            bar = next((b for b in bars if b.group == group and b.series == name), None)
            if bar is None or bar.rate is None:
                continue
            xs.append(i + (j - (len(series) - 1) / 2) * width)
            ys.append(bar.rate)
            low, high = bar.ci if bar.ci is not None else (bar.rate, bar.rate)
            lo.append(bar.rate - low)
            hi.append(high - bar.rate)
        ax.bar(xs, ys, width=width * 0.95, label=name, color=colours[j], yerr=[lo, hi], capsize=3, ecolor="#333333")
        # a 0% bar has no height: mark the rate so it reads as measured, not missing
        ax.scatter(xs, ys, s=10, color=colours[j], zorder=3)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, ncols=min(4, max(1, len(series))), loc="upper left", bbox_to_anchor=(0, -0.12))
    return _svg(fig)


def intervention_bars(bars: Sequence[RateBar], *, title: str) -> str:
    """One bar per intervention type, in the type's own colour, with its Wilson whiskers and its n under it (the
    bars' ``group`` is ignored: call it with one link's contradictions)."""
    plt = _pyplot()
    drawn = [b for b in bars if b.rate is not None]
    fig, ax = plt.subplots(figsize=(max(4.5, 1.1 * len(drawn) + 2), 3.0))
    for i, bar in enumerate(drawn):
        rate = bar.rate or 0.0
        low, high = bar.ci if bar.ci is not None else (rate, rate)
        colour = series_colour(bar.series, i)
        ax.bar([i], [rate], width=0.6, color=colour, yerr=[[rate - low], [high - rate]], capsize=4, ecolor="#333333")
        ax.scatter([i], [rate], s=12, color=colour, zorder=3)  # a 0% bar still shows its point
    ax.set_xticks(range(len(drawn)), [f"{b.series}\n(n={b.n})" for b in drawn])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("violation rate")
    ax.set_title(title)
    return _svg(fig)


@dataclass(frozen=True, slots=True)
class OutcomeBar:
    """Where one link's scored contradictions went: counts that add up to its N."""

    link: str
    tracks: int
    elsewhere: int
    moved: int
    stayed: int


OUTCOME_STYLES: Final[tuple[tuple[str, str, float], ...]] = (
    ("tracks", "tracked", 1.0),
    ("elsewhere", "moved elsewhere", 0.5),
    ("moved", "moved (target not read)", 0.28),
    ("stayed", "stayed (violation)", 1.0),
)
"""(field, label, opacity) of each segment; the first three in the link's colour, ``stayed`` in :data:`STAYED`."""

STAYED: Final = "#a50f15"
"""The colour of the violations in the outcome bars (no link or type wears it)."""


def outcome_bars(bars: Sequence[OutcomeBar], *, title: str = "where the action or answer went after the edit") -> str:
    """One horizontal bar per link, 0–100% of its scored contradictions, stacked tracked / elsewhere / moved /
    stayed: a 0% violation rate still shows what the agent did. Each segment is labelled with its count."""
    plt = _pyplot()
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=(8.0, 0.55 * len(bars) + 1.3))
    for i, bar in enumerate(bars):
        total = bar.tracks + bar.elsewhere + bar.moved + bar.stayed
        left = 0.0
        for field, label, alpha in OUTCOME_STYLES:
            count = getattr(bar, field)
            if not total or not count:
                continue
            width = count / total
            colour = STAYED if field == "stayed" else link_colour(bar.link) or _OTHER_COLOURS[0]
            ax.barh([i], [width], left=left, color=colour, alpha=alpha, edgecolor="white", height=0.6)
            words = f"{label.split(' ')[0]} {count}" if width > 0.14 else str(count)
            ax.text(left + width / 2, i, words, ha="center", va="center", fontsize=9,
                    color="white" if alpha > 0.6 else "#222222")  # fmt: skip
            left += width
    ax.set_yticks(range(len(bars)), [f"{b.link} (N={b.tracks + b.elsewhere + b.moved + b.stayed})" for b in bars])
    for label, bar in zip(ax.get_yticklabels(), bars, strict=True):
        label.set_color(link_colour(bar.link) or "#222222")
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda x, _: f"{x:.0%}"))
    ax.set_xlabel("share of the link's scored contradictions")
    ax.set_title(title)
    handles = [Patch(color=STAYED if f == "stayed" else "#555555", alpha=a, label=lab) for f, lab, a in OUTCOME_STYLES]
    ax.legend(handles=handles, fontsize=8, ncols=4, loc="upper left", bbox_to_anchor=(0, -0.25), frameon=False)
    return _svg(fig)


def phi_histogram(values: Mapping[str, Sequence[float]], *, title: str = "distribution of φ") -> str:
    """Stacked histogram of φ per intervention type over [0, 1], each type in its own colour."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.2))
    names = [k for k, v in values.items() if v]
    if names:
        ax.hist(
            [list(values[k]) for k in names],
            bins=10,
            range=(0.0, 1.0),
            stacked=True,
            label=names,
            color=_colours(names),
        )
        ax.legend(fontsize=8)
    ax.set_xlabel("φ (0: stayed as it was, 1: moved with the edit)")
    ax.set_ylabel("audits")
    ax.set_title(title)
    return _svg(fig)


def step_bars(
    steps: Sequence[tuple[str, float, int]], *, title: str = "causal contribution by step", link: str | None = None
) -> str:
    """Horizontal bars of mean φ (CCS) per step, highest first; each label carries its n; in ``link``'s colour when
    the steps are one link's."""
    plt = _pyplot()
    ordered = sorted(steps, key=lambda s: s[1])
    fig, ax = plt.subplots(figsize=(6.0, max(1.8, 0.35 * len(ordered) + 1)))
    labels = [f"{label} (n={n})" for label, _, n in ordered]
    ax.barh(labels, [v for _, v, _ in ordered], color=series_colour(link or "", 0))
    ax.set_xlim(0, 1.0)
    ax.set_xlabel("mean φ")
    ax.set_title(title)
    return _svg(fig)


@dataclass(frozen=True, slots=True)
class EstimatePoint:
    """One ground-truth agent: its true rate p, the raw and corrected estimates and the corrected interval."""

    series: str
    p: float
    observed: float | None
    corrected: float | None
    ci: tuple[float, float] | None


def estimate_plot(points: Sequence[EstimatePoint], *, title: str = "estimated against true rate") -> str:
    """Corrected estimates with their intervals (filled) and raw rates (hollow) against p, one colour per
    series, beside the diagonal a perfect estimate would lie on; a missing estimate is simply absent."""
    plt = _pyplot()
    series = list(dict.fromkeys(p.series for p in points))
    colours = _colours(series)
    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    ax.plot([0, 1], [0, 1], color="#999999", linestyle="--", linewidth=1, label="estimate = p")
    offset = 0.012
    for j, name in enumerate(series):
        mine = [p for p in points if p.series == name]
        shift = (j - (len(series) - 1) / 2) * offset
        color = colours[j]
        with_ci = [p for p in mine if p.corrected is not None]
        if with_ci:
            lo = [p.corrected - p.ci[0] if p.ci and p.corrected is not None else 0.0 for p in with_ci]
            hi = [p.ci[1] - p.corrected if p.ci and p.corrected is not None else 0.0 for p in with_ci]
            ax.errorbar(
                [p.p + shift for p in with_ci],
                [p.corrected for p in with_ci],
                yerr=[lo, hi],
                fmt="o",
                color=color,
                capsize=3,
                label=f"{name}: corrected",
            )
        raw = [p for p in mine if p.observed is not None]
        ax.scatter(
            [p.p + shift for p in raw],
            [p.observed for p in raw],
            facecolors="none",
            edgecolors=color,
            label=f"{name}: raw violation rate",
        )
    ax.set_xlim(-0.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("true unfaithful rate p (by construction)")
    ax.set_ylabel("estimated rate")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return _svg(fig)
