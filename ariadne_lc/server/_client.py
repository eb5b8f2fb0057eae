"""Reading a LangGraph Server's threads through ``langgraph-sdk``: reads only, plus one opt-in write.

Every call the remote audit makes goes through :class:`ServerThreads`, so what can touch the
deployment is listed in one place: thread lookups, checkpoint history, state and run listings (all
reads; ``POST /threads/{id}/history`` and ``POST /threads/search`` are reads sent as POST), and
:meth:`ServerThreads.write_verdict`, the only write, which a caller has to ask for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from ariadne_lc.errors import (
    ConfigurationError,
    MissingExtraError,
    ServerError,
    ServerUnavailableError,
    ThreadNotFoundError,
)

__all__ = ["DEFAULT_HISTORY_PAGE", "DEFAULT_TIMEOUT", "ServerThreads"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a request to the server may take."""
DEFAULT_HISTORY_PAGE = 100
"""Checkpoints fetched per history request (the server's own default is 10)."""

T = TypeVar("T")


def _start_hint(url: str, cause: BaseException | None = None) -> str:
    why = "" if cause is None else f" ({type(cause).__name__}: {' '.join(str(cause).split()) or 'no detail'})"
    return (
        f"no LangGraph Server answers at {url}{why}: start it (e.g. `langgraph dev --port PORT` in the folder with "
        "langgraph.json) or pass the URL it listens on"
    )


class ServerThreads:
    """A read-only view of a LangGraph Server's threads (and the opt-in verdict write).

    Args:
        url: The server's base URL (``http://127.0.0.1:2024`` for ``langgraph dev``, or a deployment's).
        api_key: Sent as the ``x-api-key`` header (LangSmith Deployments); ``None`` reads the SDK's
            environment variables (``LANGGRAPH_API_KEY``, ``LANGSMITH_API_KEY``, ``LANGCHAIN_API_KEY``).
        headers: More headers for every request (e.g. ``{"Authorization": "Bearer ..."}`` for custom auth).
        timeout: Seconds per request.

    Raises:
        MissingExtraError: ``langgraph-sdk`` is not installed (the ``server`` extra).
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        try:
            from langgraph_sdk import get_sync_client
        except ImportError as exc:
            raise MissingExtraError("auditing a LangGraph Server", "server") from exc
        self.url = url.rstrip("/")
        extra = dict(headers or {})
        if any(k.lower() == "x-api-key" for k in extra):
            raise ConfigurationError("pass the API key as api_key=, not as an x-api-key header")
        kwargs: dict[str, Any] = {"url": self.url, "headers": extra or None, "timeout": timeout}
        if api_key is not None:
            kwargs["api_key"] = api_key
        # what the SDK sends, for the one request made without it (check)
        self._headers = {**extra, **({"x-api-key": api_key} if api_key is not None else {})}
        self._client = get_sync_client(**kwargs)
        self._timeout = timeout

    def close(self) -> None:
        """Close the HTTP connections (the object is unusable afterwards)."""
        self._client.close()

    def __enter__(self) -> ServerThreads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- errors ------------------------------------------------------------------------------------

    @contextmanager
    def _errors(self, thread_id: str | None = None) -> Iterator[None]:
        import httpx
        from langgraph_sdk.errors import APIStatusError, NotFoundError

        try:
            yield
        except NotFoundError as exc:
            if thread_id is None:
                raise ServerError(f"{self.url}: {exc}", url=self.url) from exc
            raise ThreadNotFoundError(
                f"thread {thread_id} is not on the LangGraph Server at {self.url} (deleted, expired, or another "
                "deployment's)",
                url=self.url,
                thread_id=thread_id,
            ) from exc
        except APIStatusError as exc:
            status = exc.response.status_code
            hint = "; pass api_key= / --api-key (sent as x-api-key)" if status in (401, 403) else ""
            raise ServerError(
                f"the LangGraph Server at {self.url} answered HTTP {status}: {exc}{hint}", url=self.url
            ) from exc
        except httpx.TransportError as exc:
            raise ServerUnavailableError(_start_hint(self.url), url=self.url) from exc

    def _call(self, fn: Callable[[], T], thread_id: str | None = None) -> T:
        with self._errors(thread_id):
            return fn()
        raise AssertionError("unreachable")  # pragma: no cover - _errors re-raises

    def check(self) -> None:
        """Fail fast, in one line, when nothing answers at the URL (the SDK retries refused connections)."""
        import httpx

        try:
            response = httpx.get(f"{self.url}/ok", headers=self._headers, timeout=min(self._timeout, 5.0))
        except httpx.TransportError as exc:  # refused, unresolvable, silent, or another protocol hanging up
            raise ServerUnavailableError(_start_hint(self.url, exc), url=self.url) from exc
        if response.status_code in (401, 403):
            raise ServerError(
                f"the LangGraph Server at {self.url} refused the credentials (HTTP {response.status_code}); "
                "pass api_key= / --api-key",
                url=self.url,
            )
        if response.status_code >= 400:
            raise ServerError(
                f"{self.url} answered HTTP {response.status_code} to GET /ok, which every LangGraph Server "
                "serves: is that the server's URL?",
                url=self.url,
            )

    # -- reads -------------------------------------------------------------------------------------

    def thread(self, thread_id: str) -> dict[str, Any]:
        """The thread record (status, metadata, timestamps)."""
        return dict(self._call(lambda: self._client.threads.get(thread_id), thread_id))

    def state(self, thread_id: str) -> dict[str, Any]:
        """The thread's current state (its newest checkpoint)."""
        return dict(self._call(lambda: self._client.threads.get_state(thread_id), thread_id))

    def history(self, thread_id: str, *, page: int = DEFAULT_HISTORY_PAGE) -> list[dict[str, Any]]:
        """Every top-level checkpoint of the thread, newest first (paged with ``before``)."""
        out: list[dict[str, Any]] = []
        before: Any = None
        while True:
            batch = self._history_page(thread_id, page, before)
            out.extend(dict(s) for s in batch)
            if len(batch) < page:
                return out
            # a checkpointer config: the API refuses a bare id (422), the runtime a bare Checkpoint dict (500)
            before = {"configurable": {"checkpoint_id": str(batch[-1]["checkpoint"]["checkpoint_id"])}}

    def _history_page(self, thread_id: str, page: int, before: Any) -> list[Any]:
        return list(
            self._call(lambda: self._client.threads.get_history(thread_id, limit=page, before=before), thread_id)
        )

    def runs(self, thread_id: str, *, page: int = DEFAULT_HISTORY_PAGE) -> list[dict[str, Any]]:
        """Every run of the thread, as the server lists them (newest first)."""
        out: list[dict[str, Any]] = []
        while True:
            batch = self._call(lambda: self._client.runs.list(thread_id, limit=page, offset=len(out)), thread_id)
            out.extend(dict(r) for r in batch)
            if len(batch) < page:
                return out

    def threads(
        self, *, metadata: Mapping[str, Any] | None = None, limit: int = 100, offset: int = 0
    ) -> list[dict[str, Any]]:
        """Threads, most recently updated first (``POST /threads/search``)."""
        return [
            dict(t)
            for t in self._call(
                lambda: self._client.threads.search(
                    metadata=dict(metadata) if metadata else None,
                    limit=limit,
                    offset=offset,
                    sort_by="updated_at",
                    sort_order="desc",
                )
            )
        ]

    def assistant_graph_id(self, assistant: str) -> str:
        """The graph id of an assistant given by id or by graph name (``langgraph.json``'s key)."""
        found = self._call(lambda: self._client.assistants.search(graph_id=assistant, limit=1))
        if found:
            return str(found[0]["graph_id"])
        return str(self._call(lambda: self._client.assistants.get(assistant))["graph_id"])

    def assistant_shape(self, assistant_id: str) -> tuple[set[str], set[str]]:
        """The deployed graph's state keys (its state schema) and node names (its drawn graph)."""
        schemas = self._call(lambda: self._client.assistants.get_schemas(assistant_id))
        drawn = self._call(lambda: self._client.assistants.get_graph(assistant_id))
        keys = set(((schemas.get("state_schema") or {}).get("properties") or {}).keys())
        nodes = {str(n["id"]) for n in drawn.get("nodes") or ()}
        return keys, nodes

    # -- the one write -----------------------------------------------------------------------------

    def write_verdict(self, thread_id: str, metadata: Mapping[str, Any]) -> None:
        """Merge ``metadata`` into the thread's metadata: the only write a remote audit ever makes (opt-in).

        Thread metadata lives beside the checkpoints, not in them: the thread's state, history and
        checkpoint ids are not changed by it.
        """
        self._call(lambda: self._client.threads.update(thread_id, metadata=dict(metadata)), thread_id)
