"""The documents a user follows: the README quick start runs and prints what it shows, every link resolves,
every reference to the method points at a section that exists, and the command table matches the commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import typer

from ariadne_lc.cli import app

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_METHOD_REF = re.compile(r"(?:docs/)?method\.md#([a-z0-9-]+)")
_ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def test_the_quick_start_runs_and_prints_what_the_readme_shows(tmp_path: Path) -> None:
    quick_start = _section(README.read_text(encoding="utf-8"), "## Quick start")
    blocks = re.findall(r"```(\w*)\n(.*?)```", quick_start, flags=re.S)
    (code,) = [body for lang, body in blocks if lang == "python"][:1]
    shown = next(body for lang, body in blocks if lang == "")
    script = tmp_path / "quick_start.py"
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
    table = _section(README.read_text(encoding="utf-8"), "## The `ariadne-lc` command")
    header = next(line for line in table.splitlines() if line.startswith("| option |"))
    names = [cell.strip(" `") for cell in header.strip("|").split("|")[1:]]
    assert set(names) <= set(commands)
    for option, flag in (("--dry-run", "--dry-run"), ("--max-calls N", "--max-calls")):
        row = next(line for line in table.splitlines() if line.startswith(f"| `{option}`"))
        cells = [cell.strip() for cell in row.strip("|").split("|")[1:]]
        for name, cell in zip(names, cells, strict=True):
            takes = any(flag in p.opts for p in commands[name].params)
            assert takes == cell.startswith("yes"), f"README says {name} {cell!r} for {flag}"
