"""docs/harnesses.md's examples (a sub-agent called from a tool, a deep agent, a sub-agent behind ``task``, a swarm)
run as they stand, from an empty folder, and print what the page shows."""

from __future__ import annotations

from pathlib import Path

from tests.test_docs import REPO, _shown_examples, run_shown


def test_the_harness_examples_run_and_print_what_the_page_shows(tmp_path: Path) -> None:
    examples = _shown_examples((REPO / "docs" / "harnesses.md").read_text(encoding="utf-8"))
    assert len(examples) == 4, "docs/harnesses.md shows a sub-agent tool, a deep agent, a sub-agent and a swarm"
    run_shown(examples, tmp_path)
