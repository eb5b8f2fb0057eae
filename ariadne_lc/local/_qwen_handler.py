"""The llama.cpp server's chat handler for Qwen2.5 with native tool calls (runs inside the server process).

:func:`register` adds it to llama-cpp-python's registry under :data:`QWEN_CHAT_FORMAT` before the server starts
(:mod:`ariadne_lc.local._serve` calls it), so ``--chat_format ariadne-qwen-tools`` selects it. A request is rendered
by :func:`~ariadne_lc.local._qwen_format.render_prompt`, completed by ``Llama.create_completion`` (the same path, and
so the same reproducible prefix reuse, as every other request of this server), and read back by
:func:`~ariadne_lc.local._qwen_format.parse_completion` into an OpenAI chat completion: ``tool_calls`` with ids,
``finish_reason: "tool_calls"``, ``content`` the text before the first call (after the prefill, if any).

The name of a call is constrained to the tools listed: once the model has written ``{"name": "`` (bare or inside
``<tool_call>``), only tokens that keep the name a prefix of a listed tool's name (and then close it) can be sampled.
Without it, Qwen2.5-Coder-0.5B asked "How many rooms does a hotel with 12 floors of 9 rooms have?" with only a
``multiply`` tool called ``calculate_rooms`` in every one of 8 prompt variants tried (with and without a system
prompt, tool choice auto and required), and an agent looped on "not a valid tool" until its recursion limit. The
arguments are not constrained: a wrong argument reaches the tool, whose validation error the agent sees.

A streaming request gets the same reply, computed whole and sent as three chunks (the text, the calls, the finish
reason): tool-call arguments are only known once their block is complete, and a reply of a few dozen tokens gains
nothing from finer chunks.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ariadne_lc.local._qwen_format import QWEN_CHAT_FORMAT, QwenReply, parse_completion, render_prompt

__all__ = ["QWEN_STOP", "ToolNameConstraint", "qwen_tool_chat_handler", "register"]

QWEN_STOP = ("<|im_end|>", "<|endoftext|>")
"""Always stop here: the end of a turn (the server usually stops on the end-of-generation token already)."""

_COMPLETION_KEYS = (
    "temperature", "top_p", "top_k", "min_p", "typical_p", "seed", "max_tokens", "presence_penalty",
    "frequency_penalty", "repeat_penalty", "tfs_z", "mirostat_mode", "mirostat_tau", "mirostat_eta", "model",
    "logits_processor", "grammar", "logit_bias",
)  # fmt: skip


def _stops(stop: Any) -> list[str]:
    given = [] if stop is None else [stop] if isinstance(stop, str) else list(stop)
    return list(dict.fromkeys([*given, *QWEN_STOP]))


_NAME_OPEN = re.compile(r'\{\s*"name"\s*:\s*"([^"]*)\Z')


def _pieces(llama: Any) -> list[str]:
    """Every token's text (special tokens included), computed once per model."""
    cached: list[str] | None = getattr(llama, "_ariadne_pieces", None)
    if cached is None:
        cached = [
            llama.detokenize([token], special=True).decode("utf-8", errors="ignore") for token in range(llama.n_vocab())
        ]
        llama._ariadne_pieces = cached
    return cached


class ToolNameConstraint:
    """A logits processor: inside ``{"name": "...`` only the listed tools' names can be written.

    Args:
        llama: the model (for its vocabulary).
        names: the tools' names.
        n_prompt: prompt length in tokens (what follows is the completion).
        forced: text the prompt ends with that belongs to the completion (a forced ``<tool_call>`` opening).
    """

    def __init__(self, llama: Any, names: Sequence[str], n_prompt: int, forced: str) -> None:
        self._llama = llama
        self._targets = [name + '"' for name in names if name]
        self._n_prompt = n_prompt
        self._forced = forced
        self._allowed: dict[str, npt.NDArray[np.intp]] = {}

    def _allowed_after(self, partial: str) -> npt.NDArray[np.intp]:
        if partial not in self._allowed:
            rests = [target[len(partial) :] for target in self._targets if target.startswith(partial)]
            ids = [
                token
                for token, piece in enumerate(_pieces(self._llama))
                if piece and any(rest.startswith(piece) or piece.startswith(rest) for rest in rests)
            ]
            self._allowed[partial] = np.asarray(ids, dtype=np.intp)
        return self._allowed[partial]

    def __call__(self, input_ids: npt.NDArray[np.intc], scores: npt.NDArray[np.single]) -> npt.NDArray[np.single]:
        generated = [int(t) for t in input_ids[self._n_prompt :]]
        text = self._forced + self._llama.detokenize(generated, special=True).decode("utf-8", errors="ignore")
        match = _NAME_OPEN.search(text[-200:])
        if match is None or not self._targets:
            return scores
        allowed = self._allowed_after(match.group(1))
        if allowed.size == 0:  # the name already left every tool's name (written before the constraint applied)
            return scores
        masked = np.full_like(scores, -np.inf)
        masked[allowed] = scores[allowed]
        return masked


def _message(reply: QwenReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return message


def qwen_tool_chat_handler(
    *,
    llama: Any,
    messages: list[dict[str, Any]],
    functions: list[dict[str, Any]] | None = None,
    function_call: Any = None,
    tools: list[dict[str, Any]] | None = None,
    tool_choice: Any = None,
    stream: bool = False,
    stop: Any = None,
    **kwargs: Any,
) -> Any:
    """A ``LlamaChatCompletionHandler``: Qwen2.5's chat template with tool calls, prefill and forced calls.

    Legacy ``functions``/``function_call`` are read as ``tools``/``tool_choice``. ``response_format`` and
    ``logprobs`` are not supported and ignored (the agents of this project use neither).
    """
    if tools is None and functions:
        tools = [{"type": "function", "function": function} for function in functions]
    if tool_choice is None and function_call is not None:
        tool_choice = (
            function_call if isinstance(function_call, str) else {"type": "function", "function": function_call}
        )
    prompt = render_prompt(messages, tools, tool_choice)
    tokens = llama.tokenize(prompt.text.encode("utf-8"), add_bos=False, special=True)
    options = {key: kwargs[key] for key in _COMPLETION_KEYS if kwargs.get(key) is not None}
    if prompt.tool_names:
        from llama_cpp import LogitsProcessorList

        processors = LogitsProcessorList(list(options.get("logits_processor") or ()))
        processors.append(ToolNameConstraint(llama, prompt.tool_names, len(tokens), prompt.forced))
        options["logits_processor"] = processors
    completion = llama.create_completion(prompt=tokens, stream=False, stop=_stops(stop), **options)
    choice = completion["choices"][0]
    reply = parse_completion(prompt, choice["text"])
    finish = "tool_calls" if reply.tool_calls else choice.get("finish_reason")
    chat_id = "chat" + completion["id"]
    if stream:
        return _chunks(chat_id, completion["created"], completion["model"], reply, finish)
    return {
        "id": chat_id,
        "object": "chat.completion",
        "created": completion["created"],
        "model": completion["model"],
        "choices": [{"index": 0, "message": _message(reply), "logprobs": None, "finish_reason": finish}],
        "usage": completion["usage"],
    }


def _chunks(chat_id: str, created: int, model: str, reply: QwenReply, finish: Any) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish_reason: Any = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {"id": chat_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [choice]}  # fmt: skip

    yield chunk({"role": "assistant", "content": reply.content or ""})
    if reply.tool_calls:
        yield chunk({"tool_calls": [{"index": i, **call} for i, call in enumerate(reply.tool_calls)]})
    yield chunk({}, finish)


def register() -> None:
    """Register :func:`qwen_tool_chat_handler` as :data:`QWEN_CHAT_FORMAT` in llama-cpp-python (idempotent)."""
    chat_format: Any = importlib.import_module("llama_cpp.llama_chat_format")  # untyped use: our handler is duck-typed
    chat_format.LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(
        QWEN_CHAT_FORMAT, qwen_tool_chat_handler, overwrite=True
    )
