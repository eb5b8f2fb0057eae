"""Model-server slots: each run of an audit batch pinned to one, so that its replays keep their prefix in its cache.

Every replay of a run re-sends the run's own history, so a server that keeps a prompt's KV cache (llama.cpp, vLLM
with prefix caching) evaluates only what follows the longest prefix it still holds. One run at a time keeps that
prefix; runs interleaved on one cache throw it away at every call (2.5 times slower on the local model, measured:
``benchmarks/prefix_cache.py``). A server with several slots (llama.cpp's ``--parallel N``: a KV cache each) serves
several runs at once without that loss when each run's calls go to one slot.

:meth:`~ariadne_lc.Auditor.audit_batch` pins each run it audits to a slot (``max_concurrency`` runs at once, slots
``0 .. max_concurrency - 1``, one run per slot at a time, its audits in step order): the slot is a context variable,
:func:`current_slot`, set around the run's audit, which LangGraph and LangChain carry into every node and model call
of the run's replays. A model that knows slots reads it: :class:`~ariadne_lc.local.OpenAICompatibleChat` with
``slot_field="id_slot"`` sends it to a llama.cpp server (with ``cache_prompt``), and the local server's several
processes (:class:`~ariadne_lc.local.LocalServerSlots`) route each call to the process of its slot. A model that does
not know slots is untouched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["current_slot", "pinned"]

_SLOT: ContextVar[int | None] = ContextVar("ariadne_slot", default=None)


def current_slot() -> int | None:
    """The slot the run being audited here is pinned to (``None``: outside a pinned run)."""
    return _SLOT.get()


@contextlib.contextmanager
def pinned(slot: int) -> Iterator[None]:
    """Pin the calls made inside the block (and in the threads and tasks it starts) to ``slot``."""
    if slot < 0:
        raise ValueError(f"a slot is a non-negative index, got {slot}")
    token = _SLOT.set(slot)
    try:
        yield
    finally:
        _SLOT.reset(token)
