"""``--link`` on every command that audits (``audit``, ``poll``, ``worker``): parsed once (repeated or a comma list),
passed to the auditor each command builds; an unknown name is one line before anything starts."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ariadne_lc.cli import app
from ariadne_lc.cli._audit_cmd import parse_links
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.store import SQLiteResultStore

runner = CliRunner()
UNKNOWN = (
    "error: unknown --link thought->nowhere; choose from thought-action, observation-answer, thought-answer "
    "(or thought->action, observation->answer, thought->answer)"
)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARIADNE_TEST_CHECKPOINTS", str(tmp_path / "checkpoints.db"))
    path = tmp_path / "queries.jsonl"
    path.write_text("\n".join(json.dumps({"query": f"How many apples are in {i + 2} boxes of 7?"}) for i in range(2)))
    return path


def test_links_are_parsed_once_repeated_or_as_a_comma_list() -> None:
    assert parse_links(None) is None and parse_links([]) is None
    assert parse_links(["thought->answer", "observation->answer"]) == ("thought->answer", "observation->answer")
    assert parse_links(["thought->answer, observation->answer", "thought->answer"]) == (
        "thought->answer",
        "observation->answer",
    )
    with pytest.raises(ConfigurationError, match="unknown --link bogus; choose from thought-action"):
        parse_links(["thought->answer,bogus"])


def test_links_have_shell_safe_names_and_a_cut_arrow_is_explained() -> None:
    assert parse_links(["thought-action,observation-answer", "thought-answer"]) == (
        "thought->action",
        "observation->answer",
        "thought->answer",
    )
    with pytest.raises(ConfigurationError, match="in a shell, `>` redirects: write thought-action"):
        parse_links(["thought-"])  # what a shell leaves of an unquoted thought->action


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        (["--link", "observation->answer"], {"observation->answer"}),
        (["--link", "thought->answer,observation->answer"], {"thought->answer", "observation->answer"}),
        (["--link", "thought->answer", "--link", "observation->answer"], {"thought->answer", "observation->answer"}),
    ],
    ids=["one", "comma-list", "repeated"],
)
def test_audit_results_carry_only_the_chosen_links(
    queries: Path, tmp_path: Path, links: list[str], expected: set[str]
) -> None:
    out = tmp_path / "out"
    args = ["audit", "--graph", "tests.cli.graphs:faithful", "--queries", str(queries), "--output", str(out)]
    result = runner.invoke(app, [*args, "--interventions", "logic_flip,observation_swap", *links])
    assert result.exit_code == 0, result.output
    stored = SQLiteResultStore(out / "results.db").list_results()
    assert {r.link for r in stored} == expected


def _one_line(result: Any) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return " ".join(lines[0].split())


@pytest.mark.parametrize("command", ["audit", "poll", "worker"])
def test_an_unknown_link_is_one_line_before_anything_starts(command: str, tmp_path: Path) -> None:
    """The services named are all unreachable (a closed port): the link is refused before any is contacted."""
    port = closed_port()
    args = {
        "audit": ["--graph", "tests.cli.graphs:faithful", "--queries", str(tmp_path / "none.jsonl")],
        "poll": ["--server", f"http://127.0.0.1:{port}", "--graph", "tests.cli.graphs:faithful"],
        "worker": [
            "--graph",
            "tests.distributed.graph:build_graph",
            "--jobs",
            f"postgresql://u@127.0.0.1:{port}/db",
            "--broker",
            f"amqp://guest:guest@127.0.0.1:{port}//",
        ],
    }[command]
    result = runner.invoke(app, [command, *args, "--link", "thought->answer", "--link", "thought->nowhere"])
    assert result.exit_code == 2
    assert _one_line(result) == UNKNOWN


@pytest.mark.parametrize("command", ["poll", "worker"])
def test_poll_and_worker_document_the_option(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "--link" in result.output
