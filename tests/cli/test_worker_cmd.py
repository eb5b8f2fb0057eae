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
from tests.distributed.fleet import database, require, require_services

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
    assert f"RabbitMQ is not reachable at amqp://guest:***@127.0.0.1:{port}// (connection refused" in line
    assert "rabbitmq-server -detached" in line
    assert "Traceback" not in result.output


def test_an_unreachable_database_is_named() -> None:
    port = closed_port()
    reason = check_service(f"postgresql://postgres@127.0.0.1:{port}/app")
    assert reason is not None and reason.startswith(
        f"PostgreSQL is not reachable at postgresql://postgres@127.0.0.1:{port}/app"
    )
    assert check_service(f"redis://127.0.0.1:{port}/0", timeout=1) is not None


def test_a_job_store_that_is_not_postgres_is_refused() -> None:
    result = runner.invoke(app, ["worker", "--graph", GRAPH, "--jobs", "jobs.db"])
    assert result.exit_code == 2
    assert "--jobs must be a postgresql:// URL" in " ".join(result.output.split())


# -- start-up against services that answer wrongly: the real command, in a process of its own ----------


HANG_GUARD = 120.0
"""Seconds a start-up check may run before the test calls it a hang. Not a measurement: each check is
bounded at a few seconds (CONNECT_TIMEOUT), and the tests that could retry pass ``--broker-wait 600``, so
that a check which waited instead of failing at once would run into this guard."""


def cli(*args: str, timeout: float = HANG_GUARD, **variables: str) -> subprocess.CompletedProcess[str]:
    """``ariadne-lc ARGS`` as users run it, in a process of its own (``variables`` added to its environment)."""
    env = {
        **os.environ,
        **variables,
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    }
    return subprocess.run(
        [sys.executable, "-m", "ariadne_lc.cli", *args],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout, check=False,
    )  # fmt: skip


def worker_command(
    broker: str, jobs: str, *extra: str, timeout: float = HANG_GUARD
) -> subprocess.CompletedProcess[str]:
    """``ariadne-lc worker`` on the test graph and a queue of its own."""
    queue = f"ariadne-test-{uuid.uuid4().hex[:10]}"
    return cli(
        "worker", "--graph", GRAPH, "--jobs", jobs, "--broker", broker, "--queue", queue, *extra, timeout=timeout
    )


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
    assert "RabbitMQ at amqp://guest:***@127.0.0.1:5672// refused the login" in line and "ACCESS_REFUSED" in line
    assert "not-the-password" not in line


HTTP_REPLY = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"


@pytest.mark.parametrize("reply", [b"", HTTP_REPLY], ids=["silent", "http"])
def test_a_port_that_does_not_speak_amqp_is_named_at_once(fresh_db: str, reply: bytes) -> None:
    """An open port that is not RabbitMQ (silent, or another protocol): one line at the first handshake,
    however long ``--broker-wait`` (it was Celery retrying 100 times, then the whole wait)."""
    listener = Listener(reply)
    try:
        run = worker_command(f"amqp://guest:guest@127.0.0.1:{listener.port}//", fresh_db, "--broker-wait", "600")
    finally:
        listener.close()
    line = one_error_line(run)
    assert run.returncode == 2
    assert f"RabbitMQ at amqp://guest:***@127.0.0.1:{listener.port}//: the port accepts connections" in line
    assert "does not speak AMQP" in line
    # Two reachability probes (the command's, the worker's) and one handshake: never a retry.
    assert listener.accepted <= 3, listener.accepted


def test_a_database_that_does_not_exist_is_one_line_at_once() -> None:
    """``--jobs`` naming a missing database: the server's reason in one line (it was five lines after
    the pool's 12 s timeout)."""
    require_services()
    name = f"ariadne_missing_{uuid.uuid4().hex[:8]}"
    run = worker_command("amqp://guest:guest@127.0.0.1:5672//", f"postgresql://postgres@127.0.0.1:5432/{name}")
    line = one_error_line(run)
    assert run.returncode == 2
    assert line.startswith(
        f"error: --jobs: cannot connect to PostgreSQL at postgresql://postgres@127.0.0.1:5432/{name}"
    )
    assert f'database "{name}" does not exist' in line


# -- every URL checked before serving: one line naming it (password masked), exit 2 ------------------------

PG = "postgresql://postgres@127.0.0.1:5432/postgres"
SECRET = "s3cret-pw"


WRONG_URLS = {  # case: (option, URL, what the line must say); {closed} is a port nothing listens on
    "amqp-on-redis": ("--broker", f"amqp://guest:{SECRET}@127.0.0.1:6379//", "does not speak AMQP"),
    "amqp-closed-port": ("--broker", f"amqp://guest:{SECRET}@127.0.0.1:{{closed}}//", "connection refused"),
    "amqp-unresolvable": ("--broker", f"amqp://guest:{SECRET}@nonexistent.invalid:5672//", "does not resolve"),
    "redis-on-rabbitmq": ("--broker", f"redis://:{SECRET}@127.0.0.1:5672/0", "does not speak the Redis protocol"),
    "jobs-on-redis": ("--jobs", f"postgresql://postgres:{SECRET}@127.0.0.1:6379/app", "does not speak PostgreSQL"),
    "jobs-closed-port": ("--jobs", f"postgresql://postgres:{SECRET}@127.0.0.1:{{closed}}/app", "connection refused"),
    "jobs-unresolvable": ("--jobs", f"postgresql://postgres:{SECRET}@nonexistent.invalid/app", "does not resolve"),
}


@pytest.mark.parametrize(("option", "url", "said"), list(WRONG_URLS.values()), ids=list(WRONG_URLS))
def test_a_wrong_url_is_one_line_naming_it_and_a_failed_exit(option: str, url: str, said: str) -> None:
    """The machine's real Redis port typed for RabbitMQ's or PostgreSQL's (it answered nothing and the
    worker hung without a word), a closed port, a host that does not resolve: one line naming the URL
    with its password masked and what is wrong, exit 2, and no wait (``--broker-wait 600``)."""
    require_services()
    require("Redis", "127.0.0.1", 6379)
    url = url.format(closed=closed_port())
    broker, jobs = (url, PG) if option == "--broker" else ("amqp://guest:guest@127.0.0.1:5672//", url)
    run = worker_command(broker, jobs, "--broker-wait", "600")
    line = one_error_line(run)
    assert run.returncode == 2
    assert url.replace(SECRET, "***") in line and said in line, line
    assert SECRET not in run.stdout + run.stderr
