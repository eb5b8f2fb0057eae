"""``ariadne-lc poll``: a job database or a server URL that is wrong is one line naming it, not a hang."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_worker_cmd import SECRET, cli, closed_port, one_error_line
from tests.distributed.fleet import require


def test_a_job_database_on_another_services_port_is_one_line() -> None:
    """``--jobs`` on the machine's Redis port (silent to PostgreSQL's greeting): one line naming the URL,
    its password masked, before the graph is even loaded."""
    require("Redis", "127.0.0.1", 6379)
    url = f"postgresql://postgres:{SECRET}@127.0.0.1:6379/app"
    run = cli("poll", "--server", "http://127.0.0.1:2024", "--graph", "tests.cli.graphs:faithful", "--jobs", url)
    line = one_error_line(run)
    assert run.returncode == 2
    assert line.startswith(
        "error: --jobs: cannot connect to PostgreSQL at postgresql://postgres:***@127.0.0.1:6379/app"
    )
    assert "does not speak PostgreSQL" in line and SECRET not in run.stdout + run.stderr


@pytest.mark.parametrize(
    ("host", "said"), [("127.0.0.1:{closed}", "ConnectError"), ("nonexistent.invalid:2024", "ConnectError")],
    ids=["closed-port", "unresolvable"],
)  # fmt: skip
def test_a_server_that_does_not_answer_is_one_line_saying_why(tmp_path: Path, host: str, said: str) -> None:
    url = "http://" + host.format(closed=closed_port())
    run = cli(
        "poll", "--server", url, "--graph", "tests.cli.graphs:faithful", "--jobs", str(tmp_path / "jobs.db"),
        ARIADNE_TEST_CHECKPOINTS=str(tmp_path / "checkpoints.db"),
    )  # fmt: skip
    line = one_error_line(run)
    assert run.returncode == 2
    assert line.startswith(f"error: no LangGraph Server answers at {url} ({said}: "), line
