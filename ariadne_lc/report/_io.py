"""Writing report files safely."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

__all__ = ["write_json"]


def write_json(path: Path, document: BaseModel | dict[str, Any]) -> None:
    """Write JSON atomically (a temporary file, then rename), so a crash never leaves half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = document.model_dump_json(indent=2) if isinstance(document, BaseModel) else json.dumps(document, indent=2)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)
