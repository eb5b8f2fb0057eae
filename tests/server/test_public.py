"""The ``ariadne_lc.server`` surface: complete, importable, and the SDK loaded only when used."""

from __future__ import annotations

import subprocess
import sys
from types import ModuleType

import ariadne_lc.server


def test_all_is_complete_and_importable() -> None:
    names = ariadne_lc.server.__all__  # ruff (RUF022) keeps it in isort order
    public = {n for n, v in vars(ariadne_lc.server).items() if not n.startswith("_") and not isinstance(v, ModuleType)}
    assert len(set(names)) == len(names) and public == set(names)
    for name in names:
        assert getattr(ariadne_lc.server, name) is not None


def test_importing_the_package_does_not_load_the_sdk() -> None:
    code = "import sys, ariadne_lc, ariadne_lc.server; print('langgraph_sdk' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
