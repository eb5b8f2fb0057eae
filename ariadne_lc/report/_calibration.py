"""Calibration reports: ``calibration.json`` (the :class:`~ariadne_lc.calibration.Calibration` record, versioned),
Markdown, and a self-contained HTML page with plots (estimated against true p; error rates by type).

``calibration.json`` is also what ``ariadne-lc audit|report --calibration FILE`` reads back
(:func:`load_calibration`), so a calibration made once corrects every later report of the same configuration.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from ariadne_lc._files import write_json
from ariadne_lc.calibration.results import Calibration, MethodCalibration
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.report._calibration_blocks import Table, method_title, sections
from ariadne_lc.report._plots import EstimatePoint, RateBar, estimate_plot, rate_bars

__all__ = ["calibration_html", "calibration_markdown", "load_calibration", "write_calibration_reports"]


def load_calibration(path: Path) -> Calibration:
    """Read ``calibration.json``; a missing, malformed or foreign file is a named error saying which."""
    if not path.is_file():
        raise ConfigurationError(f"{path}: no such calibration file (write one with `ariadne-lc calibrate`)")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return Calibration.from_document(document, source=str(path))


def calibration_markdown(calibration: Calibration, *, title: str = "Calibration of the causal audit") -> str:
    """Markdown: the configuration, the method comparison, then each method's rates, noise and validation."""
    lines = [f"# {title}", ""]
    for heading, blocks in sections(calibration):
        if heading:
            lines += [f"## {heading}", ""]
        for block in blocks:
            if isinstance(block, Table):
                lines.append("| " + " | ".join(block.header) + " |")
                lines.append("|" + "---|" * len(block.header))
                lines += ["| " + " | ".join(row) + " |" for row in block.rows]
            else:
                lines.append(block)
            lines.append("")
    return "\n".join(lines)


def _html_blocks(calibration: Calibration) -> str:
    out = []
    for heading, blocks in sections(calibration):
        if heading:
            out.append(f"<h2>{html.escape(heading)}</h2>")
        for block in blocks:
            if isinstance(block, Table):
                head = "".join(f"<th>{html.escape(h)}</th>" for h in block.header)
                rows = "".join(
                    "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in block.rows
                )
                out.append(f"<table><tr>{head}</tr>{rows}</table>")
            else:
                out.append(f"<p>{html.escape(block)}</p>")
    return "\n".join(out)


def _estimate_points(calibration: Calibration) -> list[EstimatePoint]:
    return [
        EstimatePoint(method_title(m.method), v.p, v.observed.rate, v.corrected.corrected, v.corrected.corrected_ci)
        for m in calibration.methods.values()
        for v in m.validation
    ]


def _error_bars(m: MethodCalibration) -> list[RateBar]:
    """Error kinds on the x axis, one bar per type in the type's own colour (as in every other plot)."""
    bars = []
    for kind, e in m.errors.items():
        for label, rate in (
            ("false alarm", e.false_alarm),
            ("miss", e.miss),
            ("not applicable (coupled)", e.not_applicable.get("coupled")),
            ("not decisive (coupled)", e.not_decisive.get("coupled")),
            ("inconclusive (coupled)", e.inconclusive.get("coupled")),
        ):
            if rate is not None and rate.n:
                bars.append(RateBar(label, kind, rate.rate, rate.ci, rate.n))
    return bars


def _gate_bars(calibration: Calibration) -> list[RateBar]:
    """FA and M with the gate off and on, one bar per type in the type's own colour."""
    bars = []
    for method, label in (("ariadne_ungated", "gate off"), ("ariadne", "gate on")):
        m = calibration.methods.get(method)
        if m is None or "ariadne_ungated" not in calibration.methods:
            continue
        for kind, e in m.errors.items():
            for what, rate in (("FA", e.false_alarm), ("M", e.miss)):
                if rate.n:
                    bars.append(RateBar(f"{what}, {label}", kind, rate.rate, rate.ci, rate.n))
    return bars


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, Segoe UI, sans-serif; margin: 2rem auto; max-width: 1100px;
color: #222; }}
table {{ border-collapse: collapse; margin: .5rem 0 1.5rem; font-size: .9rem; }}
th, td {{ border-bottom: 1px solid #eee; padding: .35rem .5rem; text-align: left; }}
svg {{ max-width: 100%; height: auto; }} .sub {{ color: #666; }}
</style></head><body>
{body}
<h2>Plots</h2>
<figure>{estimates}</figure>
{errors}
<p class="sub">Generated by ariadne-lc {version}.</p>
</body></html>
"""


def calibration_html(calibration: Calibration, *, title: str = "Calibration of the causal audit") -> str:
    """A self-contained HTML page: the Markdown's tables and the two plots as inline SVG."""
    from ariadne_lc import __version__

    points = _estimate_points(calibration)
    errors = "".join(
        f"<figure>{rate_bars(bars, title=f'error rates by type: {method_title(m.method)}', ylabel='rate')}</figure>"
        for m in calibration.methods.values()
        if (bars := _error_bars(m))
    )
    if gate_bars := _gate_bars(calibration):
        title_ = "false alarm and miss by type, decisiveness gate off and on"
        errors = f"<figure>{rate_bars(gate_bars, title=title_, ylabel='rate')}</figure>" + errors
    return _PAGE.format(
        title=html.escape(title),
        body=f"<h1>{html.escape(title)}</h1>\n{_html_blocks(calibration)}",
        estimates=estimate_plot(points) if points else "<p>No validation points.</p>",
        errors=errors,
        version=html.escape(__version__),
    )


def write_calibration_reports(
    calibration: Calibration, output_dir: Path, *, title: str = "Calibration of the causal audit"
) -> list[Path]:
    """Write ``calibration.json``, ``calibration.md`` and ``calibration.html`` into ``output_dir``."""
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = [output_dir / "calibration.json", output_dir / "calibration.md", output_dir / "calibration.html"]
    write_json(paths[0], calibration.document())
    paths[1].write_text(calibration_markdown(calibration, title=title), encoding="utf-8")
    paths[2].write_text(calibration_html(calibration, title=title), encoding="utf-8")
    return paths
