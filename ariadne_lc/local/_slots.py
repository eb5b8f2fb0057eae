"""Several local servers as the slots of one: a run of an audit batch pinned to one process (:mod:`ariadne_lc.slots`).

llama-cpp-python's server keeps one KV cache and answers one request at a time (a lock around its model), so it has
no slots of its own as llama.cpp's ``--parallel`` has. :class:`LocalServerSlots` starts ``slots`` servers of the
same model instead (the machine's cores shared between them) and :meth:`~LocalServerSlots.chat_model` gives a chat
model that sends each call to the server of the slot its run is pinned to: each run's replays then find the run's
prefix in their own server's cache while the other runs go on in theirs. Outside a pinned run, calls go to the
first server.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any, Self

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import Field

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.local._openai import OpenAICompatibleChat
from ariadne_lc.local._server import LocalModelServer
from ariadne_lc.slots import current_slot

__all__ = ["LocalServerSlots", "SlotRoutedChat"]


class SlotRoutedChat(OpenAICompatibleChat):
    """An OpenAI-compatible chat model over several servers of one model: each call goes to the server of the slot
    its run is pinned to (:func:`~ariadne_lc.slots.current_slot`, modulo the servers; the first outside a run)."""

    routes: list[OpenAICompatibleChat] = Field(default_factory=list, exclude=True)
    """One chat model per server, in slot order."""

    def _route(self) -> OpenAICompatibleChat:
        if not self.routes:
            raise ConfigurationError("a SlotRoutedChat needs one chat model per server (routes=[...])")
        return self.routes[(current_slot() or 0) % len(self.routes)]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._route()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await self._route()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        return self._route()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)


class LocalServerSlots:
    """``slots`` :class:`~ariadne_lc.local.LocalModelServer` processes of one model, the machine's cores shared
    between them (``n_threads`` each: the cores over the slots, at least 1), started and stopped together.

    Args:
        slots: servers to run (1: one server, as :class:`~ariadne_lc.local.LocalModelServer` alone).
        model: a key of :data:`~ariadne_lc.local.LOCAL_MODELS`.
        **kwargs: any other argument of :meth:`LocalModelServer.for_model` (``n_ctx``, ``env``, ...).

    Examples:
        >>> with LocalServerSlots(2, "qwen2.5-coder-0.5b") as servers:  # doctest: +SKIP
        ...     graph = create_agent(servers.chat_model(), tools, checkpointer=saver)
        ...     Auditor(graph).audit_batch(traces, max_concurrency=2)  # each run on one server
    """

    def __init__(self, slots: int, model: str = "smollm2", **kwargs: Any) -> None:
        if slots < 1:
            raise ConfigurationError(f"slots must be at least 1, got {slots}")
        kwargs.setdefault("n_threads", max(1, (os.cpu_count() or 1) // slots))
        self.servers = [LocalModelServer.for_model(model, **kwargs) for _ in range(slots)]

    def start(self) -> Self:
        try:
            for server in self.servers:
                server.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for server in self.servers:
            server.stop()

    def chat_model(self, **kwargs: Any) -> SlotRoutedChat:
        """A chat model over every server (each call to its run's slot); ``kwargs`` as for
        :meth:`LocalModelServer.chat_model`."""
        routes = [OpenAICompatibleChat(**server.chat_params(**kwargs)) for server in self.servers]
        return SlotRoutedChat(**self.servers[0].chat_params(**kwargs), routes=routes)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
