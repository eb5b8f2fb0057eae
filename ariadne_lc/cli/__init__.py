"""The ``ariadne-lc`` command: audit agents, ablate task suites, render reports."""

from __future__ import annotations

import typer

from ariadne_lc.cli._ablate import ablate

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


app.command(help="FaithCheck step ablation over a JSONL task suite: CCS per step and RRR.")(ablate)


def main() -> None:
    """Entry point of the console script."""
    app()
