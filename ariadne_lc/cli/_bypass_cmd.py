"""``ariadne-lc bypass``: the white-box CoT bypass monitor over a JSONL file of examples.

The one front end of ``ariadne_lc.bypass.run_bypass_command``; its defaults are the library's
(``DEFAULT_OUTPUT``, ``DEFAULT_N_SPANS``, ``DEFAULT_SEED``, ``DEFAULT_BATCH_SIZE``), shown by ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

import typer

from ariadne_lc.bypass import DEFAULT_BATCH_SIZE, DEFAULT_N_SPANS, DEFAULT_OUTPUT, DEFAULT_SEED
from ariadne_lc.cli._common import console, err_console, fail, one_line_errors
from ariadne_lc.cli._interrupt import interruptible

__all__ = ["EXIT_SOME_FAILED", "bypass"]

EXIT_SOME_FAILED: Final = 3
"""Some examples could not be measured (each is in the report's ``failures`` with its reason); the
others were measured and are in the report."""


@one_line_errors
def bypass(
    input: Annotated[Path, typer.Option("--input", help="JSONL of {prompt, cot, answer, id?, tags?}.")],
    output: Annotated[
        Path, typer.Option(help="The JSON report, rewritten after every example (folders are created).")
    ] = DEFAULT_OUTPUT,
    model: Annotated[
        str | None, typer.Option(help="A .gguf file or a Hugging Face model folder (default: SmolLM2).")
    ] = None,
    spans: Annotated[int, typer.Option(help="Evenly spaced layer spans to patch.")] = DEFAULT_N_SPANS,
    seed: Annotated[int, typer.Option(help="Seed of control positions, noise and shuffles.")] = DEFAULT_SEED,
    batch_size: Annotated[int, typer.Option(help="Patched variants per forward pass.")] = DEFAULT_BATCH_SIZE,
    chat_template: Annotated[bool, typer.Option(help="Wrap prompts in the tokenizer's chat template.")] = False,
) -> None:
    """Does the answer read the chain-of-thought tokens at all? CMI, bypass, placebo, density, sequentiality.

    Exit 0: every example measured. Exit 3: some examples could not be measured (reason in the report's
    failures); the others are in the report. Exit 2: bad input or an unusable environment.
    """
    if not input.is_file():
        fail(f"{input}: no such example file")
    from ariadne_lc.bypass import run_bypass_command

    kept = f"the examples measured so far are kept in {output}; the same command again measures them all anew"
    with interruptible(lambda: kept):
        report = run_bypass_command(
            input,
            output,
            model=model,
            spans=spans,
            seed=seed,
            batch_size=batch_size,
            chat_template=chat_template,
            console=console,
        )
    console.print(f"{len(report.results)} of {report.examples} examples measured; report: {output}")
    if report.failures:
        err_console.print(
            f"[yellow]{len(report.failures)} of {report.examples} examples could not be measured "
            f"(see 'failures' in {output})[/yellow]",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_SOME_FAILED)
