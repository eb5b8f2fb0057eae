"""Two trees measured side by side: a git worktree of a base commit ("before") and this tree ("after").

A benchmark's measuring code runs in a subprocess whose ``PYTHONPATH`` is one tree, so that both sides run the same
script against their own ``ariadne_lc``; the driver alternates the sides round by round, so that a machine's drift
falls on both. The measuring process prints one JSON line last (its result), with ``ariadne_lc``: the package it
imported (checked here, so that a ``PYTHONPATH`` that did not take is an error, not a silent "no difference").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

__all__ = ["ROOT", "measure_side", "worktree"]


def worktree(base: str) -> Path:
    """A worktree of ``base`` under the temporary directory, made on first use."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{base}^{{commit}}"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    path = Path(tempfile.gettempdir()) / f"ariadne-side-{commit[:12]}"
    if not (path / "ariadne_lc").is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), commit], check=True)
    return path


def measure_side(script: str, root: Path, arguments: list[str]) -> dict[str, Any]:
    """Run ``script --measure *arguments`` against the tree at ``root``; its last printed line, as JSON."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, script, "--measure", *arguments],
        env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"the measure of {root} failed:\n{done.stderr[-3000:]}")
    measured: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(measured["ariadne_lc"]) != root / "ariadne_lc":
        raise SystemExit(f"measured {measured['ariadne_lc']}, not {root}: PYTHONPATH did not take")
    return measured
