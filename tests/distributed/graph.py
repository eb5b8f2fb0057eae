"""The agent the distributed tests serve and their worker processes audit (imported by path).

``ariadne-lc worker --graph tests.distributed.graph:build_graph`` calls :func:`build_graph` with the
worker's PostgresSaver. Replays (model calls carrying ``ariadne.replay`` metadata) sleep
``ARIADNE_TEST_REPLAY_DELAY`` seconds, so an audit takes a known time while the live agent answers at
once; ``ARIADNE_TEST_FAIL_REPLAYS`` makes the first replay calls of each worker process raise.
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent

from ariadne_lc.testing import calculator
from tests.online.support import slow_model

__all__ = ["build_graph", "question"]


def build_graph(checkpointer: Any) -> Any:
    """A ``create_agent`` ReAct agent on the faithful scripted model, with ``checkpointer``."""
    delay = float(os.environ.get("ARIADNE_TEST_REPLAY_DELAY", "0"))
    failures = int(os.environ.get("ARIADNE_TEST_FAIL_REPLAYS", "0"))
    return create_agent(slow_model(replay_delay=delay, fail_replays=failures), [calculator], checkpointer=checkpointer)


def question(i: int) -> str:
    return f"How many apples are in {i % 9 + 2} boxes of {i % 7 + 3}?"
