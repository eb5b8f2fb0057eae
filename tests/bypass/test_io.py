"""Reading examples from JSONL, including the bundled file, and the errors that name a line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ariadne_lc.bypass import BypassExample, BypassInputError, read_examples

BUNDLED = Path(__file__).resolve().parents[2] / "examples" / "bypass_examples.jsonl"


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "examples.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bundled_examples_parse() -> None:
    examples = read_examples(BUNDLED)
    assert 4 <= len(examples) <= 6
    tags = {tag for example in examples for tag in example.tags}
    assert {"arithmetic", "factual", "filler"} <= tags
    assert len({example.id for example in examples}) == len(examples)


def test_optional_fields_and_blank_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, [json.dumps({"prompt": "Q?\n", "cot": "think", "answer": " A"}), "", "  "])
    (example,) = read_examples(path)
    assert example == BypassExample(prompt="Q?\n", cot="think", answer=" A")
    assert example.answer_prefix == "" and example.id is None and example.tags == []


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"prompt": "Q", "cot": "c"}), "answer"),
        (json.dumps({"prompt": "Q", "cot": "", "answer": "a"}), "cot"),
        (json.dumps({"prompt": "Q", "cots": "c", "cot": "c", "answer": "a"}), "cots"),
        (json.dumps({"prompt": "Q", "cot": "c", "answer": "a", "tags": "x"}), "tags"),
    ],
)
def test_bad_line_names_its_number(tmp_path: Path, bad_line: str, reason: str) -> None:
    good = json.dumps({"prompt": "Q", "cot": "c", "answer": "a"})
    path = _write(tmp_path, [good, "", bad_line, good])
    with pytest.raises(BypassInputError, match=reason) as info:
        read_examples(path)
    assert info.value.line_number == 3
    assert info.value.path == path
    assert f"{path}:3:" in str(info.value)


def test_empty_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(BypassInputError, match="no example"):
        read_examples(_write(tmp_path, [""]))
