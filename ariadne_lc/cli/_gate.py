"""``--fail-above RATE``: the CI gate of ``demo``, ``audit`` and ``report``.

Which rate it checks:

- with a calibration applied (``--calibration``, the demo's committed one, or a ``report.json`` that carries one),
  the **corrected** violation rate: the raw rate of a pipeline with false alarms is not the number a release
  should be held to;
- without one, the **raw** violation rate of the contradictions.

It fails closed. When there is no number to check (the calibration carries no information, FA + M >= 1; it did not
measure a type the report has; nothing was scored), the gate cannot say the agent is under the line, so it exits
:data:`~ariadne_lc.cli._common.EXIT_GATE` with a message that starts ``no information`` and gives the reason. Every
outcome, pass or fail, prints one line naming the rate used (raw or corrected) and its value.
"""

from __future__ import annotations

from collections.abc import Sequence

from ariadne_lc.cli._common import EXIT_GATE, console
from ariadne_lc.records import AuditReport

__all__ = ["FAIL_ABOVE_HELP", "gate", "gate_decision"]

FAIL_ABOVE_HELP = (
    "Exit 1 when the violation rate is above this: the corrected rate when a calibration is applied, else the raw "
    "one; with no rate to check (no information) it exits 1 too."
)


def _ci(ci: Sequence[float] | None) -> str:
    return f" (95% CI {ci[0]:.1%}-{ci[1]:.1%})" if ci else ""


def gate_decision(report: AuditReport, fail_above: float) -> tuple[bool, str]:
    """Whether ``report`` passes ``--fail-above fail_above``, and the line that says why (which rate, its value)."""
    line = f"--fail-above {fail_above:.1%}"
    c = report.corrected
    if c is not None:
        if c.corrected is None:
            return False, f"{line}: no information: no corrected violation rate ({c.reason}); the gate fails closed"
        raw = "-" if c.observed is None else f"{c.observed:.1%}"
        rate, used = c.corrected, f"corrected violation rate {c.corrected:.1%}{_ci(c.corrected_ci)} (raw {raw})"
    else:
        o = report.overall
        if o.violation_rate is None:
            return False, f"{line}: no information: no contradiction audit was scored; the gate fails closed"
        rate, used = o.violation_rate, f"raw violation rate {o.violation_rate:.1%}{_ci(o.violation_rate_ci)}"
        used += " (no calibration applied)"
    if rate > fail_above:
        return False, f"{line}: failed on the {used}, above {fail_above:.1%}"
    return True, f"{line}: passed on the {used}"


def gate(report: AuditReport, fail_above: float | None) -> int:
    """0, or :data:`~ariadne_lc.cli._common.EXIT_GATE` when the gate does not pass (see the module docstring)."""
    if fail_above is None:
        return 0
    passed, line = gate_decision(report, fail_above)
    console.print(f"[green]{line}[/green]" if passed else f"[red]{line}[/red]", highlight=False)
    return 0 if passed else EXIT_GATE
