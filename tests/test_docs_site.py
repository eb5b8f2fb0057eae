"""The documentation site builds as `make docs` builds it: MkDocs, strict, so that a broken link or anchor between
pages, or a page under docs/ that the nav in mkdocs.yml leaves out, fails here and not on a reader's screen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "mkdocs.yml"


def _nav_pages(nav: Any) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(value) for value in nav.values()))
    return set()


def test_the_site_builds_strict_with_no_warning(tmp_path: Path) -> None:
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "WARNING" not in output, output
    assert (site / "index.html").is_file() and (site / "img" / "demo_report.png").is_file()


def test_every_page_is_in_the_nav_and_every_check_is_a_warning() -> None:
    """The build only fails on what mkdocs.yml makes a warning: these stay warnings, and the nav names every page."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    assert config["strict"] is True and config["docs_dir"] == "docs"
    pages = {str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md")}
    assert _nav_pages(config["nav"]) == pages
    validation = config["validation"]
    assert set(validation["nav"].values()) == {"warn"} and set(validation["links"].values()) == {"warn"}
    assert {"omitted_files", "not_found"} <= set(validation["nav"]) and {"not_found", "anchors"} <= set(
        validation["links"]
    )
    assert not config.get("plugins"), "a plugin may need the network at build time; the build must run offline"
