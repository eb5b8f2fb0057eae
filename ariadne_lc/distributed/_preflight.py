"""Start-up checks of a worker: reach each service, log in once, and say what is wrong in one line.

Celery's own start-up would do neither well: a refused login (a wrong password) ends in a long
traceback and, through ``app.worker_main``, exit status 0; a port that accepts connections but does
not speak AMQP (Redis's 6379 typed for RabbitMQ's 5672: Redis waits silently for a line that never
comes) is retried 100 times, a hang of most of an hour. A missing database shows as a pool that
waits its whole timeout. So :func:`~ariadne_lc.distributed.run_worker` first checks each URL in two
steps, each bounded by :data:`CONNECT_TIMEOUT`:

1. **Reach** (:func:`reach`): resolve the host (in a thread, so that a slow resolver cannot stall
   start-up) and open a TCP connection. A host that does not resolve is final (a typo does not fix
   itself); a refused or timed-out connection may be a broker still starting, so
   :func:`check_broker` tries again for up to ``wait`` seconds, and :func:`check_database` (whose
   server is expected to be up) fails at once.
2. **Speak**: log in with the real client (py-amqp through kombu, redis-py, psycopg), its connect
   and socket timeouts bounded. A refused login (wrong password, unknown virtual host or database)
   is final, in the server's words. Any other failure *after* the TCP connection opened (silence,
   bytes of another protocol, a closed connection) means the port belongs to something else: final
   too, as "does not speak AMQP" (or Redis, or PostgreSQL).

Each failure is one :class:`~ariadne_lc.distributed.BrokerUnavailableError` or
:class:`~ariadne_lc.errors.StoreError` naming the service and its URL (:func:`masked`: the password
replaced by ``***``) and what was wrong.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from ariadne_lc.distributed._app import broker_kind
from ariadne_lc.distributed._dispatch import BrokerUnavailableError
from ariadne_lc.errors import StoreError
from ariadne_lc.store._pg import one_line, redact

__all__ = ["CONNECT_TIMEOUT", "DEFAULT_BROKER_WAIT", "Unreachable", "check_broker", "check_database", "masked", "reach"]

logger = logging.getLogger("ariadne_lc.distributed")

DEFAULT_BROKER_WAIT = 30.0
"""Seconds a starting worker waits for the broker to accept connections before it gives up."""
CONNECT_TIMEOUT = 3.0
"""Seconds each step of a check may take: resolving, the TCP connection, the protocol's handshake."""
_PAUSE = 1.0
_PORTS = {"amqp": 5672, "amqps": 5671, "pyamqp": 5672, "redis": 6379, "rediss": 6379, "postgresql": 5432}
_SPEAKS = {"amqp": ("RabbitMQ", "AMQP"), "redis": ("Redis", "the Redis protocol")}


def masked(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages (a libpq ``key=value`` string is
    shown without its password)."""
    if "://" not in url:
        return redact(url)
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, where = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{user.partition(':')[0]}:***@{where}"))


@dataclass(frozen=True)
class Unreachable:
    """Why no TCP connection opened to a service."""

    reason: str
    """What went wrong, in a few words (``connection refused``, ``the host 'x' does not resolve: ...``)."""
    final: bool
    """``True`` when trying again cannot help (a host that does not resolve)."""
    refused: bool = False
    """``True`` when the host answered that nothing listens on the port (a service not started)."""


def _address(url: str) -> tuple[str, int] | None:
    """Host and port of ``url``; ``None`` when there is no single TCP address to try (a Unix socket,
    libpq's several hosts): the client then reports for itself."""
    try:
        parts = urlsplit(url)
        scheme = "postgresql" if parts.scheme.lower() == "postgres" else parts.scheme.lower()
        host, port = parts.hostname, parts.port or _PORTS.get(scheme)
    except ValueError:
        return None
    if port is None or "," in parts.netloc:
        return None
    if not host:
        return None if scheme == "postgresql" else ("localhost", port)
    return host, port


def _resolve(host: str, port: int, timeout: float) -> list[tuple[socket.AddressFamily, tuple[str, int]]]:
    found: list[tuple[socket.AddressFamily, tuple[str, int]]] = []
    failed: list[OSError] = []

    def run() -> None:
        try:
            for family, _, _, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
                found.append((family, (str(address[0]), int(address[1]))))
        except OSError as exc:
            failed.append(exc)

    resolver = threading.Thread(target=run, name="ariadne-resolve", daemon=True)
    resolver.start()
    resolver.join(timeout)
    if resolver.is_alive():
        raise TimeoutError(f"resolving {host!r} took over {timeout:g} s")
    if failed:
        raise failed[0]
    return found


def reach(url: str, *, timeout: float = CONNECT_TIMEOUT) -> Unreachable | None:
    """``None`` when a TCP connection to the service of ``url`` opens within ``timeout`` seconds."""
    address = _address(url)
    if address is None:
        return None
    host, port = address
    try:
        addresses = _resolve(host, port, timeout)
    except socket.gaierror as exc:  # no such name is final; a resolver that failed for now (EAI_AGAIN) is not
        final = exc.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME))
        return Unreachable(f"the host {host!r} does not resolve: {exc.strerror or exc}", final=final)
    except OSError as exc:
        return Unreachable(f"the host {host!r} did not resolve: {exc}", final=False)
    last: OSError = OSError(f"no address for {host!r}")
    for family, sockaddr in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(sockaddr)
            return None
        except OSError as exc:
            last = exc
        finally:
            sock.close()
    if isinstance(last, ConnectionRefusedError):
        return Unreachable(f"connection refused at {host}:{port}", final=False, refused=True)
    if isinstance(last, TimeoutError):
        return Unreachable(f"no TCP connection to {host}:{port} within {timeout:g} s", final=False)
    return Unreachable(f"{host}:{port}: {last.strerror or last}", final=False)


def _cause(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"no answer within {timeout:g} s"
    # redis-py 6+ formats str(exc) as "network:ConnectionError"; its message is the first argument.
    text = exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)
    text = " ".join(text.split()) or type(exc).__name__
    return text if text.startswith(type(exc).__name__) else f"{type(exc).__name__}: {text}"


def _answer(exc: BaseException) -> str:
    """What a failed login means: ``"refused"`` (the broker said no: credentials, virtual host, database),
    ``"closing"`` (a broker shutting down or starting: try again), ``"foreign"`` (not the broker's protocol)."""
    from amqp.exceptions import AccessRefused, NotAllowed, RecoverableConnectionError  # type: ignore[import-untyped]
    from redis.exceptions import AuthenticationError, ResponseError

    # amqp: ACCESS_REFUSED, NOT_ALLOWED (no such vhost); redis: WRONGPASS, NOAUTH, a database number out of range
    if isinstance(exc, AccessRefused | NotAllowed | AuthenticationError | ResponseError):
        return "refused"
    if isinstance(exc, RecoverableConnectionError) and exc.code:  # CONNECTION_FORCED: the broker is shutting down
        return "closing"
    return "foreign"


def _log_in(url: str, kind: str, timeout: float) -> None:
    if kind == "redis":
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
        try:
            client.ping()
        finally:
            client.close()
        return
    from kombu.connection import Connection

    conn = Connection(url, connect_timeout=timeout)  # type: ignore[no-untyped-call]  # bounds the handshake too
    try:
        conn.ensure_connection(max_retries=0, reraise_as_library_errors=False)  # type: ignore[no-untyped-call]
    finally:
        try:
            conn.release()  # type: ignore[no-untyped-call]
        except Exception:
            logger.debug("ariadne distributed: closing the start-up broker connection failed", exc_info=True)


def check_broker(url: str, *, wait: float = DEFAULT_BROKER_WAIT) -> None:
    """Reach and log in to the broker at ``url``; raise :class:`BrokerUnavailableError` in one line when
    it does not accept connections within ``wait`` seconds, and at once when its host does not
    resolve, it refuses the login, or the port does not speak the broker's protocol."""
    kind = broker_kind(url)
    name, protocol = _SPEAKS[kind]
    where = masked(url)
    deadline = time.monotonic() + max(0.0, wait)
    attempts = 0
    while True:
        attempts += 1
        timeout = max(0.5, min(CONNECT_TIMEOUT, deadline - time.monotonic()))
        unreachable = reach(url, timeout=timeout)
        if unreachable is None:
            try:
                _log_in(url, kind, timeout)
                return
            except Exception as exc:
                answer = _answer(exc)
                if answer == "refused":
                    raise BrokerUnavailableError(
                        f"{name} at {where} refused the login: {_cause(exc, timeout)}"
                    ) from None
                if answer == "foreign":
                    raise BrokerUnavailableError(
                        f"{name} at {where}: the port accepts connections but does not speak {protocol} "
                        f"({_cause(exc, timeout)}); is that the broker's port ({name} listens on {_PORTS[kind]})?"
                    ) from None
                unreachable = Unreachable(f"{name} closed the connection: {_cause(exc, timeout)}", final=False)
        if unreachable.final:
            raise BrokerUnavailableError(f"{name} at {where} is not reachable: {unreachable.reason}")
        if time.monotonic() + _PAUSE >= deadline:
            raise BrokerUnavailableError(
                f"{name} at {where} is not reachable: {unreachable.reason} "
                f"({attempts} attempt{'s' if attempts > 1 else ''} in {wait:g} s); is the broker running there?"
            )
        logger.info("ariadne distributed: %s at %s: %s; trying again", name, where, unreachable.reason)
        time.sleep(_PAUSE)


def check_database(url: str, *, option: str = "--jobs") -> None:
    """Reach and connect once to the PostgreSQL database at ``url``; raise :class:`StoreError` in one
    line, naming ``option``, the URL and what was wrong (the server's reason when it gave one)."""
    import psycopg

    where = f"{option}: cannot connect to PostgreSQL at {masked(url)}"
    unreachable = reach(url)
    if unreachable is not None:
        raise StoreError(f"{where}: {unreachable.reason}")
    not_postgres = "the port accepts connections but does not speak PostgreSQL ({}); is that the database's port?"
    try:
        psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT)).close()
    except psycopg.errors.ConnectionTimeout:
        raise StoreError(f"{where}: {not_postgres.format(f'no answer within {CONNECT_TIMEOUT:g} s')}") from None
    except psycopg.Error as exc:
        text = one_line(exc)
        # libpq gives no code for a failed connection: a server's refusal (no such database, a wrong
        # password) is the only kind that carries its FATAL: severity; anything else, once the TCP
        # connection opened, is another protocol answering.
        raise StoreError(f"{where}: {text if 'FATAL:' in text else not_postgres.format(text)}") from None
