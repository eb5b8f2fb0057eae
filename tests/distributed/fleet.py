"""Real services and real worker processes for the distributed tests (no mocks).

Each test gets a database of its own (created here, dropped after) and a queue of its own, so test
runs in parallel never meet. Workers are ``python -m ariadne_lc.cli worker`` subprocesses, the
documented command, with their logs in the test's temporary folder.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ariadne_lc import AriadneCallbackHandler, InMemoryTraceStore, Trace
from tests.distributed.graph import build_graph, question

ROOT = Path(__file__).resolve().parents[2]
PG_ADMIN = os.environ.get("ARIADNE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
BROKER = os.environ.get("ARIADNE_TEST_BROKER", "amqp://guest:guest@127.0.0.1:5672//")
REDIS = os.environ.get("ARIADNE_TEST_REDIS", "redis://127.0.0.1:6379/13")
START = {
    "PostgreSQL": "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
    "RabbitMQ": "rabbitmq-server -detached",
    "Redis": "redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save '' --appendonly no",
}


def require(name: str, host: str, port: int) -> None:
    """Fail (never skip) in one line when a service is down, naming it and how to start it."""
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as exc:
        raise AssertionError(f"{name} is not reachable at {host}:{port} ({exc}); start it: {START[name]}") from None


def require_services() -> None:
    require("PostgreSQL", "127.0.0.1", 5432)
    require("RabbitMQ", "127.0.0.1", 5672)


@contextmanager
def database() -> Iterator[str]:
    """A fresh database; yields its URL, drops it (and its connections) afterwards."""
    name = f"ariadne_dist_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def terminate_connections(url: str) -> int:
    """``pg_terminate_backend`` on every other connection to the database of ``url`` (only that one)."""
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    return sum(1 for (ok,) in rows if ok)


def delete_redis_queue(queue: str) -> None:
    """Remove a test queue's keys from the Redis database the tests use."""
    import redis

    client = redis.Redis.from_url(REDIS)
    try:
        client.delete(queue, *client.keys(f"{queue}*"))
    finally:
        client.close()


def delete_queue(queue: str) -> None:
    """Remove a test queue and its exchange from the broker."""
    from kombu import Connection, Exchange, Queue

    with Connection(BROKER, connect_timeout=5) as conn:
        channel = conn.channel()
        Queue(queue, Exchange(queue), routing_key=queue).bind(channel).delete()
        Exchange(queue).bind(channel).delete()
        channel.close()


def queue_depth(queue: str) -> tuple[int, int]:
    """(ready, unacknowledged) messages of ``queue``, from ``rabbitmqctl``."""
    out = subprocess.run(
        ["rabbitmqctl", "-q", "list_queues", "name", "messages_ready", "messages_unacknowledged"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == queue:
            return int(parts[1]), int(parts[2])
    return 0, 0


class Workers:
    """``ariadne-lc worker`` subprocesses on one queue and database."""

    def __init__(
        self, folder: Path, jobs_url: str, queue: str, *, replay_delay: float, env: dict[str, str], broker: str = BROKER
    ) -> None:
        self.broker = broker
        self.folder = folder
        self.jobs_url = jobs_url
        self.queue = queue
        self.replay_delay = replay_delay
        self.env = env
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, n: int, *, concurrency: int = 2, extra: Sequence[str] = ()) -> list[subprocess.Popen[bytes]]:
        started = []
        for _ in range(n):
            index = len(self.procs)
            log = self.folder / f"worker-{index}.log"
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
                "ARIADNE_TEST_REPLAY_DELAY": str(self.replay_delay),
                **self.env,
            }
            command = [
                sys.executable, "-m", "ariadne_lc.cli", "worker",
                "--graph", "tests.distributed.graph:build_graph",
                "--jobs", self.jobs_url,
                "--broker", self.broker,
                "--queue", self.queue,
                "--concurrency", str(concurrency),
                "--hostname", f"w{index}-{self.queue}@%h",
                "--sweep-interval", "1", "--grace", "1", "--redeliver-after", "30", "--lease", "20",
                "--retry-backoff", "0.5",
                # the plan these fleet tests were written for, one audit per job (tests.helpers.ONE_AUDIT)
                "--interventions", "logic_flip", "--step", "auto",
                *extra,
            ]  # fmt: skip
            with log.open("wb") as out:
                proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            self.procs.append(proc)
            started.append(proc)
        for index, proc in enumerate(started, start=len(self.procs) - len(started)):
            self._wait_ready(index, proc)
        return started

    def _wait_ready(self, index: int, proc: subprocess.Popen[bytes], timeout: float = 180.0) -> None:
        log = self.folder / f"worker-{index}.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if b" ready." in log.read_bytes():
                return
            if proc.poll() is not None:
                raise AssertionError(f"worker {index} exited with {proc.returncode}:\n{self.log(index)}")
            time.sleep(0.2)
        raise AssertionError(f"worker {index} not ready after {timeout:.0f} s:\n{self.log(index)}")

    def log(self, index: int) -> str:
        return (self.folder / f"worker-{index}.log").read_text(errors="replace")[-6000:]

    def logs(self) -> str:
        return "\n".join(f"--- worker {i} ---\n{self.log(i)}" for i in range(len(self.procs)))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


class Serving:
    """The serving side of a test: the graph on a PostgresSaver in the test database, recording runs."""

    def __init__(self, url: str) -> None:
        # A checked pool: a fault test terminates this database's connections, this side's included.
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=2,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            check=ConnectionPool.check_connection,
            open=True,
        )
        self.saver = PostgresSaver(self.pool)
        self.saver.setup()
        self.graph = build_graph(self.saver)

    def record(self, n: int, prefix: str = "user") -> list[Trace]:
        """Serve ``n`` runs (one thread each) and return their traces."""
        store = InMemoryTraceStore()
        handler = AriadneCallbackHandler(store=store)
        for i in range(n):
            self.graph.invoke(
                {"messages": [("user", question(i))]},
                {"configurable": {"thread_id": f"{prefix}-{i}"}, "callbacks": [handler]},
            )
        assert handler.flush(60)  # traces are built on the recorder's background thread
        traces = store.list_traces()
        assert len(traces) == n
        return traces

    def threads(self, traces: Sequence[Trace]) -> dict[str, list[str]]:
        """Each trace's production thread: its checkpoint ids, newest (the head) first."""
        return {
            t.thread_id or "": [c.config["configurable"]["checkpoint_id"] for c in self.saver.list(
                {"configurable": {"thread_id": t.thread_id}}
            )]
            for t in traces
        }  # fmt: skip

    def close(self) -> None:
        self.pool.close()


def wait_until(condition: Callable[[], Any], timeout: float, what: str, on_fail: Callable[[], str] = str) -> Any:
    """Poll ``condition`` every 0.2 s until truthy; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{on_fail()}")


class BrokerProxy:
    """A TCP proxy on loopback in front of RabbitMQ: :meth:`cut` drops every connection through it and
    refuses new ones, a broker lost for good as far as its clients can tell, without touching the
    broker other tests share."""

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 5672)) -> None:
        self.target = target
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            with contextlib.suppress(OSError):
                s.close()

    def cut(self) -> None:
        self.sock.close()
        with self._lock:
            for s in self._conns:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                    s.close()
