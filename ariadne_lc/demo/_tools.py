"""The demo agent's tools, as LangChain tools: both are pure and offline, so replays may run them live.

Each takes one string argument, which is what a text ReAct line ``Action: name[argument]`` can carry.
Errors come back as text (``"error: ..."``) so the model sees them as an observation instead of the graph
failing.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool, tool

from ariadne_lc._arithmetic import CalculatorError, evaluate_arithmetic
from ariadne_lc.demo._facts import lookup_fact

__all__ = ["DEMO_TOOLS", "calculator", "lookup"]


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as 6 * 7 or (120 - 35) / 5."""
    try:
        return evaluate_arithmetic(expression)
    except CalculatorError as exc:
        return f"error: {exc}"


@tool
def lookup(term: str) -> str:
    """Look up a fact in a small offline encyclopedia, e.g. boiling point of water."""
    return lookup_fact(term)


DEMO_TOOLS: tuple[BaseTool, ...] = (calculator, lookup)
"""The default tools of :func:`ariadne_lc.demo.agent.build_react_agent`; both are side-effect free."""
