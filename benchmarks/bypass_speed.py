"""What one CoT bypass measurement costs on SmolLM2-135M, unbatched and batched, side by side.

Every patched variant of an example runs on the same token ids, so the variants stack into batches
without padding. This loads the default model once, then measures the bundled examples with each batch
size, interleaved example by example so that machine noise hits all alike. Prints, per batch size, wall
seconds and process CPU seconds per example, model calls (forward passes) and sequences per example,
and the speed-up over batch size 1.

Run: ``python benchmarks/bypass_speed.py [--examples 2] [--spans 4] [--batch-sizes 1,16]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from ariadne_lc.bypass import BypassMonitor, BypassResult, load_model, read_examples

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "bypass_examples.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--examples", type=int, default=2, help="how many bundled examples to measure")
    parser.add_argument("--spans", type=int, default=4)
    parser.add_argument("--batch-sizes", default="1,16")
    args = parser.parse_args()
    sizes = [int(size) for size in args.batch_sizes.split(",")]

    started = time.perf_counter()
    model = load_model()
    print(f"model: {model.name}, {len(model.layers)} layers, loaded in {time.perf_counter() - started:.1f} s")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} cores")
    examples = read_examples(EXAMPLES)[: args.examples]
    monitors = {size: BypassMonitor(model, spans=args.spans, batch_size=size) for size in sizes}

    wall: dict[int, list[float]] = {size: [] for size in sizes}
    cpu: dict[int, list[float]] = {size: [] for size in sizes}
    results: dict[int, list[BypassResult]] = {size: [] for size in sizes}
    for example in examples:
        for size in sizes:
            wall_start, cpu_start = time.perf_counter(), time.process_time()
            results[size].append(monitors[size].evaluate(example))
            wall[size].append(time.perf_counter() - wall_start)
            cpu[size].append(time.process_time() - cpu_start)

    base = statistics.mean(wall[sizes[0]])
    print(f"\n{len(examples)} examples, {args.spans} layer spans")
    print(f"{'batch':>6} {'s/example':>10} {'cpu s/ex':>9} {'passes/ex':>10} {'seqs/ex':>8} {'speed-up':>9}")
    for size in sizes:
        passes = statistics.mean(r.forward_passes for r in results[size])
        sequences = statistics.mean(r.sequences for r in results[size])
        seconds = statistics.mean(wall[size])
        print(
            f"{size:>6} {seconds:>10.2f} {statistics.mean(cpu[size]):>9.2f} {passes:>10.1f} {sequences:>8.1f} "
            f"{base / seconds:>8.2f}x"
        )
    drift = max(abs(a.cmi - b.cmi) for size in sizes for a, b in zip(results[sizes[0]], results[size], strict=True))
    print(f"\nlargest CMI difference between batch sizes: {drift:.2e}")


if __name__ == "__main__":
    main()
