"""``ariadne-lc calibrate-links``: FA and M per link on ground-truth tool-calling agents, on a local model.

Starts the chosen local model (llama.cpp on loopback, as ``ariadne-lc calibrate`` does), runs the four agents of
:mod:`ariadne_lc.calibration.link_agents` on generated arithmetic questions, audits each on its link
(:mod:`ariadne_lc.calibration.link_runner`; resumable with ``--resume``), then writes ``summary.json`` and
``summary.md`` into ``--out`` and prints the per-link table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from ariadne_lc.cli._calibrate_cmd import serve_local
from ariadne_lc.cli._common import console, one_line_errors
from ariadne_lc.cli._interrupt import interruptible
from ariadne_lc.errors import ConfigurationError

__all__ = ["calibrate_links"]

LINK_AGENT_NAMES = ("action_faithful", "action_unfaithful", "observation_faithful", "observation_unfaithful")
"""The agents of :data:`~ariadne_lc.calibration.link_agents.LINK_AGENTS` (named here: the CLI loads no graph code
until a command runs; a test pins that the two agree)."""

_MODELS = {"smollm2": "smollm2", "gemma": "gemma3-270m", "qwen": "qwen2.5-coder-0.5b"}
"""``--model`` names and the local model each stands for."""


@contextlib.contextmanager
def _local_model(name: str, max_tokens: int) -> Iterator[tuple[Any, str]]:
    key = _MODELS.get(name)
    if key is None:
        raise ConfigurationError(f"unknown --model {name!r}; choose from {', '.join(_MODELS)}")
    with serve_local(key, max_tokens) as served:
        yield served


def _print(summary: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"per-link calibration: {summary['model']}, reader {summary['reader']}")
    for column in ("link", "N faithful", "FA [95% CI]", "N unfaithful", "M [95% CI]", "1 - FA - M"):
        table.add_column(column)

    def pct(r: dict[str, Any]) -> str:
        return "-" if r["rate"] is None else f"{100 * r['rate']:.1f}% [{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}]"

    for link, s in summary["links"].items():
        sep = "-" if s["one_minus_fa_minus_m"] is None else f"{s['one_minus_fa_minus_m']:.3f}"
        table.add_row(link, str(s["FA"]["n"]), pct(s["FA"]), str(s["M"]["n"]), pct(s["M"]), sep)
    console.print(table)


@one_line_errors
def calibrate_links(
    model: Annotated[str, typer.Option(help="Local model: smollm2, gemma or qwen.")] = "smollm2",
    questions: Annotated[
        int, typer.Option(help="Generated arithmetic questions (each asked of all four agents).")
    ] = 220,
    out: Annotated[Path, typer.Option(help="Run folder: results.jsonl, run.json, summary.json, summary.md.")] = Path(
        "ariadne-link-calibration"
    ),
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run in --out, skipping finished jobs.")
    ] = False,
    reader: Annotated[str, typer.Option(help="The action gate's reader: rule, or model (the local model).")] = "rule",
    seed: Annotated[int, typer.Option(help="Which questions are generated.")] = 21,
    gate: Annotated[bool, typer.Option(help="The decisiveness gate; --no-gate: off.")] = True,
    constrained: Annotated[bool, typer.Option(help="Constrain thoughts with a llama.cpp grammar (slow).")] = False,
    max_tokens: Annotated[int, typer.Option(help="Output token limit per model call.")] = 96,
    agents: Annotated[
        str, typer.Option(help="Comma-separated subset of the agents (e.g. the action ones for a model reader).")
    ] = ",".join(LINK_AGENT_NAMES),
    report_only: Annotated[
        bool, typer.Option("--report-only", help="Summarise the run in --out as it stands; start no model.")
    ] = False,
) -> None:
    """Measure FA and M of the audit per link on agents faithful or unfaithful on that link by construction."""
    from ariadne_lc.calibration.link_runner import (
        MANIFEST_FILE,
        LinkRunConfig,
        load_jobs,
        load_sessions,
        run_link_calibration,
    )
    from ariadne_lc.calibration.link_summary import SUMMARY_MD, write_summary

    if report_only:
        manifest = out / MANIFEST_FILE
        if not manifest.exists():
            raise ConfigurationError(f"--report-only: {out} holds no run ({MANIFEST_FILE} is missing)")
        stored = LinkRunConfig.model_validate_json(manifest.read_text())
        _print(write_summary(out, load_jobs(out), stored, load_sessions(out)))
        console.print(f"summary: {out / SUMMARY_MD}")
        return

    if reader not in ("rule", "model"):
        raise ConfigurationError(f"--reader takes rule or model, got {reader!r}")
    chosen = tuple(a.strip() for a in agents.split(",") if a.strip())
    if not chosen or any(a not in LINK_AGENT_NAMES for a in chosen):
        raise ConfigurationError(f"--agents takes a comma-separated subset of {', '.join(LINK_AGENT_NAMES)}")
    if questions < 1:
        raise ConfigurationError(f"--questions must be at least 1, got {questions}")
    kept = f"the finished jobs are kept in {out}; add --resume to the same command to go on"
    with interruptible(lambda: kept), _local_model(model, max_tokens) as (chat, label):
        action_reader = None
        if reader == "model":
            from ariadne_lc.interventions.action_model import ModelActionReader

            action_reader = ModelActionReader(chat)
        config = LinkRunConfig(
            model=label,
            reader="model" if reader == "model" else "rule",
            questions=questions,
            seed=seed,
            gate=gate,
            constrained=constrained,
            agents=chosen,
        )

        def progress(job: Any, n: int, total: int) -> None:
            status = job.error or f"{sum(r.status == 'scored' for r in job.results)} scored"
            console.print(f"[{n}/{total}] {job.agent} {job.question_id}: {status}", highlight=False)

        jobs = run_link_calibration(chat, out, config, resume=resume, action_reader=action_reader, on_job=progress)
    summary = write_summary(out, jobs, config, load_sessions(out))
    _print(summary)
    console.print(f"summary: {out / SUMMARY_MD}")
