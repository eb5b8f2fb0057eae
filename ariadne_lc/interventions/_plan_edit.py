"""A plan edit made by a chat model, where no rule can make a coherent one (docs/method.md#interventions).

"Let me search for the latest news" names its tool by a verb of free text: putting another tool's word there ("Let
me calculator for ...") is no sentence. A model asked to rewrite the plan so that it uses the other tool writes one.
Its reply is only a candidate: :meth:`~ariadne_lc.interventions.plans.PlanCritic.read_back` reads it before use, and
an edit that does not name the new tool, or still names the old one, is not used.
"""

from __future__ import annotations

import logging

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from ariadne_lc.interventions.actions import ToolSpec

__all__ = ["DEFAULT_EDITOR_MAX_TOKENS", "ModelPlanEditor"]

logger = logging.getLogger("ariadne_lc.interventions")

DEFAULT_EDITOR_MAX_TOKENS = 120
"""Cap on the editor's reply: one plan sentence or two."""

_SYSTEM = (
    "You rewrite an AI agent's plan so that it plans to use a different tool. Keep the plan's wording, its subject "
    "and its arguments; change only what names or describes the tool, so that the plan reads as a natural sentence "
    "a person would write. Reply with the rewritten plan only."
)


class ModelPlanEditor:
    """Asks ``model`` to rewrite a plan for another tool (module docstring).

    Args:
        model: Any LangChain chat model (the auditor's model reader's, when there is one).
        max_tokens: Cap on the reply.
    """

    def __init__(self, model: BaseChatModel, *, max_tokens: int = DEFAULT_EDITOR_MAX_TOKENS) -> None:
        self.model = model
        self.max_tokens = max_tokens
        label = getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        self.name = f"model:{label}"

    def swap_tool(self, plan: str, named: ToolSpec, other: ToolSpec) -> str | None:
        """``plan`` rewritten to use ``other`` where it uses ``named``; ``None`` when the model gave nothing usable."""
        ask = (
            f"Plan: {plan}\n\nThe plan uses the tool {named.name} ({named.description or 'no description'}). "
            f"Rewrite it to use the tool {other.name} ({other.description or 'no description'}) instead."
        )
        try:
            reply = self.model.invoke([SystemMessage(_SYSTEM), HumanMessage(ask)], max_tokens=self.max_tokens)
        except Exception as exc:  # a model that fails makes no edit; the critic says there is none
            logger.warning("ariadne: the plan editor %s failed: %s: %s", self.name, type(exc).__name__, exc)
            return None
        text = " ".join(reply.text.strip().strip('"').split())
        return text or None
