"""Calling any LangChain chat model with a chosen temperature and seed, for the critic and the judge."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from ariadne_lc.errors import ConfigurationError

__all__ = ["check_sampling", "configured", "reply_text"]


def check_sampling(model: Any, temperature: float | None, seed: int | None) -> None:
    """Fail early on a model that is not a chat model or on impossible sampling settings."""
    if not isinstance(model, BaseChatModel):
        raise ConfigurationError(f"expected a LangChain chat model (BaseChatModel), got {type(model).__name__}")
    if temperature is not None and temperature < 0:
        raise ConfigurationError(f"temperature must not be negative, got {temperature}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigurationError(f"seed must be an int, got {seed!r}")


def configured(
    model: BaseChatModel, *, temperature: float | None, seed: int | None
) -> Runnable[LanguageModelInput, BaseMessage]:
    """``model`` with ``temperature`` and ``seed`` applied; ``None`` leaves the model's own setting.

    Providers differ: most chat models declare ``temperature`` (and some ``seed``) as fields, others
    take them as call keywords. A declared field is set on a copy of the model (the user's model is
    not changed); anything else is bound as a call keyword, which LangChain passes to the provider.
    """
    fields = type(model).model_fields
    updates: dict[str, Any] = {}
    call_kwargs: dict[str, Any] = {}
    for name, value in (("temperature", temperature), ("seed", seed)):
        if value is None:
            continue
        (updates if name in fields else call_kwargs)[name] = value
    chosen = model.model_copy(update=updates) if updates else model
    return chosen.bind(**call_kwargs) if call_kwargs else chosen


def reply_text(message: BaseMessage) -> str:
    """The visible text of a chat model's reply (reasoning blocks excluded)."""
    return message.text
