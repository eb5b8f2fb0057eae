"""What the default plan costs per trace, on agents shaped like the public tutorials (``tests/tutorial_agents.py``).

For each shape, with and without a thought before the call, the agent is run on its questions and audited with every
default (``Auditor(graph).audit_batch(traces)``). Printed per shape: units per trace (thought steps + tool outputs),
audits per trace, model calls per trace (the audits' re-runs and replays: the scripted agent's model is called the
same way a real one is; the rule critic, readers and swapper make none), coverage, and the audit's wall time per
trace beside the agent's own run time per trace, as a ratio measured in the same process one after the other.

Run: ``python benchmarks/audit_cost.py`` (from the repository root).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ariadne_lc import Auditor
from tests.tutorial_agents import SHAPES, run_shape


def main() -> None:
    header = f"{'shape':22} {'thought':7} {'units/trace':>11} {'audits/trace':>12} {'model calls/trace':>17} "
    print(header + f"{'coverage':>9} {'audit/run time':>14}")
    warm_graph, warm = run_shape(SHAPES[0])  # imports and first compilations out of the measured runs
    Auditor(warm_graph).audit_batch(warm)
    for shape in SHAPES:
        for thought in (True, False):
            started = time.perf_counter()
            graph, traces = run_shape(shape, thought=thought)
            ran = time.perf_counter() - started
            started = time.perf_counter()
            report = Auditor(graph).audit_batch(traces)
            audited = time.perf_counter() - started
            n = len(traces)
            coverage = report.coverage
            assert coverage is not None
            calls = sum(r.model_calls for r in report.results)
            print(
                f"{shape.name:22} {'yes' if thought else 'no':7} {coverage.units / n:11.1f} "
                f"{len(report.results) / n:12.1f} {calls / n:17.1f} {coverage.rate or 0:9.0%} {audited / ran:14.1f}x"
            )


if __name__ == "__main__":
    main()
