"""run_bypass_command and `ariadne-lc bypass`: unmeasurable examples, results written as computed, one front end.

On the tiny random Llama with a character tokenizer (token counts equal character counts), so the
real text path (tokenize, patch, score, write) runs in milliseconds.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from ariadne_lc.bypass import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_N_SPANS,
    DEFAULT_OUTPUT,
    DEFAULT_SEED,
    BypassMonitor,
    BypassReport,
    ModelLoadError,
    WhiteboxModel,
    run_bypass_command,
)
from ariadne_lc.cli import app
from ariadne_lc.cli._bypass_cmd import EXIT_SOME_FAILED
from ariadne_lc.report import ReportWriteError
from tests.bypass.conftest import build_char_tokenizer, build_tiny

REPO = Path(__file__).resolve().parents[2]
GOOD = {"prompt": "Question: what is six times seven?\n", "cot": "6*7=42.\n", "answer_prefix": "A:", "answer": " 42"}
# 3 prompt characters against a 40-character CoT: fewer positions outside the CoT than in it, so no
# equal-sized control exists.
SHORT_PROMPT = {"id": "short", "prompt": "Q?\n", "cot": "Let me think about this for a long while.", "answer": " 1"}


def _examples(tmp_path: Path, *examples: dict[str, Any]) -> Path:
    path = tmp_path / "examples.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in examples), encoding="utf-8")
    return path


def _run(model: WhiteboxModel, source: Path, output: Path | None) -> tuple[BypassReport, str]:
    screen = io.StringIO()
    report = run_bypass_command(source, output, model=model, spans=2, console=Console(file=screen, width=200))
    return report, screen.getvalue()


def test_an_example_too_short_for_a_control_is_reported_and_the_others_are_measured(
    tiny_text_model: WhiteboxModel, tmp_path: Path
) -> None:
    source = _examples(tmp_path, {**GOOD, "id": "first"}, SHORT_PROMPT, {**GOOD, "id": "last"})
    output = tmp_path / "out.json"
    report, screen = _run(tiny_text_model, source, output)
    assert [r.example_id for r in report.results] == ["first", "last"]
    assert all(r.sequences > 2 for r in report.results)  # really measured
    (failure,) = report.failures
    assert (failure.example_id, failure.index, failure.error) == ("short", 1, "ExampleLayoutError")
    assert "positions lie outside it" in failure.reason and "lengthen the prompt" in failure.reason
    assert report.complete and report.examples == 3
    assert BypassReport.model_validate_json(output.read_text(encoding="utf-8")) == report
    assert "not measurable: example 2 (short)" in screen


def test_the_report_folder_is_created(tiny_text_model: WhiteboxModel, tmp_path: Path) -> None:
    output = tmp_path / "reports" / "bypass" / "bypass.json"
    report, _ = _run(tiny_text_model, _examples(tmp_path, GOOD), output)
    assert json.loads(output.read_text(encoding="utf-8"))["results"][0]["cmi"] == report.results[0].cmi
    assert [p.name for p in output.parent.iterdir()] == ["bypass.json"]  # no temporary file left behind


def test_results_are_written_as_they_are_computed(
    tiny_text_model: WhiteboxModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _examples(tmp_path, {**GOOD, "id": "a"}, {**GOOD, "id": "b"}, {**GOOD, "id": "c"})
    output = tmp_path / "out.json"
    measure = BypassMonitor.evaluate
    calls = []

    def crash_on_the_third(self: BypassMonitor, example: Any) -> Any:
        calls.append(example.id)
        if len(calls) == 3:
            raise ModelLoadError("the model went away")
        return measure(self, example)

    monkeypatch.setattr(BypassMonitor, "evaluate", crash_on_the_third)
    with pytest.raises(ModelLoadError):
        _run(tiny_text_model, source, output)
    saved = BypassReport.model_validate_json(output.read_text(encoding="utf-8"))
    assert [r.example_id for r in saved.results] == ["a", "b"]
    assert not saved.complete and saved.examples == 3


def test_an_unwritable_report_fails_before_anything_is_measured(
    tiny_text_model: WhiteboxModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "reports"
    blocker.write_text("a file where the folder should be", encoding="utf-8")
    measured: list[str] = []
    monkeypatch.setattr(BypassMonitor, "evaluate", lambda self, example: measured.append(example.id))
    with pytest.raises(ReportWriteError, match=r"cannot write .*reports/bypass\.json"):
        _run(tiny_text_model, _examples(tmp_path, GOOD), blocker / "bypass.json")
    assert measured == []


@pytest.fixture
def tiny_folder(tmp_path: Path) -> Path:
    """The tiny model and its character tokenizer saved as a Hugging Face folder, as a user passes --model."""
    folder = tmp_path / "tiny-hf"
    build_tiny(seed=3, vocab_size=128).save_pretrained(folder)
    build_char_tokenizer().save_pretrained(folder)
    return folder


def test_the_command_exits_3_when_some_examples_failed_and_0_otherwise(tiny_folder: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    output = tmp_path / "new" / "report.json"
    source = _examples(tmp_path, {**GOOD, "id": "first"}, SHORT_PROMPT)
    args = ["bypass", "--input", str(source), "--output", str(output), "--model", str(tiny_folder), "--spans", "2"]
    failed = runner.invoke(app, args)
    assert failed.exit_code == EXIT_SOME_FAILED == 3, failed.output
    assert "1 of 2 examples could not be measured" in failed.output
    document = json.loads(output.read_text(encoding="utf-8"))
    assert [r["example_id"] for r in document["results"]] == ["first"]
    assert document["failures"][0]["example_id"] == "short" and document["complete"] is True
    clean = runner.invoke(app, [*args[:2], str(_examples(tmp_path, GOOD)), *args[3:]])
    assert clean.exit_code == 0, clean.output
    assert "1 of 1 examples measured" in clean.output


def test_one_front_end_with_the_library_defaults() -> None:
    command = typer.main.get_command(app).commands["bypass"]  # type: ignore[attr-defined]
    defaults = {p.name: p.default for p in command.params}
    assert defaults["output"] == DEFAULT_OUTPUT
    assert (defaults["spans"], defaults["seed"], defaults["batch_size"]) == (
        DEFAULT_N_SPANS,
        DEFAULT_SEED,
        DEFAULT_BATCH_SIZE,
    )
    assert "Exit codes: 0 every example measured; 3 some examples could not be measured" in (command.epilog or "")
    assert not (REPO / "ariadne_lc" / "bypass" / "__main__.py").exists()
    import ariadne_lc.bypass._command as command_module

    assert not hasattr(command_module, "main")
    gone = subprocess.run(
        [sys.executable, "-m", "ariadne_lc.bypass", "--help"], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert gone.returncode != 0 and "cannot be directly executed" in gone.stderr
