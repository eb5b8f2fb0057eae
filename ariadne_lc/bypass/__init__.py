"""The white-box CoT bypass monitor: activation patching on a local causal LM.

Does the answer read the chain of thought, or go around it? For each example the monitor overwrites the
residual stream at the CoT positions with states from a run without the CoT, and compares the loss of
log P(answer) with that of an equal-sized control patch elsewhere (CMI; Bypass = 1 - CMI), then runs a
placebo, a density curve, a shuffle test and a boundary check. See ``docs/bypass.md``.

Importing this package needs no torch; building a ``BypassMonitor`` (or loading a model) needs the
``whitebox`` extra and raises ``WhiteboxNotInstalledError`` naming it otherwise. Errors::

    AriadneError
    └── BypassError
        ├── WhiteboxNotInstalledError  (also MissingExtraError, ImportError)
        ├── BypassInputError           (also ValueError; carries the JSONL line number)
        ├── ExampleLayoutError         (also ValueError)
        └── ModelLoadError             (also RuntimeError)
"""

from __future__ import annotations

from ariadne_lc.bypass._command import DEFAULT_OUTPUT, results_table, run_bypass_command
from ariadne_lc.bypass._errors import (
    BypassError,
    BypassInputError,
    ExampleLayoutError,
    ModelLoadError,
    WhiteboxNotInstalledError,
)
from ariadne_lc.bypass._io import read_examples
from ariadne_lc.bypass._metrics import (
    BYPASS_LABEL_THRESHOLD,
    DEGENERATE_DELTA_NATS,
    DENSITY_FRACTIONS,
    LABEL_BYPASS,
    LABEL_NO_COT_EFFECT,
    LABEL_READS_COT,
    RATIO_EPSILON,
    ROBUST_ABSOLUTE_DEVIATION,
    ROBUST_RELATIVE_SENSITIVITY,
)
from ariadne_lc.bypass._model import WhiteboxModel, default_model_path, load_model
from ariadne_lc.bypass._monitor import DEFAULT_BATCH_SIZE, DEFAULT_SEED, BypassMonitor
from ariadne_lc.bypass._otel import (
    BYPASS_EVALUATION_NAME,
    BYPASS_SPAN_NAME,
    bypass_attribute,
    export_bypass_result,
)
from ariadne_lc.bypass._positions import DEFAULT_N_SPANS, SequenceLayout, even_spans
from ariadne_lc.bypass._records import (
    BoundarySensitivity,
    BypassExample,
    BypassFailure,
    BypassReport,
    BypassResult,
    DensityPoint,
    LayerSpan,
    SpanMetrics,
)
from ariadne_lc.bypass._tokenize import TokenizedExample, tokenize_example

# Plain sorted(), as the package-wide public API tests check, rather than ruff's isort-style order.
__all__ = [  # noqa: RUF022
    "BYPASS_EVALUATION_NAME",
    "BYPASS_LABEL_THRESHOLD",
    "BYPASS_SPAN_NAME",
    "BoundarySensitivity",
    "BypassError",
    "BypassExample",
    "BypassFailure",
    "BypassInputError",
    "BypassMonitor",
    "BypassReport",
    "BypassResult",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_N_SPANS",
    "DEFAULT_OUTPUT",
    "DEFAULT_SEED",
    "DEGENERATE_DELTA_NATS",
    "DENSITY_FRACTIONS",
    "DensityPoint",
    "ExampleLayoutError",
    "LABEL_BYPASS",
    "LABEL_NO_COT_EFFECT",
    "LABEL_READS_COT",
    "LayerSpan",
    "ModelLoadError",
    "RATIO_EPSILON",
    "ROBUST_ABSOLUTE_DEVIATION",
    "ROBUST_RELATIVE_SENSITIVITY",
    "SequenceLayout",
    "SpanMetrics",
    "TokenizedExample",
    "WhiteboxModel",
    "WhiteboxNotInstalledError",
    "bypass_attribute",
    "default_model_path",
    "even_spans",
    "export_bypass_result",
    "load_model",
    "read_examples",
    "results_table",
    "run_bypass_command",
    "tokenize_example",
]
