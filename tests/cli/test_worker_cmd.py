"""``ariadne-lc worker``: services that are down and bad options are one line, not a traceback."""

from __future__ import annotations

import socket

from typer.testing import CliRunner

from ariadne_lc.cli import app
from ariadne_lc.cli._worker_cmd import check_service

runner = CliRunner()
GRAPH = "tests.distributed.graph:build_graph"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_broker_is_named_with_how_to_start_it() -> None:
    port = closed_port()
    result = runner.invoke(
        app,
        ["worker", "--graph", GRAPH, "--jobs", "postgresql://postgres@127.0.0.1:5432/postgres",
         "--broker", f"amqp://guest:guest@127.0.0.1:{port}//"],
    )  # fmt: skip
    assert result.exit_code == 2
    line = " ".join(result.output.split())
    assert f"RabbitMQ is not reachable at 127.0.0.1:{port}" in line
    assert "rabbitmq-server -detached" in line
    assert "Traceback" not in result.output


def test_an_unreachable_database_is_named() -> None:
    port = closed_port()
    reason = check_service(f"postgresql://postgres@127.0.0.1:{port}/app")
    assert reason is not None and reason.startswith(f"PostgreSQL is not reachable at 127.0.0.1:{port}")
    assert check_service(f"redis://127.0.0.1:{port}/0", timeout=1) is not None


def test_a_job_store_that_is_not_postgres_is_refused() -> None:
    result = runner.invoke(app, ["worker", "--graph", GRAPH, "--jobs", "jobs.db"])
    assert result.exit_code == 2
    assert "--jobs must be a postgresql:// URL" in " ".join(result.output.split())
