"""``--fail-above RATE``: the CI gate of ``demo``, ``audit`` and ``report``, printed, and the exit code it sets.

The decision is :mod:`ariadne_lc.report._gate`'s (every link, every agent x link, fail closed); here it is printed
and turned into an exit code, with ``nothing_measured`` for an audit that measured nothing at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rich.markup import escape

from ariadne_lc.cli._common import EXIT_GATE, console
from ariadne_lc.records import AuditReport
from ariadne_lc.report._gate import DEFAULT_MIN_COVERAGE, check_fraction, gate_decision

__all__ = [
    "DEFAULT_MIN_COVERAGE",
    "FAIL_ABOVE_HELP",
    "MIN_COVERAGE_HELP",
    "Gate",
    "check_fraction",
    "gate",
    "gate_decision",
    "nothing_measured",
]

FAIL_ABOVE_HELP = (
    "Exit 1 when any link's violation rate is above this fraction (0.2 for 20%): the corrected rate where a "
    "calibration applies, else the raw one; with no rate to check, or too little coverage, it exits 1 too."
)
MIN_COVERAGE_HELP = (
    "With --fail-above: exit 1 when fewer than this fraction of the audited units got a verdict (failed or "
    "inconclusive audits); units the budget left out do not count."
)


def gate(
    report: AuditReport,
    fail_above: float | None,
    *,
    links: Sequence[str] | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> int:
    """0, or :data:`~ariadne_lc.cli._common.EXIT_GATE` when the gate does not pass (see the module docstring)."""
    if fail_above is None:
        return 0
    passed, line = gate_decision(report, fail_above, links=links, min_coverage=min_coverage)
    said = escape(line)  # a reason may hold brackets, which Rich would read as markup
    console.print(f"[green]{said}[/green]" if passed else f"[red]{said}[/red]", highlight=False, soft_wrap=True)
    return 0 if passed else EXIT_GATE


def nothing_measured(report: AuditReport) -> str | None:
    """Why an audit measured nothing at all (every audit of a unit failed, or every run had failed), else ``None``."""
    audits = [r for r in report.results if r.step_index >= 0]
    failed = [r for r in report.results if r.status == "failed"]
    if not failed or (audits and any(r.status != "failed" for r in audits)):
        return None
    if not audits and not all(r.run_failed for r in report.results):
        return None
    errors = Counter(r.error_type or "error" for r in failed)
    why = ", ".join(f"{error} {n}" for error, n in errors.most_common())
    hint = ""
    if "NotReplayableError" in errors:
        hint = (
            ": the graph's checkpointer does not hold the recorded threads. Audit with the checkpointer the runs were "
            "recorded with; to audit later, record with a persistent one (SqliteSaver beside a SQLiteTraceStore)"
        )
    what = "every audit failed" if audits else "every run had failed (nothing to audit)"
    return f"{what} ({why}): nothing was measured{hint}"


@dataclass(frozen=True, slots=True)
class Gate:
    """What a command's exit code is held to: ``--fail-above``, ``--link``, ``--min-coverage`` (checked when built)."""

    fail_above: float | None = None
    links: Sequence[str] | None = None
    min_coverage: float = DEFAULT_MIN_COVERAGE

    def __post_init__(self) -> None:
        check_fraction("--fail-above", self.fail_above)
        check_fraction("--min-coverage", self.min_coverage)

    def exit_code(self, report: AuditReport) -> int:
        """:data:`~ariadne_lc.cli._common.EXIT_GATE` when nothing was measured (with or without ``--fail-above``),
        else the gate's (0 without ``--fail-above``)."""
        empty = nothing_measured(report)
        if empty is not None:
            console.print(f"[red]{escape(empty)}[/red]", highlight=False, soft_wrap=True)
            return EXIT_GATE
        return gate(report, self.fail_above, links=self.links, min_coverage=self.min_coverage)
