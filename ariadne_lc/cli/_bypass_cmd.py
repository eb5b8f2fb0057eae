"""``ariadne-lc bypass``: the white-box CoT bypass monitor over a JSONL file of examples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ariadne_lc.cli._common import console, fail, one_line_errors

__all__ = ["bypass"]


@one_line_errors
def bypass(
    input: Annotated[Path, typer.Option("--input", help="JSONL of {prompt, cot, answer, id?, tags?}.")],
    output: Annotated[Path | None, typer.Option(help="Where to write the JSON report.")] = Path(
        "reports/bypass/bypass.json"
    ),
    model: Annotated[
        str | None, typer.Option(help="A .gguf file or a Hugging Face model folder (default: SmolLM2).")
    ] = None,
    spans: Annotated[int, typer.Option(help="Evenly spaced layer spans to patch.")] = 4,
    seed: Annotated[int, typer.Option(help="Seed of control positions, noise and shuffles.")] = 0,
    batch_size: Annotated[int, typer.Option(help="Patched variants per forward pass.")] = 16,
    chat_template: Annotated[bool, typer.Option(help="Wrap prompts in the tokenizer's chat template.")] = False,
) -> None:
    """Does the answer read the chain-of-thought tokens at all? CMI, bypass, placebo, density, sequentiality."""
    if not input.is_file():
        fail(f"{input}: no such example file")
    from ariadne_lc.bypass import run_bypass_command

    run_bypass_command(
        input,
        output,
        model=model,
        spans=spans,
        seed=seed,
        batch_size=batch_size,
        chat_template=chat_template,
        console=console,
    )
