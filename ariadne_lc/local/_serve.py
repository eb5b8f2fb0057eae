"""The server process: llama-cpp-python's OpenAI-compatible server, with prompt-prefix reuse made reproducible.

llama-cpp-python keeps the previous request's tokens in the KV cache and evaluates only the part of a new prompt
that differs. The result is not bit-identical to evaluating the whole prompt: the cached prefix was computed in
other batches (a prompt's last token alone, a reply one token at a time), and at temperature 0 a near-tie between
two tokens can go the other way. Seen on the calibration agents: an identical prompt answered "12" right after a
``think`` call and "10" when sent again. A replay must reproduce the recording when nothing changed (the ``rerun``
control), so the reply to a request may depend on nothing but the request. ``ARIADNE_LLAMA_PREFIX_CACHE`` in the
server's environment chooses how:

- unset or ``aligned`` (the default): a prompt is always evaluated in chunks of :data:`ALIGNED_CHUNK` tokens
  (the server's ``--n_batch``) starting at position 0, and a request reuses a cached KV state only for whole
  chunks of an earlier *prompt* (never the tokens a reply generated one at a time): the live cache, or one of
  :data:`ALIGNED_STATES` saved copies, so that the calibration's few-shot prompts (thought, bare answer, reader)
  each find their own prefix again after the others. Every position is then computed by the same operations on
  the same data as from an empty cache, so the reply is the same whatever came before.
- ``0``: every request evaluates its whole prompt from an empty cache (the reference the others are checked
  against; about 2.8 times slower per calibration call, measured).
- ``1``: llama.cpp's own reuse (the reply depends on the request before: 2 of 8 calibration requests answered
  differently after different predecessors, measured).

``benchmarks/llama_determinism.py`` measures the three modes side by side.

The server's request model is widened to accept an assistant message whose ``content`` is ``null`` (OpenAI's API
allows it, and langchain-openai sends it for every tool-calling turn without text; llama-cpp-python 0.3.36 answered
HTTP 500, so the second turn of any tool-calling agent failed). Before the server starts, the Qwen2.5 tool-calling
chat handler is registered
(``--chat_format ariadne-qwen-tools``, :mod:`ariadne_lc.local._qwen_handler`); it completes through the same
``Llama.generate``, so the prefix reuse chosen here applies to it too.
The server exits when the process that started it is gone (:data:`PARENT_PID_ENV`): a parent stopped by SIGTERM or
SIGKILL runs no ``finally`` and no ``atexit``, and its server would otherwise hold a core and a port for ever (seen:
a calibration stopped with ``kill`` left its server running).
Run as ``python -m ariadne_lc.local._serve <server args>``.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

PREFIX_CACHE_ENV = "ARIADNE_LLAMA_PREFIX_CACHE"
"""``aligned`` (default), ``0`` (whole prompts) or ``1`` (llama.cpp's own reuse, not reproducible)."""

ALIGNED_STATES = 6
"""Prompt prefixes kept in ``aligned`` mode besides the live cache (a copy of the KV cache each, a few MB for the
135M model): the calibration alternates between a few few-shot prompts (thought, bare answer, reader), and each
finds its own prefix again after the others."""

PARENT_PID_ENV = "ARIADNE_SERVER_PARENT_PID"
"""The pid of the process that started the server (set by :class:`~ariadne_lc.local.LocalModelServer`); the server
exits within :data:`PARENT_CHECK_SECONDS` once that process is gone."""

PARENT_CHECK_SECONDS = 1.0
"""How often the server checks that its parent is alive."""

ALIGNED_CHUNK = 32
"""Prompt chunk in ``aligned`` mode (the server's ``--n_batch``): reuse is cut back to a multiple of it, so a
smaller chunk reuses more; a larger one evaluates a fresh prompt in fewer, larger batches."""


def _common_prefix(cached: Sequence[int], tokens: Sequence[int]) -> int:
    n = 0
    for a, b in zip(cached, tokens, strict=False):
        if a != b:
            break
        n += 1
    return n


def _llama() -> Any:
    """llama-cpp-python's ``Llama`` class (untyped here: its methods are replaced below)."""
    from llama_cpp import Llama

    return Llama


def _from_scratch() -> None:
    Llama = _llama()
    generate = Llama.generate

    def whole_prompt(self: Any, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        self.reset()  # n_tokens = 0: no cached prefix is reused, the KV cache is rewritten from position 0
        yield from generate(self, tokens, *args, **kwargs)

    Llama.generate = whole_prompt


def _aligned_reuse() -> None:
    import llama_cpp

    Llama = _llama()
    generate = Llama.generate

    def save(self: Any) -> bytes:
        size = llama_cpp.llama_state_get_size(self._ctx.ctx)
        buffer = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size)
        return bytes(buffer)[:n]

    def restore(self: Any, data: bytes) -> bool:
        buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        return bool(llama_cpp.llama_state_set_data(self._ctx.ctx, buffer, len(data)) == len(data))

    def aligned(self: Any, tokens: Sequence[int], *args: Any, **kwargs: Any) -> Iterator[int]:
        tokens = list(tokens)
        chunk: int = self.n_batch
        saved: OrderedDict[tuple[int, ...], bytes] = self.__dict__.setdefault("_ariadne_saved", OrderedDict())
        live: tuple[int, ...] = getattr(self, "_ariadne_live", ())

        def usable(prefix: Sequence[int]) -> int:  # whole chunks shared, at least one token left to evaluate
            return min(_common_prefix(prefix, tokens), len(tokens) - 1) // chunk * chunk

        keep = usable(live)
        if live and keep < len(live) and live not in saved:  # about to be overwritten: keep a copy
            saved[live] = save(self)
            while len(saved) > ALIGNED_STATES:
                saved.popitem(last=False)
        best = max(saved, key=usable, default=())
        if usable(best) > keep:
            keep = usable(best) if restore(self, saved[best]) else 0
            saved.move_to_end(best)
        self._ariadne_live = tuple(tokens[: len(tokens) // chunk * chunk])
        if keep > 0 and self._ctx.kv_cache_seq_rm(-1, keep, -1):
            self.input_ids[:keep] = tokens[:keep]
            self.n_tokens = keep
            self._requires_eval = True
            kwargs["reset"] = False  # eval() continues at position `keep`, in chunks of n_batch from there
            yield from generate(self, tokens[keep:], *args, **kwargs)
            return
        self.reset()
        yield from generate(self, tokens, *args, **kwargs)

    Llama.generate = aligned


def _accept_null_assistant_content() -> None:
    """Let ``{"role": "assistant", "content": null, "tool_calls": [...]}`` through the server's request validation.

    Must run before ``llama_cpp.server`` is imported: pydantic reads the TypedDict's annotations when it builds the
    request model.
    """
    from typing import NotRequired

    types: Any = importlib.import_module("llama_cpp.llama_types")
    types.ChatCompletionRequestAssistantMessage.__annotations__["content"] = NotRequired[str | None]


def _exit_with_parent() -> None:
    """Exit when the parent named in :data:`PARENT_PID_ENV` is gone (the server is then re-parented: its parent pid
    changes). Not set (the server run by hand): nothing is watched."""
    named = os.environ.get(PARENT_PID_ENV, "")
    if not named.isdigit():
        return
    parent = int(named)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)  # nothing to flush: every reply was sent, and no one is left to ask for another

    threading.Thread(target=watch, name="ariadne-parent-watch", daemon=True).start()


def main() -> None:
    _exit_with_parent()
    mode = os.environ.get(PREFIX_CACHE_ENV, "") or "aligned"
    if mode == "0":
        _from_scratch()
    elif mode != "1":
        _aligned_reuse()
        if "--n_batch" not in sys.argv:
            sys.argv += ["--n_batch", str(ALIGNED_CHUNK)]
    from ariadne_lc.local._qwen_handler import register

    _accept_null_assistant_content()
    register()
    server: Any = importlib.import_module("llama_cpp.server.__main__")
    server.main()


if __name__ == "__main__":
    main()
