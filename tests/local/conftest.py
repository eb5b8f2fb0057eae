"""One real llama.cpp server (SmolLM2-135M) for the whole test session: starting it costs seconds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ariadne_lc.local import LocalModelServer


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalModelServer]:
    with LocalModelServer() as server:
        yield server
