"""``ariadne-lc calibrate``: measure the audit's own error on agents whose faithfulness is known by construction.

Runs the ground-truth agents (coupled, bypass, mixtures at known rates) and the natural demo agent on real benchmark
questions with the user's model (the local one by default), audits every run, stores every audit as it finishes
(an interrupted run resumes where it stopped), then writes ``calibration.json`` and the reports.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from ariadne_lc.cli._common import check_endpoint, console, one_line_errors, output_directory
from ariadne_lc.cli._interrupt import interruptible
from ariadne_lc.errors import ConfigurationError

__all__ = ["calibrate", "kept_audits", "serve_local"]

_CRITICS = ("rule", "llm")
_SCORERS = ("answer", "judge", "embedding")


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ConfigurationError(f"--ps takes comma-separated numbers in [0, 1], got {text!r}") from None


def _domains(text: str) -> tuple[str, ...]:
    from ariadne_lc.demo.data import DOMAINS

    names = tuple(d.strip() for d in text.split(",") if d.strip())
    unknown = [d for d in names if d not in DOMAINS]
    if unknown or not names:
        raise ConfigurationError(f"--domains takes a comma-separated subset of {', '.join(DOMAINS)}, got {text!r}")
    return names


@contextlib.contextmanager
def _model(
    base_url: str | None, model: str | None, api_key: str | None, local_model: str, max_tokens: int
) -> Iterator[tuple[Any, str]]:
    """The chat model and its name: the given endpoint, or a local llama.cpp server with the chosen model."""
    from ariadne_lc.local import LOCAL_MODELS, openai_compatible_chat_model

    if base_url is not None:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        check_endpoint(base_url, key)
        yield openai_compatible_chat_model(base_url, model or "default", key, max_tokens=max_tokens), model or base_url
        return
    if local_model not in LOCAL_MODELS:
        raise ConfigurationError(f"unknown --local-model {local_model!r}; choose from {', '.join(LOCAL_MODELS)}")
    with serve_local(local_model, max_tokens) as served:
        yield served


@contextlib.contextmanager
def serve_local(name: str, max_tokens: int) -> Iterator[tuple[Any, str]]:
    """A local llama.cpp server for ``name`` (a key of ``LOCAL_MODELS``, with its own chat format), and its chat model
    (a completion model for a base model) with its label; stopped on exit."""
    from ariadne_lc.local import LOCAL_MODELS, LocalModelServer

    spec = LOCAL_MODELS[name]
    with console.status(f"starting the local model (llama.cpp, {spec.label})..."):
        server = LocalModelServer.for_model(name).start()
    try:
        console.print(f"local model ready at {server.base_url} in {server.startup_seconds or 0:.1f} s")
        chat = (
            server.completion_model(max_tokens=max_tokens)
            if spec.base_model
            else server.chat_model(max_tokens=max_tokens)
        )
        yield chat, spec.label
    finally:
        server.stop()


@contextlib.contextmanager
def _reader(choice: str) -> Iterator[Any]:
    """The gate's reader: ``model`` and ``rule`` as named, else a local model served on a second server of its own
    (a larger reader than the agents' model; its replies are short, so its token cap is small)."""
    if choice in ("model", "rule"):
        yield choice
        return
    from ariadne_lc.calibration.runner import calibration_reader

    with serve_local(choice, 32) as (chat, _label):
        yield calibration_reader(chat, label=choice)


def kept_audits(output: Path) -> str:
    """What an interrupted calibration kept (the audits in its log, counted without loading them) and how to go on."""
    from ariadne_lc.calibration.storage import AUDITS_FILE

    log = output / AUDITS_FILE
    n = 0
    if log.is_file():
        with log.open("rb") as fh:
            n = sum(1 for line in fh if line.endswith(b"\n") and line.strip())
    packed = log.with_name(log.name + ".gz")
    if packed.is_file():
        import gzip

        with gzip.open(packed, "rb") as fh:
            n += sum(1 for line in fh if line.strip())
    return f"{n} audits kept in {log}; run the same command again to resume"


def _components(critic: str, scorer: str, chat: Any) -> dict[str, Any]:
    from ariadne_lc.interventions import LLMCritic, RuleCritic, RuleParaphraser
    from ariadne_lc.scoring import AnswerMatchScorer, EmbeddingScorer, LLMJudge

    made: dict[str, Any] = {}
    if critic == "llm":
        made["critic"] = made["paraphraser"] = LLMCritic(chat, temperature=0.0)
    else:
        made["critic"], made["paraphraser"] = RuleCritic(), RuleParaphraser()
    if scorer == "judge":
        made["scorer"] = LLMJudge(chat, temperature=0.0)
    elif scorer == "embedding":
        made["scorer"] = EmbeddingScorer()
    else:
        made["scorer"] = AnswerMatchScorer()
    return made


def _dry_run(jobs: Sequence[Any], interventions: Sequence[str], critic: str, scorer: str, reference: bool) -> None:
    from rich.table import Table

    from ariadne_lc.calibration.agents import routes_to_bypass
    from ariadne_lc.calibration.runner import DEFAULT_REFERENCE_INTERVENTIONS
    from ariadne_lc.interventions import is_control

    n_contra = sum(not is_control(k) for k in interventions)
    n_audits = len(interventions)
    critic_calls = (1, 3) if critic == "llm" else (0, 0)
    judge_calls = 1 if scorer == "judge" else 0
    rows: dict[str, list[int]] = {}
    for job in jobs:
        label = job.agent if job.p is None else f"mixture p={job.p:g}"
        if job.agent == "natural":
            record, replay = (2, 5), (1, 4)
        else:
            # coupled_llm and coupled_tool have no bypass path (p is None): their answer always reads the thought
            rate = {"coupled": 0.0, "bypass": 1.0}.get(job.agent, job.p)
            bypass = rate is not None and routes_to_bypass(job.query.question, rate)
            record, replay = ((2, 2), (1, 1)) if bypass else ((1, 1), (0, 0))
        lo = record[0] + n_audits * (replay[0] + judge_calls) + (n_contra + 1) * critic_calls[0]
        hi = record[1] + n_audits * (replay[1] + judge_calls) + (n_contra + 1) * critic_calls[1]
        if reference and job.agent != "natural" and job.reference:  # a re-prompt, two judges a contradiction
            extra = 3 * len(DEFAULT_REFERENCE_INTERVENTIONS)
            lo, hi = lo + extra, hi + extra
        row = rows.setdefault(label, [0, 0, 0, 0])
        row[0] += 1
        row[1] += n_audits
        row[2] += lo
        row[3] += hi
    table = Table(title="dry run: what the calibration would do (nothing is called)")
    for column in ("agent", "questions", "audits", "model calls (min-max)"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for label, (n, audits, lo, hi) in rows.items():
        table.add_row(label, str(n), str(audits), f"{lo}-{hi}")
    total_lo, total_hi = sum(r[2] for r in rows.values()), sum(r[3] for r in rows.values())
    table.add_row(
        "total", str(sum(r[0] for r in rows.values())), str(sum(r[1] for r in rows.values())), f"{total_lo}-{total_hi}"
    )
    console.print(table)


@one_line_errors
def calibrate(
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint; default: a local model.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name at the endpoint.")] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (default: $OPENAI_API_KEY).")] = None,
    local_model: Annotated[
        str, typer.Option(help="Local model without --base-url: smollm2 or gemma3-270m.")
    ] = "smollm2",
    domains: Annotated[str, typer.Option(help="Comma-separated: math (GSM8K), science (ARC), general (CSQA).")] = (
        "math,science,general"
    ),
    n: Annotated[int, typer.Option("--n", help="Questions per domain (half calibrate, half validate).")] = 20,
    seed: Annotated[int, typer.Option(help="Which questions are drawn.")] = 0,
    critic: Annotated[str, typer.Option(help="rule or llm.")] = "rule",
    scorer: Annotated[str, typer.Option(help="answer, judge or embedding.")] = "answer",
    output: Annotated[Path, typer.Option(help="Run directory: audits, calibration.json and reports.")] = Path(
        "reports/calibration"
    ),
    ps: Annotated[str, typer.Option(help="Mixture rates validated on the held-out half.")] = "0,0.25,0.5,0.75,1",
    natural: Annotated[bool, typer.Option(help="Also audit the natural demo agent.")] = True,
    natural_limit: Annotated[
        int | None, typer.Option(help="At most this many natural-agent questions (its runs cost several calls).")
    ] = None,
    reference: Annotated[bool, typer.Option(help="Also run the reference (re-prompt) method.")] = True,
    reference_limit: Annotated[
        int | None, typer.Option(help="Run the reference method on the first this many questions of each half only.")
    ] = None,
    tau: Annotated[float, typer.Option(help="Violation threshold on S.")] = 0.8,
    lam: Annotated[int, typer.Option(help="Minimum answer length for a violation.")] = 0,
    max_tokens: Annotated[int, typer.Option(help="Output token limit per model call.")] = 96,
    grammar: Annotated[
        bool, typer.Option(help="Constrain the local model's replies with llama.cpp grammars (slow: ~10 s a call).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count questions, audits and model calls; call nothing.")
    ] = False,
    max_calls: Annotated[int | None, typer.Option(help="Stop cleanly after this many model calls.")] = None,
    report_only: Annotated[
        bool, typer.Option("--report-only", help="Analyse the run in --output as it stands; call no model.")
    ] = False,
    gate: Annotated[
        bool, typer.Option(help="The decisiveness gate (docs/method.md#the-decisiveness-gate); --no-gate: off.")
    ] = True,
    reader: Annotated[
        str,
        typer.Option(
            help="The gate's reader: rule (the default: no model calls, and with coherent edits fewer false alarms on "
            "a model-read ground truth than the agents' own model; docs/validity.md), model (the agents' own), or a "
            "local model of its own on a second server (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b, ...)."
        ),
    ] = "rule",
    ungated: Annotated[
        bool,
        typer.Option(
            help="With the gate on, also store every audit as the gate-off pipeline makes it (method "
            "ariadne_ungated, the gate-off side of the report). Off by default: it replays every edit the gate "
            "rejected, model calls no gated rate uses."
        ),
    ] = False,
    extra_agents: Annotated[
        str, typer.Option(help="More faithful agents on the calibrate half: coupled_llm, coupled_tool.")
    ] = "",
    extra_limit: Annotated[int | None, typer.Option(help="At most this many questions for the extra agents.")] = None,
    mixture_limit: Annotated[
        int | None, typer.Option(help="Run the mixtures on the first this many validate questions only.")
    ] = None,
    rederive: Annotated[
        bool, typer.Option(help="Also audit coupled_tool with the step's tool calls re-derived from the edit.")
    ] = False,
    concurrency: Annotated[
        int,
        typer.Option(
            help="Jobs at once, for endpoints that answer requests in parallel (vLLM, OpenAI); the local server "
            "answers one at a time, so it gains nothing there."
        ),
    ] = 1,
) -> None:
    """Calibrate the audit on agents whose faithfulness is known: false-alarm and miss rates, corrected estimates."""
    from ariadne_lc.calibration.runner import DEFAULT_INTERVENTIONS, plan_jobs
    from ariadne_lc.cli._calibrate_out import reference_factory, write_outputs
    from ariadne_lc.demo import load_demo_queries

    output_directory(output)
    if report_only:
        from ariadne_lc.calibration.storage import load_run

        manifest, stored = load_run(output)
        write_outputs(stored, output, model=manifest.config.model, config=manifest.config, seed=manifest.seed)
        return
    if critic not in _CRITICS:
        raise ConfigurationError(f"--critic must be one of {', '.join(_CRITICS)}, got {critic!r}")
    if scorer not in _SCORERS:
        raise ConfigurationError(f"--scorer must be one of {', '.join(_SCORERS)}, got {scorer!r}")
    if concurrency < 1:
        raise ConfigurationError(f"--concurrency must be at least 1, got {concurrency}")
    from ariadne_lc.local import LOCAL_MODELS

    if reader not in ("model", "rule", *LOCAL_MODELS):
        raise ConfigurationError(f"--reader must be model, rule or one of {', '.join(LOCAL_MODELS)}, got {reader!r}")
    extras = tuple(a.strip() for a in extra_agents.split(",") if a.strip())
    for agent in extras:
        if agent not in ("coupled_llm", "coupled_tool"):
            raise ConfigurationError(f"--extra-agents takes coupled_llm and coupled_tool, got {agent!r}")
    chosen = _domains(domains)
    rates = _floats(ps)
    queries = [q for q in load_demo_queries(n, seed) if q.domain in chosen]
    jobs = plan_jobs(
        queries, ps=rates, natural=natural, natural_limit=natural_limit, reference_limit=reference_limit,
        extra_agents=extras, extra_limit=extra_limit, mixture_limit=mixture_limit,  # type: ignore[arg-type]
    )  # fmt: skip
    interventions = DEFAULT_INTERVENTIONS
    reference_fn = reference_factory() if reference else None
    if dry_run:
        _dry_run(jobs, interventions, critic, scorer, reference_fn is not None)
        return
    started = time.perf_counter()
    with (
        interruptible(lambda: kept_audits(output)),
        _model(base_url, model, api_key, local_model, max_tokens) as (chat, name),
        _reader(reader) as chosen_reader,
    ):
        summary, log, config = _run(
            chat, name, jobs, output, critic=critic, scorer=scorer, constrained=grammar and base_url is None,
            seed=seed, n=n, domains=chosen, ps=rates, natural=natural, reference_fn=reference_fn,
            tau=tau, lam=lam, max_calls=max_calls, concurrency=concurrency,
            gating={"decisive": gate, "ungated": ungated, "reader": chosen_reader, "rederive": rederive},
        )  # fmt: skip
    console.print(
        f"{summary.audits_written} audits written ({len(log)} in {log.path}), {summary.model_calls} model calls, "
        f"{time.perf_counter() - started:.0f} s"
    )
    if summary.audits_deferred:
        console.print(
            f"[yellow]{summary.audits_deferred} audits failed for a reason a retry may fix (the model or a replay "
            "failed) and were not stored; run the same command again to retry them[/yellow]"
        )
    if summary.stopped:
        console.print(f"[yellow]stopped early: {summary.stopped}; run the same command again to resume[/yellow]")
    write_outputs(log, output, model=name, config=config, seed=seed)


def _run(
    chat: Any,
    name: str,
    jobs: Sequence[Any],
    output: Path,
    *,
    critic: str,
    scorer: str,
    constrained: bool,
    seed: int,
    n: int,
    domains: Sequence[str],
    ps: Sequence[float],
    natural: bool,
    reference_fn: Any,
    tau: float,
    lam: int,
    max_calls: int | None,
    concurrency: int,
    gating: dict[str, Any],
) -> tuple[Any, Any, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ariadne_lc.calibration.records import CalibrationConfig
    from ariadne_lc.calibration.runner import (
        DEFAULT_INTERVENTIONS,
        CalibrationRunner,
        calibration_reader,
        counted,
    )
    from ariadne_lc.calibration.storage import RunManifest, open_run

    model, calls = counted(chat)
    reader = gating["reader"]
    if reader == "model":
        reader_name: str | None = calibration_reader(model).name
    else:
        reader_name = "rule" if reader == "rule" else reader.name
    reader_name = reader_name if gating["decisive"] else None
    config = CalibrationConfig(
        model=name, critic=critic, scorer=scorer, tau=tau, lam=lam, decisive=gating["decisive"], reader=reader_name
    )
    families = ("ground_truth", *(("natural",) if natural else ()), *(("reference",) if reference_fn else ()))
    manifest = RunManifest(
        config=config, seed=seed, n_per_domain=n, domains=tuple(domains), ps=tuple(ps),
        interventions=DEFAULT_INTERVENTIONS, agents=families,
    )  # fmt: skip
    log = open_run(output, manifest)
    reference = reference_fn(model, tau=tau, lam=lam) if reference_fn is not None else None
    runner = CalibrationRunner(
        model, log, constrained=constrained, calls=calls, max_calls=max_calls, tau=tau, lam=lam, seed=seed,
        reference=reference, **_components(critic, scorer, model), **gating,
    )  # fmt: skip
    if log.audits():
        console.print(f"resuming: {len(log)} audits already in {log.path}")
    progress = Progress(
        TextColumn("{task.description:<18}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    )
    with progress:
        tasks: dict[str, Any] = {}
        for job in jobs:
            label = job.agent if job.p is None else f"mixture p={job.p:g}"
            if label not in tasks:
                tasks[label] = progress.add_task(label, total=sum(
                    1 for j in jobs if (j.agent if j.p is None else f"mixture p={j.p:g}") == label
                ))  # fmt: skip

        def advance(job: Any, written: int) -> None:
            progress.advance(tasks[job.agent if job.p is None else f"mixture p={job.p:g}"])

        summary = runner.run(jobs, on_job=advance, concurrency=concurrency)
    return summary, log, config
