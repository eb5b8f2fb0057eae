"""Measure a JSONL file of examples: print a table, and write the report as each example is measured.

This is the library half of ``ariadne-lc bypass`` (the command in ``ariadne_lc.cli`` is the one front end
and takes its defaults from here). An example that cannot be measured as laid out (e.g. a prompt shorter
than its CoT window, so no equal-sized control exists) is reported in ``BypassReport.failures`` with the
reason, and the others are measured. The report file is rewritten atomically after every example, so a
later failure (the model, the machine) never loses what was already measured.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from opentelemetry import trace
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ariadne_lc.bypass._errors import ExampleLayoutError
from ariadne_lc.bypass._io import read_examples
from ariadne_lc.bypass._model import WhiteboxModel
from ariadne_lc.bypass._monitor import DEFAULT_BATCH_SIZE, DEFAULT_SEED, BypassMonitor
from ariadne_lc.bypass._positions import DEFAULT_N_SPANS
from ariadne_lc.bypass._records import BypassFailure, BypassReport, BypassResult

__all__ = ["DEFAULT_OUTPUT", "results_table", "run_bypass_command"]

DEFAULT_OUTPUT: Final = Path("reports/bypass/bypass.json")
"""Where ``ariadne-lc bypass`` writes its report unless told otherwise (folders are created)."""

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

    Examples are read and validated before the model loads, so a bad line fails in milliseconds. The
    report is written (atomically, folders created) once the model is loaded, before any measurement,
    so an unwritable path fails before anything is computed; then again after every example; the last
    write has ``complete`` set. Check ``failures`` of the returned report for examples that could not
    be measured.

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
        ReportWriteError: the report cannot be written.
        BypassError: any other monitor error (missing extra, model); what was measured before it is
            in the report file.
    """
    from ariadne_lc.report import write_json

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
    results: list[BypassResult] = []
    failures: list[BypassFailure] = []

    def report(complete: bool) -> BypassReport:
        return BypassReport(
            model=monitor.model.name,
            spans=list(monitor.spans),
            seed=seed,
            results=list(results),
            seconds=time.perf_counter() - started,
            failures=list(failures),
            examples=len(examples),
            complete=complete,
        )

    if output_path is not None:
        write_json(output_path, report(complete=False))
    for index, example in enumerate(examples):
        try:
            results.append(monitor.evaluate(example))
        except ExampleLayoutError as error:
            failures.append(
                BypassFailure(example_id=example.id, index=index, error=type(error).__name__, reason=str(error))
            )
        if output_path is not None:
            write_json(output_path, report(complete=False))
    final = report(complete=True)
    if output_path is not None:
        write_json(output_path, final)
    out = console or _default_console()
    out.print(results_table(final.results))
    for failure in final.failures:
        out.print(
            f"not measurable: example {failure.index + 1} ({failure.example_id or 'no id'}): {failure.reason}",
            highlight=False,
            soft_wrap=True,
        )
    return final
