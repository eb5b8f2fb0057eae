"""The offline models served by llama.cpp on loopback: SmolLM2-135M-Instruct (the default), Gemma 3 270M (base)
and Qwen2.5-Coder-0.5B-Instruct (native tool calls: ``LocalModelServer.for_model("qwen2.5-coder-0.5b")``).

Nothing here imports ``llama_cpp``: the model runs in a child process (``python -m llama_cpp.server``) and is
reached through ``langchain_openai.ChatOpenAI``, the same way a user reaches OpenAI, vLLM or Ollama. Optional
packages are only looked up, so importing this module works without them; using the server without them raises
:class:`LocalModelUnavailableError` with the install commands.

Examples:
    >>> from ariadne_lc.local import LocalModelServer
    >>> with LocalModelServer() as server:  # doctest: +SKIP
    ...     llm = server.chat_model()
"""

from ariadne_lc.local._chunked import ChunkedModel
from ariadne_lc.local._completion import DEFAULT_COMPLETION_STOP, CompletionChatModel, render_transcript
from ariadne_lc.local._errors import (
    INSTALL_HINT,
    LLAMA_CPP_CMAKE_ARGS,
    LocalModelServerError,
    LocalModelServerTimeoutError,
    LocalModelUnavailableError,
    ModelIntegrityError,
    ModelPartMissingError,
)
from ariadne_lc.local._model_path import (
    DEFAULT_MODEL_FILE,
    GEMMA_DISTRIBUTION,
    GEMMA_MODEL_ALIAS,
    LOCAL_MODELS,
    QWEN_MODEL_ALIAS,
    QWEN_MODELS,
    LocalModelSpec,
    default_model_path,
    gemma_model_path,
    local_model_path,
    qwen_model_path,
)
from ariadne_lc.local._openai import OpenAICompatibleChat, openai_compatible_chat_model
from ariadne_lc.local._qwen_format import QWEN_CHAT_FORMAT
from ariadne_lc.local._server import (
    DEFAULT_CHAT_MAX_TOKENS,
    DEFAULT_MODEL_ALIAS,
    DEFAULT_N_CTX,
    DEFAULT_N_THREADS,
    DEFAULT_SERVER_ENV,
    DEFAULT_STARTUP_TIMEOUT,
    LocalModelServer,
)
from ariadne_lc.local._slots import LocalServerSlots, SlotRoutedChat

__all__ = [
    "DEFAULT_CHAT_MAX_TOKENS",
    "DEFAULT_COMPLETION_STOP",
    "DEFAULT_MODEL_ALIAS",
    "DEFAULT_MODEL_FILE",
    "DEFAULT_N_CTX",
    "DEFAULT_N_THREADS",
    "DEFAULT_SERVER_ENV",
    "DEFAULT_STARTUP_TIMEOUT",
    "GEMMA_DISTRIBUTION",
    "GEMMA_MODEL_ALIAS",
    "INSTALL_HINT",
    "LLAMA_CPP_CMAKE_ARGS",
    "LOCAL_MODELS",
    "QWEN_CHAT_FORMAT",
    "QWEN_MODELS",
    "QWEN_MODEL_ALIAS",
    "ChunkedModel",
    "CompletionChatModel",
    "LocalModelServer",
    "LocalModelServerError",
    "LocalModelServerTimeoutError",
    "LocalModelSpec",
    "LocalModelUnavailableError",
    "LocalServerSlots",
    "ModelIntegrityError",
    "ModelPartMissingError",
    "OpenAICompatibleChat",
    "SlotRoutedChat",
    "default_model_path",
    "gemma_model_path",
    "local_model_path",
    "openai_compatible_chat_model",
    "qwen_model_path",
    "render_transcript",
]
