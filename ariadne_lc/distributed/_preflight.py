"""Start-up checks of a worker: log in to the broker and the databases once, and say what is wrong in one line.

Celery's own start-up would do neither well: a refused login (a wrong password) ends in a long
traceback and, through ``app.worker_main``, exit status 0; a port that accepts connections but does
not speak AMQP is retried 100 times, a hang of most of an hour. A missing database shows as a pool
that waits its whole timeout. So :func:`~ariadne_lc.distributed.run_worker` first

- logs in to the broker, trying again for up to ``wait`` seconds only while the failure can be a
  broker still starting (a timeout, a reset connection); a refused login or an unknown virtual host
  fails at once, since waiting cannot fix them;
- connects once to each database, which fails at once with the server's reason (no such database,
  password authentication failed).

Each failure is one :class:`~ariadne_lc.distributed.BrokerUnavailableError` or
:class:`~ariadne_lc.errors.StoreError` naming the service, where it is (never the password) and why.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import urlsplit

from ariadne_lc.distributed._app import broker_kind
from ariadne_lc.distributed._dispatch import BrokerUnavailableError
from ariadne_lc.errors import StoreError
from ariadne_lc.store._pg import one_line, redact

__all__ = ["DEFAULT_BROKER_WAIT", "check_broker", "check_database"]

logger = logging.getLogger("ariadne_lc.distributed")

DEFAULT_BROKER_WAIT = 30.0
"""Seconds a starting worker waits for the broker to answer before it gives up."""
_ATTEMPT_TIMEOUT = 5.0
_PAUSE = 1.0
_DB_TIMEOUT = 10


def _where(url: str) -> str:
    parts = urlsplit(url)
    default = 6379 if parts.scheme.startswith("redis") else 5672
    vhost = parts.path[1:]  # amqp://host:5672// is the virtual host "/"; redis://host/0 is database 0
    where = f"{parts.hostname or '127.0.0.1'}:{parts.port or default}"
    return where if vhost in ("", "/") else f"{where} ({'database' if default == 6379 else 'vhost'} {vhost})"


def _transient(exc: BaseException) -> bool:
    """Whether a failed login may succeed later: the network or a broker still starting, not a refusal."""
    from amqp.exceptions import IrrecoverableConnectionError  # type: ignore[import-untyped]

    if isinstance(exc, IrrecoverableConnectionError):  # ACCESS_REFUSED, NOT_ALLOWED (no such vhost)
        return False
    name = type(exc).__name__
    if name in ("AuthenticationError", "AuthenticationWrongNumberOfArgsError", "ResponseError"):  # redis
        return False
    return isinstance(exc, OSError | EOFError) or "timed out" in str(exc).lower() or "Socket closed" in str(exc)


def _cause(exc: BaseException) -> str:
    text = one_line(exc)
    return text if text.startswith(type(exc).__name__) else f"{type(exc).__name__}: {text}"


def check_broker(url: str, *, wait: float = DEFAULT_BROKER_WAIT) -> None:
    """Log in to the broker at ``url``; raise :class:`BrokerUnavailableError` in one line when it does
    not let us in within ``wait`` seconds (at once when it refuses the login)."""
    from kombu.connection import Connection

    kind = broker_kind(url)
    name = "RabbitMQ" if kind == "amqp" else "Redis"
    where = _where(url)
    deadline = time.monotonic() + max(0.0, wait)
    attempts = 0
    while True:
        attempts += 1
        left = deadline - time.monotonic()
        conn = Connection(url, connect_timeout=max(0.5, min(_ATTEMPT_TIMEOUT, left)))  # type: ignore[no-untyped-call]
        try:
            conn.ensure_connection(max_retries=0, reraise_as_library_errors=False)  # type: ignore[no-untyped-call]
            if kind == "redis":
                conn.default_channel.client.ping()  # type: ignore[attr-defined]  # lazy: make it talk
            return
        except Exception as exc:
            if not _transient(exc):
                raise BrokerUnavailableError(f"{name} at {where} refused the connection: {_cause(exc)}") from None
            if time.monotonic() + _PAUSE >= deadline:
                raise BrokerUnavailableError(
                    f"{name} at {where} did not answer as a {name} broker within {wait:g} s "
                    f"({attempts} attempt{'s' if attempts > 1 else ''}; last: {_cause(exc)}); is that the broker's "
                    f"address and port?"
                ) from None
            logger.info("ariadne distributed: %s at %s: %s; trying again", name, where, _cause(exc))
        finally:
            try:
                conn.release()  # type: ignore[no-untyped-call]
            except Exception:
                logger.debug("ariadne distributed: closing the start-up broker connection failed", exc_info=True)
        time.sleep(_PAUSE)


def check_database(url: str, *, option: str = "--jobs") -> None:
    """Connect once to the PostgreSQL database at ``url``; raise :class:`StoreError` in one line, naming
    ``option``, the server and its reason, when that fails."""
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=_DB_TIMEOUT).close()
    except psycopg.Error as exc:
        raise StoreError(f"{option}: cannot connect to PostgreSQL at {redact(url)}: {one_line(exc)}") from None
