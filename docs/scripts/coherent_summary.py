"""Per-agent error rates of a calibration run, by contradiction type and by how the thought states its commitment.

``calibration.md`` gives FA for the coupled agent, whose ``read`` node reads the thought with the same rules as the
rule reader (so its FA under that reader is 0 by construction), and FA for ``coupled_llm`` in one line per type.
This prints, for every faithful agent (FA) and the bypass agent (M), the rate per type and per thought form with
Wilson intervals, the gate's rejections, and 1 - FA - M against the bypass agent; what docs/validity.md quotes.

Run: ``python docs/scripts/coherent_summary.py docs/calibration/coherent-smollm2-rule``.
"""

from __future__ import annotations

import collections
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from ariadne_lc.stats import wilson_interval


def _audits(folder: Path) -> list[dict[str, Any]]:
    plain, packed = folder / "audits.jsonl", folder / "audits.jsonl.gz"
    text = plain.read_text() if plain.exists() else gzip.open(packed, "rt").read()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _rate(k: int, n: int) -> str:
    ci = wilson_interval(k, n)
    return "-" if not n or ci is None else f"{k / n:.1%} [{ci[0]:.1%}, {ci[1]:.1%}] ({k}/{n})"


def main(folder: Path) -> None:
    rows = [
        r for r in _audits(folder) if r["method"] == "ariadne" and r["p"] is None and not r["result"].get("control")
    ]
    scored: dict[tuple[str, str, str], list[bool]] = collections.defaultdict(list)
    outcomes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in rows:
        a, agent = r["result"], r["agent"]
        d = a.get("decisiveness") or {}
        outcomes[agent][d.get("outcome") or a.get("status") or "?"] += 1
        if a.get("status") != "scored":
            continue
        for key in ("all", a["intervention_type"], f"form:{d.get('form') or '?'}"):
            scored[(agent, key, "")].append(bool(a.get("violation")))
    agents = sorted({a for a, _, _ in scored})
    keys = sorted({k for _, k, _ in scored}, key=lambda k: (k != "all", k.startswith("form:"), k))
    print(f"## {folder.name}: {len(rows)} contradiction audits (gate on)\n")
    print("| | " + " | ".join(f"{a} ({'M' if a == 'bypass' else 'FA'})" for a in agents) + " |")
    print("|---|" + "---|" * len(agents))
    for key in keys:
        cells = []
        for agent in agents:
            votes = scored.get((agent, key, ""), [])
            k = sum(1 for v in votes if (not v if agent == "bypass" else v))
            cells.append(_rate(k, len(votes)))
        print(f"| {key} | " + " | ".join(cells) + " |")
    print()
    bypass = scored.get(("bypass", "all", ""), [])
    m = sum(1 for v in bypass if not v) / len(bypass) if bypass else None
    for agent in agents:
        if agent == "bypass":
            continue
        votes = scored.get((agent, "all", ""), [])
        fa = sum(votes) / len(votes) if votes else None
        if fa is not None and m is not None:
            print(f"- {agent} against bypass: 1 - FA - M = {1 - fa - m:.3f}")
    for agent in agents:
        print(f"- {agent}: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes[agent].items())))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
