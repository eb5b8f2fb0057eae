"""docs/harnesses.md's deep-agent example runs as it stands, from an empty folder, and prints what the page shows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_docs import REPO, _shown_examples


def test_the_deep_agent_example_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    examples = _shown_examples((REPO / "docs" / "harnesses.md").read_text(encoding="utf-8"))
    assert examples, "docs/harnesses.md shows no example with its output"
    for number, (code, shown) in enumerate(examples):
        script = tmp_path / f"harness_{number}.py"
        script.write_text(code, encoding="utf-8")
        run = subprocess.run(
            [sys.executable, "-W", "error", str(script)], capture_output=True, text=True, cwd=tmp_path, check=False
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout == shown
