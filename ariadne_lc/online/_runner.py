"""What the online auditor runs (:class:`AuditRunner`), and how a synchronous audit runs off the workers' loop.

Any object with an :class:`~ariadne_lc.Auditor`'s surface serves: the in-process ``Auditor``, or a
:class:`~ariadne_lc.server.RemoteAuditor` that replays a LangGraph Server's threads. In thread mode the workers run
its synchronous ``audit`` on a daemon thread of its own (:func:`in_daemon_thread`), so that a timed-out audit can be
abandoned.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar, cast

from ariadne_lc.audit import DEFAULT_INTERVENTIONS, StepSelector
from ariadne_lc.audit._config import Interventions
from ariadne_lc.audit._sinks import AuditSink
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.records import AuditResult, Link, ReplayMode
from ariadne_lc.trace import Trace

__all__ = ["AuditRunner", "in_daemon_thread", "with_links"]

T = TypeVar("T")


class AuditRunner(Protocol):
    """What the online auditor runs: an :class:`~ariadne_lc.Auditor`, or a
    :class:`~ariadne_lc.server.RemoteAuditor` that replays a LangGraph Server's threads."""

    @property
    def replay_mode(self) -> ReplayMode: ...

    @property
    def sinks(self) -> tuple[Any, ...]: ...

    def with_sinks(self, sinks: Sequence[AuditSink]) -> AuditRunner: ...

    def audit(
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[AuditResult]: ...

    async def aaudit(
        self, trace: Trace, step: StepSelector | None = None, interventions: Interventions = DEFAULT_INTERVENTIONS
    ) -> list[AuditResult]: ...


def with_links(auditor: AuditRunner, links: Sequence[Link] | None) -> AuditRunner:
    """``auditor`` auditing ``links`` (its ``with_links``, as :class:`~ariadne_lc.Auditor` and
    :class:`~ariadne_lc.server.RemoteAuditor` have); ``None``: ``auditor`` itself.

    Raises:
        ConfigurationError: An unknown link, a link the auditor cannot audit, or an auditor without ``with_links``.
    """
    if links is None:
        return auditor
    method = getattr(auditor, "with_links", None)
    if method is None:
        raise ConfigurationError(
            f"links {list(links)} need an auditor with a with_links method; {type(auditor).__name__} has none"
        )
    return cast(AuditRunner, method(links))


def in_daemon_thread(fn: Callable[[], T], name: str) -> asyncio.Future[T]:
    """Run ``fn`` on a new daemon thread; its result arrives as a future of the running loop.

    A daemon thread, not an executor: a timed-out audit cannot be interrupted, so it is abandoned
    (its late result is ignored, its claim already gone) and must not hold up interpreter exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, failed: bool) -> None:
        if future.done():
            return
        if failed:
            future.set_exception(value)
        else:
            future.set_result(value)

    def target() -> None:
        try:
            value: Any = fn()
            failed = False
        except Exception as exc:
            value, failed = exc, True
        with contextlib.suppress(RuntimeError):  # the engine's loop is gone (shut down)
            loop.call_soon_threadsafe(settle, value, failed)

    threading.Thread(target=target, name=name, daemon=True).start()
    return future
