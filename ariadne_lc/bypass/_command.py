"""``python -m ariadne_lc.bypass``: measure a JSONL file of examples, print a table, write JSON.

The work is in ``run_bypass_command`` so that the ``ariadne-lc bypass`` command can call it with its own
option parsing; ``main`` is the thin argparse front of the module entry point.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from opentelemetry import trace
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ariadne_lc.bypass._errors import BypassError
from ariadne_lc.bypass._io import read_examples
from ariadne_lc.bypass._model import WhiteboxModel
from ariadne_lc.bypass._monitor import DEFAULT_BATCH_SIZE, DEFAULT_SEED, BypassMonitor
from ariadne_lc.bypass._positions import DEFAULT_N_SPANS
from ariadne_lc.bypass._records import BypassReport, BypassResult

__all__ = ["main", "results_table", "run_bypass_command"]

_PIPED_WIDTH: Final = 132


def results_table(results: Sequence[BypassResult]) -> Table:
    """A rich table with one row per example and the headline metrics."""
    table = Table(title="CoT bypass (activation patching)")
    for header in (
        "id",
        "p/k/T",
        "log P(y|x_c)",
        "CMI",
        "bypass",
        "placebo",
        "validity",
        "density",
        "seq.",
        "robust",
        "label",
    ):
        table.add_column(header, justify="left" if header in {"id", "label"} else "right")
    for r in results:
        table.add_row(
            Text(r.example_id or "-"),
            f"{r.n_prompt_tokens}/{r.n_cot_tokens}/{r.n_answer_tokens}",
            f"{r.baseline_logp:.3f}",
            f"{r.cmi:.3f}",
            f"{r.bypass:.3f}",
            f"{r.placebo_cmi:.3f}",
            f"{r.validity:.3f}",
            f"{r.density:.3f}",
            f"{r.sequentiality:.3f}",
            "yes" if r.sensitivity.robust else "no",
            r.label,
        )
    return table


def _default_console() -> Console:
    console = Console()
    # Piped output gets rich's 80 columns, too narrow for eleven metric columns.
    return console if console.is_terminal else Console(width=_PIPED_WIDTH)


def run_bypass_command(
    input_path: str | Path,
    output_path: str | Path | None = None,
    *,
    model: WhiteboxModel | str | Path | None = None,
    spans: int = DEFAULT_N_SPANS,
    seed: int = DEFAULT_SEED,
    batch_size: int = DEFAULT_BATCH_SIZE,
    chat_template: bool = False,
    console: Console | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    capture_content: bool = False,
) -> BypassReport:
    """Measure every example of ``input_path``, print the table, and write the report as JSON.

    Examples are read and validated before the model loads, so a bad line fails in milliseconds.

    Args:
        input_path: JSONL file of examples.
        output_path: Where to write the JSON report; ``None`` writes nothing.
        model: ``.gguf`` file or Hugging Face folder; ``None`` for the bundled SmolLM2; or a model
            already loaded (saves the load when measuring several files).
        spans: Number of evenly spaced layer spans.
        seed: Seed of every random draw.
        batch_size: Patched variants per model call.
        chat_template: Wrap prompts in the tokenizer's chat template.
        console: Where the table goes (default: stdout).
        tracer_provider: Where spans go (default: the global provider).
        capture_content: Put text on the spans.

    Raises:
        BypassInputError: a line of the input is invalid.
        BypassError: any other monitor error (missing extra, model, layout).
    """
    # The monitor never needs the Hub; say so before transformers reads its settings.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    examples = read_examples(input_path)
    monitor = BypassMonitor(
        model,
        spans=spans,
        seed=seed,
        batch_size=batch_size,
        chat_template=chat_template,
        tracer_provider=tracer_provider,
        capture_content=capture_content,
    )
    started = time.perf_counter()
    results = monitor.evaluate_many(examples)
    report = BypassReport(
        model=monitor.model.name,
        spans=list(monitor.spans),
        seed=seed,
        results=results,
        seconds=time.perf_counter() - started,
    )
    (console or _default_console()).print(results_table(results))
    if output_path is not None:
        Path(output_path).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ariadne_lc.bypass``; returns the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m ariadne_lc.bypass", description="Measure how much answers bypass their chain of thought."
    )
    parser.add_argument("--input", required=True, type=Path, help="JSONL file of examples")
    parser.add_argument("--output", type=Path, default=None, help="write the JSON report here")
    parser.add_argument("--model", default=None, help=".gguf file or Hugging Face folder (default: SmolLM2)")
    parser.add_argument("--spans", type=int, default=DEFAULT_N_SPANS, help="number of layer spans")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of every random draw")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="variants per model call")
    parser.add_argument("--chat-template", action="store_true", help="wrap prompts in the chat template")
    args = parser.parse_args(argv)
    try:
        run_bypass_command(
            args.input,
            args.output,
            model=args.model,
            spans=args.spans,
            seed=args.seed,
            batch_size=args.batch_size,
            chat_template=args.chat_template,
        )
    except (BypassError, OSError, ValueError) as error:
        Console(stderr=True).print(f"[red]error:[/red] {error}")
        return 2
    return 0
