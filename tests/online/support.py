"""Agents, models and traces shared by the online-audit tests (and the crash worker script)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from ariadne_lc import Trace
from ariadne_lc.semconv import ARIADNE_REPLAY
from ariadne_lc.testing import ScriptedChatModel, faithful_arithmetic_model


class SlowReplayModel(ScriptedChatModel):
    """The faithful scripted model, instant for the live agent, slow (or failing) inside audit replays.

    A replay's model calls carry the run metadata ``ariadne.replay``; live runs do not. So the agent
    under test answers at once while every audit takes ``replay_delay`` seconds, and the first
    ``fail_replays`` replay calls raise, as an overloaded provider would.
    """

    replay_delay: float = 0.0
    fail_replays: int = 0
    _failed: int = PrivateAttr(default=0)
    _fail_lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    replay_calls: int = 0

    def _in_replay(self, run_manager: Any) -> bool:
        return bool(run_manager is not None and run_manager.metadata.get(ARIADNE_REPLAY))

    def _maybe_fail(self) -> None:
        with self._fail_lock:
            self.replay_calls += 1
            if self._failed < self.fail_replays:
                self._failed += 1
                raise RuntimeError(f"model overloaded (failure {self._failed} of {self.fail_replays})")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self._in_replay(run_manager):
            time.sleep(self.replay_delay)
            self._maybe_fail()
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self._in_replay(run_manager):
            await asyncio.sleep(self.replay_delay)
            self._maybe_fail()
        return super()._generate(messages, stop, None, **kwargs)


def slow_model(replay_delay: float = 0.0, fail_replays: int = 0) -> SlowReplayModel:
    return SlowReplayModel(
        script=faithful_arithmetic_model().script, replay_delay=replay_delay, fail_replays=fail_replays
    )


def question(i: int) -> str:
    return f"How many apples are in {i % 9 + 2} boxes of {i % 7 + 3}?"


def synthetic_trace(trace_id: str, **update: Any) -> Trace:
    """A finished trace that is never replayed (for sampling and queue tests)."""
    fields: dict[str, Any] = {"trace_id": trace_id, "thread_id": f"thread-{trace_id}", "final_answer": "42"}
    return Trace(**(fields | update))
