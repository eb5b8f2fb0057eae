"""The worker's start-up checks, called as a library user calls them (``run_worker`` does the same)."""

from __future__ import annotations

import socket

import pytest

from ariadne_lc.distributed import BrokerUnavailableError, check_broker, check_database
from ariadne_lc.distributed._preflight import masked, reach
from ariadne_lc.errors import StoreError
from tests.distributed.fleet import require


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_masked_hides_only_the_password() -> None:
    assert masked("amqp://guest:guest@rabbit:5672//") == "amqp://guest:***@rabbit:5672//"
    assert masked("redis://:pw@cache:6379/0") == "redis://:***@cache:6379/0"
    assert masked("postgresql://app:p%40ss@db/app?sslmode=require") == "postgresql://app:***@db/app?sslmode=require"
    assert masked("postgresql://app@db/app") == "postgresql://app@db/app"
    assert "secret" not in masked("host=db password=secret dbname=app")


def test_a_host_that_does_not_resolve_is_final_and_a_closed_port_is_not() -> None:
    unresolvable = reach("amqp://guest:guest@nonexistent.invalid:5672//")
    assert (
        unresolvable is not None
        and unresolvable.final
        and "'nonexistent.invalid' does not resolve" in unresolvable.reason
    )
    refused = reach(f"amqp://127.0.0.1:{closed_port()}//")
    assert refused is not None and refused.refused and not refused.final


def test_a_closed_port_is_tried_again_for_the_wait_then_named() -> None:
    """A broker still starting refuses connections: the library check keeps trying for ``wait`` seconds
    (the CLI fails at once instead, with how to start it)."""
    port = closed_port()
    with pytest.raises(BrokerUnavailableError) as failed:
        check_broker(f"amqp://guest:guest@127.0.0.1:{port}//", wait=2)
    message = str(failed.value)
    assert message.startswith(f"RabbitMQ at amqp://guest:***@127.0.0.1:{port}// is not reachable: connection refused")
    assert "attempts in 2 s" in message


def test_the_redis_port_is_not_amqp_nor_postgresql_and_the_rabbitmq_port_is_not_redis() -> None:
    require("Redis", "127.0.0.1", 6379)
    with pytest.raises(BrokerUnavailableError, match=r"6379//: the port accepts connections but does not speak AMQP"):
        check_broker("amqp://guest:guest@127.0.0.1:6379//", wait=600)  # no retry: the wait is not used
    with pytest.raises(BrokerUnavailableError, match="does not speak the Redis protocol"):
        check_broker("redis://127.0.0.1:5672/0", wait=600)
    with pytest.raises(
        StoreError, match=r"postgresql://postgres:\*\*\*@127.0.0.1:6379/app: .*does not speak PostgreSQL"
    ):
        check_database("postgresql://postgres:pw@127.0.0.1:6379/app")


def test_a_refused_redis_login_is_named() -> None:
    require("Redis", "127.0.0.1", 6379)
    with pytest.raises(
        BrokerUnavailableError, match=r"Redis at redis://nobody:\*\*\*@127.0.0.1:6379/0 refused the login"
    ):
        check_broker("redis://nobody:wrong@127.0.0.1:6379/0")
