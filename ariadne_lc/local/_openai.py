"""Any OpenAI-compatible endpoint as the agent's or the critic's model.

The local llama.cpp server is only a default: OpenAI, vLLM, Ollama or LM Studio replace it by configuration,
because they all speak the same chat-completions API that ``ChatOpenAI`` speaks.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_openai import ChatOpenAI

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.slots import current_slot

__all__ = ["DUMMY_API_KEY", "OpenAICompatibleChat", "openai_compatible_chat_model"]

DUMMY_API_KEY = "sk-no-key-required"
"""Sent to self-hosted endpoints that ignore the key; the OpenAI client refuses to run without one."""


class OpenAICompatibleChat(ChatOpenAI):
    """``ChatOpenAI`` that also sends its token cap as ``max_tokens``, for self-hosted endpoints.

    langchain-openai sends the cap as ``max_completion_tokens`` only (OpenAI's newer name). llama.cpp's server
    (and other OpenAI-compatible servers) read ``max_tokens`` and ignore the other, so without this every call
    ran until the model stopped by itself: measured, a 5-token request to SmolLM2 generated 492 tokens.
    """

    slot_field: str | None = None
    """The request field that pins a call to a server slot, sent with the slot of the run being audited
    (:mod:`ariadne_lc.slots`): ``"id_slot"`` for llama.cpp's server (``--parallel N``), with ``cache_prompt``;
    ``None`` (the default): none sent, as OpenAI's API refuses unknown fields."""

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict[str, Any]:
        payload: dict[str, Any] = super()._get_request_payload(input_, stop=stop, **kwargs)
        cap = payload.get("max_completion_tokens")
        if cap is not None:
            payload.setdefault("max_tokens", cap)
        slot = current_slot()
        if self.slot_field is not None and slot is not None:
            payload[self.slot_field] = slot
            payload.setdefault("cache_prompt", True)
        return payload


def openai_compatible_chat_model(
    base_url: str | None,
    model: str,
    api_key: str | None = None,
    **kwargs: Any,
) -> ChatOpenAI:
    """Build a ``ChatOpenAI`` for any OpenAI-compatible endpoint, at temperature 0 unless overridden.

    Args:
        base_url: the endpoint's ``/v1`` URL (vLLM ``http://host:8000/v1``, Ollama ``http://host:11434/v1``);
            ``None`` means the official OpenAI API.
        model: the model name the endpoint serves.
        api_key: the key; default ``$OPENAI_API_KEY``. A self-hosted endpoint (``base_url`` given) without
            a key gets a placeholder, since such servers usually ignore it.
        **kwargs: further ``ChatOpenAI`` fields (``max_tokens``, ``timeout``, ...); ``temperature=None`` omits
            the temperature for models that reject it.

    Raises:
        ConfigurationError: ``base_url`` is ``None`` (OpenAI itself) and no key was given or found in the
            environment.

    Examples:
        >>> llm = openai_compatible_chat_model("http://127.0.0.1:11434/v1", "llama3.2")  # doctest: +SKIP
    """
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key is None:
        if base_url is None:
            raise ConfigurationError("the OpenAI API needs a key: pass api_key=... or set OPENAI_API_KEY")
        key = DUMMY_API_KEY
    params: dict[str, Any] = {"model": model, "api_key": key, "temperature": 0.0}
    if base_url is not None:
        params["base_url"] = base_url
    params.update(kwargs)
    # OpenAI itself refuses both caps at once; a self-hosted server needs max_tokens
    return ChatOpenAI(**params) if base_url is None else OpenAICompatibleChat(**params)
