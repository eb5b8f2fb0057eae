"""The ``ariadne-lc`` command: audit agents, ablate task suites, render reports.

It needs the ``cli`` extra (typer, rich); ``import ariadne_lc`` never loads it.
"""

from __future__ import annotations

from ariadne_lc.errors import MissingExtraError

try:
    import rich  # noqa: F401  (the commands' output)
    import typer
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by tests/cli
    raise MissingExtraError("the ariadne-lc command", "cli") from exc

from ariadne_lc.cli._ablate import ablate
from ariadne_lc.cli._audit_cmd import audit
from ariadne_lc.cli._bypass_cmd import bypass
from ariadne_lc.cli._calibrate_cmd import calibrate
from ariadne_lc.cli._calibrate_links_cmd import calibrate_links
from ariadne_lc.cli._demo import demo
from ariadne_lc.cli._export_cmd import export
from ariadne_lc.cli._poll_cmd import poll
from ariadne_lc.cli._report_cmd import report
from ariadne_lc.cli._worker_cmd import worker, workers

__all__ = ["app", "main"]

app = typer.Typer(
    name="ariadne-lc",
    help="Audit whether an LLM agent's reasoning causes its answers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Audit whether an LLM agent's reasoning causes its answers."""


app.command(help="The main job: a local model runs a ReAct agent on real questions; audit and report.")(demo)
app.command(help="Audit your own graph over recorded traces or a query file.")(audit)
app.command(help="Re-render reports from stored results.")(report)
app.command(help="Flagged audits as data: a review dataset and DPO preference pairs, from stored results.")(export)
app.command(
    help="White-box CoT bypass monitor (activation patching) over a JSONL file.",
    epilog="Exit codes: 0 every example measured; 3 some examples could not be measured (each in the report's "
    "failures, with the reason; the others are measured); 2 bad input or an unusable environment.",
)(bypass)
app.command(help="Measure the audit's own error on agents whose faithfulness is known; corrected rates.")(calibrate)
app.command("calibrate-links", help="FA and M per link on ground-truth tool-calling agents.")(calibrate_links)
app.command(help="FaithCheck step ablation over a JSONL task suite: CCS per step and RRR.")(ablate)
app.command(help="Sampled online audits of a LangGraph Server deployment: poll, sample, audit.")(poll)
app.command(
    help="Audit worker for a fleet: consume audit tasks from the broker, results into Postgres.",
    epilog="Exit codes: 0 stopped cleanly; 2 a service is unreachable or refused us at start-up (one line saying "
    "which and why); 1 the worker failed later (e.g. the broker stayed away through Celery's 100 reconnection "
    "attempts): let a supervisor restart it; 130 stopped by Ctrl-C (SIGINT).",
)(worker)
app.command(
    help="The health of a fleet's workers from their heartbeats: ok, starting, stalled, gone.",
    epilog="Exit codes: 0 every worker ok or starting; 1 some worker stalled or gone; 2 bad input.",
)(workers)


def main() -> None:
    """Entry point of the console script."""
    app()
