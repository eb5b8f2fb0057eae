"""A real MLflow tracking server for the backend tests: ``mlflow server`` on SQLite, on a free loopback port.

The server is the full ``mlflow`` package, in an environment of its own that the Makefile builds
(``.venv/servers/mlflow``): it pins graphql-core below 3.3, which Phoenix's server needs, so the two cannot share the
project's environment, which holds MLflow's client (``mlflow-skinny``, the ``mlflow`` extra). It runs as a subprocess
with one worker (the default four cost memory and start-up time for nothing here), its own
working directory, database and artifact root; its warnings stay in its log. The tests send it OpenTelemetry spans
over OTLP/HTTP (``/v1/traces`` with the ``x-mlflow-experiment-id`` header) and read traces and assessments back
through MLflow's own client.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tests.export.backends import _free_port, wait_healthy

MLFLOW_SERVER: Final = Path(sys.prefix) / "servers" / "mlflow" / "bin" / "mlflow"
"""The server's command, in the environment the Makefile builds beside the project's (``$(STAMPS)/mlflow``)."""
MLFLOW_START_TIMEOUT_S = 180.0
"""A cold start (imports, the SQLite migrations) took about 15 s on 2 cores."""


@dataclass(frozen=True)
class MLflowServer:
    """A running MLflow tracking server."""

    tracking_uri: str
    """``http://127.0.0.1:<port>``: UI, REST API and OTLP/HTTP (``/v1/traces``)."""
    log_path: Path
    startup_seconds: float

    def otlp_headers(self, experiment_id: str) -> dict[str, str]:
        """The header that routes OTLP spans to an experiment."""
        return {"x-mlflow-experiment-id": experiment_id}


@contextlib.contextmanager
def run_mlflow(working_dir: Path, timeout_s: float = MLFLOW_START_TIMEOUT_S) -> Iterator[MLflowServer]:
    """Start ``mlflow server``, wait until ``/health`` answers, yield it, then stop it (terminate, wait, kill)."""
    if not MLFLOW_SERVER.is_file():
        raise RuntimeError(f"no MLflow server at {MLFLOW_SERVER}: `make test` builds it (the Makefile's mlflow stamp)")
    port = _free_port()
    log_path = working_dir / "mlflow.log"
    tracking_uri = f"http://127.0.0.1:{port}"
    command = [
        str(MLFLOW_SERVER), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
        "--backend-store-uri", f"sqlite:///{working_dir / 'mlflow.db'}",
        "--default-artifact-root", str(working_dir / "artifacts"),
    ]  # fmt: skip
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    started = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, cwd=working_dir, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        wait_healthy("MLflow", process, f"{tracking_uri}/health", log_path, deadline=started + timeout_s)
        yield MLflowServer(tracking_uri=tracking_uri, log_path=log_path, startup_seconds=time.monotonic() - started)
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and the workers it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, 15)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        process.wait(timeout=15)
