"""``ariadne-lc worker``: services that are down and bad options are one line, not a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ariadne_lc.cli import app
from ariadne_lc.cli._worker_cmd import check_service
from tests.distributed.fleet import database, require_services

ROOT = Path(__file__).resolve().parents[2]

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


# -- start-up against services that answer wrongly: the real command, in a process of its own ----------


def worker_command(broker: str, jobs: str, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``ariadne-lc worker`` as users run it. ``timeout`` only guards against a hang (a start-up that
    retries for most of an hour); it is not a measurement."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run(
        [sys.executable, "-m", "ariadne_lc.cli", "worker", "--graph", GRAPH, "--jobs", jobs, "--broker", broker,
         "--queue", f"ariadne-test-{uuid.uuid4().hex[:10]}", *extra],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def one_error_line(run: subprocess.CompletedProcess[str]) -> str:
    """The command's only output line (stdout and stderr together), which must be an ``error:`` line."""
    lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, f"exit {run.returncode}, {len(lines)} lines:\n" + "\n".join(lines[-60:])
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


class Listener:
    """A TCP listener on loopback that accepts connections and answers ``reply`` (or nothing), not AMQP."""

    def __init__(self, reply: bytes = b"") -> None:
        self.reply = reply
        self.accepted = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self._held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            if self.reply:
                conn.sendall(self.reply)
                conn.close()
            else:
                self._held.append(conn)  # silent: the client waits for a Connection.Start that never comes

    def close(self) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def fresh_db() -> Iterator[str]:
    require_services()
    with database() as url:
        yield url


def test_a_refused_broker_login_is_one_line_and_a_failed_exit(fresh_db: str) -> None:
    """A wrong password: RabbitMQ refuses the login. One line naming the broker and the cause, exit 2
    (it was a 59-line traceback and exit status 0)."""
    run = worker_command("amqp://guest:not-the-password@127.0.0.1:5672//", fresh_db)
    line = one_error_line(run)
    assert run.returncode == 2
    assert "RabbitMQ at 127.0.0.1:5672 refused the connection" in line and "ACCESS_REFUSED" in line
    assert "not-the-password" not in line


HTTP_REPLY = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"


@pytest.mark.parametrize("reply", [b"", HTTP_REPLY], ids=["silent", "http"])
def test_a_port_that_does_not_speak_amqp_is_given_up_after_the_start_up_wait(fresh_db: str, reply: bytes) -> None:
    """An open port that is not RabbitMQ (silent, or another protocol): start-up tries for
    ``--broker-wait`` seconds, then says so in one line (it was Celery retrying 100 times)."""
    listener = Listener(reply)
    try:
        run = worker_command(f"amqp://guest:guest@127.0.0.1:{listener.port}//", fresh_db, "--broker-wait", "3")
    finally:
        listener.close()
    line = one_error_line(run)
    assert run.returncode == 2
    assert f"RabbitMQ at 127.0.0.1:{listener.port}" in line
    # A silent peer makes each attempt wait for its timeout; a talking one fails each at once. Either
    # way the number of attempts is bounded by the wait, not by Celery's 100 retries.
    assert 1 <= listener.accepted <= 5, listener.accepted


def test_a_database_that_does_not_exist_is_one_line_at_once() -> None:
    """``--jobs`` naming a missing database: the server's reason in one line (it was five lines after
    the pool's 12 s timeout)."""
    require_services()
    name = f"ariadne_missing_{uuid.uuid4().hex[:8]}"
    run = worker_command("amqp://guest:guest@127.0.0.1:5672//", f"postgresql://postgres@127.0.0.1:5432/{name}")
    line = one_error_line(run)
    assert run.returncode == 2
    assert line.startswith(f"error: --jobs: cannot connect to PostgreSQL at postgresql://127.0.0.1:5432/{name}")
    assert f'database "{name}" does not exist' in line
