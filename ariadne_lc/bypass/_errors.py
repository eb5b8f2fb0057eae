"""Errors of the CoT bypass monitor.

Every error a user of ``ariadne_lc.bypass`` can hit is one of these classes::

    AriadneError
    └── BypassError
        ├── WhiteboxNotInstalledError  (also MissingExtraError, ImportError)  torch / transformers missing
        ├── BypassInputError           (also ValueError)    a JSONL line is not a valid example
        ├── ExampleLayoutError         (also ValueError)    an example cannot be measured as laid out
        └── ModelLoadError             (also RuntimeError)  the model cannot be found or patched

Each also derives from the matching built-in, so callers who already catch ``ValueError`` or
``ImportError`` keep working, and from :class:`ariadne_lc.errors.AriadneError`, so ``except AriadneError``
catches them with the rest of the library.
"""

from __future__ import annotations

from pathlib import Path

from ariadne_lc.errors import AriadneError, MissingExtraError

__all__ = [
    "BypassError",
    "BypassInputError",
    "ExampleLayoutError",
    "ModelLoadError",
    "WhiteboxNotInstalledError",
]

WHITEBOX_EXTRA = "whitebox"


class BypassError(AriadneError):
    """Base class of every error raised by the CoT bypass monitor."""


class WhiteboxNotInstalledError(BypassError, MissingExtraError):
    """torch or transformers is missing: the white-box monitor needs the ``whitebox`` extra."""

    def __init__(self, missing: str) -> None:
        super().__init__("the CoT bypass monitor", WHITEBOX_EXTRA, f"{missing!r} is not installed")
        self.missing = missing


class BypassInputError(BypassError, ValueError):
    """A line of an examples JSONL file is not valid JSON or not a valid example.

    Attributes:
        path: The file that was read.
        line_number: 1-based number of the offending line.
    """

    def __init__(self, path: Path | str, line_number: int, reason: str) -> None:
        super().__init__(f"{path}:{line_number}: {reason}")
        self.path = Path(path)
        self.line_number = line_number
        self.reason = reason


class ExampleLayoutError(BypassError, ValueError):
    """An example cannot be measured: an empty piece, or too few positions for an equal-sized control."""


class ModelLoadError(BypassError, RuntimeError):
    """The model file is missing, or its decoder layers cannot be found for patching."""
