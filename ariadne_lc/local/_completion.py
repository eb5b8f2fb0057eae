"""A base (not instruction-tuned) model behind an OpenAI-compatible ``/v1/completions`` endpoint, as a chat model.

Why: a base model such as Gemma 3 270M has no chat template and is not instruction-tuned. Sent through a chat
template it echoes the prompt and produces garbage; given a plain-text transcript to continue (few-shot
``Question: ... / Thought: ...`` lines) it completes it sensibly. Every agent of this project builds its prompt as
a list of chat messages (system instructions, worked examples as alternating turns, the conversation so far), so
this adapter renders that list as one transcript, in order, each message on its own lines, and asks the endpoint to
continue it. The agents, the recorder and the replayer then treat it like any other ``BaseChatModel``: the natural
ReAct agent runs unchanged on a base model, in its own prompt format.

Call keywords ``stop`` and ``extra_body`` (e.g. ``{"grammar": ...}`` for the llama.cpp server) pass through, as
with ``ChatOpenAI``. One request builder and one response reader serve the sync and async paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from ariadne_lc.local._errors import LocalModelServerError

__all__ = ["DEFAULT_COMPLETION_STOP", "CompletionChatModel", "render_transcript"]

DEFAULT_COMPLETION_STOP: tuple[str, ...] = ("\nQuestion:",)
"""Always sent: a base model that finished its turn goes on to invent the next question."""


def render_transcript(messages: Sequence[BaseMessage]) -> str:
    """The chat as one text to continue: system text, a blank line, then every turn on its own line(s).

    Roles are not labelled: the agents' prompts already carry their own labels (``Question:``, ``Thought:``,
    ``Observation:``), and a base model continues such a transcript best when it reads like a document.

    Examples:
        >>> from langchain_core.messages import HumanMessage
        >>> render_transcript([SystemMessage("Answer."), HumanMessage("Question: 2 + 2?"), AIMessage("4")])
        'Answer.\\n\\nQuestion: 2 + 2?\\n4\\n'
    """
    parts: list[str] = []
    for message in messages:
        text = message.text.strip("\n")
        if isinstance(message, SystemMessage):
            parts.append(text + "\n\n")
        else:
            parts.append(text + "\n")
    return "".join(parts)


class CompletionChatModel(BaseChatModel):
    """Drive a base model through ``POST {base_url}/completions`` with a rendered transcript.

    Args:
        base_url: the endpoint's ``/v1`` URL (the llama.cpp server's ``base_url``).
        model: the model name the endpoint serves.
        max_tokens: output token limit per call.
        temperature: sampling temperature (0: greedy, reproducible).
        timeout: seconds per request.
        stop: stop sequences sent on every call, besides the call's own.

    Raises:
        LocalModelServerError: the endpoint answered with an HTTP error or a reply without text (on call).
    """

    base_url: str
    model: str
    max_tokens: int = 128
    temperature: float = 0.0
    timeout: float = 120.0
    stop: tuple[str, ...] = Field(default=DEFAULT_COMPLETION_STOP)

    @property
    def _llm_type(self) -> str:
        return "ariadne-completion"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": self.model, "max_tokens": self.max_tokens}

    def _payload(
        self, messages: Sequence[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        extra_stop = kwargs.pop("stop", None) or ()
        stops = list(dict.fromkeys([*self.stop, *(stop or ()), *extra_stop]))
        payload: dict[str, Any] = {
            "model": self.model,
            "prompt": render_transcript(messages),
            "max_tokens": kwargs.pop("max_tokens", self.max_tokens),
            "temperature": kwargs.pop("temperature", self.temperature),
        }
        if stops:
            payload["stop"] = stops
        payload.update(kwargs.pop("extra_body", None) or {})
        return payload

    def _url(self) -> str:
        return self.base_url.rstrip("/") + "/completions"

    @staticmethod
    def _result(response: httpx.Response) -> ChatResult:
        if response.status_code >= 400:
            raise LocalModelServerError(
                f"the completion endpoint answered HTTP {response.status_code}: {response.text[:300]}"
            )
        body = response.json()
        try:
            text = body["choices"][0]["text"]
        except (KeyError, IndexError, TypeError):
            raise LocalModelServerError(f"the completion endpoint's reply has no text: {str(body)[:300]}") from None
        usage = body.get("usage") or {}
        message = AIMessage(
            content=str(text),
            response_metadata={"finish_reason": body["choices"][0].get("finish_reason"), "model": body.get("model")},
            usage_metadata={
                "input_tokens": int(usage.get("prompt_tokens", 0)),
                "output_tokens": int(usage.get("completion_tokens", 0)),
                "total_tokens": int(usage.get("total_tokens", 0)),
            },
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = self._payload(messages, stop, dict(kwargs))
        # Loopback must never go through an HTTP proxy taken from the environment.
        with httpx.Client(timeout=self.timeout, trust_env=False) as client:
            return self._result(client.post(self._url(), json=payload))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = self._payload(messages, stop, dict(kwargs))
        async with httpx.AsyncClient(timeout=self.timeout, trust_env=False) as client:
            return self._result(await client.post(self._url(), json=payload))
