"""The documents a user follows: the quick starts (README, docs/quickstart.md) run and print what they show, every
link resolves, every reference to the method points at a section that exists, and the command table matches the
commands."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
import typer

from ariadne_lc.cli import app

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
QUICK_START = REPO / "docs" / "quickstart.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_METHOD_REF = re.compile(r"(?:docs/)?method\.md#([a-z0-9-]+)")
_ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)


def _shown_examples(text: str) -> list[tuple[str, str]]:
    """Each ``python`` block that a plain block (its output) follows at once."""
    blocks = _blocks(text)
    return [
        (code, shown)
        for (lang, code), (then, shown) in itertools.pairwise(blocks)
        if lang == "python" and then in ("", "text")
    ]


def test_the_quick_starts_run_and_print_what_they_show(tmp_path: Path) -> None:
    """The first example of docs/quickstart.md, and every example with its output in the README's quick start."""
    examples = _shown_examples(_section(README.read_text(encoding="utf-8"), "## Quick start"))
    assert examples, "the README's quick start shows no example with its output"
    examples.append(_shown_examples(QUICK_START.read_text(encoding="utf-8"))[0])
    run_shown(examples, tmp_path)


def run_shown(examples: list[tuple[str, str]], folder: Path) -> None:
    """Run each example from ``folder`` (a fresh one: nothing else there), warnings as errors; it prints its output."""
    for number, (code, shown) in enumerate(examples):
        script = folder / f"example_{number}.py"
        script.write_text(code, encoding="utf-8")
        run = subprocess.run(
            [sys.executable, "-W", "error", str(script)], capture_output=True, text=True, cwd=folder, check=False
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout == shown


def test_the_readme_opens_with_the_two_commands_what_they_do_and_the_picture() -> None:
    """The first screen: `make demo` and `make test` first, then what it does and what you get (a terminal
    excerpt and the report's screenshot, with the command that made it); the rest lives in docs/."""
    text = README.read_text(encoding="utf-8")
    (first_lang, first), *_ = _blocks(text)
    commands = [line.split()[:2] for line in first.splitlines()]
    assert first_lang == "bash" and commands == [["make", "demo"], ["make", "test"]]
    assert "![The demo's HTML report](docs/img/demo_report.png)" in text
    assert "docs/scripts/report_screenshot.py" in text and (REPO / "docs/scripts/report_screenshot.py").is_file()
    assert any(lang == "text" and "thought->action" in body for lang, body in _blocks(text))
    assert len(text.splitlines()) <= 80, "the README is a first screen and an index: the long parts belong in docs/"


def test_the_three_ways_to_record_and_the_batch_audit_read_every_run_without_a_flush(tmp_path: Path) -> None:
    """Followed as written after the first example of docs/quickstart.md: each way's run is in the store when the
    next line reads it (traces are built on the recorder's thread; reads in the same process wait for them), and the
    batch audits every recorded run."""
    blocks = _blocks(QUICK_START.read_text(encoding="utf-8"))
    python = [body for lang, body in blocks if lang == "python"]
    three_ways = next(body for body in python if "AriadneMiddleware(store)" in body)
    batch = next(body for body in python if "audit_batch(store.list_traces()" in body)
    shown = next(body for lang, body in blocks if lang == "" and body.startswith("3 traces"))
    script = tmp_path / "three_ways.py"
    script.write_text(python[0] + three_ways + batch, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-W", "error", str(script)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-2:] == shown.splitlines()
    assert "flush" not in three_ways + batch and "synchronous" not in python[0] + three_ways + batch


def test_the_human_in_the_loop_web_server_in_concepts_runs_and_prints_what_it_shows(tmp_path: Path) -> None:
    """A new handler per request: the paused turn and its resume are one auditable trace (docs/concepts.md)."""
    recording = (REPO / "docs" / "concepts.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w*)\n(.*?)```", recording[recording.index("**Recording.**") :], flags=re.S)
    code, shown = blocks[0][1], blocks[1][1]
    assert blocks[0][0] == "python" and "AriadneCallbackHandler(store=store, graph=agent)" in code
    script = tmp_path / "hitl_server.py"
    script.write_text(code, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-W", "error", str(script)], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == shown


def test_every_relative_link_resolves_and_nothing_points_outside_the_repository() -> None:
    for document in [README, *DOCS]:
        text = document.read_text(encoding="utf-8")
        for target in _LINK.findall(text):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            path = (document.parent / target.split("#", 1)[0]).resolve()
            assert path.is_relative_to(REPO), f"{document.name} links outside the repository: {target}"
            assert path.exists(), f"{document.name} links to a missing file: {target}"
    assert "shared/DESIGN.md" not in README.read_text(encoding="utf-8")


def test_every_module_path_the_documents_name_exists() -> None:
    for document in [README, *DOCS]:
        for name in re.findall(r"`(ariadne_lc/[\w/.]*)`", document.read_text(encoding="utf-8")):
            assert (REPO / name).exists(), f"{document.name} names {name}, which does not exist"


def test_bypass_docs_and_the_whitebox_extra_are_linked_from_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    assert "(docs/bypass.md)" in text and "(docs/method.md)" in text
    assert "`whitebox`" in text and "ariadne-lc[whitebox]" in text


def test_every_reference_to_the_method_names_an_existing_section() -> None:
    anchors = set(_ANCHOR.findall((REPO / "docs" / "method.md").read_text(encoding="utf-8")))
    assert {"traces", "phi", "violation", "step-selection", "type-selection", "multi-step", "severity"} <= anchors
    sources = [*DOCS, README, *sorted((REPO / "ariadne_lc").rglob("*.py"))]
    references = 0
    for source in sources:
        text = source.read_text(encoding="utf-8")
        assert not re.search(r"\bformulation", text, flags=re.I), f"{source}: cites a formulation that does not ship"
        for anchor in _METHOD_REF.findall(text):
            references += 1
            assert anchor in anchors, f"{source}: docs/method.md#{anchor} does not exist"
    assert references >= 10


def test_the_command_table_says_which_commands_take_dry_run_and_max_calls() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    table = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    header = next(line for line in table.splitlines() if line.startswith("| option |"))
    names = [cell.strip(" `") for cell in header.strip("|").split("|")[1:]]
    assert set(names) <= set(commands)
    for option, flag in (("--dry-run", "--dry-run"), ("--max-calls N", "--max-calls")):
        row = next(line for line in table.splitlines() if line.startswith(f"| `{option}`"))
        cells = [cell.strip() for cell in row.strip("|").split("|")[1:]]
        for name, cell in zip(names, cells, strict=True):
            takes = any(flag in p.opts for p in commands[name].params)
            assert takes == cell.startswith("yes"), f"README says {name} {cell!r} for {flag}"


def test_the_deploy_serving_snippet_runs_as_written(tmp_path: Path) -> None:
    """docs/deploy.md's serving replica, with only its placeholders (the graph module, the database,
    the broker, the queue) pointed at this machine's services: it used to say ``PostgresSaver(DB)``,
    which raises ``TypeError: Invalid connection type``."""
    from tests.distributed.fleet import BROKER, database, delete_queue, require_services

    require_services()
    text = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    (code,) = [
        textwrap.dedent(body)
        for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)
        if lang == "python" and "OnlineAuditor(" in body
    ]
    queue = f"ariadne-test-{uuid.uuid4().hex[:10]}"
    with database() as url:
        for placeholder, value in (
            ("my_app.agent", "tests.distributed.graph"),
            ('"postgresql://app@db:5432/app"', repr(url)),
            ('"amqp://user:pass@rabbit:5672//"', repr(BROKER)),
            ('"ariadne-audits"', repr(queue)),
        ):
            assert placeholder in code, placeholder
            code = code.replace(placeholder, value)
        script = tmp_path / "serving.py"
        script.write_text(
            code
            + textwrap.dedent(
                """
                out = served.invoke({"messages": [("user", "How many apples are in 3 boxes of 4?")]},
                                    {"configurable": {"thread_id": "doc-1"}})
                assert "12" in out["messages"][-1].text, out
                assert type(online.jobs).__name__ == "PostgresJobStore"
                online.shutdown(30, drain=False)
                saver_pool.close()
                print("served")
                """
            ),
            encoding="utf-8",
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
        try:
            run = subprocess.run(
                [sys.executable, str(script)], capture_output=True, text=True, cwd=REPO, env=env, check=False
            )
        finally:
            delete_queue(queue)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith("served")


def test_the_online_sync_snippet_runs_and_prints_what_it_shows(tmp_path: Path) -> None:
    """docs/online.md's sync serving example, from an empty folder: it records, audits in the background, and reads
    the results before the shutdown closes the job store."""
    examples = _shown_examples((REPO / "docs" / "online.md").read_text(encoding="utf-8"))
    assert examples, "docs/online.md shows no example with its output"
    run_shown(examples[:1], tmp_path)


def test_the_cli_page_lists_every_option_of_every_command_as_help_gives_it() -> None:
    """docs/cli.md's "Every option" section is what docs/scripts/cli_reference.py makes of the commands: an option
    added, removed or re-worded without re-running the script fails here."""
    import runpy

    script = runpy.run_path(str(REPO / "docs" / "scripts" / "cli_reference.py"))
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert script["START"] in page, "run python docs/scripts/cli_reference.py"
    assert script["rewritten"](page) == page, "docs/cli.md differs from the commands: run docs/scripts/cli_reference.py"


def _python_blocks() -> list[tuple[str, int, str, str | None]]:
    """(document, block number, code, the output shown right after it or None) of every Python block."""
    out = []
    for path in (README, *DOCS):
        blocks = _blocks(path.read_text(encoding="utf-8"))
        for i, (lang, code) in enumerate(blocks):
            if lang == "python":
                after = blocks[i + 1] if i + 1 < len(blocks) else None
                shown = after[1] if after is not None and after[0] in ("", "text") else None
                out.append((path.relative_to(REPO).as_posix(), i, code, shown))
    return out


@pytest.mark.parametrize(
    ("document", "number", "code", "shown"), _python_blocks(), ids=lambda v: v if isinstance(v, str | int) else ""
)
def test_every_python_block_runs_alone_or_says_it_is_a_fragment(
    document: str, number: int, code: str, shown: str | None, tmp_path: Path
) -> None:
    """Each Python block of README.md and docs/ runs as it stands from an empty folder, printing what the page shows
    after it, or opens with ``# fragment: needs ...`` (what it needs: a server, your graph, the block above)."""
    if code.lstrip().startswith("# fragment:"):
        assert len(code.lstrip().splitlines()[0]) > len("# fragment: needs"), "say what the fragment needs"
        return
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-W", "error", str(script)], capture_output=True, text=True, cwd=tmp_path, check=False,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, f"{document} block {number}:\n{run.stderr}"
    if shown is not None:
        assert run.stdout == shown, f"{document} block {number} prints otherwise"


def test_the_quick_start_prints_the_excerpt_the_docs_show() -> None:
    """examples/quickstart.py (the first part of make demo) prints every line docs/quickstart.md shows of it."""
    page = QUICK_START.read_text(encoding="utf-8")
    section = _section(page, "## The scripted agents of `make demo`")
    (excerpt,) = [body for lang, body in _blocks(section) if lang == ""]
    run = subprocess.run(
        [sys.executable, str(REPO / "examples" / "quickstart.py")], capture_output=True, text=True, check=False,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    printed = {line.strip() for line in run.stdout.splitlines()}
    assert [line for line in excerpt.splitlines() if line.strip() not in printed] == []
