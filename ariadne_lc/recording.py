"""``record(graph, store)``: the one-line way in, a compiled graph that records every run it makes.

It binds an :class:`~ariadne_lc.recorder.AriadneCallbackHandler` to the graph's own config
(``graph.with_config(callbacks=[handler])``, which LangGraph implements as a copy of the same compiled
graph), so every ``invoke``/``stream``/``ainvoke`` of the returned graph is recorded without a callback in
each call's config, and the returned graph is still a graph the :class:`~ariadne_lc.Auditor` can replay
(its replays carry a marker the handler ignores). The traces are the handler's own, byte for byte.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.callbacks import BaseCallbackManager

from ariadne_lc.errors import ConfigurationError
from ariadne_lc.recorder import AriadneCallbackHandler
from ariadne_lc.store import TraceStore

if TYPE_CHECKING:
    from langgraph.pregel import Pregel

__all__ = ["record"]

G = TypeVar("G", bound="Pregel[Any, Any, Any, Any]")


def _bound_recorders(graph: Pregel[Any, Any, Any, Any]) -> list[AriadneCallbackHandler]:
    callbacks = (graph.config or {}).get("callbacks")
    handlers = callbacks.handlers if isinstance(callbacks, BaseCallbackManager) else list(callbacks or [])
    return [h for h in handlers if isinstance(h, AriadneCallbackHandler)]


def record(
    graph: G, store: TraceStore | None = None, *, handler: AriadneCallbackHandler | None = None, **options: Any
) -> G:
    """Return ``graph`` bound to a recorder: every run of the returned graph becomes a trace in ``store``.

    The original graph is left as it was (a copy is returned); callbacks already bound to it stay.
    The default handler knows the graph, so each trace carries its fingerprint (``Trace.graph``) and
    an audit with a changed graph is refused (:class:`~ariadne_lc.errors.GraphChangedError`).

    Traces are built on the handler's background thread, and reads of ``store`` in this process wait
    for the runs that have returned: ``graph.invoke(...)`` then ``store.list_traces()`` sees the run.
    To flush explicitly (before another process reads the store, or before reading a store of your
    own): ``flush_traces(store)`` waits for every recorder writing to ``store`` in this process.

    Args:
        graph: A compiled LangGraph graph (``StateGraph.compile()``, ``create_agent(...)``).
        store: Where the traces go (ignored when ``handler`` is given).
        handler: A recorder of your own, for its hooks, its ``stats`` or its ``flush()``; default:
            ``AriadneCallbackHandler(store=store, graph=graph, **options)``.
        **options: Keyword arguments of the default handler, e.g. ``synchronous=True`` to store each
            trace before its run returns instead of on the handler's background thread.

    Raises:
        ConfigurationError: ``graph`` is not a compiled graph, neither or both of ``store`` and
            ``handler`` were given, ``options`` came with ``handler``, or the graph is already bound to a
            recorder (every run would be recorded twice).

    Examples:
        >>> from ariadne_lc import InMemoryTraceStore, record
        >>> store = InMemoryTraceStore()
        >>> # graph = record(create_agent(model, tools, checkpointer=InMemorySaver()), store)
        >>> # graph.invoke({"messages": [("user", "...")]}, {"configurable": {"thread_id": "t-1"}})
        >>> # store.list_traces()  # sees the run; flush_traces(store) before another process reads it
    """
    # Imported here: langgraph.pregel's package pulls in the remote-graph client (httpx and its command line),
    # which ``import ariadne_lc`` must not load; a caller holding a compiled graph has it loaded already.
    from langgraph.pregel import Pregel

    if not isinstance(graph, Pregel):
        raise ConfigurationError(
            f"record() takes a compiled LangGraph graph (StateGraph.compile() or create_agent), "
            f"got {type(graph).__name__}"
        )
    if (store is None) == (handler is None):
        raise ConfigurationError("record() takes a trace store or a handler (exactly one)")
    if handler is not None and options:
        raise ConfigurationError(f"options {sorted(options)} are for the default handler; set them on yours")
    if _bound_recorders(graph):
        raise ConfigurationError(
            "this graph is already bound to an AriadneCallbackHandler; recording it again would store every run twice"
        )
    recorder = handler or AriadneCallbackHandler(store=store, **{"graph": graph, **options})
    return graph.with_config(callbacks=[recorder])
