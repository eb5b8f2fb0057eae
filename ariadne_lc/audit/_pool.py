"""The values a tool is known to give, beyond the audited run: a reference pool the user gives, and the tool's schema.

An observation swap needs another plausible output value ("rainy" where the run said "sunny"), and a plan swap
another argument ("France" where the thought said "Spain"). The most plausible are those the same tool really
returned or was called with. By default the auditor takes them from the audited run only (the same tool's other
calls in it), so that the swap a unit gets is a function of the unit: the same in ``audit``, ``audit_batch``, a
resumed run and online, whatever was audited before.

Values from other runs are available explicitly: a :class:`RecordedValues` pool built once from traces the user
chooses (:meth:`RecordedValues.from_traces`) and given as ``InterventionOptions(recorded_values=...)``. It is frozen:
the audits read it and never add to it, so every audit of a unit with the same pool gets the same swap. Bounded in
count (per tool, the latest :data:`KEPT_PER_TOOL` distinct outputs and, apart, as many argument values; the latest
:data:`TOOLS_KEPT` tools) and in size: :data:`MAX_BYTES` UTF-8 bytes in all (the least recently seen tool's oldest
value out first while building), a value over :data:`MAX_VALUE_BYTES` bytes not kept; so a pool of a large store
stays small whatever its tools return.

The batch being audited (``audit_batch``) is a last resort: a tool output that no value of its own run, pool, schema
or rule can change (a passage, a row of words with no family) is served another output the tool gave in the batch
(``audit_batch`` passes the batch down with each of its traces, a parameter), whole, rather than get no verdict; its
result says so (``... in the batch``), since an ``audit`` of the run alone cannot make that swap. Which other output
a unit gets is chosen by a stable key of the unit, so the batch's order does not change it. Every other swap is the
same in both.

The schema's own values (a ``Literal`` return type, an ``enum`` argument) come from the tool itself
(:func:`schema_values`, :func:`argument_values`), read once per tool.
"""

from __future__ import annotations

import typing
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Final

from ariadne_lc._cache import Lru
from ariadne_lc.audit._plan import observed_value
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.trace import Trace

__all__ = [
    "KEPT_PER_TOOL",
    "MAX_BYTES",
    "MAX_VALUE_BYTES",
    "TOOLS_KEPT",
    "RecordedValues",
    "argument_history",
    "argument_values",
    "batch_outputs",
    "run_values",
    "schema_values",
]

KEPT_PER_TOOL: Final = 64
"""Distinct outputs (and, apart, argument values) kept per tool."""
TOOLS_KEPT: Final = 256
"""Tools kept (the least recently seen out first)."""
MAX_BYTES: Final = 4_000_000
"""UTF-8 bytes kept in all, outputs and argument values together (4 MB)."""
MAX_VALUE_BYTES: Final = 64_000
"""A longer value (UTF-8 bytes) is not kept as one to swap in."""
SCHEMAS_KEPT: Final = 256
"""Tools whose schema values are kept (read once per tool, not once per swap)."""

_Table = OrderedDict[str, OrderedDict[str, None]]


def _size(value: str) -> int:
    return len(value.encode("utf-8"))


def _arguments(call_args: Mapping[str, Any]) -> Iterable[str]:
    """A call's scalar argument values, as text (a flag is no value to swap: it has its own rule)."""
    for value in call_args.values():
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            yield str(value)


class RecordedValues:
    """Per tool, outputs and argument values of chosen traces: a frozen reference pool (see the module docstring).

    Build it with :meth:`from_traces`; it has no method that adds a value, and is safe to share between threads.

    Examples:
        >>> pool = RecordedValues.from_traces(store.list_traces())  # doctest: +SKIP
        >>> auditor = Auditor(graph, recorded_values=pool)  # doctest: +SKIP
    """

    def __init__(
        self,
        outputs: Mapping[str, tuple[str, ...]] | None = None,
        arguments: Mapping[str, tuple[str, ...]] | None = None,
        *,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        """A pool of the given values, bounded as :meth:`from_traces` bounds it (in the order given: the last kept)."""
        built = _Builder(max_bytes)
        self.max_bytes = max_bytes
        """The bound on :attr:`nbytes` (UTF-8 bytes of every value kept)."""
        for table, given in ((built.outputs, outputs or {}), (built.args, arguments or {})):
            for tool, values in given.items():
                for value in values:
                    built.add(table, tool, value)
        self._outputs = MappingProxyType({t: tuple(v) for t, v in built.outputs.items()})
        self._args = MappingProxyType({t: tuple(v) for t, v in built.args.items()})
        self.nbytes: int = built.nbytes
        """UTF-8 bytes of the values kept (at most :attr:`max_bytes`)."""

    @classmethod
    def from_traces(cls, traces: Iterable[Trace], *, max_bytes: int = MAX_BYTES) -> RecordedValues:
        """The tool outputs and scalar argument values of ``traces``, read in their order (the latest kept)."""
        built = _Builder(max_bytes)
        for trace in traces:
            for step in trace.steps:
                for call in step.tool_calls:
                    value = observed_value(call)
                    if value is not None and value.strip():
                        built.add(built.outputs, call.name, value)
                    for value in _arguments(call.args):
                        built.add(built.args, call.name, value)
        return cls(built.frozen(built.outputs), built.frozen(built.args), max_bytes=max_bytes)

    def outputs(self, tool: str) -> tuple[str, ...]:
        """The outputs ``tool`` returned in the pool's traces, oldest first."""
        return self._outputs.get(tool, ())

    def arguments(self, tool: str) -> tuple[str, ...]:
        """The argument values ``tool`` was called with in the pool's traces, oldest first."""
        return self._args.get(tool, ())

    def __repr__(self) -> str:
        tools = len(self._outputs.keys() | self._args.keys())
        return f"RecordedValues({tools} tools, {self.nbytes} of {self.max_bytes} bytes)"


class _Builder:
    """The bounded tables a pool is built into (module docstring), dropped once the pool is made."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ConfigurationError(f"max_bytes must not be negative, got {max_bytes}: it bounds the pool in bytes")
        self.outputs: _Table = OrderedDict()
        self.args: _Table = OrderedDict()
        self.max_bytes = max_bytes
        self.nbytes = 0

    @staticmethod
    def frozen(table: _Table) -> dict[str, tuple[str, ...]]:
        return {tool: tuple(values) for tool, values in table.items()}

    def add(self, table: _Table, tool: str, value: str) -> None:
        size = _size(value)
        if size > MAX_VALUE_BYTES or size > self.max_bytes:
            return
        seen = table.setdefault(tool, OrderedDict())
        table.move_to_end(tool)
        if value not in seen:
            self.nbytes += size
        seen[value] = None
        seen.move_to_end(value)
        while len(seen) > KEPT_PER_TOOL:
            self.nbytes -= _size(seen.popitem(last=False)[0])
        while len(table) > TOOLS_KEPT:
            self.nbytes -= sum(map(_size, table.popitem(last=False)[1]))
        while self.nbytes > self.max_bytes:
            self._evict_one()

    def _evict_one(self) -> None:
        """The oldest value of the least recently seen tool: outputs first (they are the long ones)."""
        table = self.outputs if self.outputs else self.args
        tool, values = next(iter(table.items()))
        self.nbytes -= _size(values.popitem(last=False)[0])
        if not values:
            del table[tool]


def run_values(trace: Trace, tool: str, *, pool: RecordedValues | None, arguments: bool = False) -> tuple[str, ...]:
    """What ``tool`` returned (or, with ``arguments``, was called with) in ``trace``, in the order of its calls, then
    in ``pool``: the values of the unit's own run first, never those of other audits (module docstring)."""
    found: dict[str, None] = {}
    for step in trace.steps:
        for call in step.tool_calls:
            if call.name != tool:
                continue
            if arguments:
                found.update(dict.fromkeys(_arguments(call.args)))
            elif (value := observed_value(call)) is not None and value.strip():
                found[value] = None
    if pool is not None:
        found.update(dict.fromkeys(pool.arguments(tool) if arguments else pool.outputs(tool)))
    return tuple(found)


def argument_history(trace: Trace, tools: Iterable[str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Per tool of ``tools`` and per argument, the values it was called with in ``trace``, in the order of its calls:
    a plan swap puts another value of the same argument where the plan states one."""
    wanted = set(tools)
    found: dict[str, dict[str, dict[str, None]]] = {}
    for step in trace.steps:
        for call in step.tool_calls:
            if call.name in wanted:
                for arg, value in call.args.items():
                    if isinstance(value, str | int | float) and not isinstance(value, bool):
                        found.setdefault(call.name, {}).setdefault(arg, {})[str(value)] = None
    return {tool: {arg: tuple(values) for arg, values in args.items()} for tool, args in found.items()}


_SCHEMAS: Lru[int, tuple[Any, tuple[str, ...], tuple[str, ...]]] = Lru(SCHEMAS_KEPT)
"""id(tool) -> (the tool, its return values, its argument values); the tool is held so that its id is not reused."""


def _schema(tool: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    cached = _SCHEMAS.get(id(tool))
    if cached is not None:
        return cached[1], cached[2]
    returned: list[str] = []
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    try:
        hints = typing.get_type_hints(func) if func is not None else {}
    except Exception:  # a forward reference the tool's module cannot resolve: no schema values, not an error
        hints = {}
    kind = hints.get("return")
    if typing.get_origin(kind) is typing.Literal:
        returned += [str(v) for v in typing.get_args(kind)]
    enums: list[str] = []
    args = getattr(tool, "args", None)
    if isinstance(args, dict):
        for spec in args.values():
            if isinstance(spec, dict):
                enums += [str(v) for v in spec.get("enum", ()) if not isinstance(v, bool)]
    found = (tuple(dict.fromkeys(returned)), tuple(dict.fromkeys(enums)))
    _SCHEMAS.put(id(tool), (tool, *found))
    return found


def schema_values(tool: Any) -> tuple[str, ...]:
    """The values a tool's schema allows: its return type's ``Literal`` values, then its arguments' ``enum`` values."""
    returned, enums = _schema(tool)
    return tuple(dict.fromkeys((*returned, *enums)))


def argument_values(tool: Any) -> tuple[str, ...]:
    """The values a tool's schema allows for its arguments (``enum``): what a plan swap may call it with."""
    return _schema(tool)[1]


def batch_outputs(batch: RecordedValues | None, tool: str, *, besides: Iterable[str]) -> tuple[str, ...]:
    """Outputs ``tool`` gave in ``batch`` (the batch being audited) that are not in ``besides`` (none outside a
    batch)."""
    if batch is None:
        return ()
    seen = {o.strip() for o in besides}
    return tuple(o for o in batch.outputs(tool) if o.strip() not in seen)
