"""What every command shares: the model endpoint, one-line errors, and writing outputs safely."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar

import httpx
import typer
from langchain_core.language_models import BaseChatModel
from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from ariadne_lc.errors import AriadneError

__all__ = [
    "EXIT_ERROR",
    "EXIT_GATE",
    "console",
    "err_console",
    "fail",
    "model_endpoint",
    "one_line_errors",
]

EXIT_GATE = 1
"""A ``--fail-above`` gate tripped: the run worked, the numbers are over the line."""
EXIT_ERROR = 2
"""Bad input or an unusable environment."""


class _Console(Console):
    """rich's console, 120 columns wide rather than 80 when its stream is no terminal (a log, CI) and ``COLUMNS`` is
    not set; ``COLUMNS`` and the terminal's width are read at each print, so that ``COLUMNS=100`` set after import
    (a test's CliRunner) applies."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and "COLUMNS" not in os.environ and not self.file.isatty():
            return ConsoleDimensions(120, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


console: Console = _Console()
err_console: Console = _Console(stderr=True)

P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on one line and exit with :data:`EXIT_ERROR`."""
    err_console.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_ERROR)


def output_directory(path: Path) -> Path:
    """``--output``: a directory (made when missing); an existing file is a one-line error, never a traceback."""
    if path.exists() and not path.is_dir():
        fail(f"--output {path} is a file: name a directory (results and reports are written into it)")
    return path


def at_least_one(option: str, value: int) -> int:
    """``value`` when it is at least 1; else a one-line error naming the option."""
    if value < 1:
        fail(f"{option} must be at least 1, got {value}")
    return value


def one_line_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn the errors a user can cause into one line and a non-zero exit, not a traceback."""

    @wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (AriadneError, FileNotFoundError, ValueError, ImportError) as exc:
            fail(f"{exc}")

    return wrapper


def check_endpoint(base_url: str, api_key: str | None, timeout: float = 5.0) -> None:
    """Fail fast, in one line, when an OpenAI-compatible endpoint does not answer ``GET /models``."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        fail(f"cannot reach the model endpoint {base_url}: {type(exc).__name__}: {exc}")
    if response.status_code in (401, 403):
        fail(f"the model endpoint {base_url} refused the API key (HTTP {response.status_code}); set OPENAI_API_KEY")
    if response.status_code >= 400:
        fail(f"the model endpoint {base_url} answered HTTP {response.status_code} to GET /models")


@contextmanager
def model_endpoint(
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    **model_kwargs: Any,
) -> Iterator[BaseChatModel]:
    """A chat model: the given OpenAI-compatible endpoint, or the local llama.cpp server when none is given."""
    from ariadne_lc.local import LocalModelServer, openai_compatible_chat_model

    key = api_key or os.environ.get("OPENAI_API_KEY")
    if base_url is not None:
        check_endpoint(base_url, key)
        yield openai_compatible_chat_model(base_url, model or "default", key, **model_kwargs)
        return
    with console.status("starting the local model (llama.cpp, SmolLM2-135M-Instruct)..."):
        server = LocalModelServer().start()
    try:
        console.print(f"local model ready at {server.base_url} in {server.startup_seconds or 0:.1f} s")
        yield server.chat_model(**model_kwargs)
    finally:
        server.stop()
