"""``ariadne-lc poll``: sampled online audits of a LangGraph Server deployment.

::

    ariadne-lc poll --server http://127.0.0.1:2024 --assistant agent --graph agent:graph \\
        --jobs audits.db --sample-rate 0.05 --interval 30

It runs a :class:`~ariadne_lc.server.ServerPoller` (new finished turns, sampled, into the job store,
exactly once per turn across restarts) and, unless ``--no-audit``, the audits in this process. A
``postgresql://`` job store and the server are checked first: one line, naming what is wrong, when
either does not answer as it should.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from ariadne_lc.cli._audit_cmd import (
    ALLOW_UNCHECKED_HELP,
    DEFAULT_INTERVENTIONS,
    DEFAULT_STEP,
    LINK_HELP,
    STEP_HELP,
    load_graph,
    parse_interventions,
    parse_links,
    parse_step,
)
from ariadne_lc.cli._common import console, one_line_errors
from ariadne_lc.cli._interrupt import interruptible

if TYPE_CHECKING:
    from ariadne_lc.server import RemoteAuditor, ServerPoller

__all__ = ["poll"]


@one_line_errors
def poll(
    server: Annotated[str, typer.Option(help="The LangGraph Server's URL.")],
    graph: Annotated[str, typer.Option(help="The graph the server runs, as 'package.module:attribute'.")],
    assistant: Annotated[str | None, typer.Option(help="Only this assistant's threads (graph name).")] = None,
    jobs: Annotated[str, typer.Option(help="Job store (and cursor): a SQLite path or postgresql://...")] = "audits.db",
    sample_rate: Annotated[float, typer.Option(help="Fraction of finished turns audited.")] = 0.05,
    interval: Annotated[float, typer.Option(help="Seconds between polls.")] = 30.0,
    once: Annotated[bool, typer.Option("--once", help="Poll until caught up, audit, and exit.")] = False,
    audit: Annotated[bool, typer.Option("--audit/--no-audit", help="Run the audits in this process.")] = True,
    interventions: Annotated[str, typer.Option(help="Comma-separated intervention types.")] = DEFAULT_INTERVENTIONS,
    step: Annotated[str, typer.Option(help=STEP_HELP)] = DEFAULT_STEP,
    max_threads_per_poll: Annotated[int, typer.Option(help="Threads read per poll.")] = 100,
    max_audits_per_minute: Annotated[float | None, typer.Option(help="Rate limit on sampled turns.")] = None,
    max_model_calls_per_hour: Annotated[int | None, typer.Option(help="Budget of the audits' model calls.")] = None,
    api_key: Annotated[str | None, typer.Option(help="Sent as x-api-key.", envvar="LANGGRAPH_API_KEY")] = None,
    write_verdicts: Annotated[
        bool, typer.Option("--write-verdicts", help="Put each verdict in its thread's metadata.")
    ] = False,
    link: Annotated[list[str] | None, typer.Option(help=LINK_HELP)] = None,
    allow_unchecked: Annotated[bool, typer.Option("--allow-unchecked", help=ALLOW_UNCHECKED_HELP)] = False,
) -> None:
    """Poll a LangGraph Server for finished turns, sample them into the job store, audit them. Server threads record
    no model inputs: without --allow-unchecked every audit is inconclusive (an unchecked replay)."""
    links = parse_links(link, graph=graph)  # a bad name is one line before anything is contacted
    kinds, selector = parse_interventions(interventions), parse_step(step)
    if jobs.startswith(("postgresql://", "postgres://")):
        from ariadne_lc.distributed._preflight import check_database

        check_database(jobs, option="--jobs")  # a wrong port or password: one line now, not a pool's long wait
    from ariadne_lc.server import RemoteAuditor, ServerPoller

    remote = RemoteAuditor(
        load_graph(graph), server, api_key=api_key, write_verdicts=write_verdicts, links=links,
        allow_unchecked=allow_unchecked,
    )  # fmt: skip
    remote.server.check()
    poller = ServerPoller(
        remote,
        assistant=assistant,
        jobs=jobs,
        sample_rate=sample_rate,
        max_threads_per_poll=max_threads_per_poll,
        interventions=kinds,
        step=selector,
        links=links,
        max_audits_per_minute=max_audits_per_minute,
        max_model_calls_per_hour=max_model_calls_per_hour,
    )
    kept = f"the jobs and the poll's cursor are kept in {jobs}; run the same command again to go on"
    with interruptible(lambda: kept):
        _run(poller, remote, server=server, jobs=jobs, interval=interval, once=once, audit=audit)


def _run(poller: ServerPoller, remote: RemoteAuditor, *, server: str, jobs: str, interval: float, once: bool,
         audit: bool) -> None:  # fmt: skip
    """Poll (once until caught up, or every ``interval`` until Ctrl-C), audit, and always shut the poller down."""
    try:
        if once:
            threads = offered = 0
            while True:
                report = poller.poll()
                threads, offered = threads + report.threads, offered + report.offered
                if not report.more:
                    break
            if audit:
                poller.online.start()
                poller.online.force_flush(timeout=3600)
            counts = poller.jobs.counts()
            console.print(
                f"{server}: {threads} threads read, {offered} finished turns offered, "
                f"{poller.online.stats.sampled} sampled; jobs: "
                + ", ".join(f"{state.value} {n}" for state, n in counts.items())
            )
            return
        poller.start(interval=interval, audit=audit)
        console.print(f"polling {server} every {interval:g} s (Ctrl-C stops); jobs in {jobs}")
        while True:
            time.sleep(3600)
    finally:
        poller.shutdown()
        remote.close()
