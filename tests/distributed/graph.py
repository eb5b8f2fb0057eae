"""The agent the distributed tests serve and their worker processes audit (imported by path).

``ariadne-lc worker --graph tests.distributed.graph:build_graph`` calls :func:`build_graph` with the
worker's PostgresSaver. Replays (model calls carrying ``ariadne.replay`` metadata) sleep
``ARIADNE_TEST_REPLAY_DELAY`` seconds, so an audit takes a known time while the live agent answers at
once; ``ARIADNE_TEST_FAIL_REPLAYS`` makes the first replay calls of each worker process raise.
``ARIADNE_TEST_BLOCK_CONSUMER`` names a file: while it exists, a worker's consumer blocks as soon as
it receives a task (its main thread stays in Celery's ``task_received`` signal), as a consumer stuck
after a broker restart does, while the rest of the process (heartbeats) goes on.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent

from ariadne_lc.testing import calculator
from tests.online.support import slow_model

__all__ = ["build_graph", "question"]

_blocking: list[str] = []


def _block_consumer_while(flag: Path) -> None:
    from celery import signals

    def received(**_: Any) -> None:
        while flag.exists():
            time.sleep(0.1)

    signals.task_received.connect(received, weak=False)


def build_graph(checkpointer: Any) -> Any:
    """A ``create_agent`` ReAct agent on the faithful scripted model, with ``checkpointer``."""
    flag = os.environ.get("ARIADNE_TEST_BLOCK_CONSUMER")
    if flag and not _blocking:
        _blocking.append(flag)
        _block_consumer_while(Path(flag))
    delay = float(os.environ.get("ARIADNE_TEST_REPLAY_DELAY", "0"))
    failures = int(os.environ.get("ARIADNE_TEST_FAIL_REPLAYS", "0"))
    return create_agent(slow_model(replay_delay=delay, fail_replays=failures), [calculator], checkpointer=checkpointer)


def question(i: int) -> str:
    return f"How many apples are in {i % 9 + 2} boxes of {i % 7 + 3}?"
