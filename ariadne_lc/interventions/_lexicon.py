"""Small word families for swapping a text value offline: a value of the same kind, without a model.

A tool that says "sunny" can as plausibly say "rainy"; one that names Madrid can name Lisbon. These families are the
last resort of :mod:`.values` (after the tool's other recorded outputs and its schema), and only the words they hold
can be swapped this way: a value outside them needs another recorded output or the agent's own model.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FAMILIES", "family_of"]

FAMILIES: Final[tuple[tuple[str, ...], ...]] = (
    ("sunny", "rainy", "cloudy", "snowy", "windy", "foggy", "stormy", "overcast"),
    ("sun", "rain", "clouds", "snow", "wind", "fog", "storm", "hail"),
    ("raining", "snowing", "hailing", "drizzling"),
    ("hot", "cold", "warm", "cool", "mild", "freezing"),
    ("red", "blue", "green", "yellow", "black", "white", "orange", "purple", "brown", "grey"),
    ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    (
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ),
    ("spring", "summer", "autumn", "winter"),
    ("north", "south", "east", "west"),
    ("open", "closed"),
    ("available", "unavailable"),
    ("active", "inactive"),
    ("approved", "rejected", "pending"),
    ("shipped", "delivered", "cancelled", "returned", "processing"),
    ("high", "low", "medium"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rising", "falling"),
    ("success", "failure"),
    ("valid", "invalid"),
    ("positive", "negative"),
    (
        "paris",
        "london",
        "madrid",
        "rome",
        "berlin",
        "lisbon",
        "vienna",
        "athens",
        "oslo",
        "tokyo",
        "nairobi",
        "lima",
        "sydney",
        "toronto",
        "cairo",
        "mumbai",
        "seoul",
        "dublin",
        "amsterdam",
        "stockholm",
    ),
    (
        "france",
        "england",
        "spain",
        "italy",
        "germany",
        "portugal",
        "austria",
        "greece",
        "norway",
        "japan",
        "kenya",
        "peru",
    ),
    ("dog", "cat", "horse", "cow", "sheep", "rabbit"),
    ("english", "french", "spanish", "german", "italian", "portuguese", "japanese", "chinese", "dutch"),
    ("employees", "customers", "suppliers", "users"),
    ("orders", "invoices", "payments", "shipments"),
    ("products", "projects", "offices", "departments", "teams"),
    ("apple", "pear", "plum", "banana", "melon", "fig", "kiwi", "mango", "peach", "cherry"),
    ("today", "tomorrow", "yesterday"),
    ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"),
    ("new york", "los angeles", "chicago", "san francisco", "seattle", "boston", "miami", "denver"),
    ("small", "large", "medium-sized"),
    ("cheap", "expensive"),
)
"""Families of interchangeable words, lower case; a word belongs to the first family that holds it."""

_INDEX: Final = {word: family for family in reversed(FAMILIES) for word in family}


def family_of(word: str) -> tuple[str, ...]:
    """The other members of ``word``'s family (lower case, in the family's order from the word on), or ``()``."""
    family = _INDEX.get(word.casefold())
    if family is None:
        return ()
    i = family.index(word.casefold())
    return family[i + 1 :] + family[:i]
