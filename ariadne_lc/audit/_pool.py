"""What the auditor has seen the agent's tools return and be called with: the first source of other values.

An observation swap needs another plausible output value ("rainy" where the run said "sunny"), and a plan swap
another argument ("France" where the thought said "Spain"). The most plausible ones are those the same tool really
returned or was called with in other recorded runs, so the auditor remembers, per tool, the latest distinct outputs
and argument values of every trace it audits (a batch is read whole before its first audit). Bounded in count
(:data:`KEPT_PER_TOOL` each, oldest out first, :data:`TOOLS_KEPT` tools) and in size (:data:`MAX_CHARS` characters in
all, the least recently seen tool's oldest value out first; a value longer than :data:`MAX_VALUE_CHARS` is not kept),
so that a long-running online auditor stays small whatever its tools return; thread-safe, since batches audit on a
pool of threads.

The schema's own values (a ``Literal`` return type, an ``enum`` argument) come from the tool itself
(:func:`schema_values`).
"""

from __future__ import annotations

import threading
import typing
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final

from ariadne_lc.trace import Trace

__all__ = ["KEPT_PER_TOOL", "MAX_CHARS", "MAX_VALUE_CHARS", "TOOLS_KEPT", "RecordedValues", "schema_values"]

KEPT_PER_TOOL: Final = 64
"""Distinct outputs (and, apart, argument values) remembered per tool."""
TOOLS_KEPT: Final = 256
"""Tools remembered (the least recently seen out first)."""
MAX_CHARS: Final = 4_000_000
"""Characters kept in all, outputs and argument values together (about 4 MB of text)."""
MAX_VALUE_CHARS: Final = 64_000
"""A longer output is not kept as a value to swap in."""


class RecordedValues:
    """Per tool, the latest distinct outputs and argument values of the traces seen (see the module docstring)."""

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self._outputs: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()
        self._args: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_chars = max_chars
        self._chars = 0

    @property
    def chars(self) -> int:
        """Characters kept now (at most :attr:`max_chars`)."""
        with self._lock:
            return self._chars

    def observe(self, traces: Iterable[Trace]) -> None:
        """Remember the tool outputs and scalar argument values of ``traces``."""
        with self._lock:
            for trace in traces:
                for step in trace.steps:
                    for call in step.tool_calls:
                        if call.output is not None and call.output.strip():
                            self._remember(self._outputs, call.name, call.output)
                        for value in call.args.values():
                            if isinstance(value, str | int | float) and not isinstance(value, bool):
                                self._remember(self._args, call.name, str(value))

    def outputs(self, tool: str) -> tuple[str, ...]:
        """The outputs ``tool`` was seen to return, oldest first."""
        with self._lock:
            return tuple(self._outputs.get(tool, ()))

    def arguments(self) -> dict[str, tuple[str, ...]]:
        """Tool -> the argument values it was seen called with."""
        with self._lock:
            return {tool: tuple(values) for tool, values in self._args.items()}


    def _remember(self, table: OrderedDict[str, OrderedDict[str, None]], tool: str, value: str) -> None:
        if len(value) > MAX_VALUE_CHARS:
            return
        seen = table.setdefault(tool, OrderedDict())
        table.move_to_end(tool)
        if value not in seen:
            self._chars += len(value)
        seen[value] = None
        seen.move_to_end(value)
        while len(seen) > KEPT_PER_TOOL:
            self._chars -= len(seen.popitem(last=False)[0])
        while len(table) > TOOLS_KEPT:
            self._chars -= sum(map(len, table.popitem(last=False)[1]))
        while self._chars > self.max_chars:
            self._evict_one()

    def _evict_one(self) -> None:
        """The oldest value of the least recently seen tool: outputs first (they are the long ones)."""
        table = self._outputs if self._outputs else self._args
        tool, values = next(iter(table.items()))
        self._chars -= len(values.popitem(last=False)[0])
        if not values:
            del table[tool]


def schema_values(tool: Any) -> tuple[str, ...]:
    """The values a tool's schema allows: its return type's ``Literal`` values, then its arguments' ``enum`` values."""
    out: list[str] = []
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    try:
        hints = typing.get_type_hints(func) if func is not None else {}
    except Exception:  # a forward reference the tool's module cannot resolve: no schema values, not an error
        hints = {}
    returned = hints.get("return")
    if typing.get_origin(returned) is typing.Literal:
        out += [str(v) for v in typing.get_args(returned)]
    args = getattr(tool, "args", None)
    if isinstance(args, dict):
        for spec in args.values():
            if isinstance(spec, dict):
                out += [str(v) for v in spec.get("enum", ()) if not isinstance(v, bool)]
    return tuple(dict.fromkeys(out))
