"""The check that turns a missing ``whitebox`` extra into a named error at the moment it matters.

``import ariadne_lc.bypass`` must work without torch (records, JSONL parsing and span export are
useful on their own), so the heavy imports happen only when a model is loaded or measured.
"""

from __future__ import annotations

import importlib

from ariadne_lc.bypass._errors import WhiteboxNotInstalledError

__all__ = ["require_whitebox"]

_REQUIRED = ("torch", "transformers")


def require_whitebox() -> None:
    """Import torch and transformers, or raise ``WhiteboxNotInstalledError`` naming the extra."""
    for name in _REQUIRED:
        try:
            importlib.import_module(name)
        except ImportError as error:
            raise WhiteboxNotInstalledError(name) from error
