"""Reading examples from JSONL: one JSON object per line, blank lines ignored.

Fields: ``prompt``, ``cot``, ``answer`` (required, non-empty strings), ``answer_prefix``, ``id``,
``tags`` (optional). Unknown fields are rejected, so a typo such as ``"cots"`` fails loudly instead of
measuring an example without its CoT.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from ariadne_lc.bypass._errors import BypassInputError
from ariadne_lc.bypass._records import BypassExample

__all__ = ["read_examples"]


def read_examples(path: str | Path) -> list[BypassExample]:
    """Read every example of a JSONL file.

    Raises:
        BypassInputError: a line is not JSON, not an object, or not a valid example; the error carries
            the 1-based line number. Also raised when the file holds no example at all.
        FileNotFoundError: the file does not exist.

    Examples:
        >>> read_examples("examples/bypass_examples.jsonl")[0].id  # doctest: +SKIP
        'arith-pencils'
    """
    source = Path(path)
    examples: list[BypassExample] = []
    with source.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as error:
                raise BypassInputError(source, number, f"not valid JSON ({error.msg})") from error
            if not isinstance(data, dict):
                raise BypassInputError(source, number, f"expected a JSON object, got {type(data).__name__}")
            try:
                examples.append(BypassExample.model_validate(data))
            except ValidationError as error:
                problems = "; ".join(
                    f"{'.'.join(str(part) for part in item['loc']) or 'example'}: {item['msg']}"
                    for item in error.errors()
                )
                raise BypassInputError(source, number, problems) from error
    if not examples:
        raise BypassInputError(source, 1, "the file holds no example")
    return examples
