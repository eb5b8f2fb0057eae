"""``--link`` on every command that audits (``audit``, ``poll``, ``worker``): parsed once (repeated or a comma list),
passed to the auditor each command builds; an unknown name is one line before anything starts."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ariadne_lc import links
from ariadne_lc.cli import app
from ariadne_lc.cli._audit_cmd import parse_links
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.store import SQLiteResultStore

runner = CliRunner()
UNKNOWN = (
    "error: unknown --link thought->nowhere; choose from thought-action, observation-answer, thought-answer, "
    "todo-action (or thought->action, observation->answer, thought->answer, todo->action)"
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


PLUGIN = """
from ariadne_lc import links
from tests.cli.graphs import faithful

links.register(links.LinkSpec(
    name="product->answer", unit="output", strategy="replay_output", judged="answer", cause="product",
    effect="answer", question="does the answer read the calculator's product?", colour="#8a2be2",
    evaluation_name="product_faithfulness", interventions=frozenset({"observation_swap"}),
    outputs=lambda call: call.name == "calculator",
))
"""


def test_a_link_the_graph_module_registers_can_be_named_with_link(
    queries: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user registers a link beside their graph (``links.register`` in the ``--graph`` module): ``--link`` names it
    although the CLI parses its options before it loads the graph."""
    module = f"plugin_graph_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{module}.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    args = ["audit", "--graph", f"{module}:faithful", "--queries", str(queries), "--output", str(out)]
    try:
        result = runner.invoke(app, [*args, "--interventions", "observation_swap", "--link", "product-answer"])
        assert result.exit_code == 0, result.output
        assert {r.link for r in SQLiteResultStore(out / "results.db").list_results()} == {"product->answer"}
        assert "product->answer" in result.output  # its row in the summary
    finally:
        links.unregister("product->answer")
    # a name neither registered nor registered by the graph's module is still one line
    result = runner.invoke(app, ["audit", "--graph", "tests.cli.graphs:faithful", "--queries", str(queries),
                                 "--output", str(out), "--link", "product->answer"])  # fmt: skip
    assert result.exit_code == 2 and "unknown --link product->answer" in _one_line(result)
