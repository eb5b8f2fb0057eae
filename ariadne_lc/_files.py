"""The one writer of every file: it creates the folders and never leaves half a file behind.

Every command that writes a file goes through here. :func:`write_text` (and :func:`write_json` on top of
it) writes to a temporary file in the target's own folder, flushes it to disk, then renames it over the
target with :func:`os.replace`, which is atomic on POSIX and Windows: a reader, or a crash, sees the old
file or the new one, never a mix. Each call uses its own temporary name, so two writers of one path do not
trample each other's temporary file. :class:`JsonlWriter` is for records streamed as they are computed
(one flushed line each), where a crash may cut the last line but never loses the lines before it.

A file that cannot be written raises :class:`ReportWriteError`, naming the path and the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from pydantic import BaseModel

from ariadne_lc.errors import AriadneError

__all__ = ["JsonlWriter", "ReportWriteError", "write_json", "write_text"]


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_read_umask()
"""The mode a plain ``open(path, "w")`` would give; ``mkstemp`` files start as 0600."""


class ReportWriteError(AriadneError, OSError):
    """A report file cannot be written (a folder in the way, no permission, disk full)."""

    def __init__(self, path: Path, error: OSError) -> None:
        reason = error.strerror or str(error)
        super().__init__(f"cannot write {path}: {reason}; choose another output path")
        self.path = path


def _folder(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportWriteError(path, error) from error


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically, creating its folders; return the path.

    Raises:
        ReportWriteError: the folder cannot be created or the file cannot be written.
    """
    target = Path(path)
    _folder(target)
    temporary: str | None = None
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, _FILE_MODE)
        os.replace(temporary, target)
        temporary = None
    except OSError as error:
        raise ReportWriteError(target, error) from error
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return target


def write_json(path: str | Path, document: BaseModel | dict[str, Any]) -> Path:
    """Write a pydantic model or a dict as indented JSON, atomically (see :func:`write_text`)."""
    text = document.model_dump_json(indent=2) if isinstance(document, BaseModel) else json.dumps(document, indent=2)
    return write_text(path, text + "\n")


class JsonlWriter:
    """Stream records to a JSON Lines file, one flushed line per record, creating its folders.

    Use as a context manager; the file is truncated when opened.

    Raises:
        ReportWriteError: the file cannot be opened or written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._handle: TextIO | None = None

    def __enter__(self) -> JsonlWriter:
        _folder(self.path)
        try:
            self._handle = self.path.open("w", encoding="utf-8")
        except OSError as error:
            raise ReportWriteError(self.path, error) from error
        return self

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        """Append one record as a line and flush it."""
        if self._handle is None:
            raise RuntimeError("JsonlWriter.write called outside its with-block")
        line = record.model_dump_json() if isinstance(record, BaseModel) else json.dumps(record)
        try:
            self._handle.write(line + "\n")
            self._handle.flush()
        except OSError as error:
            raise ReportWriteError(self.path, error) from error

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
