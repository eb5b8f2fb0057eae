"""The one number grammar of the package: how a number is written in text, so that every reader and every swap
agrees on where a number starts and ends.

A number is an optional sign, a whole part (plain digits, or groups of three after a thousands separator:
``1,200``, ``1,299,000``), and decimals (``5.5``, ``1,299.99``). A comma that does not start a group of three belongs
to the text, not to the number: ``1,200, plus tax`` states 1200 and a comma; ``ids 1,2,3`` states 1, 2 and 3. A
number never starts inside a word or right after a decimal point, and never stops before more of its own digits, so
the ``5`` of ``5.5`` is no number of its own.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["DIGITS", "NUMBER", "WHOLE"]

WHOLE: Final = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)"
"""A number's whole part as written: grouped by thousands, or plain digits."""
DIGITS: Final = rf"{WHOLE}(?:\.\d+)?"
"""A number's digits as written, its decimals included (no sign, no boundaries): for use inside larger patterns."""
NUMBER: Final = re.compile(rf"(?<![\w.])(-?)({WHOLE})(?:\.(\d+))?(?!\w|\.\d)")
"""A number standing on its own: its sign, its whole part and its decimals, as groups."""
