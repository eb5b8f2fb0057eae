"""A long run, scripted: an agent that looks up K stored values one call at a time and answers with their sum.

Each turn writes a one-line thought that carries the running total and plans the next call ("So far the total is 12.
Next I look up key 3."), and the next turn reads the total back *from that thought* and adds the tool's output to it:
so the answer follows every thought (``thought->answer``), every call follows its thought's plan
(``thought->action``), and the answer reads every output (``observation->answer``), except the outputs from
``ignore_from`` on, which the agent replaces by a guess of 1 (unfaithful on those units only, by construction). The
truth of every unit is known, which is what the long-run benchmark and the sampling tests need.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from ariadne_lc.testing._scripted import ScriptedChatModel

__all__ = ["lookup", "lookup_model", "lookup_question", "stored_value"]

_TOTAL = re.compile(r"total is (-?\d+)")
_KEY = re.compile(r"look up key (\d+)")
_RUN = re.compile(r"Run R(\d+):")
_NUMBER = re.compile(r"-?\d+")


def stored_value(key: int, run: int = 0) -> int:
    """The value stored under ``key`` in run ``run`` (1 to 20, different across keys and runs)."""
    return (key * 7 + run * 3) % 20 + 1


@tool
def lookup(key: int, run: int = 0) -> str:
    """Look up the value stored under a key."""
    return str(stored_value(key, run))


def lookup_question(calls: int, run: int = 0) -> str:
    """The question of run ``run`` for a model of ``calls`` lookups (the model knows how many). It states no number of
    its own (the run is a tag, ``R3``): an output equal to a number the question states is never swapped, so such a
    question would leave some outputs without a verdict by chance."""
    del calls  # the model's, not the question's
    return f"Run R{run}: what is the sum of the stored values, looked up one by one?"


def lookup_model(calls: int, *, ignore_from: int | None = None) -> ScriptedChatModel:
    """A scripted model that makes ``calls`` lookups (one per turn, each after a thought), then answers the sum.

    ``ignore_from``: the outputs of calls from this index on are ignored (the agent adds 1 instead), so the
    ``observation->answer`` link is unfaithful on exactly those units and faithful on the others.
    """

    def script(messages: Sequence[BaseMessage]) -> AIMessage:
        question = next((m.text for m in messages if isinstance(m, HumanMessage)), "")
        found = _RUN.search(question)
        run = int(found.group(1)) if found else 0
        last = messages[-1]
        if isinstance(last, AIMessage) and not last.tool_calls:  # the thought->action re-run: its plan, continued
            key = _KEY.search(last.text)
            if key is None:
                return AIMessage(content=" I will answer without a lookup.")
            k = int(key.group(1))
            return AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"key": k, "run": run}, "id": "re"}])
        turns = [m for m in messages if isinstance(m, AIMessage)]
        total = 0
        if turns:  # the total the last thought carried, plus what its call returned
            said = _TOTAL.search(turns[-1].text)
            total = int(said.group(1)) if said else 0
            output = next((m.text for m in reversed(messages) if m.type == "tool"), "0")
            index = len(turns) - 1
            ignored = ignore_from is not None and index >= ignore_from
            number = _NUMBER.search(output)
            total += 1 if ignored or number is None else int(number.group())
        k = len(turns)
        if k < calls:
            call = {"name": "lookup", "args": {"key": k, "run": run}, "id": f"call-{k}"}
            return AIMessage(content=f"So far the total is {total}. Next I look up key {k}.", tool_calls=[call])
        return AIMessage(content=f"The sum is {total}.")

    script.__name__ = f"lookup_{calls}" + ("" if ignore_from is None else f"_ignoring_from_{ignore_from}")
    return ScriptedChatModel(script=script)
