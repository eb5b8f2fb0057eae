"""Fixtures of the distributed tests: real PostgreSQL, real RabbitMQ, real worker processes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ariadne_lc.distributed import CeleryDispatcher, create_app
from tests.distributed.fleet import BROKER, Serving, Workers, database, delete_queue, require_services


@pytest.fixture(autouse=True)
def _services() -> None:
    require_services()


@pytest.fixture
def db() -> Iterator[str]:
    with database() as url:
        yield url


@pytest.fixture
def queue() -> Iterator[str]:
    name = f"ariadne-test-{uuid.uuid4().hex[:10]}"
    yield name
    delete_queue(name)


@pytest.fixture
def jobs_url(db: str) -> str:
    return db


@pytest.fixture
def jobs(jobs_url: str) -> Iterator[Any]:
    from ariadne_lc.distributed import open_job_store

    store = open_job_store(jobs_url)
    yield store
    store.close()


@pytest.fixture
def serving(db: str) -> Iterator[Serving]:
    side = Serving(db)
    yield side
    side.close()


@pytest.fixture
def dispatcher(db: str, queue: str) -> Iterator[CeleryDispatcher]:
    d = CeleryDispatcher(app=create_app(BROKER, queue=queue), jobs_url=db)
    yield d
    d.close()


@pytest.fixture
def make_workers(tmp_path: Path, jobs_url: str, queue: str, db: str) -> Iterator[Any]:
    made: list[Workers] = []

    def make(replay_delay: float = 0.5, broker: str = BROKER, **env: str) -> Workers:
        w = Workers(tmp_path, jobs_url, queue, replay_delay=replay_delay, env=env, broker=broker)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop()
